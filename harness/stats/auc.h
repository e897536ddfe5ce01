// Area under the score-vs-context-length curve (stats.md §4): the trapezoid rule over bucket upper
// edges x_k, normalized by the x-range, as lm-eval's MRCR task computes it and Context Arena's
// numbers match (linear token axis); log2 on request. AUC = sum_k w_k y_k is linear in the bucket
// means, so Var(AUC) = sum_k w_k^2 Var(y_k) for disjoint buckets and a ratio of AUCs goes through
// Fieller on the contrast sum_k w_k (y_c,k - t y_b,k).
#pragma once
#include <span>
#include <vector>

namespace kvgate::stats {

enum class AucAxis { linear, log2 };
const char* to_string(AucAxis axis);

// Weights w_k (summing to 1) for strictly increasing positive x; one bucket gives {1}.
// std::invalid_argument for empty, unsorted or non-positive x.
std::vector<double> auc_weights(std::span<const double> x, AucAxis axis);

// sum_k w_k y_k (same scale as y: multiply by 100 for Context Arena's percent).
double auc(std::span<const double> x, std::span<const double> y, AucAxis axis);

// sum_k w_k^2 v_k, with v_k the variance of bucket k's mean (or a covariance term).
double weighted_variance(std::span<const double> weights, std::span<const double> v);

}  // namespace kvgate::stats
