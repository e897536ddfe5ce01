// bf16 and fp16 conversions, bit-exact and portable (__host__ __device__): round to nearest even,
// NaN stays NaN (quiet), overflow goes to infinity as IEEE says. The FP8/FP4 formats of the KV
// codecs build on these.
#pragma once
#include <cstdint>
#include <cstring>

#if defined(__CUDACC__)
#define KV_HD __host__ __device__ __forceinline__
#else
#define KV_HD inline
#endif

namespace kvgate::kernels {

KV_HD std::uint32_t f32_bits(float f) {
#if defined(__CUDA_ARCH__)
  return __float_as_uint(f);
#else
  std::uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
#endif
}

KV_HD float bits_f32(std::uint32_t u) {
#if defined(__CUDA_ARCH__)
  return __uint_as_float(u);
#else
  float f;
  std::memcpy(&f, &u, 4);
  return f;
#endif
}

// float -> bf16, round to nearest even; NaN -> quiet NaN with the sign kept.
KV_HD std::uint16_t f32_to_bf16(float f) {
  std::uint32_t u = f32_bits(f);
  if ((u & 0x7fffffffu) > 0x7f800000u) return static_cast<std::uint16_t>((u >> 16) | 0x40u);
  u += 0x7fffu + ((u >> 16) & 1u);
  return static_cast<std::uint16_t>(u >> 16);
}

KV_HD float bf16_to_f32(std::uint16_t h) { return bits_f32(static_cast<std::uint32_t>(h) << 16); }

// float -> IEEE half, round to nearest even, subnormals exact, |x| >= 65520 -> inf.
KV_HD std::uint16_t f32_to_f16(float f) {
  std::uint32_t x = f32_bits(f);
  const std::uint32_t sign = (x >> 16) & 0x8000u;
  x &= 0x7fffffffu;
  if (x >= 0x7f800000u) return static_cast<std::uint16_t>(sign | (x > 0x7f800000u ? 0x7e00u : 0x7c00u));
  if (x >= 0x477ff000u) return static_cast<std::uint16_t>(sign | 0x7c00u);  // rounds to infinity
  if (x < 0x38800000u) {  // below 2^-14: a half subnormal (or zero)
    if (x < 0x33000000u) return static_cast<std::uint16_t>(sign);  // below 2^-25 (a tie at 2^-25 goes to 0 too)
    const std::uint32_t e = x >> 23, m = (x & 0x7fffffu) | 0x800000u, shift = 126u - e;
    std::uint32_t hm = m >> shift;
    const std::uint32_t rem = m & ((1u << shift) - 1u), half = 1u << (shift - 1u);
    if (rem > half || (rem == half && (hm & 1u))) ++hm;
    return static_cast<std::uint16_t>(sign | hm);
  }
  const std::uint32_t r = x - 0x38000000u;  // rebias the exponent from 127 to 15
  std::uint32_t hb = r >> 13;
  const std::uint32_t rem = r & 0x1fffu;
  if (rem > 0x1000u || (rem == 0x1000u && (hb & 1u))) ++hb;
  return static_cast<std::uint16_t>(sign | hb);
}

KV_HD float f16_to_f32(std::uint16_t h) {
  const std::uint32_t sign = static_cast<std::uint32_t>(h & 0x8000u) << 16;
  const std::uint32_t e = (h >> 10) & 0x1fu, m = h & 0x3ffu;
  if (e == 0) {
    const float v = static_cast<float>(m) * 5.9604644775390625e-8f;  // m * 2^-24, exact
    return m == 0 ? bits_f32(sign) : (sign ? -v : v);
  }
  if (e == 31) return bits_f32(sign | 0x7f800000u | (m << 13));
  return bits_f32(sign | ((e + 112u) << 23) | (m << 13));
}

}  // namespace kvgate::kernels
