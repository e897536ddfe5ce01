// A deterministic exact TokenCounter for tests of length fitting: not proportional to bytes (a
// letter run is one token, or two past 8 letters; each digit and punctuation mark is one; a run of
// newlines is one; "of the" merges into one), so fitting has to use real counts. It counts what
// it is asked, for checks on how many counts a generator makes.
#pragma once
#include <atomic>
#include <cctype>
#include <string_view>

#include "harness/tokenizer/token_counter.h"

namespace kvtest {

class WordTokenCounter final : public kvgate::TokenCounter {
 public:
  std::size_t count_text(std::string_view s) const override {
    ++calls;
    bytes += s.size();
    std::size_t n = 0;
    std::string_view prev_word;
    std::size_t i = 0;
    while (i < s.size()) {
      const unsigned char c = static_cast<unsigned char>(s[i]);
      if (std::isalpha(c) || c >= 0x80) {
        std::size_t j = i;
        while (j < s.size() && (std::isalpha(static_cast<unsigned char>(s[j])) || static_cast<unsigned char>(s[j]) >= 0x80)) ++j;
        const std::string_view word = s.substr(i, j - i);
        if (!(prev_word == "of" && word == "the")) n += word.size() > 8 ? 2 : 1;
        prev_word = word;
        i = j;
      } else if (c == '\n') {
        while (i < s.size() && s[i] == '\n') ++i;
        ++n;
      } else if (c == ' ' || c == '\t') {
        ++i;
      } else {
        ++n;  // a digit or a punctuation mark
        prev_word = {};
        ++i;
      }
    }
    return n;
  }
  std::size_t count_chat(const nlohmann::json& messages) const override {
    return count_text(kvgate::render_chatml(messages, true));
  }
  bool exact() const override { return true; }
  std::string source() const override { return "test:words"; }

  mutable std::atomic<std::size_t> calls{0};
  mutable std::atomic<std::size_t> bytes{0};
};

}  // namespace kvtest
