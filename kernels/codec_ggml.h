// llama.cpp's quantized KV-cache blocks q8_0 and q4_0 (-ctk/-ctv), one 32-element block at a time
// (__host__ __device__). Reference: kv-formats-and-decoders.md §2.1, ggml-common.h (block layouts),
// ggml-quants.c quantize_row_q8_0_ref / quantize_row_q4_0_ref and CUDA cpy-utils.cuh (same rules):
//   q8_0 {fp16 d; int8 qs[32]}   34 bytes  d = amax/127, q = roundf(x * (1/d))   x = q * d
//   q4_0 {fp16 d; uint8 qs[16]}  18 bytes  d = max/-8 (max: the signed value of largest magnitude,
//        the first one on ties), q = min(15, (int8)(x * (1/d) + 8.5)), element j in the low nibble of
//        qs[j] and element j+16 in the high nibble                                   x = (q - 8) * d
// d is stored as IEEE half (RNE); quantization uses the fp32 d. Blocks run along head_dim.
#pragma once
#include <math.h>

#include <cstdint>

#include "kernels/codec_bytes.h"
#include "kernels/float_formats.h"

namespace kvgate::kernels {

constexpr int kGgmlBlock = 32;
constexpr int kQ8_0Bytes = 34;
constexpr int kQ4_0Bytes = 18;

KV_HD void q8_0_encode_block(const float* x, std::uint8_t* out) {
  float amax = 0.0f;
  for (int j = 0; j < kGgmlBlock; ++j) amax = fmaxf(amax, fabsf(x[j]));
  const float d = amax / 127.0f;
  const float id = d != 0.0f ? 1.0f / d : 0.0f;
  store_u16_le(out, f32_to_f16(d));
  for (int j = 0; j < kGgmlBlock; ++j) out[2 + j] = static_cast<std::uint8_t>(static_cast<std::int8_t>(roundf(x[j] * id)));
}

KV_HD void q8_0_decode_block(const std::uint8_t* in, float* out) {
  const float d = f16_to_f32(load_u16_le(in));
  for (int j = 0; j < kGgmlBlock; ++j) out[j] = static_cast<float>(static_cast<std::int8_t>(in[2 + j])) * d;
}

KV_HD void q4_0_encode_block(const float* x, std::uint8_t* out) {
  float amax = 0.0f, max = 0.0f;
  for (int j = 0; j < kGgmlBlock; ++j)
    if (amax < fabsf(x[j])) {
      amax = fabsf(x[j]);
      max = x[j];
    }
  const float d = max / -8.0f;
  const float id = d != 0.0f ? 1.0f / d : 0.0f;
  store_u16_le(out, f32_to_f16(d));
  for (int j = 0; j < kGgmlBlock / 2; ++j) {
    const int lo = static_cast<int>(static_cast<std::int8_t>(x[j] * id + 8.5f));
    const int hi = static_cast<int>(static_cast<std::int8_t>(x[kGgmlBlock / 2 + j] * id + 8.5f));
    out[2 + j] = static_cast<std::uint8_t>((lo < 15 ? lo : 15) | ((hi < 15 ? hi : 15) << 4));
  }
}

KV_HD void q4_0_decode_block(const std::uint8_t* in, float* out) {
  const float d = f16_to_f32(load_u16_le(in));
  for (int j = 0; j < kGgmlBlock / 2; ++j) {
    out[j] = static_cast<float>((in[2 + j] & 0xF) - 8) * d;
    out[kGgmlBlock / 2 + j] = static_cast<float>((in[2 + j] >> 4) - 8) * d;
  }
}

// llama.cpp's attention rotation block sizes (llama-kv-cache.cpp, PR #21038): on when the cache type
// is quantized and head_dim % 64 == 0; K uses the largest power of two >= 64 dividing head_dim, V
// always 64. 0 means no rotation.
KV_HD int ggml_k_rotation_block(int head_dim) {
  if (head_dim % 64 != 0) return 0;
  int n = 64;
  while (head_dim % (2 * n) == 0) n *= 2;
  return n;
}

KV_HD int ggml_v_rotation_block(int head_dim) { return head_dim % 64 == 0 ? 64 : 0; }

}  // namespace kvgate::kernels
