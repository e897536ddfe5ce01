// NVFP4 KV cache (--kv-cache-dtype nvfp4), one 16-element block at a time (__host__ __device__).
// Reference: kv-formats-and-decoders.md §1.2 (vLLM nvfp4_kv_cache_full_dim: head_size/2 bytes of FP4
// data plus head_size/16 bytes of E4M3 block scales) and the two-level NVFP4 recipe of
// TensorRT-LLM's cvt_warp_fp16_to_fp4 (the engines' FP4 quantizer):
//   s_b  = E4M3((amax / 6) / s_t)         per 16 elements, unsigned (UE4M3), RNE + saturation
//   q_i  = E2M1(x_i / (s_b * s_t))        RNE + saturation to +-6, as cvt.rn.satfinite.e2m1x2
//   x_i ~ E2M1(q_i) * s_b * s_t           with s_t the fp32 per-layer tensor scale (1.0 by default)
// Layout per (token, head) of head_dim d: d/2 data bytes (element 2i in the low nibble, 2i+1 in the
// high nibble, as __nv_cvt_float2_to_fp4x2 packs), then d/16 E4M3 block-scale bytes.
// Note: llama.cpp's quantize_row_nvfp4_ref differs (no tensor scale, nearest value with ties to the
// smaller magnitude, nibble j / j+8 pairing); it is a weight format there, not a KV type.
#pragma once
#include <math.h>

#include <cstdint>

#include "kernels/fp8_formats.h"

namespace kvgate::kernels {

constexpr int kNvfp4Block = 16;
constexpr float kE2M1Max = 6.0f;

// float -> E2M1 code (sign in bit 3): values 0, 0.5, 1, 1.5, 2, 3, 4, 6; round to nearest, ties to
// the even code; |x| > 6 saturates to 6; NaN -> 6 (no NaN in E2M1).
KV_HD std::uint8_t f32_to_e2m1(float v) {
  const std::uint8_t sign = static_cast<std::uint8_t>((f32_bits(v) >> 28) & 0x8u);
  const float a = fabsf(v);
  std::uint8_t code;
  if (a <= 0.25f) code = 0;        // tie 0.25 -> 0 (even)
  else if (a < 0.75f) code = 1;    // tie 0.75 -> 1.0
  else if (a <= 1.25f) code = 2;   // tie 1.25 -> 1.0
  else if (a < 1.75f) code = 3;    // tie 1.75 -> 2.0
  else if (a <= 2.5f) code = 4;    // tie 2.5 -> 2.0
  else if (a < 3.5f) code = 5;     // tie 3.5 -> 4.0
  else if (a <= 5.0f) code = 6;    // tie 5 -> 4.0
  else code = 7;                   // (5, inf] and NaN -> 6
  return static_cast<std::uint8_t>(sign | code);
}

KV_HD float e2m1_to_f32(std::uint8_t code) {
  // 0, 0.5, then (1 + m/2) 2^(e-1) for e = (code >> 1) & 3 in 1..3, m = code & 1: bits, not a table
  // (a local array is local memory in a kernel).
  const std::uint32_t c = code & 7u;
  const std::uint32_t mag = c < 2u ? c * 0x3f000000u : (((c >> 1) + 126u) << 23) | ((c & 1u) << 22);
  return bits_f32(mag | (static_cast<std::uint32_t>(code & 8u) << 28));
}

// One 16-element block: writes 8 data bytes and returns the E4M3 block scale.
// inv_tensor_scale = 1 / s_t, as the kernel holds it (SFScaleVal).
KV_HD std::uint8_t nvfp4_encode_block(const float* x, float inv_tensor_scale, std::uint8_t* data8) {
  float amax = 0.0f;
  for (int i = 0; i < kNvfp4Block; ++i) amax = fmaxf(amax, fabsf(x[i]));
  const std::uint8_t sb = f32_to_fp8_e4m3(inv_tensor_scale * (amax * (1.0f / kE2M1Max)));
  const float sbf = fp8_e4m3_to_f32(sb);
  const float out_scale = sbf != 0.0f ? 1.0f / (sbf * (1.0f / inv_tensor_scale)) : 0.0f;
  for (int i = 0; i < kNvfp4Block / 2; ++i) {
    const std::uint8_t lo = f32_to_e2m1(x[2 * i] * out_scale), hi = f32_to_e2m1(x[2 * i + 1] * out_scale);
    data8[i] = static_cast<std::uint8_t>(lo | (hi << 4));
  }
  return sb;
}

KV_HD void nvfp4_decode_block(const std::uint8_t* data8, std::uint8_t sb, float tensor_scale, float* out) {
  const float s = fp8_e4m3_to_f32(sb) * tensor_scale;
  for (int i = 0; i < kNvfp4Block / 2; ++i) {
    out[2 * i] = e2m1_to_f32(data8[i] & 0xFu) * s;
    out[2 * i + 1] = e2m1_to_f32(data8[i] >> 4) * s;
  }
}

// A head vector of d elements (d a multiple of 16): data d/2 bytes then d/16 scale bytes.
KV_HD void nvfp4_encode_head(const float* x, int d, float tensor_scale, std::uint8_t* out) {
  const float inv = 1.0f / tensor_scale;
  for (int b = 0; b < d / kNvfp4Block; ++b)
    out[d / 2 + b] = nvfp4_encode_block(x + b * kNvfp4Block, inv, out + b * (kNvfp4Block / 2));
}

KV_HD void nvfp4_decode_head(const std::uint8_t* in, int d, float tensor_scale, float* out) {
  for (int b = 0; b < d / kNvfp4Block; ++b)
    nvfp4_decode_block(in + b * (kNvfp4Block / 2), in[d / 2 + b], tensor_scale, out + b * kNvfp4Block);
}

// Eight E2M1 codes of w (code i in bits 4i .. 4i + 3, sign bit 3) as e4m3 bytes of value E2M1 x 2^-6,
// exact: the magnitude bits become the e4m3 exponent's low two bits and its mantissa's top bit (E2M1's
// subnormal 0.5 lands on the e4m3 subnormal 2^-7), the sign bit 7. even: codes 0, 2, 4, 6 (byte i:
// code 2i); odd: 1, 3, 5, 7. The tensor-core decode kernel widens these in hardware (sm_90 has an e4m3
// conversion, no E2M1 one), then multiplies by the fp16 2^6 x block scale: E2M1 x s has at most 6
// significant bits and lies in [2^-10, 2688], so that fp16 product is exact (kv-codecs-test checks
// every code and scale).
KV_HD void e2m1x8_to_e4m3(std::uint32_t w, std::uint32_t& even, std::uint32_t& odd) {
  even = ((w & 0x07070707u) << 2) | ((w & 0x08080808u) << 4);
  odd = ((w >> 2) & 0x1C1C1C1Cu) | (w & 0x80808080u);
}

}  // namespace kvgate::kernels
