// The portable FP8 conversion (kernels/fp8_formats.h) against CUDA's own __nv_cvt_float_to_fp8
// (RNE, __NV_SATFINITE) for every one of the 2^32 float bit patterns, E4M3 and E5M2, and the
// widening back against __nv_cvt_fp8_to_halfraw for all 256 codes. cuda_fp8.h's conversions are
// host code under g++ (a software RNE through double), so this needs the toolkit's headers, not a GPU.
#include <cuda_fp8.h>

#include <atomic>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <thread>
#include <vector>

#include "tests/catch_compat.hpp"
#include "kernels/fp8_formats.h"

using namespace kvgate::kernels;

namespace {

struct Mismatch {
  std::uint32_t bits;
  int cuda, ours;
};

// Checks floats [lo, hi) for one format; returns the mismatch count and the first few.
std::uint64_t check_range(std::uint64_t lo, std::uint64_t hi, Fp8Kind kind, std::vector<Mismatch>& first) {
  const __nv_fp8_interpretation_t interp = kind == Fp8Kind::kE4M3 ? __NV_E4M3 : __NV_E5M2;
  std::uint64_t bad = 0;
  for (std::uint64_t u = lo; u < hi; ++u) {
    const float f = bits_f32(static_cast<std::uint32_t>(u));
    const int cuda = __nv_cvt_float_to_fp8(f, __NV_SATFINITE, interp);
    const int ours = f32_to_fp8(f, kind);
    if (cuda != ours) {
      if (first.size() < 8) first.push_back({static_cast<std::uint32_t>(u), cuda, ours});
      ++bad;
    }
  }
  return bad;
}

void check_all_floats(Fp8Kind kind) {
  const unsigned threads = 2;  // CI has two cores
  const std::uint64_t total = 1ull << 32, chunk = total / threads;
  std::vector<std::vector<Mismatch>> first(threads);
  std::vector<std::uint64_t> bad(threads);
  std::vector<std::thread> pool;
  for (unsigned t = 0; t < threads; ++t)
    pool.emplace_back([&, t] { bad[t] = check_range(t * chunk, (t + 1) * chunk, kind, first[t]); });
  for (auto& th : pool) th.join();
  std::uint64_t total_bad = 0;
  for (unsigned t = 0; t < threads; ++t) {
    total_bad += bad[t];
    for (const auto& m : first[t])
      UNSCOPED_INFO("float bits 0x" << std::hex << m.bits << ": cuda 0x" << m.cuda << ", ours 0x" << m.ours);
  }
  CHECK(total_bad == 0);
}

float cuda_widen(std::uint8_t q, Fp8Kind kind) {
  const __half_raw h = __nv_cvt_fp8_to_halfraw(q, kind == Fp8Kind::kE4M3 ? __NV_E4M3 : __NV_E5M2);
  return f16_to_f32(h.x);
}

}  // namespace

TEST_CASE("fp8 e4m3: every float converts as __nv_cvt_float_to_fp8(RNE, SATFINITE)", "[fp8][exhaustive]") {
  check_all_floats(Fp8Kind::kE4M3);
}

TEST_CASE("fp8 e5m2: every float converts as __nv_cvt_float_to_fp8(RNE, SATFINITE)", "[fp8][exhaustive]") {
  check_all_floats(Fp8Kind::kE5M2);
}

TEST_CASE("fp8: every code widens exactly as __nv_cvt_fp8_to_halfraw", "[fp8]") {
  for (int q = 0; q < 256; ++q)
    for (Fp8Kind kind : {Fp8Kind::kE4M3, Fp8Kind::kE5M2}) {
      const float cuda = cuda_widen(static_cast<std::uint8_t>(q), kind), ours = fp8_to_f32(static_cast<std::uint8_t>(q), kind);
      if (std::isnan(cuda)) {
        REQUIRE(std::isnan(ours));
      } else {
        REQUIRE(f32_bits(cuda) == f32_bits(ours));  // signed zeros too
      }
    }
}

// The cases the exhaustive sweep covers, named, with the value worked by hand.
TEST_CASE("fp8: ties, subnormals, +-max, NaN and inf by hand", "[fp8]") {
  // E4M3: 1.0625 lies halfway between 1.0 (0x38, even mantissa) and 1.125 (0x39): stays 1.0;
  // 1.1875 lies between 1.125 (odd) and 1.25 (0x3A, even): goes up. Just above a tie rounds up.
  CHECK(f32_to_fp8_e4m3(1.0625f) == 0x38);
  CHECK(f32_to_fp8_e4m3(1.1875f) == 0x3A);
  CHECK(f32_to_fp8_e4m3(std::nextafter(1.0625f, 2.0f)) == 0x39);  // Triton's fp16 detour on sm_89 gives 1.0 here
  // Subnormals: unit 2^-9; 2^-10 is a tie between 0 and 2^-9 -> 0; 3*2^-10 -> 2*2^-9 (even).
  CHECK(f32_to_fp8_e4m3(std::ldexp(1.0f, -9)) == 0x01);
  CHECK(f32_to_fp8_e4m3(std::ldexp(1.0f, -10)) == 0x00);
  CHECK(f32_to_fp8_e4m3(std::ldexp(3.0f, -10)) == 0x02);
  CHECK(f32_to_fp8_e4m3(-std::ldexp(1.0f, -11)) == 0x80);  // underflow keeps the sign
  CHECK(f32_to_fp8_e4m3(std::ldexp(15.0f, -10)) == 0x08);  // 7.5 units rounds up to the minimum normal 2^-6
  // Saturation: 448 = 0x7E is the largest; 464 (half an ulp above) is a tie with the NaN code -> 448.
  CHECK(f32_to_fp8_e4m3(448.0f) == 0x7E);
  CHECK(f32_to_fp8_e4m3(464.0f) == 0x7E);
  CHECK(f32_to_fp8_e4m3(1e30f) == 0x7E);
  CHECK(f32_to_fp8_e4m3(-INFINITY) == 0xFE);
  CHECK(f32_to_fp8_e4m3(NAN) == 0x7F);
  CHECK(f32_to_fp8_e4m3(-NAN) == 0x7F);  // CUDA drops a NaN's sign
  CHECK(std::isnan(fp8_e4m3_to_f32(0xFF)));
  CHECK(fp8_e4m3_to_f32(0x7E) == 448.0f);
  CHECK(fp8_e4m3_to_f32(0x01) == std::ldexp(1.0f, -9));
  // E5M2: max 57344 = 0x7B; 61440 would round to infinity -> saturates; inf -> max.
  CHECK(f32_to_fp8_e5m2(57344.0f) == 0x7B);
  CHECK(f32_to_fp8_e5m2(61439.0f) == 0x7B);
  CHECK(f32_to_fp8_e5m2(61440.0f) == 0x7B);
  CHECK(f32_to_fp8_e5m2(INFINITY) == 0x7B);
  CHECK(f32_to_fp8_e5m2(-INFINITY) == 0xFB);
  CHECK(f32_to_fp8_e5m2(NAN) == 0x7F);
  CHECK(f32_to_fp8_e5m2(1.125f) == 0x3C);  // tie between 1.0 (0x3C) and 1.25 (0x3D): even
  CHECK(f32_to_fp8_e5m2(std::ldexp(1.0f, -16)) == 0x01);  // smallest subnormal
  CHECK(std::isinf(fp8_e5m2_to_f32(0x7C)));
}
