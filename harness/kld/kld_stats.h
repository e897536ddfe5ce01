// The statistics of `kvgate kld`, with llama.cpp's definitions (tools/perplexity/perplexity.cpp,
// kl_divergence(); kv-formats-and-decoders.md §2.2), so numbers compare with llama-perplexity's:
//  - per position: KLD = sum_i p_base_i (log p_base_i - log p_Q_i) over the whole vocabulary (exact:
//    llama.cpp skips base log-probs <= -16 only because it stores them as uint16), dp = p_Q(next) -
//    p_base(next), same top = argmax_Q == argmax_base (ties: the lower id), and each side's NLL;
//  - mean_and_uncertainty(sum, sum2, n) = (sum/n, sqrt((sum2/n - mean^2)/(n-1))), 0 when n <= 10;
//  - percentiles by linear interpolation on sorted values; the median the middle (mean of two);
//  - RMS dp = sqrt(mean dp^2), uncertainty 0.5/RMS * unc(dp^2); same top p +- sqrt(p(1-p)/(n-1));
//  - ln(PPL(Q)/PPL(base)) with the covariance of the two NLLs.
#pragma once
#include <cstddef>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

namespace kvgate::kld {

struct PositionStats {
  double kld = 0, p_diff = 0, nll_q = 0, nll_base = 0;
  bool same_top = false;
};

// One position: the two rows of logits (same vocabulary) and the token that actually came next.
PositionStats compare_position(std::span<const float> base_logits, std::span<const float> q_logits, int next_token);

struct MeanUnc {
  double mean = 0, unc = 0;
};
MeanUnc mean_and_uncertainty(double sum, double sum2, std::size_t n);
// llama.cpp's covariance of two sums: (sum_ab/n - mean_a*mean_b) / (n-1); 0 when n < 2.
double covariance(double sum_a, double sum_b, double sum_ab, std::size_t n);
// Linear interpolation at fraction f of sorted values (f <= 0: the first; f >= 1: the last).
double percentile(const std::vector<double>& sorted, double f);
double median(const std::vector<double>& sorted);

// Running sums, as llama.cpp keeps them.
struct Sums {
  std::size_t count = 0, same_top = 0;
  double kld = 0, kld2 = 0, p_diff = 0, p_diff2 = 0, p_diff4 = 0;
  double nll = 0, nll2 = 0, nll_base = 0, nll_base2 = 0, nll_nll_base = 0;
  void add(const PositionStats& s);
};

// What llama.cpp's per-chunk line shows, from the sums so far.
struct Running {
  MeanUnc ppl, ln_ratio, kld, rms_p_diff, same_top;
};
Running running(const Sums& s);

struct Summary {
  Sums sums;
  MeanUnc ppl_q, ppl_base, ln_ratio, ppl_ratio, ppl_diff, kld, p_diff, rms_p_diff, same_top;
  double ln_ppl_correlation = 0;
  std::vector<double> kld_sorted, p_diff_sorted;
};

class Accumulator {
 public:
  void add(const PositionStats& s);
  const Sums& sums() const { return sums_; }
  Summary summary() const;

 private:
  Sums sums_;
  std::vector<double> kld_, p_diff_;
};

// The KLD percentiles llama.cpp prints, as {"99.9": v, ...}, and the Δp ones.
extern const std::vector<std::pair<const char*, double>> kKldPercentiles;
extern const std::vector<std::pair<const char*, double>> kPDiffPercentiles;

}  // namespace kvgate::kld
