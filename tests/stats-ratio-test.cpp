// harness/stats: the ratio candidate/baseline and its bounds (Tang, Fieller, log-ratio Wald,
// Bonett-Price, bootstrap) and the paired difference (Newcombe, Tango, Wald) (stats.md §3).
#include <cmath>
#include <cstdint>
#include <stdexcept>
#include <vector>

#include "harness/core/rng.h"
#include "harness/stats/bonett_price.h"
#include "harness/stats/bootstrap.h"
#include "harness/stats/clustered_variance.h"
#include "harness/stats/fieller.h"
#include "harness/stats/log_ratio_wald.h"
#include "harness/stats/normal.h"
#include "harness/stats/paired_difference.h"
#include "harness/stats/tang.h"
#include "harness/stats/variance_floor.h"
#include "tests/stats_vectors.h"

using namespace kvgate::stats;

namespace {
const double kZ95 = z_upper(0.05), kZ975 = z_upper(0.025);
// (n11, n_c, n_b, n00)
const PairedCounts kCavo{59, 6, 16, 80};     // contingencytables ch. 8: ratio 65/75
const PairedCounts kLlm{760, 20, 40, 180};   // p_b 0.80, p_c 0.78, R 0.975
const PairedCounts kSmall{150, 4, 8, 38};    // R 0.974684 but INCONCLUSIVE

// The n pairs of a table as 0/1 vectors (candidate, reference).
void expand(const PairedCounts& t, std::vector<double>& c, std::vector<double>& b) {
  auto add = [&](std::int64_t k, double vc, double vb) {
    for (std::int64_t i = 0; i < k; ++i) c.push_back(vc), b.push_back(vb);
  };
  add(t.n11, 1, 1);
  add(t.n_c, 1, 0);
  add(t.n_b, 0, 1);
  add(t.n00, 0, 0);
}
}  // namespace

TEST_CASE("tang: edge-case vectors of stats.md §3.1 (n = 100)", "[stats][tang]") {
  struct Row {
    PairedCounts t;
    double ratio, z, lcb;
  };
  const Row rows[] = {
      {{90, 0, 0, 10}, 1.0, 2.176428750330035, 0.97081573168884872},                       // Z 2.176429, LCB 0.970816
      {{90, 5, 0, 5}, 95.0 / 90, 3.1622776601683793, 1.0247499390048959},                 // R 1.055556, 3.162278, 1.024750
      {{90, 0, 5, 5}, 90.0 / 95, -0.11768778828946262, 0.89581200290268577},              // R 0.947368, -0.117688, 0.895812
  };
  for (const Row& row : rows) {
    INFO(row.t.n11 << "," << row.t.n_c << "," << row.t.n_b << "," << row.t.n00);
    const TangTest r = tang_test(row.t, 0.95, 0.05);
    CHECK_VEC(r.ratio, row.ratio);
    CHECK_VEC(r.z_margin, row.z);
    CHECK_VEC(r.bounds.lo, row.lcb);
    CHECK_VEC(r.p_value, normal_sf(row.z));
  }
}

TEST_CASE("tang: Cavo, LLM and small-n examples", "[stats][tang]") {
  // Cavo two-sided 95%: contingencytables (0.7476, 0.9876), stats.md [0.747579, 0.987615]
  const Interval cavo = tang_interval(kCavo, kZ975);
  CHECK_VEC(cavo.lo, 0.74757905902270988);
  CHECK_VEC(cavo.hi, 0.98761492859673339);
  // LLM: Z(0.95) 2.433695, NI p 0.007473, one-sided LCB 0.958593, two-sided (0.955229, 0.993723)
  const TangTest llm = tang_test(kLlm, 0.95, 0.05);
  CHECK_VEC(llm.ratio, 0.975);
  CHECK_VEC(llm.z_margin, 2.4336952997629157);
  CHECK_VEC(llm.p_value, 0.0074727851650902298);
  CHECK_VEC(llm.bounds.lo, 0.95859251981726887);
  CHECK_VEC(llm.bounds.hi, 0.99064688524355838);
  const Interval two = tang_interval(kLlm, kZ975);
  CHECK_VEC(two.lo, 0.9552291749625068);
  CHECK_VEC(two.hi, 0.99372345373708045);
  // Small n: R 0.974684 passes a point-estimate rule, but LCB 0.934347, Z 1.063883, p 0.14369
  const TangTest small = tang_test(kSmall, 0.95, 0.05);
  CHECK_VEC(small.ratio, 154.0 / 158);
  CHECK_VEC(small.z_margin, 1.0638826720109927);
  CHECK_VEC(small.p_value, 0.14369092685267235);
  CHECK_VEC(small.bounds.lo, 0.93434726095713177);
  CHECK(small.bounds.lo < 0.95);
  CHECK(small.bounds.hi > 0.95);  // INCONCLUSIVE
}

