// One backend interface, two implementations (style.md §5): the OpenAI-compatible HTTP client and
// kvgate's reference decoder, plus fakes in tests. Retries, backoff, timeouts and concurrency live
// once, in the runner: a backend makes one attempt and says whether it may be retried.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "harness/core/sampling.h"
#include "harness/core/trial.h"

namespace kvgate {

struct Request {
  const Trial* trial = nullptr;
  int repeat = 0;
  SamplingParams sampling;  // resolved for this (trial, repeat): per-repeat seed, merged stop strings
};

struct Response {
  std::string text;
  std::string reasoning;       // reasoning_content / thinking, when the server separates it
  std::string finish_reason;   // "stop", "length", "tool_calls", ...
  nlohmann::json tool_calls;   // null, or the message's tool_calls array
  std::optional<std::int64_t> prompt_tokens;
  std::optional<std::int64_t> completion_tokens;
  double latency_ms = 0.0;
  std::optional<double> ttft_ms;            // streaming: time to the first content token
  std::vector<double> inter_token_ms;       // streaming: gaps between content chunks
  // Failure of this attempt: set `error`; `retryable` for 429, 5xx, timeouts and connection errors.
  std::optional<std::string> error;
  bool retryable = false;
  std::optional<double> retry_after_s;      // from a Retry-After header
  int http_status = 0;
  // Failure class for reports and error rates: "timeout", "connection", "http_429", "http_5xx",
  // "http_4xx", "server_error", "bad_json", "malformed", "truncated", "too_large", "tls",
  // "cancelled", "backend" (the runner adds "grader"). Empty on success.
  std::string error_kind;
  // Backend-specific facts recorded in the result line (token usage, endpoint, stream chunks, ...).
  nlohmann::json details = nlohmann::json::object();
};

class Backend {
 public:
  virtual ~Backend() = default;
  // One attempt. Thread-safe: the runner calls it from several workers at once.
  virtual Response complete(const Request& request) = 0;
  // Provenance for run.json: backend kind, model, engine metadata, KV settings.
  virtual nlohmann::json describe() = 0;
};

}  // namespace kvgate
