#include "decoder/device.h"

#include "core/error.h"
#include "cuda_info.h"

namespace kvgate::decoder {

std::string resolve_device(const std::string& requested) {
  if (requested == "cuda" || requested == "cpu") return requested;
  if (!requested.empty()) throw Error("--device " + requested + ": must be cuda or cpu");
  return kernels::cuda_device_count() > 0 ? "cuda" : "cpu";
}

nlohmann::json device_record(const std::string& requested, const std::string& resolved) {
  return {{"requested", requested.empty() ? nlohmann::json(nullptr) : nlohmann::json(requested)},
          {"device", resolved},
          {"cuda", kernels::cuda_describe()}};
}

}  // namespace kvgate::decoder
