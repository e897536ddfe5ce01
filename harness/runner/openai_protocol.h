// The OpenAI chat/completions and completions wire format, as vLLM, SGLang, trtllm-serve and
// llama.cpp's server speak it: request bodies, complete response bodies, SSE stream chunks and
// error bodies. Pure functions on bytes (fuzzed: tests/fuzz/fuzz_openai_response.cpp, fuzz_sse.cpp).
#pragma once
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "harness/core/backend.h"
#include "harness/runner/sse_parser.h"

namespace kvgate::runner {

enum class Api { chat, completions };
const char* to_string(Api api);       // "chat", "completions"
const char* api_path(Api api);        // "/chat/completions", "/completions"
Api parse_api(const std::string& s);  // Error naming --api

struct BodyOptions {
  Api api = Api::chat;
  std::string model;
  bool stream = false;
};

// The request body for one (trial, repeat): the trial's input (messages or prompt, plus its own
// generation hints such as tools or response_format), the resolved sampling, then extra_body,
// which wins over everything but the input itself.
std::string build_request_body(const Trial& trial, const SamplingParams& sampling, const BodyOptions& options);

// Reads a complete 200 body into `out` (text, reasoning, finish_reason, tool_calls, usage). A body
// that is not JSON (cut short) is a retryable "bad_json" error; JSON of the wrong shape is a
// "malformed" error; an error object inside a 200 is a "server_error".
void parse_response_body(std::string_view body, Api api, Response& out);

// The server's own message from an error body: {"error":{"message"}}, {"message"}, {"detail"},
// or the start of the text. Never longer than ~500 bytes.
std::string server_error_message(std::string_view body);

// Accumulates the chunks of one streamed answer.
class StreamAccumulator {
 public:
  explicit StreamAccumulator(Api api) : api_(api) {}
  // One SSE event; t_ms: milliseconds since the request was sent.
  void on_event(const SseEvent& event, double t_ms);
  bool saw_done() const { return done_; }
  bool failed() const { return !error_.empty(); }
  // Moves the answer into `out`, or sets the error when the stream was malformed or ended before
  // its finish_reason.
  void finish(Response& out);

 private:
  void on_chunk(const nlohmann::json& chunk, std::string_view raw, double t_ms);
  void fail(std::string kind, std::string message, bool retryable);

  Api api_;
  std::string text_, reasoning_, finish_reason_;
  std::vector<nlohmann::json> tool_calls_;
  nlohmann::json usage_;
  std::optional<double> first_ms_;
  double last_ms_ = 0.0;
  std::vector<double> gaps_ms_;
  std::size_t chunks_ = 0;
  bool done_ = false;
  std::string error_, error_kind_;
  bool retryable_ = false;
};

// True when `v` nests no deeper than `max_depth` (server JSON kept in results must print safely).
bool within_depth(const nlohmann::json& v, int max_depth);

}  // namespace kvgate::runner
