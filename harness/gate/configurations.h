// The configurations a gate compares: a baseline and one or more candidates, each an
// OpenAI-compatible endpoint or the reference decoder with a KV format. With nothing named, the
// demo model (models/demo/) through the reference decoder, bf16 against fp8_e4m3 and
// int4_per_token_head.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "harness/runner/backend_factory.h"

namespace kvgate::gate {

struct Configuration {
  std::string label{};         // DIR/runs/<label>/ and the name in reports
  runner::BackendOptions backend{};  // kind "openai" or "reference"
  std::string kv_format{};     // the decoder's format (reference); "" for an endpoint (its engine says)
  std::string engine_log{};    // the server's startup log, parsed into run.json (docs/engine-log.md)
};

// What the command line named.
struct Targets {
  std::string baseline_url{};
  std::vector<std::string> candidate_urls{};
  std::string model{};          // model name sent to the endpoints
  std::string api = "chat";     // chat | completions (endpoints)
  std::string model_dir{};      // reference decoder checkpoint ("" -> the demo model)
  std::string baseline_kv{};    // "" -> bf16 when the baseline is the reference decoder
  std::vector<std::string> candidate_kv{};
  std::string device{};         // cuda | cpu | "" (cuda when a GPU is present; resolved and recorded)
  int threads = 1;              // reference decoder on CPU: threads per sequence
  int max_batch = 32;           // reference decoder: sequences decoded at once
  std::string baseline_label{};
  std::vector<std::string> candidate_labels{};  // in candidate order: endpoints first, then KV formats
  std::string baseline_engine_log{};
  std::vector<std::string> candidate_engine_logs{};
  // Endpoint transport, as for `kvgate run`.
  std::string api_key_env{};
  bool insecure = false;
  std::string ca_bundle{};
  double timeout_s = 600.0;
  bool stream = false;
};

// [0] is the baseline. Errors name the flag and the fix: an endpoint without --model, no candidate,
// a label used twice or unfit for a directory name, engine logs without their configuration.
std::vector<Configuration> make_configurations(const Targets& t);

// models/demo/ of the kvgate checkout: beside the working directory, or beside the executable
// (build/kvgate -> models/demo), or in the source tree the binary was built from. "" when none.
std::string find_demo_model();

// The smallest maximum context among the configurations: the server's /v1/models max_model_len,
// the checkpoint's max_position_embeddings. 0 when none tells. `source` says where it came from.
// `engine` (optional) receives the limiting endpoint's engine summary (runner::context_advice).
std::int64_t discover_max_context(const std::vector<Configuration>& configs, std::string* source,
                                  nlohmann::json* engine = nullptr);

}  // namespace kvgate::gate