TEST_CASE("tang: Z is decreasing, zero at R, and the bounds solve Z = -+z", "[stats][tang]") {
  for (const PairedCounts& t : {kCavo, kLlm, kSmall, PairedCounts{3, 0, 2, 1}, PairedCounts{0, 0, 4, 6}}) {
    const double r = t.ratio();
    if (r > 0) CHECK(tang_z(t, r) == kvtest::Approx(0.0).margin(1e-12));
    double prev = INFINITY;
    for (double x = 0.05; x < 3; x += 0.05) {
      const double z = tang_z(t, x);
      CHECK(z <= prev + 1e-12);
      prev = z;
    }
    const Interval b = tang_interval(t, kZ95);
    if (b.lo > 0) CHECK(tang_z(t, b.lo) == kvtest::Approx(kZ95).epsilon(1e-9));
    REQUIRE(std::isfinite(b.hi));
    CHECK(tang_z(t, b.hi) == kvtest::Approx(-kZ95).epsilon(1e-9));
    CHECK(b.lo <= r);
    CHECK(b.hi >= r);
  }
  // Candidate never passes: R = 0, lower bound 0, finite upper bound.
  const Interval zero = tang_interval(PairedCounts{0, 0, 4, 6}, kZ95);
  CHECK(zero.lo == 0.0);
  CHECK(zero.hi > 0.0);
  CHECK_THROWS_AS(tang_interval(PairedCounts{0, 3, 0, 7}, kZ95), std::invalid_argument);  // reference never passes
  CHECK_THROWS_AS(tang_z(PairedCounts{}, 0.95), std::invalid_argument);
}

TEST_CASE("fieller: LLM example with population variances (stats.md §3.2)", "[stats][fieller]") {
  std::vector<double> c, b;
  expand(kLlm, c, b);
  std::vector<std::uint32_t> cluster(c.size());
  for (std::size_t i = 0; i < cluster.size(); ++i) cluster[i] = static_cast<std::uint32_t>(i);
  // One trial per cluster, no small-sample factor: population (co)variances / n.
  const MeanCovariance v = clustered_mean_covariance(c, b, cluster, cluster.size(), false);
  const RatioMoments m{.mean_c = mean(c), .mean_b = mean(b), .var_c = v.xx, .var_b = v.yy, .cov = v.xy};
  const FiellerTest f = fieller_test(m, 0.95, 0.05);
  CHECK_VEC(f.contrast, 0.02);                   // D = 0.02
  CHECK_VEC(f.se, 0.0075894663844041104);        // SE 0.007589466
  CHECK_VEC(f.z_margin, 2.6352313834736494);     // z 2.635231
  CHECK_VEC(f.p_value, 0.0042039972886246467);   // p 0.004204
  CHECK(f.interval.bounded);
  CHECK_VEC(f.interval.bounds.lo, 0.9593531679753397);  // LCB 0.959353
  CHECK(f.interval.bounds.hi > 0.975);
  // The bounds are where the contrast's z equals +-z.
  for (double t : {f.interval.bounds.lo, f.interval.bounds.hi}) {
    const double zt = (m.mean_c - t * m.mean_b) / std::sqrt(contrast_variance(m, t));
    CHECK(std::abs(zt) == kvtest::Approx(kZ95).epsilon(1e-9));
  }
}

