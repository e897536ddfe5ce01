// vLLM's TurboQuant KV presets, one (token, KV head) slot at a time (__host__ __device__).
// Reference: kv-formats-and-decoders.md §1.3; vLLM turboquant/config.py (presets, sizes),
// triton_turboquant_store.py (write), triton_turboquant_decode.py (_tq_full_dequant_kv, read).
//
//   preset               key                              value   norm correction
//   turboquant_k8v4      E4M3 cast, no scale (d bytes)    4-bit   no
//   turboquant_4bit_nc   4-bit Lloyd-Max after Hadamard   4-bit   yes
//   turboquant_k3v4_nc   3-bit Lloyd-Max                  4-bit   yes
//   turboquant_3bit_nc   3-bit Lloyd-Max                  3-bit   yes
//
// MSE key: n = ||k|| (fp32), y = (H/sqrt(d)) (k / (n + 1e-8)), idx_j = #{midpoints <= y_j} (the
// kernel's binary search), codes packed by bit offset (4-bit: element 2i low nibble; 3-bit: 8 codes
// in 3 bytes), then n as fp16. Read: c_j = centroid[idx_j]; with norm correction c /= sqrt(sum c^2 +
// 1e-16); k = (H/sqrt(d)) (n16 * c).
// Value: per vector min/max, scale = max((max - min)/(2^b - 1), 1e-8),
// q = clamp(int((v - min)/scale + 0.5), 0, 2^b - 1), packed as the key codes; scale and min stored as
// fp16 after the codes were computed with the fp32 scale. Read: v = q * scale16 + min16.
// Slot per (token, head): [key_packed | value codes | v_scale f16 | v_min f16], padded to even size.
#pragma once
#include <math.h>

#include <cstdint>

#include "kernels/codec_bytes.h"
#include "kernels/fp8_formats.h"
#include "kernels/hadamard.h"

namespace kvgate::kernels {

struct TurboQuantPreset {
  int key_bits;       // 8: E4M3 keys; 3 or 4: Lloyd-Max keys
  int value_bits;     // 3 or 4
  bool norm_correction;
};

KV_HD int tq_key_bytes(int d, int key_bits) { return key_bits == 8 ? d : packed_bytes(d, key_bits) + 2; }
KV_HD int tq_value_bytes(int d, int value_bits) { return packed_bytes(d, value_bits) + 4; }
KV_HD int tq_slot_bytes(int d, TurboQuantPreset p) {
  const int s = tq_key_bytes(d, p.key_bits) + tq_value_bytes(d, p.value_bits);
  return s + (s % 2);
}

// MSE key encode. midpoints: 2^bits - 1 sorted fp32 boundaries; scratch: d floats; out: zeroed,
// tq_key_bytes(d, bits) bytes. d must be a power of two (the Hadamard size).
KV_HD void tq_key_encode_mse(const float* k, int d, int bits, const float* midpoints, float* scratch,
                             std::uint8_t* out) {
  float ss = 0.0f;
  for (int i = 0; i < d; ++i) ss += k[i] * k[i];
  const float norm = sqrtf(ss);
  const float denom = norm + 1e-8f;
  for (int i = 0; i < d; ++i) scratch[i] = k[i] / denom;
  hadamard_orthonormal_inplace(scratch, d);
  const int n_mid = (1 << bits) - 1;
  for (int j = 0; j < d; ++j) {
    int idx = 0;
    while (idx < n_mid && scratch[j] >= midpoints[idx]) ++idx;
    pack_code_le(out, j, bits, static_cast<unsigned>(idx));
  }
  store_u16_le(out + packed_bytes(d, bits), f32_to_f16(norm));
}

// MSE key decode into the original basis. centroids: 2^bits fp32 values.
KV_HD void tq_key_decode_mse(const std::uint8_t* in, int d, int bits, const float* centroids, bool norm_correction,
                             float* out) {
  float ss = 0.0f;
  for (int j = 0; j < d; ++j) {
    out[j] = centroids[unpack_code_le(in, j, bits)];
    ss += out[j] * out[j];
  }
  const float vec_norm = f16_to_f32(load_u16_le(in + packed_bytes(d, bits)));
  const float c = norm_correction ? vec_norm * (1.0f / sqrtf(ss + 1e-16f)) : vec_norm;
  for (int j = 0; j < d; ++j) out[j] *= c;
  hadamard_orthonormal_inplace(out, d);
}

// turboquant_k8v4 keys: a plain cast to E4M3 (Hopper's float8e4nv), no scale, no rotation.
KV_HD void tq_key_encode_fp8(const float* k, int d, std::uint8_t* out) {
  for (int i = 0; i < d; ++i) out[i] = f32_to_fp8_e4m3(k[i]);
}

KV_HD void tq_key_decode_fp8(const std::uint8_t* in, int d, float* out) {
  for (int i = 0; i < d; ++i) out[i] = fp8_e4m3_to_f32(in[i]);
}

// Value encode: out zeroed, tq_value_bytes(d, bits) bytes.
KV_HD void tq_value_encode(const float* v, int d, int bits, std::uint8_t* out) {
  float mn = v[0], mx = v[0];
  for (int i = 1; i < d; ++i) {
    mn = fminf(mn, v[i]);
    mx = fmaxf(mx, v[i]);
  }
  const int qmax = (1 << bits) - 1;
  float scale = (mx - mn) / static_cast<float>(qmax);
  scale = scale > 1e-8f ? scale : 1e-8f;
  for (int i = 0; i < d; ++i) {
    int q = static_cast<int>((v[i] - mn) / scale + 0.5f);
    q = q < 0 ? 0 : (q > qmax ? qmax : q);
    pack_code_le(out, i, bits, static_cast<unsigned>(q));
  }
  const int nb = packed_bytes(d, bits);
  store_u16_le(out + nb, f32_to_f16(scale));
  store_u16_le(out + nb + 2, f32_to_f16(mn));
}

KV_HD void tq_value_decode(const std::uint8_t* in, int d, int bits, float* out) {
  const int nb = packed_bytes(d, bits);
  const float scale = f16_to_f32(load_u16_le(in + nb)), zero = f16_to_f32(load_u16_le(in + nb + 2));
  for (int i = 0; i < d; ++i) out[i] = static_cast<float>(unpack_code_le(in, i, bits)) * scale + zero;
}

}  // namespace kvgate::kernels
