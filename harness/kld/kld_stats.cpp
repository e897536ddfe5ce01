#include "harness/kld/kld_stats.h"

#include <algorithm>
#include <cmath>

#include "harness/core/error.h"

namespace kvgate::kld {

const std::vector<std::pair<const char*, double>> kKldPercentiles = {
    {"99.9", 0.999}, {"99.0", 0.990}, {"95.0", 0.950}, {"90.0", 0.900},
    {"10.0", 0.100}, {"5.0", 0.050},  {"1.0", 0.010},  {"0.1", 0.001}};
const std::vector<std::pair<const char*, double>> kPDiffPercentiles = {
    {"99.9", 0.999}, {"99.0", 0.990}, {"95.0", 0.950}, {"90.0", 0.900}, {"75.0", 0.750},
    {"25.0", 0.250}, {"10.0", 0.100}, {"5.0", 0.050},  {"1.0", 0.010},  {"0.1", 0.001}};

namespace {

// log-softmax in double; returns the argmax (ties: the lower id).
int log_softmax(std::span<const float> logits, std::vector<double>& out) {
  out.resize(logits.size());
  double mx = -INFINITY;
  int best = 0;
  for (std::size_t i = 0; i < logits.size(); ++i)
    if (logits[i] > mx) {
      mx = logits[i];
      best = static_cast<int>(i);
    }
  double sum = 0;
  for (std::size_t i = 0; i < logits.size(); ++i) sum += std::exp(static_cast<double>(logits[i]) - mx);
  const double lse = mx + std::log(sum);
  for (std::size_t i = 0; i < logits.size(); ++i) out[i] = static_cast<double>(logits[i]) - lse;
  return best;
}

}  // namespace

PositionStats compare_position(std::span<const float> base, std::span<const float> q, int next) {
  if (base.size() != q.size() || base.empty())
    throw Error("kld: logits of different sizes (" + std::to_string(base.size()) + " and " + std::to_string(q.size()) + ")",
                kExitInternal);
  if (next < 0 || static_cast<std::size_t>(next) >= base.size())
    throw Error("kld: token id " + std::to_string(next) + " outside the vocabulary", kExitInternal);
  thread_local std::vector<double> lb, lq;
  const int top_b = log_softmax(base, lb);
  const int top_q = log_softmax(q, lq);
  PositionStats s;
  for (std::size_t i = 0; i < lb.size(); ++i) {
    const double pb = std::exp(lb[i]);
    if (pb > 0) s.kld += pb * (lb[i] - lq[i]);
  }
  s.p_diff = std::exp(lq[next]) - std::exp(lb[next]);
  s.nll_q = -lq[next];
  s.nll_base = -lb[next];
  s.same_top = top_b == top_q;
  return s;
}

MeanUnc mean_and_uncertainty(double sum, double sum2, std::size_t n) {
  if (n < 1) return {};
  const double f = sum / static_cast<double>(n);
  double df = sum2 / static_cast<double>(n) - f * f;
  df = df > 0 && n > 10 ? std::sqrt(df / static_cast<double>(n - 1)) : 0.0;
  return {f, df};
}

double covariance(double sum_a, double sum_b, double sum_ab, std::size_t n) {
  if (n < 2) return 0.0;
  const double dn = static_cast<double>(n);
  return (sum_ab / dn - (sum_a / dn) * (sum_b / dn)) / (dn - 1);
}

double percentile(const std::vector<double>& v, double f) {
  if (v.empty()) return 0.0;
  if (f <= 0) return v.front();
  if (f >= 1) return v.back();
  double p = f * static_cast<double>(v.size() - 1);
  const std::size_t ip = static_cast<std::size_t>(p);
  p -= static_cast<double>(ip);
  return (1 - p) * v[ip] + p * v[std::min(ip + 1, v.size() - 1)];
}

double median(const std::vector<double>& v) {
  if (v.empty()) return 0.0;
  const std::size_t n = v.size();
  return n % 2 == 0 ? 0.5 * (v[n / 2] + v[n / 2 - 1]) : v[n / 2];
}

void Sums::add(const PositionStats& s) {
  ++count;
  same_top += s.same_top;
  kld += s.kld;
  kld2 += s.kld * s.kld;
  p_diff += s.p_diff;
  const double d2 = s.p_diff * s.p_diff;
  p_diff2 += d2;
  p_diff4 += d2 * d2;
  nll += s.nll_q;
  nll2 += s.nll_q * s.nll_q;
  nll_base += s.nll_base;
  nll_base2 += s.nll_base * s.nll_base;
  nll_nll_base += s.nll_q * s.nll_base;
}

namespace {

MeanUnc rms_of(const Sums& s) {
  const MeanUnc mse = mean_and_uncertainty(s.p_diff2, s.p_diff4, s.count);
  const double rms = std::sqrt(mse.mean);
  return {rms, rms > 0 ? 0.5 / rms * mse.unc : 0.0};
}

MeanUnc same_top_of(const Sums& s) {
  if (s.count == 0) return {};
  const double p = static_cast<double>(s.same_top) / static_cast<double>(s.count);
  return {p, s.count > 1 ? std::sqrt(p * (1 - p) / static_cast<double>(s.count - 1)) : 0.0};
}

MeanUnc ln_ratio_of(const Sums& s) {
  const MeanUnc lq = mean_and_uncertainty(s.nll, s.nll2, s.count);
  const MeanUnc lb = mean_and_uncertainty(s.nll_base, s.nll_base2, s.count);
  const double cov = covariance(s.nll, s.nll_base, s.nll_nll_base, s.count);
  const double var = lq.unc * lq.unc + lb.unc * lb.unc - 2.0 * cov;
  return {lq.mean - lb.mean, var > 0 ? std::sqrt(var) : 0.0};
}

}  // namespace

Running running(const Sums& s) {
  const MeanUnc lq = mean_and_uncertainty(s.nll, s.nll2, s.count);
  const double ppl = std::exp(lq.mean);
  return {.ppl = {ppl, ppl * lq.unc},
          .ln_ratio = ln_ratio_of(s),
          .kld = mean_and_uncertainty(s.kld, s.kld2, s.count),
          .rms_p_diff = rms_of(s),
          .same_top = same_top_of(s)};
}

void Accumulator::add(const PositionStats& s) {
  sums_.add(s);
  kld_.push_back(s.kld);
  p_diff_.push_back(s.p_diff);
}

Summary Accumulator::summary() const {
  Summary r;
  const Sums& s = sums_;
  r.sums = s;
  const MeanUnc lq = mean_and_uncertainty(s.nll, s.nll2, s.count);
  const MeanUnc lb = mean_and_uncertainty(s.nll_base, s.nll_base2, s.count);
  const double cov = covariance(s.nll, s.nll_base, s.nll_nll_base, s.count);
  const double ppl = std::exp(lq.mean), ppl_base = std::exp(lb.mean);
  r.ppl_q = {ppl, ppl * lq.unc};
  r.ppl_base = {ppl_base, ppl_base * lb.unc};
  r.ln_ppl_correlation = lq.unc > 0 && lb.unc > 0 ? cov / (lq.unc * lb.unc) : 0.0;
  r.ln_ratio = ln_ratio_of(s);
  const double ratio = std::exp(r.ln_ratio.mean);
  r.ppl_ratio = {ratio, ratio * r.ln_ratio.unc};
  const double ppl_cov = ppl * ppl_base * cov;
  const double diff_var = r.ppl_q.unc * r.ppl_q.unc + r.ppl_base.unc * r.ppl_base.unc - 2.0 * ppl_cov;
  r.ppl_diff = {ppl - ppl_base, diff_var > 0 ? std::sqrt(diff_var) : 0.0};
  r.kld = mean_and_uncertainty(s.kld, s.kld2, s.count);
  r.p_diff = mean_and_uncertainty(s.p_diff, s.p_diff2, s.count);
  r.rms_p_diff = rms_of(s);
  r.same_top = same_top_of(s);
  r.kld_sorted = kld_;
  r.p_diff_sorted = p_diff_;
  std::sort(r.kld_sorted.begin(), r.kld_sorted.end());
  std::sort(r.p_diff_sorted.begin(), r.p_diff_sorted.end());
  return r;
}

}  // namespace kvgate::kld
