#include "stats/variance_floor.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <vector>

#include "stats/normal.h"

namespace kvgate::stats {

double unit_square_sum(std::span<const double> reference, std::span<const std::uint32_t> cluster, std::size_t clusters) {
  if (reference.size() != cluster.size() || reference.empty())
    throw std::invalid_argument("unit_square_sum: needs one cluster id per score, and at least one score");
  std::vector<double> total(clusters, 0.0);
  for (std::size_t i = 0; i < reference.size(); ++i) {
    if (cluster[i] >= clusters) throw std::invalid_argument("unit_square_sum: a cluster id is out of range");
    total[cluster[i]] += reference[i];
  }
  double s = 0.0;
  for (double b : total) s += b * b;
  const double n = static_cast<double>(reference.size());
  return s / (n * n);
}

LossFloor loss_floor(const RatioMoments& observed, double unit_squares, double z) {
  if (!(observed.mean_b > 0.0)) throw std::invalid_argument("loss_floor: the reference mean must be > 0");
  if (!(unit_squares > 0.0) || !std::isfinite(unit_squares))
    throw std::invalid_argument("loss_floor: the reference's unit squares must be finite and > 0");
  if (!(z > 0.0)) throw std::invalid_argument("loss_floor: z must be > 0");
  LossFloor f;
  f.units = observed.mean_b * observed.mean_b / unit_squares;
  const double z2 = z * z, q = z2 / (f.units + z2);
  f.loss_bound = q;
  const double vb = std::max(0.0, observed.var_b);
  f.moments = {.mean_c = observed.mean_c,
               .mean_b = observed.mean_b,
               .var_c = (1 - q) * (1 - q) * vb + q * (1 - q) * unit_squares,
               .var_b = vb,
               .cov = (1 - q) * vb};
  return f;
}

FlooredFiellerTest floored_fieller_test(const RatioMoments& observed, double unit_squares, double margin, double alpha) {
  FlooredFiellerTest r;
  r.observed = fieller_test(observed, margin, alpha);
  r.floor = loss_floor(observed, unit_squares, z_upper(alpha));
  const FiellerTest fl = fieller_test(r.floor.moments, margin, alpha);
  r.test = r.observed;
  // Var D(t) = max(observed, floor): the union of the two confidence sets. var_b is the same in
  // both, so both are bounded or neither is.
  r.test.se = std::max(r.observed.se, fl.se);
  if (r.test.se > 0.0) r.test.z_margin = r.test.contrast / r.test.se;
  r.test.p_value = normal_sf(r.test.z_margin);
  FiellerInterval& i = r.test.interval;
  if (fl.interval.bounds.lo < i.bounds.lo) i.bounds.lo = fl.interval.bounds.lo, r.floor_lcb = true;
  if (fl.interval.bounds.hi > i.bounds.hi) i.bounds.hi = fl.interval.bounds.hi, r.floor_ucb = true;
  i.bounded = i.bounded && fl.interval.bounded;
  if (!i.bounded) {
    i.bounds = {0.0, std::numeric_limits<double>::infinity()};
    r.floor_lcb = r.floor_ucb = false;
  }
  return r;
}

}  // namespace kvgate::stats
