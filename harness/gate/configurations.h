// The configurations a gate compares: a baseline and one or more candidates, each an
// OpenAI-compatible endpoint or the reference decoder with a KV format. With nothing named, the
// demo model (models/demo/) through the reference decoder, bf16 against fp8_e4m3 and
// int4_per_token_head.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "harness/gate/candidate_kv.h"
#include "harness/runner/backend_factory.h"

namespace kvgate::gate {

struct Configuration {
  std::string label{};         // DIR/runs/<label>/ and the name in reports
  runner::BackendOptions backend{};  // kind "openai" or "reference"
  std::string kv_format{};     // the decoder's format (reference); an endpoint's declared one, "" when not declared
  KvSettings kv{};             // the format and its settings (scales, skipped layers, kernel switches)
  std::string engine_log{};    // the server's startup log, parsed into run.json (docs/engine-log.md)
};

// What the command line named.
struct Targets {
  std::string baseline_url{};
  std::vector<std::string> candidate_urls{};
  std::string model{};          // model name sent to the endpoints
  std::string api = "chat";     // chat | completions (endpoints)
  std::string model_dir{};      // reference decoder checkpoint ("" -> the demo model)
  // FORMAT[,KEY=VALUE...] (candidate_kv.h). The reference decoder: "" -> bf16 for the baseline; an
  // endpoint (--baseline URL, --candidate URL): the format its server runs, declared for the reports
  // and the pinning check and checked against what the engine reports.
  std::string baseline_kv{};
  std::vector<std::string> candidate_kv{};  // each value may hold several formats; with --candidate URLs one per URL
  std::string device{};         // cuda | cpu | "" (cuda when a GPU is present; resolved and recorded)
  int threads = 1;              // reference decoder on CPU: threads per sequence
  int max_batch = 32;           // reference decoder: sequences decoded at once
  std::string numerics{};       // reference decoder: --numerics exact | engine ("" = the device's default), every configuration
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
// a label used twice or unfit for a directory name, engine logs without their configuration, a KV
// setting that is unknown or unreadable (candidate_kv.h), a declared endpoint format per URL missing.
// Labels of the reference decoder's candidates say their settings (fp8_e4m3+calibrated).
std::vector<Configuration> make_configurations(const Targets& t);

// models/demo/ of the kvgate checkout: beside the working directory, or beside the executable
// (build/kvgate -> models/demo), or in the source tree the binary was built from. "" when none.
std::string find_demo_model();

// The model's shape: every reference configuration's format and settings resolved against it
// (skipped layers in range, a scales file of the right layer and head count), before any run.
void check_kv_settings(const std::vector<Configuration>& configs);

// An endpoint with a declared KV format against what its engine says (the /v1/models probe's
// kv_cache_dtype, the startup log's): Error naming both when they differ. Formats the engine names
// its own way are mapped first (vLLM "fp8" is fp8_e4m3, "auto"/"bfloat16" bf16, llama.cpp "f16").
// `reported` is what the engine said; "" skips the check.
void check_declared_kv(const Configuration& config, const std::string& reported, const std::string& source);

// A served format name in kvgate's words, "" when it has none.
std::string kvgate_format_of(const std::string& engine_kv_dtype);

// The smallest maximum context among the configurations: the server's /v1/models max_model_len,
// the checkpoint's max_position_embeddings. 0 when none tells. `source` says where it came from.
// `engine` (optional) receives the limiting endpoint's engine summary (runner::context_advice).
std::int64_t discover_max_context(const std::vector<Configuration>& configs, std::string* source,
                                  nlohmann::json* engine = nullptr);

}  // namespace kvgate::gate
