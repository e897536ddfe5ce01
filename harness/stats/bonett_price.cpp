#include "harness/stats/bonett_price.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>

namespace kvgate::stats {

namespace {
// Wilson limits of k/n at critical value z.
Interval wilson_z(double k, double n, double z) {
  const double z2 = z * z;
  const double center = (k + z2 / 2) / (n + z2);
  const double half = z / (n + z2) * std::sqrt(k * (n - k) / n + z2 / 4);
  return {std::max(0.0, center - half), std::min(1.0, center + half)};
}
}  // namespace

Interval bonett_price_interval(const PairedCounts& t, double z) {
  check_counts(t, "bonett_price");
  if (t.reference_passes() == 0) throw std::invalid_argument("bonett_price: the reference never passes");
  if (!(z > 0.0)) throw std::invalid_argument("bonett_price: z must be > 0");
  const double n1 = static_cast<double>(t.candidate_passes()), n2 = static_cast<double>(t.reference_passes());
  const double nstar = static_cast<double>(t.n11 + t.n_b + t.n_c);
  const double a = std::sqrt((static_cast<double>(t.n_b + t.n_c) + 2) / ((n1 + 1) * (n2 + 1)));
  const double b = std::sqrt((1 - (n1 + 1) / (nstar + 2)) / (n1 + 1));
  const double c = std::sqrt((1 - (n2 + 1) / (nstar + 2)) / (n2 + 1));
  const double zp = a / (b + c) * z;
  const Interval w1 = wilson_z(n1, nstar, zp), w2 = wilson_z(n2, nstar, zp);
  return {w1.lo / w2.hi, w2.lo > 0 ? w1.hi / w2.lo : std::numeric_limits<double>::infinity()};
}

}  // namespace kvgate::stats
