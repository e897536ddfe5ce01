// The KV-format inputs on arbitrary bytes: a config.json for the capacity planner, a KV scales file,
// and format parameters for every --kv-format. A clean Error or a result, never a crash.
#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

#include "harness/capacity/model_dims.h"
#include "harness/core/error.h"
#include "kernels/kv_format.h"
#include "kernels/kv_scales.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace kvgate;
  const nlohmann::json j = nlohmann::json::parse(std::string(reinterpret_cast<const char*>(data), size), nullptr, false);
  if (j.is_discarded()) return 0;
  try {
    const capacity::ModelDims m = capacity::model_dims_from_config(j, "config.json");
    (void)m.weight_bytes("fp8");
    (void)kernels::resolve_kv_format({"int4_per_token_head", {}}, m.kv_shape());
  } catch (const Error&) {
  }
  const kernels::KvShape shape{3, 2, 64};
  try {
    (void)kernels::parse_kv_scales(j, shape, "scales.json");
  } catch (const Error&) {
  }
  for (const auto& f : kernels::kv_format_names()) {
    try {
      const nlohmann::json params = j.contains("scales") && j["scales"].is_string() ? nlohmann::json::object() : j;
      (void)kernels::resolve_kv_format({f, params}, shape).record();
    } catch (const Error&) {
    }
  }
  return 0;
}
