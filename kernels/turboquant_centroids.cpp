#include "kernels/turboquant_centroids.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <mutex>

namespace kvgate::kernels {

namespace {

double gaussian_pdf(double x, double sigma2) {
  return (1.0 / std::sqrt(2 * M_PI * sigma2)) * std::exp(-x * x / (2 * sigma2));
}

template <class F>
double trapz(F f, double a, double b, int n = 200) {
  const double h = (b - a) / n;
  double result = 0.5 * (f(a) + f(b));
  for (int i = 1; i < n; ++i) result += f(a + i * h);
  return result * h;
}

}  // namespace

LloydMaxTable turboquant_lloyd_max(int d, int bits) {
  const int n_levels = 1 << bits;
  const double sigma2 = 1.0 / d, sigma = std::sqrt(sigma2);
  const auto pdf = [&](double x) { return gaussian_pdf(x, sigma2); };
  const double lo = -3.5 * sigma, hi = 3.5 * sigma;
  std::vector<double> c(n_levels);
  for (int i = 0; i < n_levels; ++i) c[i] = lo + (hi - lo) * (i + 0.5) / n_levels;
  for (int iter = 0; iter < 200; ++iter) {
    std::vector<double> edges{lo * 3};
    for (int i = 0; i + 1 < n_levels; ++i) edges.push_back((c[i] + c[i + 1]) / 2.0);
    edges.push_back(hi * 3);
    std::vector<double> next(n_levels);
    double moved = 0;
    for (int i = 0; i < n_levels; ++i) {
      const double a = edges[i], b = edges[i + 1];
      const double num = trapz([&](double x) { return x * pdf(x); }, a, b);
      const double den = trapz(pdf, a, b);
      next[i] = den > 1e-15 ? num / den : c[i];
      moved = std::max(moved, std::fabs(next[i] - c[i]));
    }
    if (moved < 1e-10) break;
    c = next;
  }
  LloydMaxTable t;
  for (double x : c) t.centroids.push_back(static_cast<float>(x));
  for (int i = 0; i + 1 < n_levels; ++i) t.midpoints.push_back((t.centroids[i] + t.centroids[i + 1]) / 2.0f);
  return t;
}

const LloydMaxTable& turboquant_table(int d, int bits) {
  static std::mutex mu;
  static std::map<std::pair<int, int>, LloydMaxTable> cache;
  std::lock_guard<std::mutex> lock(mu);
  auto it = cache.find({d, bits});
  if (it == cache.end()) it = cache.emplace(std::make_pair(d, bits), turboquant_lloyd_max(d, bits)).first;
  return it->second;
}

}  // namespace kvgate::kernels
