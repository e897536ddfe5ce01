// harness/stats: Miller's standard errors (plain, clustered, paired), sample size and MDE, and the
// AUC over length buckets (stats.md §2, §3.4, §4).
#include <cmath>
#include <cstdint>
#include <stdexcept>
#include <vector>

#include "harness/stats/auc.h"
#include "harness/stats/clustered_variance.h"
#include "harness/stats/sample_size.h"
#include "harness/stats/tang.h"
#include "tests/stats_vectors.h"

using namespace kvgate::stats;

TEST_CASE("clustered SE: Miller's toy (stats.md §2)", "[stats][clustered]") {
  const std::vector<double> s = {1, 1, 1, 0, 0, 1, 1, 0, 1, 0, 0, 0};
  const std::vector<std::uint32_t> cl = {0, 0, 0, 1, 1, 2, 2, 2, 2, 3, 3, 3};  // AAA BB CCCC DDD
  CHECK_VEC(mean(s), 0.5);
  CHECK_VEC(se_clt(s), 0.15075567228888181);  // 0.1507557
  const ClusteredSe c = se_clustered(s, cl, 4);
  CHECK_VEC(c.eq4, 0.21687053345908541);       // 0.2168705
  CHECK_VEC(c.sandwich, 0.21245914639969937);  // 0.2124591
  CHECK_VEC(c.cr1, 0.24532669073132908);       // 0.2453267
  CHECK(c.clusters == 4);
  // The same sandwich through the covariance of two means (x = y).
  const MeanCovariance v = clustered_mean_covariance(s, s, cl, 4, false);
  CHECK_VEC(std::sqrt(v.xx), c.sandwich);
  CHECK_VEC(v.xy, v.xx);
  const MeanCovariance v1 = clustered_mean_covariance(s, s, cl, 4, true);
  CHECK_VEC(std::sqrt(v1.yy), c.cr1);
  // Singleton clusters with CR1: the sample variance / n, i.e. Eq.1.
  std::vector<std::uint32_t> own(s.size());
  for (std::size_t i = 0; i < own.size(); ++i) own[i] = static_cast<std::uint32_t>(i);
  CHECK_VEC(std::sqrt(clustered_mean_covariance(s, s, own, own.size(), true).xx), se_clt(s));
  CHECK_THROWS_AS(se_clustered(s, std::vector<std::uint32_t>(s.size(), 9), 4), std::invalid_argument);
  CHECK_THROWS_AS(se_clt(std::vector<double>{}), std::invalid_argument);
}

TEST_CASE("paired SE: Miller's paired toy, Eq.7 equals Eq.8", "[stats][clustered]") {
  const std::vector<double> a = {1, 1, 0, 1, 0, 1, 1, 0, 1, 1}, b = {1, 0, 0, 1, 0, 1, 0, 0, 1, 1};
  CHECK_VEC(mean(a) - mean(b), 0.2);
  CHECK_VEC(se_paired(a, b), 0.13333333333333333);    // 0.1333333
  CHECK_VEC(se_unpaired(a, b), 0.2260776661041756);   // 0.2260777
  CHECK_VEC(correlation(a, b), 0.65465367070797714);  // 0.6546537
  CHECK_VEC(se_paired_from_parts(se_clt(a), se_clt(b), correlation(a, b)), se_paired(a, b));
}

TEST_CASE("NI sample size: stats.md §3.4 example", "[stats][power]") {
  // p_b = p_c = 0.8, 3% flips each way (p11 = 0.77), theta0 = 0.95, power 0.8: 221.8 -> 222, 281.6 -> 282
  NiPlan plan{.p_ref = 0.8, .p_cand = 0.8, .p11 = 0.77, .margin = 0.95, .alpha = 0.05, .power = 0.8};
  CHECK_VEC(ni_sample_size(plan), 221.79924069870923);
  CHECK(std::ceil(ni_sample_size(plan)) == 222);
  plan.alpha = 0.025;
  CHECK_VEC(ni_sample_size(plan), 281.57856046977357);
  CHECK(std::ceil(ni_sample_size(plan)) == 282);
  // E[D] = 0.04, Var(D) = 0.0574 through the moments form.
  CHECK_VEC(sample_size_for_contrast(0.04, 0.0574, 0.05, 0.8), 221.79924069870923);
  // At or below the margin no n shows non-inferiority.
  plan.p_cand = 0.76;
  plan.p11 = 0.74;
  CHECK(std::isinf(ni_sample_size(plan)));
  CHECK(std::isinf(sample_size_for_contrast(0.0, 0.05, 0.05, 0.8)));
  CHECK_THROWS_AS(ni_sample_size({.p_ref = 0.0}), std::invalid_argument);
}

TEST_CASE("NI sample size for the Tang score test (what the gate recommends)", "[stats][power]") {
  // [derived] n = (z_a sigma_0 + z_b sigma_1)^2 / E[D]^2 with sigma_0^2 = Tang's V(margin)/n at the truth:
  // 267.74 for the §3.4 example (the Wald-type 221.8 under-powers the score test: gate-calibration-test).
  const NiPlan plan{.p_ref = 0.8, .p_cand = 0.8, .p11 = 0.77, .margin = 0.95, .alpha = 0.05, .power = 0.8};
  CHECK_VEC(tang_null_variance(0.77, 0.03, 0.03, 0.95), 0.075803726564313855);
  CHECK_VEC(tang_sample_size(plan), 267.7371780952897);
  // sigma_0 = sigma_1 would give back the Wald-type formula; here sigma_0 > sigma_1 so n grows.
  CHECK(tang_sample_size(plan) > ni_sample_size(plan));
  CHECK(std::isinf(tang_sample_size({.p_ref = 0.8, .p_cand = 0.76, .p11 = 0.74})));
}

