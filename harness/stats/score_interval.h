// Inverting a score statistic Z(t) for a ratio t: the confidence set {t : |Z(t)| <= z} of a test
// that evaluates its variance under H0: ratio = t (tang.h, stratified_score.h). Both statistics
// fall as t grows and are 0 at the estimate, so each bound is one root.
#pragma once

#include <algorithm>
#include <cstdint>
#include <limits>

#include <boost/math/tools/toms748_solve.hpp>

#include "harness/stats/interval.h"

namespace kvgate::stats {

// Solves f(t) = 0 for a decreasing f with f(lo) > 0 > f(hi).
template <class F>
double solve_decreasing(const F& f, double lo, double hi) {
  std::uintmax_t iterations = 200;
  const auto [a, b] = boost::math::tools::toms748_solve(f, lo, hi, boost::math::tools::eps_tolerance<double>(52), iterations);
  return 0.5 * (a + b);
}

// lo solves Z(t) = +z on (0, estimate), hi solves Z(t) = -z above it. lo is 0 when even t -> 0 is
// not rejected; hi is +infinity when no t up to 1e12 is rejected.
template <class Z>
Interval invert_score(const Z& score_z, double estimate, double z) {
  Interval out{0.0, std::numeric_limits<double>::infinity()};
  if (estimate > 0.0) {
    const auto f = [&](double t) { return score_z(t) - z; };
    const double lo = estimate * 1e-12;
    if (f(lo) > 0.0) out.lo = solve_decreasing(f, lo, estimate);
  }
  const auto g = [&](double t) { return score_z(t) + z; };
  double lo = estimate > 0.0 ? estimate : 1e-12;
  double hi = std::max(2 * lo, 1.0);
  while (g(hi) > 0.0 && hi < 1e12) lo = hi, hi *= 2;
  if (g(hi) <= 0.0) out.hi = g(lo) <= 0.0 ? lo : solve_decreasing(g, lo, hi);
  return out;
}

}  // namespace kvgate::stats
