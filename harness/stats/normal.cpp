#include "harness/stats/normal.h"

#include <cmath>
#include <stdexcept>

#include <boost/math/distributions/normal.hpp>

namespace kvgate::stats {

double z_upper(double tail) {
  if (!(tail > 0.0 && tail < 1.0)) throw std::invalid_argument("z_upper: tail probability must be in (0, 1)");
  return boost::math::quantile(boost::math::complement(boost::math::normal_distribution<>(), tail));
}

double normal_cdf(double z) {
  if (std::isinf(z)) return z > 0 ? 1.0 : 0.0;
  return boost::math::cdf(boost::math::normal_distribution<>(), z);
}

double normal_sf(double z) {
  if (std::isinf(z)) return z > 0 ? 0.0 : 1.0;
  return boost::math::cdf(boost::math::complement(boost::math::normal_distribution<>(), z));
}

}  // namespace kvgate::stats
