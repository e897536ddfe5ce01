#include "harness/stats/bootstrap.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>

#include "harness/core/rng.h"

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
  // Per stratum the clusters as (ref, cand) pairs, 16 bytes each, so a draw touches one cache line;
  // counts only where some cluster holds more than one trial.
  struct Pair {
    double ref, cand;
  };
  struct Packed {
    std::vector<Pair> clusters;
    std::vector<double> count;  // empty: every cluster holds one trial
    double weight = 1.0;
  };
  std::vector<Packed> packed(strata.size());
  for (std::size_t k = 0; k < strata.size(); ++k) {
    const BootstrapStratum& s = strata[k];
    Packed& p = packed[k];
    p.weight = s.weight;
    p.clusters.reserve(s.sum_ref.size());
    for (std::size_t i = 0; i < s.sum_ref.size(); ++i) p.clusters.push_back({s.sum_ref[i], s.sum_cand[i]});
    if (std::any_of(s.count.begin(), s.count.end(), [](double c) { return c != 1.0; })) p.count = s.count;
  }
  IndexDraw draw(options.seed);
  BootstrapResult result;
  std::vector<double> stats;
  stats.reserve(static_cast<std::size_t>(options.replicates));
  // Indices are drawn in blocks, then summed in a loop without calls: the loads overlap.
  constexpr std::uint32_t kBlock = 2048;
  std::uint32_t idx[kBlock];
  for (int r = 0; r < options.replicates; ++r) {
    double num = 0.0, den = 0.0;
    bool empty_stratum = false;
    for (const Packed& p : packed) {
      const auto g = static_cast<std::uint32_t>(p.clusters.size());
      const Pair* c = p.clusters.data();
      const double* w = p.count.empty() ? nullptr : p.count.data();
      double sr = 0.0, sc = 0.0, cnt = w ? 0.0 : static_cast<double>(g);
      for (std::uint32_t done = 0; done < g;) {
        const std::uint32_t m = std::min(kBlock, g - done);
        for (std::uint32_t i = 0; i < m; ++i) idx[i] = draw.below(g);
        double sr2 = 0.0, sc2 = 0.0;  // two chains each: the adds need not wait on one another
        std::uint32_t i = 0;
        for (; i + 1 < m; i += 2) {
          sr += c[idx[i]].ref;
          sc += c[idx[i]].cand;
          sr2 += c[idx[i + 1]].ref;
          sc2 += c[idx[i + 1]].cand;
        }
        if (i < m) sr += c[idx[i]].ref, sc += c[idx[i]].cand;
        sr += sr2;
        sc += sc2;
        if (w)
          for (std::uint32_t i = 0; i < m; ++i) cnt += w[idx[i]];
        done += m;
      }
      if (cnt <= 0.0) {
        empty_stratum = true;
        continue;
      }
      num += p.weight * sc / cnt;
      den += p.weight * sr / cnt;
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
