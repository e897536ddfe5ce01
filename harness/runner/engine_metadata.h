// Engine metadata for run.json: what each endpoint says about itself, read where the server
// exposes it. vLLM: /v1/models (max_model_len), /version, /metrics (cache_config_info: the KV cache
// dtype). SGLang: /server_info or /get_server_info (server args, kv_cache_dtype). llama.cpp:
// /props (n_ctx, build_info). trtllm-serve: /version. A missing endpoint is simply absent.
#pragma once
#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace kvgate::runner {

struct EndpointProbe {
  std::string base;      // for requests
  std::string redacted;  // for the record
};

struct ProbeAnswer {
  long status = 0;
  std::string body;
  std::string error;  // transport failure
};
using ProbeGet = std::function<ProbeAnswer(const std::string& url)>;

// {"endpoints": [{"url", "reachable", "models", "version", "server_info", "props", "cache_config",
//  "error"}], "summary": {"engine", "version", "kv_cache_dtype", "max_model_len", "served_models"}};
// warns (log_warn) when replicas disagree or --model is not among the served models.
nlohmann::json probe_engines(const std::vector<EndpointProbe>& endpoints, const std::string& model, const ProbeGet& get);

// Labels of the first `metric{...}` sample in Prometheus text: {"cache_dtype": "fp8", ...}.
nlohmann::json prometheus_labels(const std::string& text, const std::string& metric);

}  // namespace kvgate::runner
