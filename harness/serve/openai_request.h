// The requests `kvgate serve` accepts, parsed and checked before anything runs: chat/completions,
// completions, tokenize and detokenize bodies as the OpenAI API and vLLM define them. Every
// problem is an ApiError naming the parameter (400), an unknown model (404) or a prompt past the
// context (400). Parameters the reference decoder cannot honour (penalties, logit_bias, logprobs,
// guided decoding, n > 1) are refused unless they carry their neutral value; unknown fields are
// ignored, as vLLM does.
#pragma once
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "harness/decoder/model_text.h"

namespace kvgate::serve {

using ojson = nlohmann::ordered_json;

struct ServedModelInfo {
  std::string name;             // the served model name
  const decoder::ModelText* text = nullptr;
  int vocab_size = 0;
  int max_model_len = 0;
  int default_max_tokens = 0;   // 0: what the context has left (vLLM)
};

struct GenerationRequest {
  bool chat = true;
  std::vector<std::vector<int>> prompts;  // one per choice (completions may batch prompts)
  decoder::TextSampling sampling;
  std::vector<int> max_tokens;            // per prompt
  bool stream = false;
  bool include_usage = false;             // stream_options.include_usage
};

// The body as JSON: 400 when it is not a JSON object or nests deeper than 64 levels.
ojson parse_body(std::string_view body);

GenerationRequest parse_chat_request(const ojson& body, const ServedModelInfo& model);
GenerationRequest parse_completion_request(const ojson& body, const ServedModelInfo& model);

// /tokenize: {"count", "max_model_len", "tokens", "token_strs"} (vLLM's shape).
nlohmann::json tokenize(const ojson& body, const ServedModelInfo& model);
// /detokenize: {"prompt": text}.
nlohmann::json detokenize(const ojson& body, const ServedModelInfo& model);

}  // namespace kvgate::serve