TEST_CASE("Miller Eq.9 sample size and Eq.10 MDE", "[stats][power]") {
  // omega^2 = 1/9, sigma^2 = 0, delta = 0.03, alpha 0.05, beta 0.2 -> n = 968.997 (paper: ~969)
  CHECK_VEC(miller_sample_size({.omega2 = 1.0 / 9}, 0.03), 968.99749806778876);
  // omega^2 = 1/9, sigma_A^2 = sigma_B^2 = 1/6, n = 198: K=1 -> 0.132733, K=10 -> 0.075670
  CHECK_VEC(miller_mde({.omega2 = 1.0 / 9, .sigma2_a = 1.0 / 6, .sigma2_b = 1.0 / 6}, 198), 0.13273332787399422);
  CHECK_VEC(miller_mde({.omega2 = 1.0 / 9, .sigma2_a = 1.0 / 6, .sigma2_b = 1.0 / 6, .k_a = 10, .k_b = 10}, 198),
            0.075669639266777308);
  CHECK_THROWS_AS(miller_mde({.omega2 = 0.1}, 0), std::invalid_argument);
}

TEST_CASE("AUC: Context Arena rows on the linear axis (stats.md §4)", "[stats][auc]") {
  std::vector<double> x;
  for (int k = 0; k < 8; ++k) x.push_back(8192.0 * (1 << k));  // 8k ... 1M
  const std::vector<double> gemini = {98.7, 94.3, 89.0, 88.9, 84.1, 81.1, 72.7, 60.1};
  const std::vector<double> gpt41 = {87.6, 68.0, 70.4, 57.5, 55.5, 57.1, 55.6, 42.1};
  const std::span<const double> x128(x.data(), 5);
  // gemini-2.5-pro: AUC@128k 88.507 (site 88.5), AUC@1M 73.698 (site 73.7)
  CHECK_VEC(auc(x128, std::span<const double>(gemini.data(), 5), AucAxis::linear), 88.506666666666667);
  CHECK_VEC(auc(x, gemini, AucAxis::linear), 73.697637795275591);
  // gpt-4.1: 61.600 (61.6), 53.184 (53.2)
  CHECK_VEC(auc(x128, std::span<const double>(gpt41.data(), 5), AucAxis::linear), 61.6);
  CHECK_VEC(auc(x, gpt41, AucAxis::linear), 53.184251968503937);
  // The weights stats.md lists: 8k..128k -> [4,12,24,48,32]/120; 8k..1M -> [4,12,24,48,96,192,384,256]/1016.
  const auto w5 = auc_weights(x128, AucAxis::linear);
  const double e5[] = {4, 12, 24, 48, 32};
  for (int k = 0; k < 5; ++k) CHECK_VEC(w5[k], e5[k] / 120);
  const auto w8 = auc_weights(x, AucAxis::linear);
  const double e8[] = {4, 12, 24, 48, 96, 192, 384, 256};
  for (int k = 0; k < 8; ++k) CHECK_VEC(w8[k], e8[k] / 1016);
}

TEST_CASE("AUC: the linear/log2 toy, and the axis alone flips a 0.95 gate", "[stats][auc]") {
  const std::vector<double> x = {8192, 16384, 32768, 65536, 131072};
  const std::vector<double> base = {0.90, 0.85, 0.80, 0.70, 0.60}, cand = {0.90, 0.84, 0.78, 0.66, 0.52};
  const double lb = auc(x, base, AucAxis::linear), lc = auc(x, cand, AucAxis::linear);
  CHECK_VEC(lb, 0.715);
  CHECK_VEC(lc, 0.67266666666666667);
  CHECK_VEC(lc / lb, 0.94079254079254079);  // 0.9407925
  const double gb = auc(x, base, AucAxis::log2), gc = auc(x, cand, AucAxis::log2);
  CHECK_VEC(gb, 0.775);
  CHECK_VEC(gc, 0.7475);
  CHECK_VEC(gc / gb, 0.96451612903225806);  // 0.9645161
  CHECK(lc / lb < 0.95);
  CHECK(gc / gb > 0.95);
}

TEST_CASE("AUC: single bucket, weighted variance, bad edges", "[stats][auc]") {
  CHECK(auc(std::vector<double>{4096}, std::vector<double>{0.7}, AucAxis::linear) == 0.7);
  const std::vector<double> w = {0.25, 0.75}, v = {0.04, 0.01};
  CHECK_VEC(weighted_variance(w, v), 0.25 * 0.25 * 0.04 + 0.75 * 0.75 * 0.01);
  CHECK_THROWS_AS(auc_weights(std::vector<double>{}, AucAxis::linear), std::invalid_argument);
  CHECK_THROWS_AS(auc_weights(std::vector<double>{8192, 4096}, AucAxis::linear), std::invalid_argument);
  CHECK_THROWS_AS(auc_weights(std::vector<double>{0, 4096}, AucAxis::log2), std::invalid_argument);
}
