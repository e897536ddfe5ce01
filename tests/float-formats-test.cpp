#include <cmath>

#include "tests/catch_compat.hpp"
#include "kernels/float_formats.h"

using namespace kvgate::kernels;

// An independent bf16 rounding: pick the nearer of the two bf16 neighbours in double, ties to even.
static std::uint16_t bf16_by_value(float f) {
  const std::uint32_t u = f32_bits(f);
  const std::uint16_t lo = static_cast<std::uint16_t>(u >> 16);
  if ((u & 0xffffu) == 0) return lo;
  const std::uint16_t hi = static_cast<std::uint16_t>(lo + 1);
  const double d = f, dl = bf16_to_f32(lo), dh = (hi & 0x7fffu) >= 0x7f80u ? std::copysign(INFINITY, d) : bf16_to_f32(hi);
  const double el = std::fabs(d - dl), eh = std::isinf(dh) ? std::ldexp(1.0, 200) : std::fabs(dh - d);
  if (std::isinf(dh)) {  // rounding up would overflow: IEEE overflows when |x| >= max + half an ulp
    const double half_ulp = (std::ldexp(1.0, 128) - std::fabs(dl)) / 2;
    return std::fabs(d - dl) >= half_ulp ? hi : lo;
  }
  if (el < eh) return lo;
  if (eh < el) return hi;
  return (lo & 1) ? hi : lo;
}

TEST_CASE("bf16: round to nearest even on a sweep of the float space", "[float]") {
  std::uint64_t checked = 0;
  for (std::uint64_t u = 0; u < (1ull << 32); u += 4099) {  // a prime stride touches every mantissa pattern class
    const float f = bits_f32(static_cast<std::uint32_t>(u));
    if (std::isnan(f)) {
      REQUIRE(std::isnan(bf16_to_f32(f32_to_bf16(f))));
      continue;
    }
    REQUIRE(f32_to_bf16(f) == bf16_by_value(f));
    ++checked;
  }
  CHECK(checked > 1000000);
  CHECK(f32_to_bf16(1.0f) == 0x3f80);
  CHECK(f32_to_bf16(bits_f32(0x3f808000u)) == 0x3f80);  // tie, even stays
  CHECK(f32_to_bf16(bits_f32(0x3f818000u)) == 0x3f82);  // tie, odd rounds up
  CHECK(f32_to_bf16(INFINITY) == 0x7f80);
}

#if defined(__FLT16_MAX__)
TEST_CASE("fp16: every float converts as the compiler's _Float16 does", "[float]") {
  for (std::uint64_t u = 0; u < (1ull << 32); u += 61) {  // a prime stride: every exponent, both signs, all rounding cases
    const float f = bits_f32(static_cast<std::uint32_t>(u));
    const _Float16 ref = static_cast<_Float16>(f);
    std::uint16_t ref_bits;
    std::memcpy(&ref_bits, &ref, 2);
    const std::uint16_t got = f32_to_f16(f);
    if (std::isnan(f)) {
      REQUIRE((got & 0x7c00) == 0x7c00);
      REQUIRE((got & 0x3ff) != 0);
      continue;
    }
    if (got != ref_bits) FAIL("f32_to_f16(" << std::hexfloat << f << ") = " << got << ", _Float16 gives " << ref_bits);
  }
}

TEST_CASE("fp16: every half converts back exactly", "[float]") {
  for (std::uint32_t h = 0; h < 65536; ++h) {
    _Float16 x;
    const std::uint16_t b = static_cast<std::uint16_t>(h);
    std::memcpy(&x, &b, 2);
    const float ref = static_cast<float>(x), got = f16_to_f32(b);
    if (std::isnan(ref)) REQUIRE(std::isnan(got));
    else REQUIRE(f32_bits(got) == f32_bits(ref));
  }
}
#endif
