// FP8 conversions, bit-exact and portable (__host__ __device__): float -> E4M3 / E5M2 exactly as
// CUDA's __nv_cvt_float_to_fp8(x, __NV_SATFINITE, ...) (round to nearest even, saturation to
// +-max-finite, every NaN -> 0x7F, signed zeros kept), and exact widening back to float.
// tests/fp8-exhaustive-test.cpp checks all 2^32 floats against cuda_fp8.h.
#pragma once
#include <cstdint>

#include "kernels/float_formats.h"

namespace kvgate::kernels {

enum class Fp8Kind : std::uint8_t { kE4M3, kE5M2 };

// Largest finite values: E4M3 (OCP "fn", no infinity) 448 = 0x7E, E5M2 57344 = 0x7B.
constexpr float kFp8E4M3Max = 448.0f;
constexpr float kFp8E5M2Max = 57344.0f;

namespace detail {

// Shared RNE/SATFINITE conversion for a format with `mbits` mantissa bits and exponent bias `bias`.
// threshold: the smallest |x| (float bits) that saturates; maxnorm: the code of +max-finite.
KV_HD std::uint8_t f32_to_fp8_impl(float f, unsigned mbits, unsigned bias, std::uint32_t threshold,
                                   std::uint8_t maxnorm) {
  const std::uint32_t u = f32_bits(f);
  const std::uint32_t a = u & 0x7fffffffu;
  if (a > 0x7f800000u) return 0x7F;  // NaN: CUDA canonicalizes to +NaN (0x7F in both formats)
  const std::uint8_t sign = static_cast<std::uint8_t>((u >> 24) & 0x80u);
  if (a >= threshold) return static_cast<std::uint8_t>(sign | maxnorm);  // also +-inf
  const std::uint32_t drop = 23u - mbits;  // float mantissa bits that do not fit
  const std::uint32_t min_normal_exp = 128u - bias;  // float exponent field of the fp8 minimum normal
  if ((a >> 23) < min_normal_exp) {
    // fp8 subnormal (or zero): q = |x| / 2^(1 - bias - mbits), rounded to nearest even.
    const std::uint32_t e = a >> 23;
    if (e == 0) return sign;  // float zero or subnormal: far below half the smallest fp8 subnormal
    const std::uint32_t m = (a & 0x7fffffu) | 0x800000u;
    const std::uint32_t shift = (min_normal_exp - e) + drop;  // >= drop + 1
    if (shift > 24u) return sign;  // |x| < 2^-1 units: rounds to zero (a tie at exactly 1/2 goes to even 0)
    std::uint32_t q = m >> shift;
    const std::uint32_t rem = m & ((1u << shift) - 1u), half = 1u << (shift - 1u);
    if (rem > half || (rem == half && (q & 1u))) ++q;
    return static_cast<std::uint8_t>(sign | q);  // q == 1 << mbits is the minimum normal: still right
  }
  const std::uint32_t r = a - ((127u - bias) << 23);  // rebias the exponent
  std::uint32_t q = r >> drop;
  const std::uint32_t rem = r & ((1u << drop) - 1u), half = 1u << (drop - 1u);
  if (rem > half || (rem == half && (q & 1u))) ++q;
  return static_cast<std::uint8_t>(sign | q);
}

}  // namespace detail

// float -> OCP E4M3 (bias 7): RNE, |x| > 464 (max + half an ulp) -> +-448, NaN -> 0x7F.
KV_HD std::uint8_t f32_to_fp8_e4m3(float f) {
  return detail::f32_to_fp8_impl(f, 3u, 7u, 0x43E80001u /* just above 464.0f */, 0x7E);
}

// float -> E5M2 (bias 15): RNE, |x| >= 61440 (max + half an ulp, a tie that would round to inf)
// -> +-57344, inf -> +-57344, NaN -> 0x7F.
KV_HD std::uint8_t f32_to_fp8_e5m2(float f) {
  return detail::f32_to_fp8_impl(f, 2u, 15u, 0x47700000u /* 61440.0f */, 0x7B);
}

KV_HD std::uint8_t f32_to_fp8(float f, Fp8Kind kind) {
  return kind == Fp8Kind::kE4M3 ? f32_to_fp8_e4m3(f) : f32_to_fp8_e5m2(f);
}

// E4M3 -> float, exact: 0x7F/0xFF are NaN, no infinities.
KV_HD float fp8_e4m3_to_f32(std::uint8_t q) {
  const std::uint32_t sign = static_cast<std::uint32_t>(q & 0x80u) << 24;
  const std::uint32_t e = (q >> 3) & 0xfu, m = q & 0x7u;
  if (e == 15u && m == 7u) return bits_f32(sign | 0x7fc00000u);
  if (e == 0) {
    const float v = static_cast<float>(m) * 0.001953125f;  // m * 2^-9
    return sign ? -v : v;
  }
  return bits_f32(sign | ((e + 120u) << 23) | (m << 20));
}

// E5M2 -> float, exact: exponent 31 is infinity (m == 0) or NaN.
KV_HD float fp8_e5m2_to_f32(std::uint8_t q) {
  return f16_to_f32(static_cast<std::uint16_t>(q) << 8);  // E5M2 is the top byte of an IEEE half
}

KV_HD float fp8_to_f32(std::uint8_t q, Fp8Kind kind) {
  return kind == Fp8Kind::kE4M3 ? fp8_e4m3_to_f32(q) : fp8_e5m2_to_f32(q);
}

}  // namespace kvgate::kernels
