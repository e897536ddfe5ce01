// calibrate --report's statistics on hand-made tensors: clip and flush fractions, the 99.99th
// percentile and the round-trip RMS error, each derived by hand from E4M3's grid (largest finite
// 448; smallest subnormal 2^-9, so |x| <= 2^-10 rounds to zero, ties to even).
#include <cmath>

#include "harness/calibrate/range_report.h"
#include "tests/catch_compat.hpp"
#include "tests/test_util.h"

using namespace kvgate::calibrate;

TEST_CASE("range report: clipped, flushed, RMS and the 99.99th percentile at scale 1", "[calibrate]") {
  const float tiny = std::ldexp(1.0f, -11), half_step = std::ldexp(1.0f, -10);
  // One head: 500 and -1000 saturate to +-448; 2^-11 and 2^-10 flush to 0; the rest are on the grid.
  const RangeStats s = range_stats({{500.0f, -1000.0f, 448.0f, 0.0f, tiny, 1.0f, half_step, 3.0f}}, {1.0f}, "fp8_e4m3");
  CHECK(s.count == 8);
  CHECK(s.absmax == 1000.0);
  CHECK(s.clipped == 2.0 / 8);  // 448 itself is representable: not clipped
  CHECK(s.flushed == 2.0 / 8);  // 0 stays 0 and is not counted
  const double sq = 52.0 * 52 + 552.0 * 552 + double(tiny) * tiny + double(half_step) * half_step;
  CHECK(s.rms_error == kvtest::Approx(std::sqrt(sq / 8)));
  // Sorted |x|: 0, 2^-11, 2^-10, 1, 3, 448, 500, 1000; 0.9999 * 7 = 6.9993 -> 500 + 0.9993 * 500.
  CHECK(s.p9999 == kvtest::Approx(500.0 + (0.9999 * 7 - 6) * 500.0));
  CHECK(s.scale_min == 1.0f);
  CHECK(s.scale_max == 1.0f);
}

TEST_CASE("range report: each head against its own scale", "[calibrate]") {
  // Head 0 at scale 2: 1000 / 2 = 500 clips, 896 / 2 = 448 does not. Head 1 at scale 0.5: 2^-11 / 0.5 = 2^-10
  // flushes, 2^-9 / 0.5 = 2^-8 is a subnormal kept exactly; 300 / 0.5 = 600 clips to 448 * 0.5 = 224.
  const float a = std::ldexp(1.0f, -11), b = std::ldexp(1.0f, -9);
  const RangeStats s = range_stats({{1000.0f, 896.0f}, {a, b, 300.0f}}, {2.0f, 0.5f}, "fp8_e4m3");
  CHECK(s.count == 5);
  CHECK(s.clipped == 2.0 / 5);
  CHECK(s.flushed == 1.0 / 5);
  CHECK(s.rms_error == kvtest::Approx(std::sqrt((104.0 * 104 + double(a) * a + 76.0 * 76) / 5)));
  CHECK(s.scale_min == 0.5f);
  CHECK(s.scale_max == 2.0f);
}

TEST_CASE("range report: E5M2's range, and formats without a per-tensor scale refused", "[calibrate]") {
  const RangeStats s = range_stats({{57344.0f, 60000.0f, 1.0f, 0.0f}}, {1.0f}, "fp8_e5m2");
  CHECK(s.clipped == 1.0 / 4);
  CHECK(s.flushed == 0);
  CHECK_THROWS_WITH(range_stats({{1.0f}}, {1.0f}, "int8_per_token_head"), kvtest::contains("fp8_e4m3 or fp8_e5m2"));
  const auto t = uniform_scales(3, 2, 1.0f);
  CHECK(t.k.size() == 3u);
  CHECK(t.v[2][1] == 1.0f);
}
