// Provenance from a serving engine's startup log (vLLM, SGLang, TensorRT-LLM, llama-server): what
// the engine actually did, which its HTTP endpoints do not say: the attention backend it selected, the KV
// cache dtype and where its scales came from, the KV cache size in tokens, maximum concurrency,
// engine version, model and revision, GPU. `kvgate run --engine-log FILE` stores the result in
// run.json (engine.log); `kvgate gate` calls parse_engine_log once per configuration.
//
// The line formats are data (engine_log_patterns.json, compiled in; docs/engine-log.md lists the
// fields). Lines no pattern knows are ignored; a log that matches nothing is not an error: the
// result carries a warning (callers print `warnings`), and compare then reports the facts as unknown.
#pragma once
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace kvgate::provenance {

// The result, stored as run.json engine.log:
//   {"path", "sha256", "bytes", "lines",
//    "engine": "vllm" | "sglang" | "tensorrt_llm" | "llama.cpp" | null,
//    "facts": {"version", "model", "revision", "attention_backend", "attention_backend_candidates",
//              "flash_attn_version", "kv_cache_dtype", "kv_cache_dtype_allocated", "kv_scales",
//              "q_scale", "kv_cache_tokens", "kv_cache_gib", "max_concurrency",
//              "max_concurrency_tokens_per_request", "max_model_len", "tensor_parallel", "gpu",
//              "gpu_memory_gib",
//              llama.cpp: "type_k", "type_v", "flash_attn", "n_ctx", "n_ctx_per_seq", "n_ctx_train", "slots",
//              "kv_unified", "kv_cache_mib", "listen_address"}   (only the facts found),
//    "evidence": {field: {"line": N (1-based), "pattern": id, "raw": text before normalizing}},
//    "notes": [lines that disagreed with the kept value, e.g. two ranks or a draft model],
//    "warnings": [nothing matched; several engines matched]}
// Evidence never copies log text beyond the captured value (a log line may hold an API key).
// Throws kvgate::Error (exit 2) only when the file cannot be read.
nlohmann::json parse_engine_log(const std::string& path);

// The same on text already in memory; `name` stands for the path in the result and messages.
nlohmann::json parse_engine_log_text(std::string_view text, const std::string& name);

// One line for logs and reports: "vllm 0.10.2, attention FLASH_ATTN, KV fp8 (scales default_1.0),
// KV cache 950,992 tokens, max concurrency 29.02, GPU NVIDIA H200"; only the facts found.
std::string facts_line(const nlohmann::json& engine_log);

// 950992 -> "950,992".
std::string thousands(long long v);

// The compiled-in pattern table (engine_log_patterns.json) as JSON, for docs and tests.
const nlohmann::json& engine_log_pattern_table();

// Engines the table knows: "vllm", "sglang", "tensorrt_llm", "llama.cpp" (the name the endpoint probe
// gives llama-server, so the log and the probe agree).
const std::vector<std::string>& known_engines();

}  // namespace kvgate::provenance
