#include "stats/bootstrap.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>

#include "core/rng.h"

namespace kvgate::stats {

namespace {

// Uniform indices below n < 2^32 from 32-bit halves of the generator's output (Lemire's
// multiply-shift with rejection: unbiased, and fully specified here, so identical everywhere).
class IndexDraw {
 public:
  explicit IndexDraw(std::uint64_t seed) : rng_(seed) {}
  std::uint32_t below(std::uint32_t n) {
    std::uint64_t m = std::uint64_t{half()} * n;
    auto low = static_cast<std::uint32_t>(m);
    if (low < n) {
      const std::uint32_t threshold = static_cast<std::uint32_t>(-n) % n;
      while (low < threshold) {
        m = std::uint64_t{half()} * n;
        low = static_cast<std::uint32_t>(m);
      }
    }
    return static_cast<std::uint32_t>(m >> 32);
  }

 private:
  std::uint32_t half() {
    if (have_) {
      have_ = false;
      return static_cast<std::uint32_t>(word_ >> 32);
    }
    word_ = rng_.next();
    have_ = true;
    return static_cast<std::uint32_t>(word_);
  }
  Rng rng_;
  std::uint64_t word_ = 0;
  bool have_ = false;
};

double nearest_rank(const std::vector<double>& sorted, double q) {
  const double pos = std::ceil(q * static_cast<double>(sorted.size()));
  const auto i = static_cast<std::size_t>(std::clamp(pos, 1.0, static_cast<double>(sorted.size())));
  return sorted[i - 1];
}

}  // namespace

BootstrapResult paired_bootstrap_ratio(std::span<const BootstrapStratum> strata, const BootstrapOptions& options) {
  if (strata.empty()) throw std::invalid_argument("bootstrap: no strata");
  if (options.replicates < 1) throw std::invalid_argument("bootstrap: replicates must be >= 1");
  if (!(options.alpha > 0.0 && options.alpha < 0.5)) throw std::invalid_argument("bootstrap: alpha must be in (0, 0.5)");
  for (const auto& s : strata) {
    if (s.sum_ref.empty() || s.sum_ref.size() != s.sum_cand.size() || s.sum_ref.size() != s.count.size())
      throw std::invalid_argument("bootstrap: every stratum needs clusters, with equal-length sums and counts");
    if (s.sum_ref.size() > 0xffffffffu) throw std::invalid_argument("bootstrap: too many clusters in a stratum");
  }
  IndexDraw draw(options.seed);
  BootstrapResult result;
  std::vector<double> stats;
  stats.reserve(static_cast<std::size_t>(options.replicates));
  for (int r = 0; r < options.replicates; ++r) {
    double num = 0.0, den = 0.0;
    bool empty_stratum = false;
    for (const auto& s : strata) {
      const auto g = static_cast<std::uint32_t>(s.sum_ref.size());
      double sr = 0.0, sc = 0.0, cnt = 0.0;
      for (std::uint32_t i = 0; i < g; ++i) {
        const std::uint32_t j = draw.below(g);
        sr += s.sum_ref[j];
        sc += s.sum_cand[j];
        cnt += s.count[j];
      }
      if (cnt <= 0.0) {
        empty_stratum = true;
        continue;
      }
      num += s.weight * sc / cnt;
      den += s.weight * sr / cnt;
    }
    ++result.replicates;
    if (empty_stratum || !(den > 0.0)) {
      ++result.undefined;
      continue;
    }
    stats.push_back(num / den);
  }
  if (stats.empty()) {
    result.bounds = {0.0, std::numeric_limits<double>::infinity()};
    return result;
  }
  std::sort(stats.begin(), stats.end());
  result.bounds = {nearest_rank(stats, options.alpha), nearest_rank(stats, 1 - options.alpha)};
  return result;
}

}  // namespace kvgate::stats
