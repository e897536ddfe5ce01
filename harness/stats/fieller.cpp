#include "harness/stats/fieller.h"

#include <cmath>
#include <limits>
#include <stdexcept>

#include "harness/stats/normal.h"

namespace kvgate::stats {

namespace {
void check(const RatioMoments& m) {
  if (!(m.mean_b > 0.0)) throw std::invalid_argument("fieller: the reference mean must be > 0");
  if (!(m.mean_c >= 0.0) || !(m.var_b >= 0.0) || !(m.var_c >= 0.0) || !std::isfinite(m.cov))
    throw std::invalid_argument("fieller: means and variances must be finite and >= 0");
}
}  // namespace

double contrast_variance(const RatioMoments& m, double t) {
  return std::max(0.0, m.var_c + t * t * m.var_b - 2 * t * m.cov);
}

FiellerInterval fieller_interval(const RatioMoments& m, double z) {
  check(m);
  if (!(z > 0.0)) throw std::invalid_argument("fieller_interval: z must be > 0");
  FiellerInterval out;
  out.bounds = {0.0, std::numeric_limits<double>::infinity()};
  // (mean_c - t mean_b)^2 = z^2 Var D(t)  <=>  a t^2 - 2 b t + c = 0
  const double z2 = z * z;
  const double a = m.mean_b * m.mean_b - z2 * m.var_b;
  const double b = m.mean_c * m.mean_b - z2 * m.cov;
  const double c = m.mean_c * m.mean_c - z2 * m.var_c;
  if (!(a > 0.0)) return out;  // unbounded confidence set
  const double disc = std::max(0.0, b * b - a * c);  // >= 0 whenever a > 0 (R lies inside the set)
  const double root = std::sqrt(disc);
  out.bounded = true;
  out.bounds.hi = (b + root) / a;
  // Smaller root without cancellation: t1 * t2 = c / a.
  const double lo = b > 0 ? c / (b + root) : (b - root) / a;
  out.bounds.lo = std::max(0.0, lo);
  return out;
}

FiellerTest fieller_test(const RatioMoments& m, double margin, double alpha) {
  check(m);
  FiellerTest r;
  r.ratio = m.mean_c / m.mean_b;
  r.contrast = m.mean_c - margin * m.mean_b;
  r.se = std::sqrt(contrast_variance(m, margin));
  if (r.se > 0.0) r.z_margin = r.contrast / r.se;
  else r.z_margin = r.contrast > 0 ? std::numeric_limits<double>::infinity()
                  : r.contrast < 0 ? -std::numeric_limits<double>::infinity() : 0.0;
  r.p_value = normal_sf(r.z_margin);
  r.interval = fieller_interval(m, z_upper(alpha));
  return r;
}

}  // namespace kvgate::stats
