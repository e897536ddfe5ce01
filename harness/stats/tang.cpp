#include "stats/tang.h"

#include <cmath>
#include <cstdint>
#include <limits>
#include <stdexcept>

#include <boost/math/tools/toms748_solve.hpp>

#include "stats/normal.h"

namespace kvgate::stats {

namespace {

void check_defined(const PairedCounts& t) {
  check_counts(t, "tang");
  if (t.reference_passes() == 0)
    throw std::invalid_argument("tang: the reference never passes, so the ratio is undefined");
}

// Solves f(t) = 0 for a decreasing f with f(lo) > 0 > f(hi).
double solve_decreasing(const auto& f, double lo, double hi) {
  std::uintmax_t iterations = 200;
  const auto [a, b] = boost::math::tools::toms748_solve(f, lo, hi, boost::math::tools::eps_tolerance<double>(52), iterations);
  return 0.5 * (a + b);
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
  const double r = t.ratio();
  Interval out{0.0, std::numeric_limits<double>::infinity()};
  // Lower: Z(t) = z on (0, R). Z is +inf-ish near 0 when the candidate passes at all.
  if (r > 0.0) {
    const auto f = [&](double x) { return tang_z(t, x) - z; };
    double lo = r * 1e-12;
    if (f(lo) > 0.0) out.lo = solve_decreasing(f, lo, r);
  }
  // Upper: Z(t) = -z on (R, inf): grow the bracket until Z falls below -z.
  const auto g = [&](double x) { return tang_z(t, x) + z; };
  double lo = r > 0.0 ? r : 1e-12;
  double hi = std::max(2 * lo, 1.0);
  while (g(hi) > 0.0 && hi < 1e12) lo = hi, hi *= 2;
  if (g(hi) <= 0.0) out.hi = g(lo) <= 0.0 ? lo : solve_decreasing(g, lo, hi);
  return out;
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
