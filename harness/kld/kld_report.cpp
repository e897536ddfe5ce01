#include "harness/kld/kld_report.h"

#include <cstdarg>
#include <cstdio>

namespace kvgate::kld {

using nlohmann::json;

namespace {

std::string fmt(const char* f, ...) {
  char buf[256];
  va_list ap;
  va_start(ap, f);
  std::vsnprintf(buf, sizeof buf, f, ap);
  va_end(ap);
  return buf;
}

// "99.9%   KLD: ", " 5.0%   KLD: ": llama.cpp pads the label to the width of "Maximum".
std::string label(const char* pct, const char* what) {
  std::string l = std::string(pct) + "%";
  while (l.size() < 5) l = " " + l;
  return l + "   " + what + ": ";
}

}  // namespace

std::string chunk_header() {
  return "chunk             PPL               ln(PPL(Q)/PPL(base))          KL Divergence              Δp RMS            Same top p\n";
}

std::string chunk_line(int chunk, const Running& r) {
  return fmt("%4d  %10.4lf ± %10.4lf  %10.5lf ± %10.5lf  %10.6lf ± %10.6lf  %6.3lf ± %6.3lf %%  %6.3lf ± %6.3lf %%\n", chunk,
             r.ppl.mean, r.ppl.unc, r.ln_ratio.mean, r.ln_ratio.unc, r.kld.mean, r.kld.unc, 100.0 * r.rms_p_diff.mean,
             100.0 * r.rms_p_diff.unc, 100.0 * r.same_top.mean, 100.0 * r.same_top.unc);
}

std::string report_text(const KldResult& res) {
  const Summary& s = res.summary;
  std::string o;
  o += "\n====== Perplexity statistics ======\n";
  o += fmt("Mean PPL(Q)                   : %10.6lf ± %10.6lf\n", s.ppl_q.mean, s.ppl_q.unc);
  o += fmt("Mean PPL(base)                : %10.6lf ± %10.6lf\n", s.ppl_base.mean, s.ppl_base.unc);
  o += fmt("Cor(ln(PPL(Q)), ln(PPL(base))): %6.2lf%%\n", 100.0 * s.ln_ppl_correlation);
  o += fmt("Mean ln(PPL(Q)/PPL(base))     : %10.6lf ± %10.6lf\n", s.ln_ratio.mean, s.ln_ratio.unc);
  o += fmt("Mean PPL(Q)/PPL(base)         : %10.6lf ± %10.6lf\n", s.ppl_ratio.mean, s.ppl_ratio.unc);
  o += fmt("Mean PPL(Q)-PPL(base)         : %10.6lf ± %10.6lf\n", s.ppl_diff.mean, s.ppl_diff.unc);
  o += "\n====== KL divergence statistics ======\n";
  o += fmt("Mean    KLD: %10.6lf ± %10.6lf\n", s.kld.mean, s.kld.unc);
  const auto& kv = s.kld_sorted;
  o += fmt("Maximum KLD: %10.6f\n", kv.empty() ? 0.0 : kv.back());
  for (const auto& [pct, f] : kKldPercentiles) {
    if (std::string(pct) == "10.0") o += fmt("Median  KLD: %10.6f\n", median(kv));
    o += label(pct, "KLD") + fmt("%10.6f\n", percentile(kv, f));
  }
  o += fmt("Minimum KLD: %10.6f\n", kv.empty() ? 0.0 : kv.front());
  o += "\n====== Token probability statistics ======\n";
  o += fmt("Mean    Δp: %6.3lf ± %5.3lf %%\n", 100.0 * s.p_diff.mean, 100.0 * s.p_diff.unc);
  const auto& pv = s.p_diff_sorted;
  o += fmt("Maximum Δp: %6.3lf%%\n", 100.0 * (pv.empty() ? 0.0 : pv.back()));
  for (const auto& [pct, f] : kPDiffPercentiles) {
    if (std::string(pct) == "25.0") o += fmt("Median  Δp: %6.3lf%%\n", 100.0 * median(pv));
    o += label(pct, "Δp") + fmt("%6.3lf%%\n", 100.0 * percentile(pv, f));
  }
  o += fmt("Minimum Δp: %6.3lf%%\n", 100.0 * (pv.empty() ? 0.0 : pv.front()));
  o += fmt("RMS Δp    : %6.3lf ± %5.3lf %%\n", 100.0 * s.rms_p_diff.mean, 100.0 * s.rms_p_diff.unc);
  o += fmt("Same top p: %6.3lf ± %5.3lf %%\n", 100.0 * s.same_top.mean, 100.0 * s.same_top.unc);
  o += "\n====== KL divergence by context position ======\n";
  o += "positions              n     Mean KLD ±        unc   Same top p     RMS Δp\n";
  for (const PositionBucket& b : res.buckets) {
    const Running r = running(b.sums);
    o += fmt("%6d-%-8d %8zu  %10.6lf ± %10.6lf  %8.3lf %%  %7.3lf %%\n", b.from, b.to - 1, b.sums.count, r.kld.mean, r.kld.unc,
             100.0 * r.same_top.mean, 100.0 * r.rms_p_diff.mean);
  }
  return o;
}

json report_json(const KldResult& res, const json& context) {
  const Summary& s = res.summary;
  json kp = json::object(), pp = json::object();
  for (const auto& [pct, f] : kKldPercentiles) kp[pct] = percentile(s.kld_sorted, f);
  for (const auto& [pct, f] : kPDiffPercentiles) pp[pct] = percentile(s.p_diff_sorted, f);
  json buckets = json::array();
  for (const PositionBucket& b : res.buckets) {
    const Running r = running(b.sums);
    buckets.push_back({{"from", b.from},
                       {"to", b.to},
                       {"positions", b.sums.count},
                       {"kld_mean", r.kld.mean},
                       {"kld_uncertainty", r.kld.unc},
                       {"same_top_p", r.same_top.mean},
                       {"same_top_p_uncertainty", r.same_top.unc},
                       {"rms_delta_p", r.rms_p_diff.mean}});
  }
  json j = context;
  j["kld_mean"] = s.kld.mean;
  j["kld_uncertainty"] = s.kld.unc;
  j["kld_max"] = s.kld_sorted.empty() ? 0.0 : s.kld_sorted.back();
  j["kld_median"] = median(s.kld_sorted);
  j["kld_min"] = s.kld_sorted.empty() ? 0.0 : s.kld_sorted.front();
  j["kld_percentiles"] = kp;
  j["same_top_p"] = s.same_top.mean;
  j["same_top_p_uncertainty"] = s.same_top.unc;
  j["delta_p"] = {{"mean", s.p_diff.mean},
                  {"uncertainty", s.p_diff.unc},
                  {"max", s.p_diff_sorted.empty() ? 0.0 : s.p_diff_sorted.back()},
                  {"median", median(s.p_diff_sorted)},
                  {"min", s.p_diff_sorted.empty() ? 0.0 : s.p_diff_sorted.front()},
                  {"percentiles", pp}};
  j["rms_delta_p"] = s.rms_p_diff.mean;
  j["rms_delta_p_uncertainty"] = s.rms_p_diff.unc;
  j["perplexity"] = {{"ppl_q", s.ppl_q.mean},
                     {"ppl_q_uncertainty", s.ppl_q.unc},
                     {"ppl_base", s.ppl_base.mean},
                     {"ppl_base_uncertainty", s.ppl_base.unc},
                     {"ln_ppl_correlation", s.ln_ppl_correlation},
                     {"ln_ppl_ratio", s.ln_ratio.mean},
                     {"ln_ppl_ratio_uncertainty", s.ln_ratio.unc},
                     {"ppl_ratio", s.ppl_ratio.mean},
                     {"ppl_ratio_uncertainty", s.ppl_ratio.unc},
                     {"ppl_diff", s.ppl_diff.mean},
                     {"ppl_diff_uncertainty", s.ppl_diff.unc}};
  j["by_position"] = buckets;
  j["positions_scored"] = s.sums.count;
  j["chunks"] = res.chunks;
  j["ctx"] = res.ctx;
  return j;
}

}  // namespace kvgate::kld