TEST_CASE("fieller: unbounded when the reference mean is not clearly above zero", "[stats][fieller]") {
  const RatioMoments m{.mean_c = 0.05, .mean_b = 0.02, .var_c = 0.0004, .var_b = 0.0004, .cov = 0.0};
  const FiellerInterval i = fieller_interval(m, kZ95);
  CHECK_FALSE(i.bounded);
  CHECK(std::isinf(i.bounds.hi));
  // No variance at all: the interval collapses onto R.
  const FiellerInterval exact = fieller_interval({.mean_c = 0.6, .mean_b = 0.8}, kZ95);
  CHECK(exact.bounded);
  CHECK_VEC(exact.bounds.lo, 0.75);
  CHECK_VEC(exact.bounds.hi, 0.75);
  CHECK_THROWS_AS(fieller_test({.mean_c = 0.5, .mean_b = 0.0}, 0.95, 0.05), std::invalid_argument);
}

TEST_CASE("log-ratio Wald: Cavo and LLM (stats.md §3.2)", "[stats][wald]") {
  const LogRatioWald cavo = log_ratio_wald(kCavo, kZ975);  // [0.759750, 0.988630]
  CHECK_VEC(cavo.bounds.lo, 0.75974959317334658);
  CHECK_VEC(cavo.bounds.hi, 0.98862982995995565);
  const LogRatioWald one = log_ratio_wald(kLlm, kZ95);  // SE(log R) 0.009805807, LCB 0.959400
  CHECK_VEC(one.se_log, 0.0098058067569092016);
  CHECK_VEC(one.bounds.lo, 0.95940025435673378);
  const LogRatioWald two = log_ratio_wald(kLlm, kZ975);  // (0.956440, 0.993920)
  CHECK_VEC(two.bounds.lo, 0.9564403679430597);
  CHECK_VEC(two.bounds.hi, 0.99391977990685781);
  // The delta method on population moments is the counts formula.
  std::vector<double> c, b;
  expand(kLlm, c, b);
  std::vector<std::uint32_t> cluster(c.size());
  for (std::size_t i = 0; i < cluster.size(); ++i) cluster[i] = static_cast<std::uint32_t>(i);
  const MeanCovariance v = clustered_mean_covariance(c, b, cluster, cluster.size(), false);
  const LogRatioWald moments = log_ratio_wald(RatioMoments{mean(c), mean(b), v.xx, v.yy, v.xy}, kZ95);
  CHECK_VEC(moments.se_log, one.se_log);
  CHECK_THROWS_AS(log_ratio_wald(PairedCounts{0, 0, 3, 5}, kZ95), std::invalid_argument);
}

TEST_CASE("Bonett-Price hybrid Wilson: Cavo and LLM", "[stats][bonett]") {
  const Interval cavo = bonett_price_interval(kCavo, kZ975);  // (0.7579, 0.9910) [0.757903, 0.991039]
  CHECK_VEC(cavo.lo, 0.75790284725872479);
  CHECK_VEC(cavo.hi, 0.99103877736812989);
  const Interval llm = bonett_price_interval(kLlm, kZ975);  // (0.956299, 0.994067)
  CHECK_VEC(llm.lo, 0.95629904571179635);
  CHECK_VEC(llm.hi, 0.99406666174431553);
}

