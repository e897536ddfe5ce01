#include "harness/tokenizer/token_counter.h"

#include "harness/core/error.h"

namespace kvgate {

using nlohmann::json;

std::string render_chatml(const json& messages, bool add_generation_prompt) {
  std::string out;
  for (const json& m : messages) {
    out += "<|im_start|>" + m.value("role", std::string()) + "\n";
    const json& c = m.contains("content") ? m["content"] : json();
    if (c.is_string()) {
      out += c.get<std::string>();
    } else if (c.is_array()) {  // OpenAI content parts: concatenate the text parts
      for (const json& part : c)
        if (part.is_object() && part.value("type", "") == "text") out += part.value("text", "");
    }
    out += "<|im_end|>\n";
  }
  if (add_generation_prompt) out += "<|im_start|>assistant\n";
  return out;
}

namespace {
class EstimatingTokenCounter final : public TokenCounter {
 public:
  std::size_t count_text(std::string_view text) const override { return (text.size() + 3) / 4; }
  std::size_t count_chat(const json& messages) const override {
    return count_text(render_chatml(messages, true));
  }
  bool exact() const override { return false; }
  std::string source() const override { return "estimate:bytes/4"; }
};
}  // namespace

std::unique_ptr<TokenCounter> make_estimating_token_counter() { return std::make_unique<EstimatingTokenCounter>(); }

std::unique_ptr<TokenCounter> open_token_counter(const TokenCounterOptions& o) {
  if (!o.tokenizer_path.empty() && !o.tokenize_url.empty())
    throw Error("--tokenizer and --tokenize-url both given: pass one");
  if (!o.tokenizer_path.empty()) return make_hf_token_counter(o.tokenizer_path);
  if (!o.tokenize_url.empty()) return make_remote_token_counter(o.tokenize_url, o.model, o.tokenize_api);
  return make_estimating_token_counter();
}

}  // namespace kvgate
