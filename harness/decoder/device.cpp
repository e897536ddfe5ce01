#include "harness/decoder/device.h"

#include "harness/core/error.h"
#include "kernels/cuda_info.h"

namespace kvgate::decoder {

bool cuda_engine_built() {
#if defined(KVGATE_HAS_CUDA_ENGINE)
  return kernels::cuda_built();
#else
  return false;
#endif
}

std::string resolve_device(const std::string& requested) {
  if (requested == "cuda" || requested == "cpu") return requested;
  if (!requested.empty()) throw Error("--device " + requested + ": must be cuda or cpu");
  return cuda_engine_built() && kernels::cuda_device_count() > 0 ? "cuda" : "cpu";
}

nlohmann::json device_record(const std::string& requested, const std::string& resolved) {
  return {{"requested", requested.empty() ? nlohmann::json(nullptr) : nlohmann::json(requested)},
          {"device", resolved},
          {"cuda_engine", cuda_engine_built()},
          {"cuda", kernels::cuda_describe()}};
}

}  // namespace kvgate::decoder
