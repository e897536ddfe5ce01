// KIVI (Liu et al., 2024) asymmetric 2-bit groups (__host__ __device__). Reference: the KIVI code's
// triton_quantize_and_pack_along_last_dim: per group of G values mn = min, scale = (max - mn)/(2^b - 1),
// q = round_half_even(clamp((x - mn) / scale, 0, 2^b - 1)), codes packed 32/b per 32-bit word, code i
// at bits [i*b, i*b + b) (little-endian by bit offset); scale and mn are stored in the model's half
// dtype. kvgate stores them as IEEE fp16 and quantizes with the stored (fp16) values, as KIVI does in
// fp16; the arithmetic is fp32. A zero range (constant group) stores scale 0 and codes 0.
// Keys are grouped per channel along G tokens, values per token along G channels; the full-precision
// residual window is handled by the store (kv_store_kivi.cpp).
#pragma once
#include <math.h>

#include <cstdint>

#include "kernels/codec_bytes.h"
#include "kernels/float_formats.h"

namespace kvgate::kernels {

// n values at x[0], x[stride], ...; codes: zeroed, packed_bytes(n, bits) bytes.
KV_HD void kivi_encode_group(const float* x, int stride, int n, int bits, std::uint8_t* codes, std::uint16_t* scale16,
                             std::uint16_t* min16) {
  float mn = x[0], mx = x[0];
  for (int i = 1; i < n; ++i) {
    mn = fminf(mn, x[i * stride]);
    mx = fmaxf(mx, x[i * stride]);
  }
  const float qmax = static_cast<float>((1 << bits) - 1);
  *scale16 = f32_to_f16((mx - mn) / qmax);
  *min16 = f32_to_f16(mn);
  const float scale = f16_to_f32(*scale16), m = f16_to_f32(*min16);
  if (!(scale > 0.0f)) return;  // all codes 0: x = mn16
  for (int i = 0; i < n; ++i) {
    const float q = rintf(fminf(fmaxf((x[i * stride] - m) / scale, 0.0f), qmax));
    pack_code_le(codes, i, bits, static_cast<unsigned>(q));
  }
}

KV_HD void kivi_decode_group(const std::uint8_t* codes, int n, int bits, std::uint16_t scale16, std::uint16_t min16,
                             float* out, int stride) {
  const float scale = f16_to_f32(scale16), m = f16_to_f32(min16);
  for (int i = 0; i < n; ++i) out[i * stride] = static_cast<float>(unpack_code_le(codes, i, bits)) * scale + m;
}

}  // namespace kvgate::kernels
