// Token counters for tests of exact-length fitting, standing in for a real tokenizer:
//  - PreTokenCounter: exact and additive like a BPE over a pre-tokenizer (runs of letters or
//    digits, each other non-space character, a space joins the next run), ChatML-like overhead;
//  - LongWordCounter: words over 6 letters count twice, so a cut can jump by two;
//  - ChunkCounter: ceil(bytes / 7) of the whole rendering (not additive across messages).
#pragma once
#include <cctype>
#include <cstddef>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "harness/tokenizer/token_counter.h"

namespace kvtest {

class PreTokenCounter : public kvgate::TokenCounter {
 public:
  std::size_t count_text(std::string_view t) const override {
    std::size_t n = 0;
    for (std::size_t i = 0; i < t.size();) {
      const unsigned char c = static_cast<unsigned char>(t[i]);
      if (c == ' ' && i + 1 < t.size() && std::isalnum(static_cast<unsigned char>(t[i + 1]))) ++i;  // " word"
      if (std::isalnum(static_cast<unsigned char>(t[i]))) {
        std::size_t j = i;
        while (j < t.size() && std::isalnum(static_cast<unsigned char>(t[j]))) ++j;
        n += run_tokens(j - i);
        i = j;
      } else {
        ++n;
        ++i;
      }
    }
    return n;
  }
  std::size_t count_chat(const nlohmann::json& messages) const override {
    std::size_t n = 3;  // generation prompt
    for (const auto& m : messages) n += 4 + count_text(m.value("content", std::string()));
    return n;
  }
  bool exact() const override { return true; }
  std::string source() const override { return "test:pretoken"; }

 protected:
  virtual std::size_t run_tokens(std::size_t) const { return 1; }
};

class LongWordCounter : public PreTokenCounter {
 protected:
  std::size_t run_tokens(std::size_t len) const override { return len > 6 ? 2 : 1; }
};

class ChunkCounter : public kvgate::TokenCounter {
 public:
  std::size_t count_text(std::string_view t) const override { return (t.size() + 6) / 7; }
  std::size_t count_chat(const nlohmann::json& messages) const override {
    return count_text(kvgate::render_chatml(messages, true));
  }
  bool exact() const override { return true; }
  std::string source() const override { return "test:chunk7"; }
};

}  // namespace kvtest
