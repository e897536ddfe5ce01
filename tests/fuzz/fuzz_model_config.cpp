// config.json parsing on arbitrary bytes: a clean Error or a config the decoder can size, never a crash.
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "harness/core/error.h"
#include "harness/decoder/model_config.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const auto j = nlohmann::json::parse(data, data + size, nullptr, false);
  if (j.is_discarded()) return 0;
  try {
    const auto c = kvgate::decoder::parse_model_config(j, "fuzz/config.json");
    if (c.head_dim <= 4096) {
      std::vector<float> inv(static_cast<std::size_t>(c.head_dim / 2));
      kvgate::kernels::rope_inv_freq_ref(c.rope, inv.data());
    }
  } catch (const kvgate::Error&) {
  }
  return 0;
}
