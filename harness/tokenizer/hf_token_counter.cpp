// The exact token counter: a Hugging Face tokenizer.json, with the checkpoint's chat template (or
// the ChatML fallback) for whole chat inputs.
#include "harness/tokenizer/token_counter.h"
#include "harness/tokenizer/tokenizer.h"

namespace kvgate {

namespace {
class HfTokenCounter final : public TokenCounter {
 public:
  explicit HfTokenCounter(Tokenizer t) : tokenizer_(std::move(t)) {}
  std::size_t count_text(std::string_view text) const override { return tokenizer_.count(text, false); }
  std::size_t count_chat(const nlohmann::json& messages) const override {
    ChatOptions o;
    o.add_generation_prompt = true;
    return tokenizer_.count(tokenizer_.apply_chat_template(nlohmann::ordered_json(messages), o), false);
  }
  bool exact() const override { return true; }
  std::string source() const override { return "tokenizer.json:" + tokenizer_.path(); }

 private:
  Tokenizer tokenizer_;
};
}  // namespace

std::unique_ptr<TokenCounter> make_hf_token_counter(const std::string& path) {
  return std::make_unique<HfTokenCounter>(Tokenizer::load(path));
}

}  // namespace kvgate
