#include "harness/compare/comparison_json.h"

#include <cmath>

#include "harness/compare/verdict.h"
#include "harness/core/version.h"

namespace kvgate::compare {

using nlohmann::json;

namespace {

json num(double v) { return std::isfinite(v) ? json(v) : json(nullptr); }
json num(const std::optional<double>& v) { return v ? num(*v) : json(nullptr); }
json interval(const stats::Interval& i) { return {{"lo", num(i.lo)}, {"hi", num(i.hi)}}; }

json side(const SideStats& s) {
  return {{"results", s.results},       {"passes", s.passes},         {"pass_rate", num(s.pass_rate)},
          {"score_mean", num(s.score_mean)}, {"score_se", num(s.score_se)}, {"wilson", interval(s.wilson)},
          {"clopper_pearson", interval(s.clopper_pearson)}};
}

json ratio_bound(const RatioBound& r) {
  json j = {{"method", r.method}, {"lcb", num(r.lcb)}, {"ucb", num(r.ucb)}};
  if (r.z_margin) j["z_margin"] = num(r.z_margin);
  if (r.p_value) j["p_value"] = num(r.p_value);
  if (r.floor)
    j["floor"] = {{"units", num(r.floor->units)},           {"differing_units", num(r.floor->differing_units)},
                  {"loss_bound", num(r.floor->loss_bound)},
                  {"observed_lcb", num(r.floor->observed_lcb)}, {"observed_ucb", num(r.floor->observed_ucb)},
                  {"lowered_lcb", r.floor->lowered_lcb},     {"raised_ucb", r.floor->raised_ucb}};
  if (r.method == "bootstrap") {
    j["replicates"] = r.replicates;
    j["undefined_replicates"] = r.undefined_replicates;
  }
  return j;
}

json difference(const Difference& d) {
  return {{"method", d.method}, {"estimate", num(d.estimate)}, {"se", num(d.se)}, {"lo", num(d.interval.lo)}, {"hi", num(d.interval.hi)}};
}

json result_ref(const ResultRef& r) { return {{"id", r.id}, {"repeat", r.repeat}, {"bucket", r.bucket}}; }
json flip_ref(const FlipRef& r) { return {{"id", r.id}, {"repeat", r.repeat}, {"bucket", r.bucket}}; }
template <class T, class F>
json list(const std::vector<T>& v, F f) {
  json a = json::array();
  for (const T& x : v) a.push_back(f(x));
  return a;
}

json flips(const Flips& f) {
  return {{"lost", f.lost}, {"gained", f.gained}, {"both_pass", f.both_pass}, {"both_fail", f.both_fail}, {"mcnemar", to_json(f.mcnemar)}};
}

json accounting(const Accounting& a) {
  return {{"reference_results", a.reference_results},
          {"candidate_results", a.candidate_results},
          {"reference_errors", a.reference_errors},
          {"candidate_errors", a.candidate_errors},
          {"reference_error_rate", num(a.reference_error_rate)},
          {"candidate_error_rate", num(a.candidate_error_rate)},
          {"paired_results", a.paired_results},
          {"paired_trials", a.paired_trials},
          {"excluded_results", a.excluded_results},
          {"missing_in_candidate", list(a.missing_in_candidate, result_ref)},
          {"missing_in_reference", list(a.missing_in_reference, result_ref)},
          {"duplicates_reference", list(a.duplicates_reference, result_ref)},
          {"duplicates_candidate", list(a.duplicates_candidate, result_ref)}};
}

json bucket(const BucketComparison& b) {
  return {{"bucket", b.bucket},
          {"trials", b.trials},
          {"results", b.results},
          {"clusters", b.clusters},
          {"reference", side(b.reference)},
          {"candidate", side(b.candidate)},
          {"ratio", num(b.ratio)},
          {"ratio_bound", b.ratio_bound ? ratio_bound(*b.ratio_bound) : json(nullptr)},
          {"difference", difference(b.difference)},
          {"flips", flips(b.flips)},
          {"regression_test", b.regression_test},
          {"regression_p", num(b.regression_p)},
          {"holm_p", num(b.holm_p)},
          {"bh_p", num(b.bh_p)},
          {"regression", b.regression}};
}

json percentiles(const std::optional<stats::Percentiles>& p) {
  if (!p) return nullptr;
  return {{"n", p->n}, {"mean", num(p->mean)}, {"p50", num(p->p50)}, {"p90", num(p->p90)}, {"p99", num(p->p99)}, {"max", num(p->max)}};
}

json performance(const RunPerformance& p) {
  json itl = percentiles(p.itl_ms);
  if (!itl.is_null()) itl["basis"] = p.itl_basis;
  json j = {{"timed_results", p.timed_results},
            {"ttft_ms", percentiles(p.ttft_ms)},
            {"itl_ms", itl},
            {"e2e_ms", percentiles(p.e2e_ms)},
            {"output_tokens_per_s", percentiles(p.output_tokens_per_s)},
            {"max_concurrency", num(p.max_concurrency)}};
  j["kv_capacity"] = p.kv_capacity ? json{{"tokens", p.kv_capacity->tokens}, {"source", p.kv_capacity->source}, {"detail", p.kv_capacity->detail}}
                                   : json(nullptr);
  return j;
}

json pinned_fact(const PinnedFact& f) {
  json j = {{"field", f.field}, {"label", f.label}};
  if (f.reference) j["reference"] = *f.reference;
  if (f.candidate) j["candidate"] = *f.candidate;
  return j;
}

json pinning(const Pinning& p) {
  return {{"pinned", p.pinned()},
          {"differences", list(p.differences, pinned_fact)},
          {"one_sided", list(p.one_sided, pinned_fact)},
          {"unrecorded", p.unrecorded},
          {"warnings", p.warnings},
          {"kv_settings", list(p.kv_settings, pinned_fact)}};
}

json gains(const Gains& g, const CompareOptions& o) {
  json metrics = json::array();
  for (const PairedRatio& r : g.ratios)
    metrics.push_back({{"metric", r.metric},
                       {"lower_is_better", r.lower_is_better},
                       {"trials", r.trials},
                       {"results", r.results},
                       {"ratio", num(r.ratio)},
                       {"lo", num(r.interval.lo)},
                       {"hi", num(r.interval.hi)},
                       {"p50_ratio", num(r.p50_ratio)},
                       {"p90_ratio", num(r.p90_ratio)},
                       {"p99_ratio", num(r.p99_ratio)}});
  json j = {{"method", "geometric_mean_t"},
            {"method_text", "geometric mean of per-trial candidate/reference ratios (repeats averaged on the log scale), "
                            "two-sided Student-t interval on the mean log ratio, exponentiated"},
            {"confidence", 1.0 - o.alpha},
            {"metrics", metrics},
            {"notes", g.notes}};
  j["kv_capacity"] = g.capacity ? json{{"reference_tokens", g.capacity->reference_tokens},
                                       {"candidate_tokens", g.capacity->candidate_tokens},
                                       {"ratio", num(g.capacity->ratio)},
                                       {"source", g.capacity->source},
                                       {"estimate", g.capacity->estimate}}
                                : json(nullptr);
  return j;
}

json task(const TaskComparison& t, const CompareOptions& o, const JsonOptions& jo) {
  json j = {{"task", t.task},
            {"verdict", to_string(t.verdict)},
            {"gated", t.gated},
            {"margin", t.margin},
            {"reasons", reasons(t)},
            {"metric", t.metric},
            {"binary", t.binary},
            {"max_repeats", t.max_repeats},
            {"cluster_field", t.cluster_field},
            {"trials", t.trials},
            {"results", t.results},
            {"clusters", t.clusters},
            {"reference", side(t.reference)},
            {"candidate", side(t.candidate)},
            {"reference_metric", num(t.reference_metric)},
            {"candidate_metric", num(t.candidate_metric)}};
  json ratio = ratio_bound(t.ratio);
  ratio["estimate"] = t.reference_metric > 0 ? num(t.ratio_estimate) : json(nullptr);
  ratio["side"] = t.bound ? json(to_string(t.bound->side)) : json(nullptr);
  j["ratio"] = ratio;
  j["cross_checks"] = list(t.cross_checks, ratio_bound);
  j["difference"] = difference(t.difference);
  j["point_rule"] = {{"label", "point estimate >= margin: the seed articles' rule, not a statistical test"},
                     {"ratio", t.reference_metric > 0 ? num(t.point_rule.ratio) : json(nullptr)},
                     {"margin", o.margin},
                     {"passes", t.point_rule.passes}};
  j["power"] = {{"power", t.power.power},
                {"trials_needed", num(t.power.trials_needed)},
                {"additional_trials", num(t.power.additional_trials)},
                {"mde_ratio", num(t.power.mde_ratio)},
                {"mde_difference", num(t.power.mde_difference)}};
  json f = flips(t.flips);
  f["lost_results"] = list(t.lost, flip_ref);
  f["gained_results"] = list(t.gained, flip_ref);
  j["flips"] = f;
  if (t.auc)
    j["auc"] = {{"axis", t.auc->axis},           {"x", t.auc->x},
                {"weights", t.auc->weights},     {"reference", num(t.auc->reference)},
                {"candidate", num(t.auc->candidate)}, {"reference_se", num(t.auc->reference_se)},
                {"candidate_se", num(t.auc->candidate_se)}};
  else
    j["auc"] = nullptr;
  j["buckets"] = list(t.buckets, bucket);
  j["accounting"] = accounting(t.accounting);
  j["findings"] = list(t.findings, [](const Finding& fd) {
    return json{{"check", fd.check}, {"severity", fd.severity}, {"message", fd.message}, {"trials", list(fd.trials, flip_ref)}};
  });
  if (jo.trial_pairs)
    j["trial_pairs"] = list(t.trial_pairs, [](const TrialPair& tp) {
      return json{{"id", tp.id},
                  {"bucket", tp.bucket},
                  {"cluster", tp.cluster},
                  {"results", tp.results},
                  {"reference_score", num(tp.reference_score)},
                  {"candidate_score", num(tp.candidate_score)},
                  {"reference_passed", num(tp.reference_passed)},
                  {"candidate_passed", num(tp.candidate_passed)}};
    });
  return j;
}

}  // namespace

json to_json(const stats::McNemarResult& m) {
  return {{"b", m.b},          {"c", m.c},           {"exact", num(m.exact)},     {"midp", num(m.midp)},
          {"chi2", num(m.chi2)}, {"chi2_p", num(m.chi2_p)}, {"chi2_cc", num(m.chi2_cc)}, {"chi2_cc_p", num(m.chi2_cc_p)},
          {"one_sided_exact", num(m.one_sided_exact)}};
}

json to_json(const Comparison& c, const JsonOptions& jo) {
  const CompareOptions& o = c.options;
  json j = {{"schema", kCompareSchema},
            {"kvgate_version", version()},
            {"kvgate_commit", git_commit()},
            {"verdict", to_string(c.verdict)},
            {"exit_code", exit_code(c.verdict)},
            {"reasons", c.reasons},
            {"warnings", c.warnings}};
  j["options"] = {{"margin", o.margin},
                  {"alpha", o.alpha},
                  {"auc_axis", stats::to_string(o.auc_axis)},
                  {"max_error_rate", o.max_error_rate},
                  {"errors", to_string(o.errors)},
                  {"power", o.power},
                  {"bootstrap_replicates", o.bootstrap_replicates},
                  {"seed", o.seed},
                  {"strict_pinning", o.strict_pinning},
                  {"model_config", o.model_config.empty() ? json(nullptr) : json(o.model_config)}};
  if (!o.task_margins.empty()) j["options"]["task_margins"] = o.task_margins;
  if (!o.informative_tasks.empty()) j["options"]["informative_tasks"] = o.informative_tasks;
  json runs = json::array();
  for (std::size_t i = 0; i < c.runs.size(); ++i) {
    const RunInfo& r = c.runs[i];
    runs.push_back({{"index", i},
                    {"role", i == 0 ? "baseline" : "candidate"},
                    {"label", r.label},
                    {"path", r.path},
                    {"results", r.results},
                    {"torn_tail_bytes", r.torn_tail_bytes},
                    {"manifest", r.run ? to_json(r.run->manifest) : json(nullptr)},
                    {"performance", performance(r.performance)}});
  }
  j["runs"] = runs;
  json pairs = json::array();
  for (const PairComparison& p : c.pairs) {
    json tasks = json::array();
    for (const TaskComparison& t : p.tasks) tasks.push_back(task(t, o, jo));
    pairs.push_back({{"reference", p.reference},
                     {"candidate", p.candidate},
                     {"reference_label", c.runs[p.reference].label},
                     {"candidate_label", c.runs[p.candidate].label},
                     {"gating", p.gating},
                     {"verdict", to_string(p.verdict)},
                     {"reasons", p.reasons},
                     {"pinning", pinning(p.pinning)},
                     {"gains", gains(p.gains, o)},
                     {"tasks", tasks}});
  }
  j["pairs"] = pairs;
  return j;
}

}  // namespace kvgate::compare
