// `kvgate run` as a library call: loads and checks the tasks, takes the run directory (resuming
// what its journal holds, or refusing a different configuration), asks the engine about itself,
// runs the work with progress, and leaves run.json with the summary and error rate.
#pragma once
#include <string>

#include <nlohmann/json.hpp>

#include "harness/core/sampling.h"
#include "harness/runner/backend_factory.h"
#include "harness/runner/runner.h"
#include "harness/runner/work_plan.h"

namespace kvgate::runner {

struct RunSessionOptions {
  std::string tasks_path;
  std::string out_dir;
  std::string label;  // "" -> the directory's name
  BackendOptions backend;
  std::string kv_format;  // declared KV format of the server (openai) or the decoder's (reference)
  std::string engine_log; // the server's startup log (--engine-log): provenance in run.json engine.log
  SamplingParams sampling;
  int repeats = 1;
  Shard shard;
  bool force_new = false;     // set an old run with another configuration aside and start over
  bool retry_errors = false;  // drop error lines from the journal and run those pairs again
  bool fsync = false;         // fsync after every line (survives power loss)
  int concurrency = 8;
  RetryPolicy retry;
  std::string progress = "auto";  // auto | bar | lines | none
  double progress_interval_s = 10.0;
  double max_error_rate = 1.0;  // exit 1 when the run's error rate ends above it
  GradeFn grade;                // grade_trial in the product
};

struct RunSessionResult {
  int exit_code = 0;  // 0 complete, 1 error rate above --max-error-rate, 130/143 stopped by a signal
  nlohmann::json summary;
};

RunSessionResult run_session(const RunSessionOptions& options);

// The API key from the environment: `name` when given (Error when unset), else OPENAI_API_KEY
// (none is fine: local servers need no key). Never printed.
std::string read_api_key(const std::string& name, bool name_given);

// The configuration a resume must match (run.json "identity").
nlohmann::json run_identity(const RunSessionOptions& options, const std::string& tasks_sha256);

}  // namespace kvgate::runner
