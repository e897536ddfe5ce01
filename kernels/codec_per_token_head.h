// vLLM's per-token-head KV modes (Triton attention backend), one (token, KV head) vector at a time
// (__host__ __device__). Reference: kv-formats-and-decoders.md §1.2; vLLM
// triton_reshape_and_cache_flash.py (_reshape_cache_per_token_head) and int4_per_token_head.py.
//
// Layout per (token, head) of head_dim d, as vLLM allocates it (scales live in separate
// [num_blocks, block_size, num_kv_heads] fp32 tensors, carved out of the KV allocation):
//   int8_per_token_head  data: d x int8                       scale: fp32
//   fp8_per_token_head   data: d x E4M3                        scale: fp32
//   int4_per_token_head  data: d/2 bytes, element 2i in the low nibble, 2i+1 in the high nibble
//                        scale: fp32 whose 4 low mantissa bits hold the zero point (0..15)
#pragma once
#include <math.h>

#include <cstdint>

#include "kernels/codec_bytes.h"
#include "kernels/fp8_formats.h"

namespace kvgate::kernels {

// int8 rounding: vLLM before PR #45361 let Triton's float->int8 store truncate toward zero; since
// then it rounds to nearest even (torch.round).
enum class IntRounding : std::uint8_t { kRne, kTrunc };

// The encoders below are split into a per-vector step (the scale from the vector's absmax, or
// min/max) and a per-element step, so that kv_write's warp-parallel path (kv_write.cu) calls the
// same arithmetic as these serial loops and writes the same bytes.

// scale = max(absmax(x) / qmax, 1e-6), in fp32 as the kernel computes it.
KV_HD float pth_scale(float amax, float qmax) { return fmaxf(amax / qmax, 1e-6f); }
KV_HD float absmax_scale(const float* x, int n, float qmax) {
  float amax = 0.0f;
  for (int i = 0; i < n; ++i) amax = fmaxf(amax, fabsf(x[i]));
  return pth_scale(amax, qmax);
}

// int8_per_token_head: q = clamp(x * (1/scale), -128, 127), then RNE or truncation.
KV_HD std::int8_t int8_pth_code(float x, float inv, IntRounding rounding) {
  const float v = fminf(fmaxf(x * inv, -128.0f), 127.0f);
  return static_cast<std::int8_t>(rounding == IntRounding::kRne ? rintf(v) : truncf(v));
}
KV_HD float int8_pth_encode(const float* x, int n, IntRounding rounding, std::int8_t* q) {
  const float scale = absmax_scale(x, n, 127.0f);
  const float inv = 1.0f / scale;  // the kernel multiplies by the reciprocal
  for (int i = 0; i < n; ++i) q[i] = int8_pth_code(x[i], inv, rounding);
  return scale;
}

KV_HD void int8_pth_decode(const std::int8_t* q, int n, float scale, float* out) {
  for (int i = 0; i < n; ++i) out[i] = static_cast<float>(q[i]) * scale;
}

// fp8_per_token_head: q = E4M3(clamp(x * (1/scale), -448, 448)) (clamp, then the RNE cast).
KV_HD std::uint8_t fp8_pth_code(float x, float inv) { return f32_to_fp8_e4m3(fminf(fmaxf(x * inv, -kFp8E4M3Max), kFp8E4M3Max)); }
KV_HD float fp8_pth_encode(const float* x, int n, std::uint8_t* q) {
  const float scale = absmax_scale(x, n, kFp8E4M3Max);
  const float inv = 1.0f / scale;
  for (int i = 0; i < n; ++i) q[i] = fp8_pth_code(x[i], inv);
  return scale;
}

KV_HD void fp8_pth_decode(const std::uint8_t* q, int n, float scale, float* out) {
  for (int i = 0; i < n; ++i) out[i] = fp8_e4m3_to_f32(q[i]) * scale;
}

// The kernel's rounding: where(s >= 0, int(s + 0.5), int(s - 0.5)) (half away from zero after an
// fp32 add), then clamped to [0, 15]. Done in float so out-of-range values saturate like PTX cvt.
KV_HD float int4_round_clamp(float s) {
  const float r = s >= 0.0f ? truncf(s + 0.5f) : truncf(s - 0.5f);
  return fminf(fmaxf(r, 0.0f), 15.0f);
}

// int4_per_token_head, asymmetric min/max over the (already rotated) vector:
//   scale = max((max - min) / 15, 1e-6), zp = round(-min / scale) in [0, 15],
//   q = round(x * (1/scale) + zp) in [0, 15] (Triton contracts the multiply-add into an fma),
// packed 2 per byte; returns the fp32 scale with zp in its 4 low bits (the stored word).
struct Int4PthParams {
  float scale, zp, inv;
};
KV_HD Int4PthParams int4_pth_params(float mn, float mx) {
  const float scale = fmaxf((mx - mn) / 15.0f, 1e-6f);
  return {scale, int4_round_clamp(-mn / scale), 1.0f / scale};
}
// The byte of elements 2i (low nibble) and 2i + 1 (high nibble), and the stored scale word.
KV_HD std::uint8_t int4_pth_byte(float lo, float hi, const Int4PthParams& p) {
  const unsigned l = static_cast<unsigned>(int4_round_clamp(fmaf(lo, p.inv, p.zp)));
  const unsigned h = static_cast<unsigned>(int4_round_clamp(fmaf(hi, p.inv, p.zp)));
  return static_cast<std::uint8_t>(l | (h << 4));
}
KV_HD std::uint32_t int4_pth_word(const Int4PthParams& p) { return (f32_bits(p.scale) & ~0xFu) | static_cast<std::uint32_t>(p.zp); }
KV_HD std::uint32_t int4_pth_encode(const float* x, int n, std::uint8_t* packed) {
  float mn = x[0], mx = x[0];
  for (int i = 1; i < n; ++i) {
    mn = fminf(mn, x[i]);
    mx = fmaxf(mx, x[i]);
  }
  const Int4PthParams p = int4_pth_params(mn, mx);
  for (int i = 0; i < n / 2; ++i) packed[i] = int4_pth_byte(x[2 * i], x[2 * i + 1], p);
  return int4_pth_word(p);
}

// Dequantization reads the scale with its low 4 bits cleared (not exactly the scale that
// quantized): x = (q - zp) * scale'.
KV_HD void int4_pth_decode(const std::uint8_t* packed, int n, std::uint32_t scale_word, float* out) {
  const float zp = static_cast<float>(scale_word & 0xFu);
  const float scale = bits_f32(scale_word & ~0xFu);
  for (int i = 0; i < n / 2; ++i) {
    out[2 * i] = (static_cast<float>(packed[i] & 0xFu) - zp) * scale;
    out[2 * i + 1] = (static_cast<float>(packed[i] >> 4) - zp) * scale;
  }
}

}  // namespace kvgate::kernels