TEST_CASE("paired difference: Newcombe, Tango, Wald (stats.md §3.3)", "[stats][difference]") {
  CHECK_VEC(paired_difference(kCavo), -0.062111801242236025);  // -0.0621
  const Interval nc = newcombe_interval(kCavo, kZ975);            // (-0.1186, -0.0046) [-0.118621, -0.004625]
  CHECK_VEC(nc.lo, -0.11862119563870993);
  CHECK_VEC(nc.hi, -0.0046251139330500548);
  const Interval tc = tango_interval(kCavo, kZ975);  // (-0.1240, -0.0054) [-0.124023, -0.005433]
  CHECK_VEC(tc.lo, -0.12402343246406816);
  CHECK_VEC(tc.hi, -0.0054333957316770823);
  const Interval wc = wald_difference_interval(kCavo, kZ975);  // (-0.1184, -0.0058) [-0.118400, -0.005824]
  CHECK_VEC(wc.lo, -0.11839965766157987);
  CHECK_VEC(wc.hi, -0.0058239448228921765);
  // Altman et al. Table 6.2 [[14,5],[0,22]]: 0.1220 (0.011483, 0.226493)
  const PairedCounts altman{14, 5, 0, 22};
  CHECK_VEC(paired_difference(altman), 0.12195121951219512);
  const Interval na = newcombe_interval(altman, kZ975);
  CHECK_VEC(na.lo, 0.011483241383033258);
  CHECK_VEC(na.hi, 0.22649268435121123);
  // LLM: -0.02, Newcombe (-0.035481, -0.004703), Tango (-0.036014, -0.004974)
  const Interval nl = newcombe_interval(kLlm, kZ975), tl = tango_interval(kLlm, kZ975);
  CHECK_VEC(nl.lo, -0.035480894341588907);
  CHECK_VEC(nl.hi, -0.0047033481208247806);
  CHECK_VEC(tl.lo, -0.036013557156684567);
  CHECK_VEC(tl.hi, -0.004973507679706971);
  // No flips: the difference is exactly 0 and every interval contains it.
  const PairedCounts same{40, 0, 0, 10};
  for (const Interval& i : {newcombe_interval(same, kZ975), tango_interval(same, kZ975), wald_difference_interval(same, kZ975)}) {
    CHECK(i.lo <= 0.0);
    CHECK(i.hi >= 0.0);
  }
}

namespace {
// One bucket of binary pairs drawn from a 2x2 distribution, as a bootstrap stratum.
BootstrapStratum draw_stratum(kvgate::Rng& rng, int n, double p11, double p10, double p01) {
  BootstrapStratum s;
  for (int i = 0; i < n; ++i) {
    const double u = rng.uniform();
    const double ref = u < p11 + p10 ? 1.0 : 0.0;
    const double cand = u < p11 || (u >= p11 + p10 && u < p11 + p10 + p01) ? 1.0 : 0.0;
    s.sum_ref.push_back(ref);
    s.sum_cand.push_back(cand);
    s.count.push_back(1.0);
  }
  return s;
}
}  // namespace

TEST_CASE("bootstrap: seeded, reproducible, and close to Tang on a large sample", "[stats][bootstrap]") {
  std::vector<double> c, b;
  expand(kLlm, c, b);
  BootstrapStratum s;
  s.sum_cand = c;
  s.sum_ref = b;
  s.count.assign(c.size(), 1.0);
  const std::vector<BootstrapStratum> strata{s};
  const BootstrapResult a = paired_bootstrap_ratio(strata, {.replicates = 2000, .seed = 7, .alpha = 0.05});
  const BootstrapResult again = paired_bootstrap_ratio(strata, {.replicates = 2000, .seed = 7, .alpha = 0.05});
  const BootstrapResult other = paired_bootstrap_ratio(strata, {.replicates = 2000, .seed = 8, .alpha = 0.05});
  CHECK(a.bounds.lo == again.bounds.lo);
  CHECK(a.bounds.hi == again.bounds.hi);
  CHECK(a.bounds.lo != other.bounds.lo);
  CHECK(a.replicates == 2000);
  CHECK(a.undefined == 0);
  // Tang one-sided (0.958593, 0.990647); the bootstrap's percentile bounds agree to MC error.
  CHECK(a.bounds.lo == kvtest::Approx(0.958593).margin(0.003));
  CHECK(a.bounds.hi == kvtest::Approx(0.990647).margin(0.003));
  CHECK_THROWS_AS(paired_bootstrap_ratio(std::vector<BootstrapStratum>{}, {}), std::invalid_argument);
}

