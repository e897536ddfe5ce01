// `kvgate gen golden --prompts F`: the user's production requests become trials run at temperature 0.
// A line of F is a chat request:
//   {"id": "...", "messages": [...], "tools": [...], "tool_choice": ..., "response_format": {...},
//    "max_tokens": N, "stop": [...]}
// or an OpenAI Batch API line {"custom_id": "...", "body": {...the request...}}. "id" / "custom_id"
// are optional (else the id is a hash of the request); "messages" is required. Sampling keys of the
// request (model, temperature, top_p, seed, n, stream, ...) are dropped with a warning: golden
// prompts run greedy, and the run decides the model.
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "harness/core/trial.h"

namespace kvgate {

struct GoldenGenOptions {
  std::string prompts_path{};
  std::optional<int> max_tokens{};  // for requests that carry none; unset = the run's --max-tokens
};

struct GoldenGenResult {
  std::vector<Trial> trials{};
  std::vector<std::string> ignored_keys{};  // request keys dropped (sorted, unique), for the warning
};

// Errors name the file and line: not an object, "messages" missing or malformed, bad "tools" or
// "response_format", a repeated id.
GoldenGenResult make_golden_trials(const GoldenGenOptions& options);

}  // namespace kvgate
