#include "harness/stats/geometric_mean_ratio.h"

#include <cmath>
#include <limits>
#include <stdexcept>

#include <boost/math/distributions/students_t.hpp>

namespace kvgate::stats {

GeometricRatio geometric_mean_ratio(std::span<const double> x, double alpha) {
  if (x.empty()) throw std::invalid_argument("geometric_mean_ratio: no trials");
  if (!(alpha > 0.0 && alpha < 1.0)) throw std::invalid_argument("geometric_mean_ratio: alpha must be in (0, 1)");
  GeometricRatio r;
  r.n = x.size();
  double sum = 0.0;
  for (double v : x) {
    if (!std::isfinite(v)) throw std::invalid_argument("geometric_mean_ratio: a log ratio is not finite");
    sum += v;
  }
  r.log_mean = sum / static_cast<double>(r.n);
  r.estimate = std::exp(r.log_mean);
  if (r.n < 2) {
    r.interval = {0.0, std::numeric_limits<double>::infinity()};
    return r;
  }
  double ss = 0.0;
  for (double v : x) ss += (v - r.log_mean) * (v - r.log_mean);
  r.log_sd = std::sqrt(ss / static_cast<double>(r.n - 1));
  const boost::math::students_t t(static_cast<double>(r.n - 1));
  const double q = boost::math::quantile(boost::math::complement(t, alpha / 2.0));
  const double half = q * r.log_sd / std::sqrt(static_cast<double>(r.n));
  r.interval = {std::exp(r.log_mean - half), std::exp(r.log_mean + half)};
  return r;
}

}  // namespace kvgate::stats
