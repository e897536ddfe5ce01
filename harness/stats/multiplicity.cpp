#include "harness/stats/multiplicity.h"

#include <algorithm>
#include <numeric>
#include <stdexcept>

namespace kvgate::stats {

namespace {
std::vector<std::size_t> ascending_order(std::span<const double> p) {
  for (double v : p)
    if (!(v >= 0.0 && v <= 1.0)) throw std::invalid_argument("multiple-testing adjustment: p-values must be in [0, 1]");
  std::vector<std::size_t> order(p.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return p[a] < p[b]; });
  return order;
}
}  // namespace

std::vector<double> bonferroni(std::span<const double> p) {
  ascending_order(p);  // validates
  std::vector<double> out(p.size());
  for (std::size_t i = 0; i < p.size(); ++i) out[i] = std::min(1.0, static_cast<double>(p.size()) * p[i]);
  return out;
}

std::vector<double> holm(std::span<const double> p) {
  const auto order = ascending_order(p);
  const double m = static_cast<double>(p.size());
  std::vector<double> out(p.size());
  double running = 0.0;  // max over j <= i
  for (std::size_t j = 0; j < order.size(); ++j) {
    running = std::max(running, std::min(1.0, (m - static_cast<double>(j)) * p[order[j]]));
    out[order[j]] = running;
  }
  return out;
}

std::vector<double> benjamini_hochberg(std::span<const double> p) {
  const auto order = ascending_order(p);
  const double m = static_cast<double>(p.size());
  std::vector<double> out(p.size());
  double running = 1.0;  // min over j >= i
  for (std::size_t j = order.size(); j-- > 0;) {
    running = std::min(running, std::min(1.0, m * p[order[j]] / static_cast<double>(j + 1)));
    out[order[j]] = running;
  }
  return out;
}

}  // namespace kvgate::stats
