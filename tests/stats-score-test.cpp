// harness/stats/stratified_score: the gate's score bound for weighted sums of paired means (AUC over
// length buckets, repeats, clusters, fractional scores). Tang's statistic is its one-stratum 0/1
// case; the restricted MLE satisfies H0 and its optimality conditions; the bound behaves as a
// score bound must (scales with n, clusters of identical trials count once).
#include <cmath>
#include <cstdint>
#include <limits>
#include <stdexcept>
#include <vector>

#include "tests/catch_compat.hpp"
#include "harness/core/rng.h"
#include "harness/stats/normal.h"
#include "harness/stats/stratified_score.h"
#include "harness/stats/tang.h"

using namespace kvgate::stats;

namespace {

// One stratum of independent 0/1 pairs from a 2x2 table (n11, n_c, n_b, n00).
PairedUnits binary_stratum(const PairedCounts& t, double weight = 1.0, int copies = 1) {
  PairedUnits u;
  u.weight = weight;
  const auto add = [&](std::int64_t k, double c, double b) {
    for (std::int64_t i = 0; i < k * copies; ++i) u.cand.push_back(c), u.ref.push_back(b), u.trials.push_back(1.0);
  };
  add(t.n11, 1, 1);
  add(t.n_c, 1, 0);
  add(t.n_b, 0, 1);
  add(t.n00, 0, 0);
  return u;
}

const PairedCounts kTables[] = {
    {59, 6, 16, 80}, {760, 20, 40, 180}, {150, 4, 8, 38}, {30, 0, 0, 0},  {90, 0, 5, 5},  {20, 0, 3, 2},
    {0, 3, 10, 7},   {5, 5, 5, 5},       {100, 1, 0, 0},  {22, 0, 1, 2},  {1, 0, 0, 0},   {40, 7, 0, 3}};

}  // namespace

TEST_CASE("stratified score: one stratum of 0/1 pairs is Tang's statistic and bounds", "[stats][score]") {
  for (const PairedCounts& t : kTables) {
    INFO("table " << t.n11 << " " << t.n_c << " " << t.n_b << " " << t.n00);
    const StratifiedScore s({binary_stratum(t)});
    CHECK(s.ratio() == kvtest::Approx(t.ratio()).epsilon(1e-12));
    for (double r : {0.3, 0.8, 0.9, 0.95, 1.0, 1.05, 1.5}) {
      INFO("t = " << r);
      const double want = tang_z(t, r), got = s.z(r);
      if (std::isinf(want)) CHECK(got == want);
      else CHECK(got == kvtest::Approx(want).epsilon(1e-7).margin(1e-9));
    }
    const Interval tang = tang_interval(t, z_upper(0.05));
    const StratifiedScoreTest r = stratified_score_test(s, 0.95, 0.05);
    CHECK(r.bounds.lo == kvtest::Approx(tang.lo).epsilon(1e-7).margin(1e-9));
    if (std::isinf(tang.hi)) CHECK(std::isinf(r.bounds.hi));
    else CHECK(r.bounds.hi == kvtest::Approx(tang.hi).epsilon(1e-7));
  }
}

TEST_CASE("stratified score: the restricted MLE meets H0 and puts unseen mass only on the extreme outcome", "[stats][score]") {
  // Four buckets, the AUC weights of 4K/8K/16K/32K, losses only in the longest two.
  const std::vector<PairedUnits> strata = {binary_stratum({24, 0, 0, 1}, 1.0 / 14), binary_stratum({23, 0, 0, 2}, 2.0 / 14),
                                           binary_stratum({20, 0, 2, 3}, 6.0 / 14), binary_stratum({17, 0, 3, 5}, 5.0 / 14)};
  const StratifiedScore s(strata);
  for (double t : {0.6, 0.85, 0.95, 1.0, 1.2}) {
    INFO("t = " << t);
    const auto p = s.restricted(t);
    double constraint = 0.0;
    for (std::size_t k = 0; k < p.size(); ++k) {
      const auto& st = s.strata()[k];
      double total = 0.0;
      for (std::size_t j = 0; j < p[k].size(); ++j) {
        const auto& o = st.outcomes[j];
        CHECK(p[k][j] >= 0.0);
        total += p[k][j];
        constraint += st.weight * p[k][j] * (o.c - t * o.b);
        if (o.count == 0.0 && p[k][j] > 0.0) {
          // Only the loss (below the estimate) or the gain (above it) outcome may take unseen mass.
          if (t < s.ratio()) CHECK((o.c == 0.0 && o.b > 0.0));
          else CHECK((o.c > 0.0 && o.b == 0.0));
        }
      }
      CHECK(total == kvtest::Approx(1.0).epsilon(1e-12));
    }
    CHECK(constraint == kvtest::Approx(0.0).margin(1e-12));
  }
  // Below the estimate H0 needs more losses than were seen: the null variance is the larger one,
  // and the buckets that lost take more loss mass than they showed (outcomes are sorted by (c, b):
  // (0, 0), (0, 1) = lost, (1, 0), (1, 1)).
  CHECK(s.null_variance(0.9) > s.observed_variance(0.9));
  const auto p = s.restricted(0.9);
  CHECK(s.strata()[3].outcomes[1].c == 0.0);
  CHECK(s.strata()[3].outcomes[1].b == 1.0);
  CHECK(p[3][1] > 3.0 / 25);
  CHECK(p[2][1] > 2.0 / 25);
}

