#include "datasets/common/thinking.h"

namespace kvgate {

namespace {
constexpr std::string_view kOpen = "<think>", kClose = "</think>";
}

ThinkingSplit split_thinking(std::string_view text) {
  ThinkingSplit out;
  std::size_t pos = 0;
  const std::size_t first_open = text.find(kOpen), first_close = text.find(kClose);
  if (first_close != std::string_view::npos && first_close < first_open) {
    // The chat template opened the block inside the prompt: the output starts in thinking.
    out.found = true;
    out.thinking.append(text.substr(0, first_close));
    pos = first_close + kClose.size();
  }
  while (pos < text.size()) {
    const std::size_t open = text.find(kOpen, pos);
    if (open == std::string_view::npos) {
      out.answer.append(text.substr(pos));
      break;
    }
    out.found = true;
    out.answer.append(text.substr(pos, open - pos));
    const std::size_t body = open + kOpen.size();
    const std::size_t close = text.find(kClose, body);
    if (close == std::string_view::npos) {
      out.unterminated = true;
      out.thinking.append(text.substr(body));
      break;
    }
    out.thinking.append(text.substr(body, close - body));
    pos = close + kClose.size();
  }
  // A stray closing tag after the answer started (e.g. "</think>" twice) is not answer text either.
  for (std::size_t at; (at = out.answer.find(kClose)) != std::string::npos;) out.answer.erase(at, kClose.size());
  const std::size_t start = out.answer.find_first_not_of(" \t\r\n");
  out.answer.erase(0, start == std::string::npos ? out.answer.size() : start);
  return out;
}

std::string strip_thinking(std::string_view text) { return split_thinking(text).answer; }

}  // namespace kvgate
