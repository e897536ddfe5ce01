#include "harness/stats/tang.h"

#include <cmath>
#include <limits>
#include <stdexcept>

#include "harness/stats/normal.h"
#include "harness/stats/score_interval.h"

namespace kvgate::stats {

namespace {

void check_defined(const PairedCounts& t) {
  check_counts(t, "tang");
  if (t.reference_passes() == 0)
    throw std::invalid_argument("tang: the reference never passes, so the ratio is undefined");
}

}  // namespace

double tang_null_variance(double p11, double p_cand_only, double p_ref_only, double ratio) {
  const double a = 1 + ratio;
  const double b = (p11 + p_ref_only) * ratio * ratio - (p11 + p_cand_only + 2 * p_ref_only);
  const double c = p_ref_only * (1 - ratio) * (p11 + p_cand_only + p_ref_only);
  const double root = std::sqrt(std::max(0.0, b * b - 4 * a * c));
  // The restricted MLE of P(reference-only pass): the '+' root, in the form without cancellation.
  const double q = b >= 0 ? (b + root == 0.0 ? 0.0 : -2 * c / (b + root)) : (-b + root) / (2 * a);
  return (1 + ratio) * q + (p11 + p_cand_only + p_ref_only) * (ratio - 1);
}

double tang_z(const PairedCounts& t, double ratio) {
  check_defined(t);
  if (!(ratio > 0.0)) throw std::invalid_argument("tang_z: ratio must be > 0");
  const double n = static_cast<double>(t.n());
  const double n11 = static_cast<double>(t.n11), nb = static_cast<double>(t.n_b), nc = static_cast<double>(t.n_c);
  const double s = (n11 + nc) - ratio * (n11 + nb);
  if (s == 0.0) return 0.0;
  const double v = n * tang_null_variance(n11 / n, nc / n, nb / n, ratio);
  if (!(v > 0.0)) return s > 0 ? std::numeric_limits<double>::infinity() : -std::numeric_limits<double>::infinity();
  return s / std::sqrt(v);
}

Interval tang_interval(const PairedCounts& t, double z) {
  check_defined(t);
  if (!(z > 0.0)) throw std::invalid_argument("tang_interval: z must be > 0");
  return invert_score([&](double x) { return tang_z(t, x); }, t.ratio(), z);
}

TangTest tang_test(const PairedCounts& t, double margin, double alpha) {
  TangTest r;
  r.ratio = t.ratio();
  r.z_margin = tang_z(t, margin);
  r.p_value = normal_sf(r.z_margin);
  r.bounds = tang_interval(t, z_upper(alpha));
  return r;
}

}  // namespace kvgate::stats
