// Sampling parameters of a run: always explicit and recorded in run.json, never inferred.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace kvgate {

struct SamplingParams {
  double temperature = 0.0;
  double top_p = 1.0;
  std::optional<int> top_k;              // not part of the OpenAI API; sent only when set
  std::optional<std::uint64_t> seed;     // base seed; repeat r uses derive_seed(seed, id#r)
  int max_tokens = 1024;
  std::vector<std::string> stop;         // merged with a trial's own "stop"
  nlohmann::json extra_body = nlohmann::json::object();  // passed through to the request body
};

nlohmann::json to_json(const SamplingParams& s);
SamplingParams sampling_from_json(const nlohmann::json& j, const std::string& where);

}  // namespace kvgate
