// Standard errors of means, plain and clustered (Evan Miller, "Adding Error Bars to Evals",
// arXiv:2411.00640; stats.md §2). Trials that share a source (a haystack, a document, the repeats
// of one prompt) are not independent; their errors add up within a cluster.
//
// Cluster ids are dense: 0 <= cluster[i] < clusters. Every function requires equal lengths and n >= 1
// (std::invalid_argument otherwise); n = 1 gives 0 where a variance needs n - 1.
#pragma once
#include <cstddef>
#include <cstdint>
#include <span>

namespace kvgate::stats {

double mean(std::span<const double> s);

// Eq.1: sqrt(sample variance / n).
double se_clt(std::span<const double> s);

struct ClusteredSe {
  double eq4 = 0.0;       // Miller Eq.4: SE_CLT^2 plus the within-cluster cross products / n^2
  double sandwich = 0.0;  // App. A: sqrt(sum_c U_c^2) / n, U_c = sum_{i in c} (s_i - mean)
  double cr1 = 0.0;       // sandwich times sqrt(G / (G - 1)) (the usual small-G correction)
  std::size_t clusters = 0;  // G: clusters that hold at least one observation
};
ClusteredSe se_clustered(std::span<const double> s, std::span<const std::uint32_t> cluster, std::size_t clusters);

// Covariance matrix of the two means (x_bar, y_bar) of paired observations, clustered sandwich:
// V_xy = k * sum_c U_c^x U_c^y / n^2 with k = G/(G-1) when `cr1` (and G > 1), else 1. With one
// observation per cluster and cr1 this is the sample covariance / n.
struct MeanCovariance {
  double xx = 0.0, yy = 0.0, xy = 0.0;
  std::size_t clusters = 0;
};
MeanCovariance clustered_mean_covariance(std::span<const double> x, std::span<const double> y,
                                         std::span<const std::uint32_t> cluster, std::size_t clusters, bool cr1);

// Paired (Eq.7) and unpaired (§4.1) standard errors of mean(a) - mean(b), and Pearson's correlation.
double se_paired(std::span<const double> a, std::span<const double> b);
double se_unpaired(std::span<const double> a, std::span<const double> b);
double correlation(std::span<const double> a, std::span<const double> b);
// Eq.8: the paired SE from the two SEs and their correlation (equals Eq.7).
double se_paired_from_parts(double se_a, double se_b, double corr);

}  // namespace kvgate::stats
