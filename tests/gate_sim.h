// Simulated paired runs through the gate's real decision path (compare_loaded): the size and power
// of the non-inferiority bound (docs/gate-bound.md). Used by gate-size-test (the CI guard) and
// tests/bench/gate_size_sim (the published table).
//
// A scenario is a task of length buckets. Each bucket has trials grouped in sources (clusters that
// share a haystack: one difficulty, one loss propensity), each trial run `repeats` times. The
// baseline passes a result with its source's difficulty p_g (the bucket's level +- spread / 2);
// the candidate loses a baseline pass with the source's loss rate and gains a baseline failure with
// the bucket's gain rate. Loss rates are independent of difficulty, so a bucket's true ratio is
// exactly 1 - loss + gain (1 - level) / level whatever the spread, and the task's true ratio (mean
// score or AUC) is the one asked for. Fractional scenarios (losses only) draw a baseline score in
// [0, 1] with mean p instead, and a losing candidate keeps a uniform share of it: it loses at twice
// the loss rate, half the score on average.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "harness/compare/compare.h"
#include "harness/core/rng.h"
#include "harness/stats/auc.h"

namespace kvtest::gate_sim {

struct Bucket {
  std::int64_t tokens = 0;
  int trials = 0;
  double level = 0.9;       // the baseline's mean score
  double loss_share = 1.0;  // relative loss rate (0: this bucket loses nothing)
};

enum class Discordance { losses_only, two_way };

struct Scenario {
  std::string name;
  std::vector<Bucket> buckets;
  Discordance discordance = Discordance::losses_only;
  int repeats = 1;
  int source_size = 1;        // trials a source (a `cluster` field when > 1)
  double spread = 0.0;        // sources' difficulty: level +- spread / 2
  bool concentrated = false;  // losses concentrated: a quarter of the sources lose, at 4x the rate
  bool fractional = false;    // scores in [0, 1]: the baseline's draw, the candidate's kept share
};

// The probabilities that make the task's true ratio `ratio`: per bucket loss and gain rates.
struct Rates {
  std::vector<double> loss, gain;
};

inline Rates rates_for(const Scenario& s, double ratio) {
  std::vector<double> x;
  for (const Bucket& b : s.buckets) x.push_back(static_cast<double>(b.tokens));
  const std::vector<double> w = s.buckets.size() > 1 ? kvgate::stats::auc_weights(x, kvgate::stats::AucAxis::linear) : std::vector<double>{1.0};
  // Two-way: a gain rate giving 10% discordance where the bucket's failures allow it.
  Rates r{std::vector<double>(s.buckets.size(), 0.0), std::vector<double>(s.buckets.size(), 0.0)};
  double base = 0.0, gained = 0.0, at_risk = 0.0;
  for (std::size_t k = 0; k < s.buckets.size(); ++k) {
    const Bucket& b = s.buckets[k];
    if (s.discordance == Discordance::two_way) {
      const double flips = std::min(0.10, 2 * (1 - b.level) + 0.05 * b.level);
      r.gain[k] = std::max(0.0, (flips - 0.05 * b.level) / 2) / (1 - b.level);
    }
    base += w[k] * b.level;
    gained += w[k] * r.gain[k] * (1 - b.level);
    at_risk += w[k] * b.level * b.loss_share;
  }
  // sum_k w_k (level_k (1 - c share_k) + gain_k (1 - level_k)) = ratio sum_k w_k level_k
  const double c = (base + gained - ratio * base) / at_risk;
  for (std::size_t k = 0; k < s.buckets.size(); ++k) {
    r.loss[k] = c * s.buckets[k].loss_share;
    const double top = (s.concentrated ? 0.25 : 1.0) / (s.fractional ? 2.0 : 1.0);  // rates that stay <= 1
    if (r.loss[k] < 0.0 || r.loss[k] > top) throw std::invalid_argument(s.name + ": no loss rate gives ratio " + std::to_string(ratio));
  }
  return r;
}

// The two runs, built once; each draw overwrites scores and passes.
class Simulator {
 public:
  explicit Simulator(Scenario s) : s_(std::move(s)) {
    if (s_.fractional && s_.discordance == Discordance::two_way) throw std::invalid_argument(s_.name + ": fractional scenarios lose only");
    base_->path = "sim/base", base_->manifest.label = "base";
    cand_->path = "sim/cand", cand_->manifest.label = "cand";
    for (RunDirPtr run : {base_, cand_}) {
      int t = 0, source = 0;
      for (const Bucket& b : s_.buckets)
        for (int i = 0; i < b.trials; ++i, ++t) {
          if (i % s_.source_size == 0) ++source;
          for (int k = 0; k < s_.repeats; ++k) {
            kvgate::ResultRecord r;
            r.id = "t" + std::to_string(t);
            r.task = "sim";
            r.bucket = b.tokens;
            r.repeat = k;
            if (s_.source_size > 1) r.extra["cluster"] = source;
            run->results.records.push_back(std::move(r));
          }
        }
    }
  }