TEST_CASE("bootstrap: the one-sided 95% lower bound covers the true ratio about 95% of the time", "[stats][bootstrap]") {
  // Two buckets, true p_b = 0.8, p_c = 0.76 (R = 0.95) in each; 200 data sets of 300 pairs.
  kvgate::Rng rng(2024);
  int covered = 0;
  const int sets = 200;
  for (int k = 0; k < sets; ++k) {
    std::vector<BootstrapStratum> strata{draw_stratum(rng, 150, 0.72, 0.08, 0.04), draw_stratum(rng, 150, 0.72, 0.08, 0.04)};
    const BootstrapResult r = paired_bootstrap_ratio(strata, {.replicates = 400, .seed = static_cast<std::uint64_t>(k), .alpha = 0.05});
    covered += r.bounds.lo <= 0.95;
  }
  // Binomial(200, 0.95): sd 0.015; the band is about 3 sd.
  CHECK(covered >= 0.90 * sets);
  CHECK(covered <= sets);
}

// ---- Fieller's variance floor (stats/variance_floor.h). Expected values: tests/tools/
// stats_reference_values.py, section "Fieller's variance floor" (mpmath, 40 digits: CR1 moments
// from the scores, both Fieller sets, Tang solved from its Z, the exact bound 0.05^(1/n)).
namespace {
// One bucket of binary pairs from a table, one trial per cluster unless per_cluster > 1, with the
// moments kvgate compare uses (CR1 clustered).
FlooredFiellerTest floored_table(const PairedCounts& t, std::uint32_t per_cluster = 1, double margin = 0.95) {
  std::vector<double> c, b;
  expand(t, c, b);
  std::vector<std::uint32_t> cluster(c.size());
  for (std::size_t i = 0; i < cluster.size(); ++i) cluster[i] = static_cast<std::uint32_t>(i / per_cluster);
  const std::size_t clusters = (c.size() + per_cluster - 1) / per_cluster;
  const MeanCovariance v = clustered_mean_covariance(c, b, cluster, clusters, true);
  const RatioMoments m{.mean_c = mean(c), .mean_b = mean(b), .var_c = v.xx, .var_b = v.yy, .cov = v.xy};
  return floored_fieller_test(m, unit_sums(c, b, cluster, clusters), margin, 0.05);
}
}  // namespace

TEST_CASE("fieller floor: no paired difference, one bucket: Tang's bound, below 1, rising with n", "[stats][fieller][floor]") {
  // n trials all passing on both sides. Without the floor Fieller says [1, 1] at any n (the defect).
  // The floor gives n / (n + z^2) (the one-sided Wilson bound of n/n), which is Tang's: for a table
  // (n11, 0, 0, n00) Tang's Z(t) = sqrt(n11 (1 - t) / t). The exact zero-event bound 0.05^(1/n) is
  // lower: 0.549280, 0.904966, 0.990064. mpmath: lcb 0.648883, 0.917276, 0.991062.
  struct Row {
    std::int64_t n;
    double lcb, exact;
  };
  const Row rows[] = {{5, 0.64888349923489862, 0.54928027165305888},
                      {30, 0.91727569187490067, 0.90496614714469586},
                      {300, 0.99106212782487182, 0.99006391805554229}};
  double prev = 0.0;
  for (const Row& row : rows) {
    INFO("n = " << row.n);
    const PairedCounts t{row.n, 0, 0, 0};
    const FlooredFiellerTest f = floored_table(t);
    CHECK(f.observed.interval.bounds.lo == 1.0);  // the collapsed interval the floor replaces
    CHECK(f.floor_lcb);
    CHECK_VEC(f.floor.units, static_cast<double>(row.n));
    CHECK_VEC(f.test.interval.bounds.lo, row.lcb);
    CHECK_VEC(f.test.interval.bounds.lo, row.n / (row.n + kZ95 * kZ95));
    CHECK(f.test.interval.bounds.lo == kvtest::Approx(tang_test(t, 0.95, 0.05).bounds.lo).margin(1e-9));
    CHECK(f.test.interval.bounds.lo < 1.0);
    CHECK(f.test.interval.bounds.lo > row.exact);  // the score bound, not the exact one
    CHECK(f.test.interval.bounds.lo > prev);
    prev = f.test.interval.bounds.lo;
    // The test at the margin agrees with the bound: PASS iff z_margin > z.
    CHECK((f.test.z_margin > kZ95) == (f.test.interval.bounds.lo > 0.95));
    CHECK(f.test.p_value == kvtest::Approx(normal_sf(f.test.z_margin)));
  }
  // Failures on both sides too (n00 > 0): still Tang's bound, with units = the reference passes.
  for (const PairedCounts& t : {PairedCounts{90, 0, 0, 10}, PairedCounts{30, 0, 0, 70}}) {
    const FlooredFiellerTest f = floored_table(t);
    CHECK_VEC(f.floor.units, static_cast<double>(t.n11));
    CHECK(f.test.interval.bounds.lo == kvtest::Approx(tang_test(t, 0.95, 0.05).bounds.lo).margin(1e-9));
  }
  CHECK_VEC(floored_table({90, 0, 0, 10}).test.interval.bounds.lo, 0.97081573168884872);  // stats.md Tang 0.970816
  // Six clusters of five trials: the units are the clusters. mpmath: 6 / (6 + z^2) = 0.689216.
  const FlooredFiellerTest clustered = floored_table({30, 0, 0, 0}, 5);
  CHECK_VEC(clustered.floor.units, 6.0);
  CHECK_VEC(clustered.test.interval.bounds.lo, 0.68921601869408563);
}

