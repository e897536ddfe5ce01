// Adjusted p-values for many buckets and tasks (stats.md §5; statsmodels multipletests 'holm',
// 'fdr_bh', 'bonferroni'). Results are in the input order. Each p must be in [0, 1].
#pragma once
#include <span>
#include <vector>

namespace kvgate::stats {

std::vector<double> bonferroni(std::span<const double> p);
// Holm step-down (FWER): flag a bucket as a regression when its adjusted p <= alpha.
std::vector<double> holm(std::span<const double> p);
// Benjamini-Hochberg step-up (FDR under independence/PRDS): for exploratory listing.
std::vector<double> benjamini_hochberg(std::span<const double> p);

}  // namespace kvgate::stats