  // One simulated pair of runs at a true ratio, decided by the gate.
  struct Outcome {
    kvgate::compare::Verdict gate = kvgate::compare::Verdict::inconclusive;
    kvgate::compare::Verdict fieller = kvgate::compare::Verdict::inconclusive;  // the same draw by Fieller's bound
    std::string method;
    double estimate = 0.0, lcb = 0.0, fieller_lcb = 0.0;
  };
  Outcome draw(kvgate::Rng& rng, const Rates& rates) {
    auto& ref = base_->results.records;
    auto& cand = cand_->results.records;
    std::size_t j = 0;
    for (std::size_t k = 0; k < s_.buckets.size(); ++k) {
      const Bucket& b = s_.buckets[k];
      double p = b.level, loss = rates.loss[k];
      for (int i = 0; i < b.trials; ++i) {
        if (i % s_.source_size == 0) {  // a new source: its difficulty and loss propensity
          p = b.level + s_.spread * (rng.uniform() - 0.5);
          loss = s_.concentrated ? (rng.uniform() < 0.25 ? 4 * rates.loss[k] : 0.0) : rates.loss[k];
        }
        for (int r = 0; r < s_.repeats; ++r, ++j) {
          double sb, sc;
          if (s_.fractional) {
            sb = std::pow(rng.uniform(), (1 - p) / p);  // in [0, 1] with mean p (E u^a = 1 / (1 + a))
            sc = rng.uniform() < 2 * loss ? sb * rng.uniform() : sb;  // keeps half on average when it loses
          } else {
            const bool pass = rng.uniform() < p;
            sb = pass ? 1.0 : 0.0;
            sc = pass ? (rng.uniform() < loss ? 0.0 : 1.0) : (rng.uniform() < rates.gain[k] ? 1.0 : 0.0);
          }
          set(ref[j], sb);
          set(cand[j], sc);
        }
      }
    }
    kvgate::compare::CompareOptions o;
    o.bootstrap_replicates = 0;
    const kvgate::compare::Comparison c = kvgate::compare::compare_loaded({base_, cand_}, o);
    const kvgate::compare::TaskComparison& t = c.pairs.front().tasks.front();
    Outcome out{.gate = c.verdict, .method = t.ratio.method, .estimate = t.ratio_estimate, .lcb = t.ratio.lcb};
    for (const kvgate::compare::RatioBound& x : t.cross_checks) {
      if (x.method.rfind("fieller", 0) != 0) continue;
      out.fieller_lcb = x.lcb;
      out.fieller = x.lcb > o.margin                ? kvgate::compare::Verdict::pass
                    : x.ucb && *x.ucb < o.margin ? kvgate::compare::Verdict::fail
                                                 : kvgate::compare::Verdict::inconclusive;
    }
    return out;
  }

