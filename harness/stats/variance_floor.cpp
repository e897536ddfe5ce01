#include "harness/stats/variance_floor.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <vector>

#include "harness/stats/normal.h"

namespace kvgate::stats {

void UnitSums::add(const UnitSums& b, double w) {
  const double w2 = w * w;
  ref_squares += w2 * b.ref_squares;
  diff_squares += w2 * b.diff_squares;
  diff_fourths += w2 * w2 * b.diff_fourths;
}

double UnitSums::differing_units() const { return diff_fourths > 0.0 ? diff_squares * diff_squares / diff_fourths : 0.0; }

UnitSums unit_sums(std::span<const double> candidate, std::span<const double> reference, std::span<const std::uint32_t> cluster,
                   std::size_t clusters) {
  if (reference.size() != cluster.size() || candidate.size() != cluster.size() || reference.empty())
    throw std::invalid_argument("unit_sums: needs one candidate score, reference score and cluster id per trial, and a trial");
  std::vector<double> ref(clusters, 0.0), diff(clusters, 0.0);
  for (std::size_t i = 0; i < reference.size(); ++i) {
    if (cluster[i] >= clusters) throw std::invalid_argument("unit_sums: a cluster id is out of range");
    ref[cluster[i]] += reference[i];
    diff[cluster[i]] += candidate[i] - reference[i];
  }
  const double n = static_cast<double>(reference.size());
  UnitSums s;
  for (std::size_t g = 0; g < clusters; ++g) {
    const double b = ref[g] / n, d = diff[g] / n;
    s.ref_squares += b * b;
    s.diff_squares += d * d;
    s.diff_fourths += d * d * d * d;
  }
  return s;
}

LossFloor loss_floor(const RatioMoments& observed, const UnitSums& sums, double z) {
  if (!(observed.mean_b > 0.0)) throw std::invalid_argument("loss_floor: the reference mean must be > 0");
  if (!(sums.ref_squares > 0.0) || !std::isfinite(sums.ref_squares))
    throw std::invalid_argument("loss_floor: the reference's unit squares must be finite and > 0");
  if (!(z > 0.0)) throw std::invalid_argument("loss_floor: z must be > 0");
  LossFloor f;
  f.units = observed.mean_b * observed.mean_b / sums.ref_squares;
  f.differing_units = sums.differing_units();
  const double z2 = z * z, q = std::max(0.0, z2 - f.differing_units) / (f.units + z2);
  f.loss_bound = q;
  const double vb = std::max(0.0, observed.var_b);
  f.moments = {.mean_c = observed.mean_c,
               .mean_b = observed.mean_b,
               .var_c = (1 - q) * (1 - q) * vb + q * (1 - q) * sums.ref_squares,
               .var_b = vb,
               .cov = (1 - q) * vb};
  return f;
}

FlooredFiellerTest floored_fieller_test(const RatioMoments& observed, const UnitSums& sums, double margin, double alpha) {
  FlooredFiellerTest r;
  r.observed = fieller_test(observed, margin, alpha);
  r.floor = loss_floor(observed, sums, z_upper(alpha));
  r.test = r.observed;
  if (!(r.floor.loss_bound > 0.0)) return r;  // enough units differ: Fieller as it was
  const FiellerTest fl = fieller_test(r.floor.moments, margin, alpha);
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
