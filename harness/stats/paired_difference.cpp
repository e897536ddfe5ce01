#include "harness/stats/paired_difference.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <stdexcept>

#include <boost/math/tools/toms748_solve.hpp>

namespace kvgate::stats {

namespace {

Interval wilson_z(double k, double n, double z) {
  const double z2 = z * z;
  const double center = (k + z2 / 2) / (n + z2);
  const double half = z / (n + z2) * std::sqrt(k * (n - k) / n + z2 / 4);
  return {k == 0 ? 0.0 : std::max(0.0, center - half), k == n ? 1.0 : std::min(1.0, center + half)};
}

void check(const PairedCounts& t, double z, const char* who) {
  check_counts(t, who);
  if (!(z > 0.0)) throw std::invalid_argument(std::string(who) + ": z must be > 0");
}

// Tango's score statistic at difference d: decreasing in d.
double tango_z(const PairedCounts& t, double d) {
  const double n = static_cast<double>(t.n());
  const double b = static_cast<double>(t.n_c), c = static_cast<double>(t.n_b);  // b: candidate-only passes
  const double w = -b - c + (2 * n - b + c) * d;
  const double q = (std::sqrt(std::max(0.0, w * w + 8 * n * c * d * (1 - d))) - w) / (4 * n);
  const double num = b - c - n * d;
  const double v = n * (2 * q + d * (1 - d));
  if (num == 0.0) return 0.0;
  if (!(v > 0.0)) return num > 0 ? 1e300 : -1e300;
  return num / std::sqrt(v);
}

}  // namespace

double paired_difference(const PairedCounts& t) {
  check_counts(t, "paired_difference");
  return static_cast<double>(t.n_c - t.n_b) / static_cast<double>(t.n());
}

Interval newcombe_interval(const PairedCounts& t, double z) {
  check(t, z, "newcombe");
  const double n = static_cast<double>(t.n());
  const double A = static_cast<double>(t.n11), B = static_cast<double>(t.n_c), C = static_cast<double>(t.n_b),
               D = static_cast<double>(t.n00);
  const double p1 = (A + B) / n, p2 = (A + C) / n, d = p1 - p2;
  const Interval w1 = wilson_z(A + B, n, z), w2 = wilson_z(A + C, n, z);
  const double det = A * D - B * C;
  const double cadj = det > n / 2 ? det - n / 2 : det < 0 ? det : 0.0;
  const double marg = (A + B) * (C + D) * (A + C) * (B + D);
  const double phi = marg > 0 ? cadj / std::sqrt(marg) : 0.0;
  const double dl1 = p1 - w1.lo, du1 = w1.hi - p1, dl2 = p2 - w2.lo, du2 = w2.hi - p2;
  const double lo = d - std::sqrt(std::max(0.0, dl1 * dl1 - 2 * phi * dl1 * du2 + du2 * du2));
  const double hi = d + std::sqrt(std::max(0.0, dl2 * dl2 - 2 * phi * dl2 * du1 + du1 * du1));
  return {std::max(-1.0, lo), std::min(1.0, hi)};
}

Interval tango_interval(const PairedCounts& t, double z) {
  check(t, z, "tango");
  const double d = paired_difference(t);
  const auto solve = [&](double target, double lo, double hi) {
    const auto f = [&](double x) { return tango_z(t, x) - target; };
    std::uintmax_t iterations = 200;
    const auto [a, b] = boost::math::tools::toms748_solve(f, lo, hi, boost::math::tools::eps_tolerance<double>(52), iterations);
    return 0.5 * (a + b);
  };
  const double eps = 1e-12;
  Interval out{-1.0, 1.0};
  if (tango_z(t, -1 + eps) > z) out.lo = solve(z, -1 + eps, d);
  if (tango_z(t, 1 - eps) < -z) out.hi = solve(-z, d, 1 - eps);
  return out;
}

Interval wald_difference_interval(const PairedCounts& t, double z) {
  check(t, z, "wald_difference");
  const double n = static_cast<double>(t.n());
  const double diff = static_cast<double>(t.n_c - t.n_b);
  const double se = std::sqrt(std::max(0.0, static_cast<double>(t.n_b + t.n_c) - diff * diff / n)) / n;
  const double d = diff / n;
  return {std::max(-1.0, d - z * se), std::min(1.0, d + z * se)};
}

}  // namespace kvgate::stats
