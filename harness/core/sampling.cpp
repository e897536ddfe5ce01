#include "harness/core/sampling.h"

#include "harness/core/json_fields.h"

namespace kvgate {

using nlohmann::json;

json to_json(const SamplingParams& s) {
  json j = {{"temperature", s.temperature}, {"top_p", s.top_p}, {"max_tokens", s.max_tokens}, {"stop", s.stop}};
  j["top_k"] = s.top_k ? json(*s.top_k) : json(nullptr);
  j["seed"] = s.seed ? json(*s.seed) : json(nullptr);
  j["extra_body"] = s.extra_body;
  return j;
}

SamplingParams sampling_from_json(const json& j, const std::string& where) {
  FieldReader f(j, where);
  SamplingParams s;
  if (auto v = f.opt_number("temperature")) s.temperature = *v;
  if (auto v = f.opt_number("top_p")) s.top_p = *v;
  if (auto v = f.opt_integer("top_k")) s.top_k = static_cast<int>(*v);
  if (auto v = f.opt_integer("seed")) s.seed = static_cast<std::uint64_t>(*v);
  if (auto v = f.opt_integer("max_tokens")) s.max_tokens = static_cast<int>(*v);
  if (f.has_value("stop"))
    for (const json& x : f.array("stop")) {
      if (!x.is_string()) f.fail("stop", "must be an array of strings");
      s.stop.push_back(x.get<std::string>());
    }
  if (f.has_value("extra_body")) s.extra_body = f.object("extra_body");
  if (s.temperature < 0) f.fail("temperature", "must be >= 0");
  if (s.top_p <= 0 || s.top_p > 1) f.fail("top_p", "must be in (0, 1]");
  if (s.max_tokens <= 0) f.fail("max_tokens", "must be positive");
  return s;
}

}  // namespace kvgate
