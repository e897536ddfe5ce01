// Engine metadata for run.json: what each endpoint says about itself, read where the server
// exposes it. vLLM: /v1/models (max_model_len), /version, /metrics (cache_config_info: the KV cache
// dtype). SGLang: /server_info or /get_server_info (server args, kv_cache_dtype). llama.cpp:
// /props (per-slot n_ctx, total_slots, build_info) and /v1/models meta (n_ctx, n_ctx_train).
// trtllm-serve: /version. A missing endpoint is simply absent.
#pragma once
#include <cstdint>
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
//  "error"}], "summary": {"engine", "version", "kv_cache_dtype", "max_model_len", "max_model_len_source",
//  "slots", "n_ctx_train", "model_loaded" (llama.cpp's model_path), "served_models"}};
// max_model_len is what one request may use: llama.cpp's per-slot n_ctx (/props, then /v1/models
// meta.n_ctx), vLLM's /v1/models max_model_len, SGLang's /server_info context_length; its source
// names the field. Warns (log_warn) when replicas disagree or --model is not among the served
// models (except llama-server, which serves its one model under any name).
nlohmann::json probe_engines(const std::vector<EndpointProbe>& endpoints, const std::string& model, const ProbeGet& get);

// The summary's context limit and where it came from, for messages: "32768 tokens (/v1/models
// max_model_len)"; llama.cpp: "4096 tokens per slot (llama.cpp /props default_generation_settings.n_ctx,
// total_slots 4: llama-server -c 16384 -np 4 gives each slot -c / -np)". "" when the summary has none.
std::string context_limit_text(const nlohmann::json& summary);

// How to start the engine with `wanted` tokens per request: "start llama-server with -c 65536 -np 4,
// or with fewer slots (-c 16384 -np 1)", "start vLLM with --max-model-len N"; "" for other engines.
std::string context_advice(const nlohmann::json& summary, std::int64_t wanted);

// Labels of the first `metric{...}` sample in Prometheus text: {"cache_dtype": "fp8", ...}.
nlohmann::json prometheus_labels(const std::string& text, const std::string& metric);

}  // namespace kvgate::runner