TEST_CASE("fieller floor: observed differences replace the z^2 pseudo-events; three or more leave Fieller as it was",
          "[stats][fieller][floor]") {
  // q = max(0, z^2 - k) / (units + z^2), k = discordant pairs. mpmath (lcb, observed lcb, Tang):
  // (29,0,1,0) 0.899900, 0.911838, 0.863596; (29,1,0,0) 0.965564, 0.978957, 0.946207.
  struct Row {
    PairedCounts t;
    double lcb, observed;
  };
  const Row near[] = {{{29, 0, 1, 0}, 0.89990033726277545, 0.91183821243495091},
                      {{29, 1, 0, 0}, 0.96556356442976541, 0.97895719670253741}};
  for (const Row& row : near) {
    INFO(row.t.n11 << "," << row.t.n_c << "," << row.t.n_b << "," << row.t.n00);
    const FlooredFiellerTest f = floored_table(row.t);
    CHECK(f.floor_lcb);
    CHECK_VEC(f.floor.differing_units, 1.0);
    CHECK_VEC(f.floor.loss_bound, (kZ95 * kZ95 - 1) / (f.floor.units + kZ95 * kZ95));
    CHECK_VEC(f.test.interval.bounds.lo, row.lcb);
    CHECK_VEC(f.observed.interval.bounds.lo, row.observed);
    CHECK(f.test.interval.bounds.lo >= tang_test(row.t, 0.95, 0.05).bounds.lo);
  }
  // Monotone in the losses of 30 trials: none 0.917, one 0.900, two 0.857, three 0.808; one gain 0.966.
  double prev = 1.0;
  for (const PairedCounts& t : {PairedCounts{30, 0, 0, 0}, PairedCounts{29, 0, 1, 0}, PairedCounts{28, 0, 2, 0}, PairedCounts{27, 0, 3, 0}}) {
    const double lo = floored_table(t).test.interval.bounds.lo;
    CHECK(lo < prev);
    prev = lo;
  }
  CHECK(floored_table({29, 1, 0, 0}).test.interval.bounds.lo > floored_table({30, 0, 0, 0}).test.interval.bounds.lo);
  // Enough discordant pairs: no floor at all (q = 0 from k >= z^2), the bounds are Fieller's.
  for (const PairedCounts& t : {PairedCounts{28, 0, 2, 0}, PairedCounts{28, 1, 1, 0}, PairedCounts{27, 0, 3, 0}, kCavo, kLlm, kSmall}) {
    INFO(t.n11 << "," << t.n_c << "," << t.n_b << "," << t.n00);
    const FlooredFiellerTest f = floored_table(t);
    CHECK_FALSE(f.floor_lcb);
    CHECK_FALSE(f.floor_ucb);
    CHECK(f.test.interval.bounds.lo == f.observed.interval.bounds.lo);
    CHECK(f.test.interval.bounds.hi == f.observed.interval.bounds.hi);
    CHECK(f.test.z_margin == f.observed.z_margin);
    if (t.n_b + t.n_c >= 3) CHECK(f.floor.loss_bound == 0.0);
  }
  CHECK_VEC(floored_table({27, 0, 3, 0}).test.interval.bounds.lo, 0.80836750484744879);
  CHECK_VEC(floored_table(kLlm).test.interval.bounds.lo, 0.95934537554005146);  // Fieller, CR1 moments
}

