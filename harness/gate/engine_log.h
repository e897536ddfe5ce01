// Issue #16 (provenance): a configuration's engine startup log (--baseline-engine-log,
// --candidate-engine-log) is parsed into its run.json by `kvgate run --engine-log`. That issue
// reads it (run.json engine.log, the pinning check and the gains of the reports).
#pragma once
#include "harness/gate/configurations.h"
#include "harness/runner/run_session.h"

namespace kvgate::gate {

// Before any work: the log exists and can be read (an Error names it otherwise).
void check_engine_log(const Configuration& config);
// Per run of the configuration: hands the log to the run (run.json records what it says).
void apply_engine_log(runner::RunSessionOptions& session, const Configuration& config);

}  // namespace kvgate::gate
