// The paired 2x2 table of one binary outcome under two configurations (stats.md §0 notation):
// reference = baseline (denominator of the ratio), candidate = numerator.
//
//                       candidate pass   candidate fail
//   reference pass          n11              n_b  (regression flip)
//   reference fail          n_c (improvement)  n00
#pragma once
#include <cstdint>

namespace kvgate::stats {

struct PairedCounts {
  std::int64_t n11 = 0;
  std::int64_t n_c = 0;  // improvement flips: reference fail, candidate pass
  std::int64_t n_b = 0;  // regression flips: reference pass, candidate fail
  std::int64_t n00 = 0;

  std::int64_t n() const { return n11 + n_c + n_b + n00; }
  std::int64_t reference_passes() const { return n11 + n_b; }
  std::int64_t candidate_passes() const { return n11 + n_c; }
  // R = p_c / p_b; only defined when the reference passes at least once.
  double ratio() const { return static_cast<double>(candidate_passes()) / static_cast<double>(reference_passes()); }
};

// Throws std::invalid_argument unless every count is >= 0 and n > 0.
void check_counts(const PairedCounts& t, const char* who);

}  // namespace kvgate::stats
