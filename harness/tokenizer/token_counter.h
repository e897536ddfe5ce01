// Counting tokens for exact-length trials. Generators ask "how many tokens is this whole input?";
// the answer comes from a Hugging Face tokenizer.json (harness/tokenizer), a server's /tokenize
// endpoint, or, with neither, an estimate that says so in the trial's meta.
#pragma once
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace kvgate {

class TokenCounter {
 public:
  virtual ~TokenCounter() = default;
  // Tokens of plain text (no special tokens added).
  virtual std::size_t count_text(std::string_view text) const = 0;
  // Tokens of a whole chat input as the server would see it: chat template applied, generation
  // prompt added. Counters without a template use a built-in ChatML rendering.
  virtual std::size_t count_chat(const nlohmann::json& messages) const = 0;
  // True when counts are exact (a tokenizer), false for the estimate.
  virtual bool exact() const = 0;
  // "tokenizer.json:/path", "tokenize-url:http://...", "estimate:chars/4": recorded in trial meta.
  virtual std::string source() const = 0;
};

struct TokenCounterOptions {
  std::string tokenizer_path;  // --tokenizer tokenizer.json (tokenizer_config.json beside it gives the template)
  std::string tokenize_url;    // --tokenize-url http://host:8000 (vLLM, SGLang or llama.cpp /tokenize)
  std::string model;           // model name sent to /tokenize
  std::string tokenize_api = "auto";  // --tokenize-api auto|llamacpp|vllm|sglang: /tokenize's request shape
};

// Picks the counter the options name; with none, the estimate. Errors name the bad file or URL.
std::unique_ptr<TokenCounter> open_token_counter(const TokenCounterOptions& options);

// The estimate: about 4 bytes of English text per token (stated in meta as approximate).
std::unique_ptr<TokenCounter> make_estimating_token_counter();
// A Hugging Face tokenizer.json (+ tokenizer_config.json beside it). Implemented by the tokenizer module.
std::unique_ptr<TokenCounter> make_hf_token_counter(const std::string& tokenizer_path);
// A server's /tokenize endpoint (vLLM, SGLang, llama.cpp; `api` "auto" detects which on the first
// probe). Throws when the server's counts do not measure text. Implemented in remote_token_counter.cpp.
std::unique_ptr<TokenCounter> make_remote_token_counter(const std::string& url, const std::string& model,
                                                       const std::string& api = "auto");

// The ChatML rendering used when no chat template is known:
// "<|im_start|>{role}\n{content}<|im_end|>\n" per message, then "<|im_start|>assistant\n".
std::string render_chatml(const nlohmann::json& messages, bool add_generation_prompt);

}  // namespace kvgate
