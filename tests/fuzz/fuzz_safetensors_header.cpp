// The safetensors header parser on arbitrary bytes: a clean Error or a header whose every tensor lies
// inside the buffer (each view is read end to end, so a wrong offset is an out-of-bounds read that
// ASan reports), never a crash.
#include <cstdint>

#include "harness/core/error.h"
#include "harness/decoder/safetensors.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  try {
    const auto h = kvgate::decoder::parse_safetensors_header(data, size, size, "fuzz.safetensors");
    volatile std::uint8_t sum = 0;
    for (const auto& t : h.tensors)
      for (std::uint64_t i = t.begin; i < t.end; ++i) sum = sum + data[h.data_start + i];
  } catch (const kvgate::Error&) {
  }
  return 0;
}
