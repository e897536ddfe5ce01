// make_cuda_engine where this build has no CUDA engine: built without CUDA, or with CUDA before the
// CUDA engine (which sets KVGATE_CUDA_ENGINE) is part of it.
#include "harness/core/error.h"
#include "kernels/cuda_info.h"
#include "harness/decoder/engine.h"

namespace kvgate::decoder {

std::unique_ptr<Engine> make_cuda_engine(std::shared_ptr<const Model>, const EngineOptions&) {
  throw Error(std::string("--device cuda: ") +
              (kernels::cuda_built() ? "this kvgate has no CUDA engine yet" : "this kvgate was built without CUDA (configure with nvcc on the PATH, or -DKVGATE_CUDA=ON)") +
              "; use --device cpu");
}

}  // namespace kvgate::decoder
