// make_engine: the one place that picks the engine for a device.
#include "harness/decoder/engine.h"

#include "harness/core/error.h"
#include "kernels/cuda_info.h"

namespace kvgate::decoder {

std::unique_ptr<Engine> make_engine(std::shared_ptr<const Model> model, const EngineOptions& options) {
  if (options.device == "cpu") return make_cpu_engine(std::move(model), options);
  if (options.device == "cuda") {
    if (kernels::cuda_built() && kernels::cuda_device_count() == 0)
      throw Error("--device cuda: no GPU is visible (" + kernels::cuda_describe() + "); use --device cpu");
    return make_cuda_engine(std::move(model), options);
  }
  throw Error("--device " + options.device + ": must be cuda or cpu");
}

}  // namespace kvgate::decoder