 private:
  using RunDirPtr = std::shared_ptr<kvgate::RunDir>;
  static void set(kvgate::ResultRecord& r, double score) {
    r.score = score;
    r.passed = score >= 0.5;
  }
  Scenario s_;
  RunDirPtr base_ = std::make_shared<kvgate::RunDir>(), cand_ = std::make_shared<kvgate::RunDir>();
};

// Verdicts over `sims` seeded draws at a true ratio: the gate's and the Fieller bound's (before).
struct Tally {
  int sims = 0, pass = 0, fail = 0, fieller_pass = 0, fieller_fail = 0;
  std::string method;
  double rate(int count) const { return static_cast<double>(count) / sims; }
};

inline Tally simulate(const Scenario& s, double ratio, int sims, std::uint64_t seed) {
  Simulator sim(s);
  const Rates rates = rates_for(s, ratio);
  kvgate::Rng rng(seed);
  Tally t{.sims = sims, .method = {}};
  for (int i = 0; i < sims; ++i) {
    const Simulator::Outcome o = sim.draw(rng, rates);
    t.pass += o.gate == kvgate::compare::Verdict::pass;
    t.fail += o.gate == kvgate::compare::Verdict::fail;
    t.fieller_pass += o.fieller == kvgate::compare::Verdict::pass;
    t.fieller_fail += o.fieller == kvgate::compare::Verdict::fail;
    t.method = o.method;
  }
  return t;
}

// "baseline 0.90, n 100, losses only"
inline std::string cell_name(double level, int n, Discordance d) {
  return "baseline " + std::to_string(level).substr(0, 4) + ", n " + std::to_string(n) +
         (d == Discordance::two_way ? ", two-way" : ", losses only");
}

// The grid's scenarios by name (docs/gate-bound.md lists them).
inline Scenario four_buckets(double level, int n, Discordance d) {
  Scenario s{.name = "4 buckets, " + cell_name(level, n, d), .buckets = {}, .discordance = d};
  for (std::int64_t tokens : {4096, 8192, 16384, 32768}) s.buckets.push_back({.tokens = tokens, .trials = n / 4, .level = level});
  return s;
}

// Accuracy falling with length (0.98/0.95/0.90/0.80), losses only in the two longest buckets.
inline Scenario falling(int n) {
  Scenario s{.name = "4 buckets falling, losses in the longest two, n " + std::to_string(n), .buckets = {}};
  const double level[] = {0.98, 0.95, 0.90, 0.80}, share[] = {0.0, 0.0, 1.0, 1.0};
  const std::int64_t tokens[] = {4096, 8192, 16384, 32768};
  for (int k = 0; k < 4; ++k) s.buckets.push_back({.tokens = tokens[k], .trials = n / 4, .level = level[k], .loss_share = share[k]});
  return s;
}

// Repeats and sources: 4 buckets, `repeats` runs a trial, sources of 4 trials with difficulty spread
// and losses concentrated in a quarter of the sources.
inline Scenario clustered(int n, int repeats) {
  Scenario s = four_buckets(0.85, n, Discordance::losses_only);
  s.name = "4 buckets, " + std::to_string(repeats) + " repeats, sources of 4, concentrated losses, n " + std::to_string(n);
  s.repeats = repeats, s.source_size = 4, s.spread = 0.3, s.concentrated = true;
  return s;
}

// Six buckets of unequal sizes (1K to 32K, the long ones smaller), accuracy falling with length.
inline Scenario six_unequal(int scale) {
  Scenario s{.name = "6 unequal buckets, n " + std::to_string(scale * 100), .buckets = {}};
  const std::int64_t tokens[] = {1024, 2048, 4096, 8192, 16384, 32768};
  const int trials[] = {25, 25, 20, 12, 10, 8};
  const double level[] = {0.98, 0.97, 0.95, 0.9, 0.85, 0.75};
  for (int k = 0; k < 6; ++k) s.buckets.push_back({.tokens = tokens[k], .trials = trials[k] * scale, .level = level[k]});
  return s;
}

// Fractional scores (MRCR-like) over 4 buckets, losses only.
inline Scenario fractional(int n) {
  Scenario s = four_buckets(0.8, n, Discordance::losses_only);
  s.name = "4 buckets, fractional scores, n " + std::to_string(n);
  s.fractional = true;
  return s;
}

// One bucket of 0/1 pairs (Tang's case), for comparison.
inline Scenario one_bucket(double level, int n, Discordance d) {
  Scenario s{.name = "1 bucket, " + cell_name(level, n, d), .buckets = {}, .discordance = d};
  s.buckets.push_back({.tokens = 8192, .trials = n, .level = level});
  return s;
}

}  // namespace kvtest::gate_sim
