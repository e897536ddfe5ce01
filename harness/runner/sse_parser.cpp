#include "harness/runner/sse_parser.h"

namespace kvgate::runner {

bool SseParser::feed(std::string_view bytes, const Handler& on_event) {
  if (overflowed_) return false;
  std::size_t i = 0;
  // A UTF-8 byte order mark opening the stream is skipped, even when it arrives split over pieces.
  static constexpr char kBom[] = "\xEF\xBB\xBF";
  while (at_start_ && i < bytes.size()) {
    if (bytes[i] == kBom[bom_matched_]) {
      ++i;
      if (++bom_matched_ == 3) at_start_ = false;
    } else {
      line_.append(kBom, bom_matched_);  // not a BOM after all: those bytes are text
      at_start_ = false;
    }
  }
  while (i < bytes.size()) {
    // Copy a run of ordinary bytes at once: streams are mostly long lines.
    const std::size_t end = bytes.find_first_of("\r\n", i);
    if (end != i) {
      const std::size_t stop = end == std::string_view::npos ? bytes.size() : end;
      if (line_.size() + (stop - i) > max_bytes_) {
        overflowed_ = true;
        return false;
      }
      line_.append(bytes.data() + i, stop - i);
      last_was_cr_ = false;
      i = stop;
      continue;
    }
    const char c = bytes[i++];
    if (c == '\n' && last_was_cr_) {  // the LF of a CRLF split across (or within) pieces
      last_was_cr_ = false;
      continue;
    }
    last_was_cr_ = c == '\r';
    process_line(on_event);
    if (overflowed_) return false;
  }
  return true;
}

void SseParser::process_line(const Handler& on_event) {
  if (line_.empty()) {  // a blank line dispatches the event
    if (has_data_) {
      ++events_;
      SseEvent ev{std::move(event_), std::move(data_)};
      on_event(ev);
    }
    data_.clear();
    event_.clear();
    has_data_ = false;
    return;
  }
  if (line_[0] == ':') {  // comment (servers send ": ping" keep-alives)
    line_.clear();
    return;
  }
  const std::size_t colon = line_.find(':');
  std::string_view field(line_);
  std::string_view value;
  if (colon != std::string::npos) {
    field = std::string_view(line_).substr(0, colon);
    value = std::string_view(line_).substr(colon + 1);
    if (!value.empty() && value[0] == ' ') value.remove_prefix(1);
  }
  if (field == "data") {
    if (data_.size() + value.size() + 1 > max_bytes_) {
      overflowed_ = true;
      line_.clear();
      return;
    }
    if (has_data_) data_ += '\n';
    data_.append(value);
    has_data_ = true;
  } else if (field == "event") {
    event_.assign(value);
  }  // "id", "retry" and unknown fields are ignored, as the format says
  line_.clear();
}

}  // namespace kvgate::runner
