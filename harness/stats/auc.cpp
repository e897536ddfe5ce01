#include "harness/stats/auc.h"

#include <cmath>
#include <stdexcept>

namespace kvgate::stats {

const char* to_string(AucAxis axis) { return axis == AucAxis::linear ? "linear" : "log2"; }

std::vector<double> auc_weights(std::span<const double> x, AucAxis axis) {
  if (x.empty()) throw std::invalid_argument("auc: no buckets");
  std::vector<double> t(x.size());
  for (std::size_t k = 0; k < x.size(); ++k) {
    if (!(x[k] > 0.0) || !std::isfinite(x[k])) throw std::invalid_argument("auc: bucket edges must be positive");
    if (k > 0 && !(x[k] > x[k - 1])) throw std::invalid_argument("auc: bucket edges must be strictly increasing");
    t[k] = axis == AucAxis::linear ? x[k] : std::log2(x[k]);
  }
  std::vector<double> w(x.size(), 0.0);
  if (x.size() == 1) {
    w[0] = 1.0;
    return w;
  }
  const double range = t.back() - t.front();
  // Each trapezoid (t_{k+1} - t_k)(y_k + y_{k+1})/2 gives half its width to both ends.
  for (std::size_t k = 0; k + 1 < t.size(); ++k) {
    const double half = 0.5 * (t[k + 1] - t[k]) / range;
    w[k] += half;
    w[k + 1] += half;
  }
  return w;
}

double auc(std::span<const double> x, std::span<const double> y, AucAxis axis) {
  if (x.size() != y.size()) throw std::invalid_argument("auc: x and y differ in length");
  const auto w = auc_weights(x, axis);
  double sum = 0.0;
  for (std::size_t k = 0; k < w.size(); ++k) sum += w[k] * y[k];
  return sum;
}

double weighted_variance(std::span<const double> weights, std::span<const double> v) {
  if (weights.size() != v.size()) throw std::invalid_argument("weighted_variance: lengths differ");
  double sum = 0.0;
  for (std::size_t k = 0; k < v.size(); ++k) sum += weights[k] * weights[k] * v[k];
  return sum;
}

}  // namespace kvgate::stats
