#include "gate/engine_log.h"

#include "core/error.h"

namespace kvgate::gate {

void check_engine_log(const Configuration& config) {
  if (config.engine_log.empty()) return;
  throw Error("engine log " + config.engine_log + " of " + config.label +
              ": reading engine startup logs is not built yet (issue #16): drop --baseline-engine-log / --candidate-engine-log");
}

void apply_engine_log(runner::RunSessionOptions&, const Configuration& config) { check_engine_log(config); }

}  // namespace kvgate::gate
