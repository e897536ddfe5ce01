// The text side of a checkpoint for the reference decoder: its tokenizer and chat template
// (tokenizer.json, tokenizer_config.json), the ids that end a generation, and the mapping from
// OpenAI-style sampling to GenerateOptions. Chat prompts are rendered with the model's own
// template (add_generation_prompt), completions prompts encoded with the tokenizer's special
// tokens (a Llama-3 BOS), as vLLM does; generated ids become text byte-exactly (byte-level BPE),
// special tokens skipped by default, invalid UTF-8 replaced by U+FFFD as Hugging Face decodes.
#pragma once
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "harness/decoder/generate.h"
#include "harness/decoder/model_config.h"
#include "harness/tokenizer/tokenizer.h"

namespace kvgate::decoder {

// One request's sampling, as the OpenAI API and kvgate's run.json state it.
struct TextSampling {
  kernels::SamplerParams sampler{};  // temperature 0: greedy
  std::uint64_t seed = 0;
  int max_tokens = 256;
  std::vector<std::string> stop{};
  bool skip_special_tokens = true;  // vLLM's default
};

class ModelText {
 public:
  // DIR/tokenizer.json (+ tokenizer_config.json); `config` gives the eos ids of config.json and
  // generation_config.json, which end a generation together with the tokenizer's eos token.
  static ModelText load(const std::string& model_dir, const ModelConfig& config);
  ModelText(Tokenizer tokenizer, const ModelConfig& config);

  const Tokenizer& tokenizer() const { return tokenizer_; }
  const std::vector<int>& stop_token_ids() const { return stop_ids_; }
  int max_model_len() const { return max_model_len_; }

  // The rendered chat, ids as transformers' apply_chat_template(tokenize=True) gives them.
  std::vector<int> encode_chat(const nlohmann::ordered_json& messages, const ChatOptions& options) const;
  // A completions prompt, with the tokenizer's post-processor (BOS where the model adds one).
  std::vector<int> encode_prompt(std::string_view text) const;
  // The raw bytes of one id (special tokens: "" when skipped).
  std::function<std::string(int)> token_text(bool skip_special_tokens) const;
  // GenerateOptions for a request: the sampling, the stop ids, stop strings and token text.
  GenerateOptions generate_options(const TextSampling& s) const;
  // The text of a generation: its bytes with invalid UTF-8 replaced (the decoder works on bytes).
  static std::string text_of(const Generation& g);

 private:
  Tokenizer tokenizer_;
  std::vector<int> stop_ids_;
  int vocab_size_ = 0;
  int max_model_len_ = 0;
};

// Incremental text of one generation for streaming: push each id as it is generated and get the
// text that is final, i.e. complete UTF-8 that no stop string can still cut (the last
// longest-stop - 1 bytes are held back, and nothing from a completed stop string on);
// finish() gives the rest of the generation's final text.
// Everything emitted is a prefix of ModelText::text_of(generation).
class TextStreamer {
 public:
  TextStreamer(std::function<std::string(int)> token_text, std::vector<int> stop_token_ids,
               const std::vector<std::string>& stop);
  std::string push(int id);
  std::string finish(const std::string& final_text);
  const std::string& emitted() const { return emitted_; }

 private:
  std::function<std::string(int)> token_text_;
  std::vector<int> stop_ids_;
  std::vector<std::string> stops_;
  std::size_t hold_ = 0;
  std::string raw_, emitted_;
  std::size_t sent_raw_ = 0;
};

}  // namespace kvgate::decoder