TEST_CASE("stratified score: the tilted distribution is the Lagrangian's maximizer", "[stats][score]") {
  const std::vector<double> counts = {5, 0, 3, 12}, a = {0.05, -0.95, 1.0, 0.0};
  const std::vector<double> empirical = tilted_distribution(counts, a, 0.0);
  for (std::size_t j = 0; j < counts.size(); ++j) CHECK(empirical[j] == kvtest::Approx(counts[j] / 20.0).epsilon(1e-12));
  for (double beta : {-40.0, -3.0, 0.5, 2.0, 30.0, 400.0}) {
    INFO("beta = " << beta);
    const std::vector<double> p = tilted_distribution(counts, a, beta);
    const auto objective = [&](const std::vector<double>& q) {
      double v = 0.0;
      for (std::size_t j = 0; j < q.size(); ++j) {
        if (counts[j] > 0) v += counts[j] * std::log(q[j]);
        v -= beta * q[j] * a[j];
      }
      return v;
    };
    // No feasible move between two outcomes raises the objective.
    const double best = objective(p);
    for (std::size_t i = 0; i < p.size(); ++i)
      for (std::size_t j = 0; j < p.size(); ++j) {
        if (i == j) continue;
        const double d = std::min(1e-4, p[i]);
        if (d <= 0.0) continue;
        std::vector<double> q = p;
        q[i] -= d, q[j] += d;
        if (counts[i] > 0 && q[i] <= 0.0) continue;
        CHECK(objective(q) <= best + 1e-9);
      }
  }
  // Only the unobserved outcome with the smallest beta a_j takes mass (a large loss tilt).
  const std::vector<double> p = tilted_distribution(counts, a, 400.0);
  CHECK(p[1] > 0.5);
}

TEST_CASE("stratified score: Z grows as sqrt(n) and clusters of identical trials count once", "[stats][score]") {
  const std::vector<PairedUnits> once = {binary_stratum({20, 1, 3, 1}, 0.25), binary_stratum({18, 0, 4, 3}, 0.75)};
  const std::vector<PairedUnits> four = {binary_stratum({20, 1, 3, 1}, 0.25, 4), binary_stratum({18, 0, 4, 3}, 0.75, 4)};
  const StratifiedScore a(once), b(four);
  for (double t : {0.8, 0.9, 1.0}) CHECK(b.z(t) == kvtest::Approx(2.0 * a.z(t)).epsilon(1e-6));
  // The same units as clusters of 3 identical trials: the same outcomes, scaled, so the same Z.
  std::vector<PairedUnits> clustered = once;
  for (PairedUnits& u : clustered)
    for (std::size_t g = 0; g < u.trials.size(); ++g) u.cand[g] *= 3, u.ref[g] *= 3, u.trials[g] = 3;
  const StratifiedScore c(clustered);
  for (double t : {0.8, 0.9, 1.0}) CHECK(c.z(t) == kvtest::Approx(a.z(t)).epsilon(1e-9));
}

TEST_CASE("stratified score: Z falls in t, is 0 at the estimate, and the bounds solve Z = +-z", "[stats][score]") {
  kvgate::Rng rng(44);
  std::vector<PairedUnits> strata(3);
  for (std::size_t k = 0; k < strata.size(); ++k) {
    strata[k].weight = 0.2 + 0.3 * static_cast<double>(k);
    for (int i = 0; i < 40; ++i) {  // fractional scores: 4 repeats a trial
      const double b = std::floor(5 * rng.uniform()) / 4, c = std::max(0.0, b - (rng.uniform() < 0.1 ? 0.5 : 0.0));
      strata[k].ref.push_back(b), strata[k].cand.push_back(c), strata[k].trials.push_back(1.0);
    }
  }
  const StratifiedScore s(strata);
  CHECK(s.z(s.ratio()) == kvtest::Approx(0.0).margin(1e-6));
  double last = std::numeric_limits<double>::infinity();
  for (double t = 0.5; t < 1.5; t += 0.05) {
    const double z = s.z(t);
    CHECK(z < last);
    last = z;
  }
  const StratifiedScoreTest r = stratified_score_test(s, 0.95, 0.05);
  CHECK(r.bounds.lo < r.ratio);
  CHECK(r.bounds.hi > r.ratio);
  CHECK(s.z(r.bounds.lo) == kvtest::Approx(z_upper(0.05)).epsilon(1e-6));
  CHECK(s.z(r.bounds.hi) == kvtest::Approx(-z_upper(0.05)).epsilon(1e-6));
  CHECK(r.null_variance > 0.0);
  CHECK(r.observed_variance > 0.0);
}

TEST_CASE("stratified score: bad input is refused", "[stats][score]") {
  CHECK_THROWS_AS(StratifiedScore({}), std::invalid_argument);
  CHECK_THROWS_AS(StratifiedScore({PairedUnits{}}), std::invalid_argument);
  CHECK_THROWS_AS(StratifiedScore({PairedUnits{.weight = 0.0, .cand = {1}, .ref = {1}, .trials = {1}}}), std::invalid_argument);
  CHECK_THROWS_AS(StratifiedScore({PairedUnits{.weight = 1.0, .cand = {2}, .ref = {1}, .trials = {1}}}), std::invalid_argument);
  CHECK_THROWS_AS(StratifiedScore({PairedUnits{.weight = 1.0, .cand = {1}, .ref = {0}, .trials = {1}}}), std::invalid_argument);
  CHECK_THROWS_AS(tilted_distribution({0, 0}, {1, -1}, 1.0), std::invalid_argument);
}
