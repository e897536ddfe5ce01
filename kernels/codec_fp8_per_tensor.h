// vLLM's per-tensor FP8 KV cache (--kv-cache-dtype fp8 | fp8_e4m3 | fp8_e5m2), one element at a
// time (__host__ __device__). Reference: kv-formats-and-decoders.md §1.1, vLLM
// csrc/quantization/fp8/nvidia/quant_utils.cuh (scaled_convert):
//   quantize   q = __nv_cvt_float_to_fp8(float(x) / scale, __NV_SATFINITE, E4M3|E5M2)  (a true
//              fp32 division, then RNE with saturation)
//   dequantize x = float(q) * scale                                                    (exact widening)
// The scale is per layer for K and for V (1.0 uncalibrated, or from a scales file), or per KV head.
// Layout per (token, head): head_dim bytes, NHD; the scales are not per token.
#pragma once
#include <cstdint>

#include "kernels/fp8_formats.h"

namespace kvgate::kernels {

KV_HD std::uint8_t fp8_tensor_encode(float x, float scale, Fp8Kind kind) { return f32_to_fp8(x / scale, kind); }

KV_HD float fp8_tensor_decode(std::uint8_t q, float scale, Fp8Kind kind) { return fp8_to_f32(q, kind) * scale; }

KV_HD void fp8_tensor_encode_row(const float* x, int n, float scale, Fp8Kind kind, std::uint8_t* q) {
  for (int i = 0; i < n; ++i) q[i] = fp8_tensor_encode(x[i], scale, kind);
}

KV_HD void fp8_tensor_decode_row(const std::uint8_t* q, int n, float scale, Fp8Kind kind, float* out) {
  for (int i = 0; i < n; ++i) out[i] = fp8_tensor_decode(q[i], scale, kind);
}

}  // namespace kvgate::kernels
