#include "harness/gate/engine_log.h"

#include <filesystem>

#include "harness/core/error.h"

namespace kvgate::gate {

void check_engine_log(const Configuration& config) {
  if (config.engine_log.empty()) return;
  if (!std::filesystem::is_regular_file(config.engine_log))
    throw Error("engine log " + config.engine_log + " of " + config.label + ": no such file: pass the server's startup log");
}

void apply_engine_log(runner::RunSessionOptions& session, const Configuration& config) {
  check_engine_log(config);
  session.engine_log = config.engine_log;  // `kvgate run --engine-log`: provenance in run.json engine.log
}

}  // namespace kvgate::gate