TEST_CASE("fieller floor: AUC-weighted units, fractional scores, bad input", "[stats][fieller][floor]") {
  // Two buckets with AUC weights 1/2, 1/2, every trial passing on both sides: the moments add up
  // with w^2, units = 1 / sum(w^2 / n_k). 20 + 4 trials: 13.33 units, lcb 0.831313 (mpmath);
  // 20 + 10: 26.67, 0.907888; 150 + 150: 300, 0.991062 (= one bucket of 300).
  struct Row {
    std::int64_t n1, n2;
    double units, lcb;
  };
  for (const Row& row : {Row{20, 4, 40.0 / 3, 0.83131340866612204}, Row{20, 10, 80.0 / 3, 0.9078876447168349},
                         Row{150, 150, 300.0, 0.99106212782487182}}) {
    INFO(row.n1 << " + " << row.n2);
    const double w2 = 0.25;
    // All pass: the means are 1, every (co)variance 0; U_k = sum b^2 / n_k^2 = 1 / n_k.
    const RatioMoments m{.mean_c = 1.0, .mean_b = 1.0};
    const double u = w2 / static_cast<double>(row.n1) + w2 / static_cast<double>(row.n2);
    const FlooredFiellerTest f = floored_fieller_test(m, {.ref_squares = u}, 0.95, 0.05);
    CHECK_VEC(f.floor.units, row.units);
    CHECK_VEC(f.test.interval.bounds.lo, row.lcb);
  }
  // Identical fractional scores: only the count of units matters (mpmath: 30 units, 0.917276).
  const std::vector<double> half(30, 0.5);
  std::vector<std::uint32_t> cluster(30);
  for (std::uint32_t i = 0; i < 30; ++i) cluster[i] = i;
  const MeanCovariance v = clustered_mean_covariance(half, half, cluster, 30, true);
  const FlooredFiellerTest f = floored_fieller_test({.mean_c = 0.5, .mean_b = 0.5, .var_c = v.xx, .var_b = v.yy, .cov = v.xy},
                                                    unit_sums(half, half, cluster, 30), 0.95, 0.05);
  CHECK_VEC(f.floor.units, 30.0);
  CHECK_VEC(f.test.interval.bounds.lo, 0.91727569187490067);
  // A candidate that loses all of 24 trials: 24 differing units, no floor; the bounds are [0, 0].
  std::vector<double> zero(24, 0.0), one(24, 1.0);
  std::vector<std::uint32_t> ids(24);
  for (std::uint32_t i = 0; i < 24; ++i) ids[i] = i;
  const UnitSums all_lost = unit_sums(zero, one, ids, 24);
  CHECK_VEC(all_lost.differing_units(), 24.0);
  const FlooredFiellerTest lost = floored_fieller_test({.mean_c = 0.0, .mean_b = 1.0}, all_lost, 0.95, 0.05);
  CHECK(lost.floor.loss_bound == 0.0);
  CHECK(lost.test.interval.bounds.hi == 0.0);
  // Sums across buckets: squares with w^2, fourth powers with w^4 (two equal buckets, w = 1/2:
  // twice the units of one).
  UnitSums two;
  two.add(all_lost, 0.5);
  two.add(all_lost, 0.5);
  CHECK_VEC(two.differing_units(), 48.0);
  CHECK_THROWS_AS(loss_floor({.mean_c = 1.0, .mean_b = 1.0}, {}, kZ95), std::invalid_argument);
  CHECK_THROWS_AS(loss_floor({.mean_c = 1.0, .mean_b = 0.0}, {.ref_squares = 0.1}, kZ95), std::invalid_argument);
  CHECK_THROWS_AS(unit_sums(half, half, std::vector<std::uint32_t>(29, 0), 1), std::invalid_argument);
  CHECK_THROWS_AS(unit_sums(half, half, cluster, 10), std::invalid_argument);  // id out of range
}
