#include "harness/compare/task_stats.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <span>

#include "harness/core/error.h"
#include "harness/stats/auc.h"
#include "harness/stats/bootstrap.h"
#include "harness/stats/clustered_variance.h"
#include "harness/stats/fieller.h"
#include "harness/stats/log_ratio_wald.h"
#include "harness/stats/multiplicity.h"
#include "harness/stats/normal.h"
#include "harness/stats/paired_difference.h"
#include "harness/stats/proportion_ci.h"
#include "harness/stats/stratified_score.h"
#include "harness/stats/tang.h"
#include "harness/stats/variance_floor.h"

namespace kvgate::compare {

namespace {

using stats::PairedCounts;
using stats::RatioMoments;

// Scores and clusters of a run of trials (one bucket, or the whole task), with the covariance of
// the two means: xx = Var(candidate mean), yy = Var(reference mean), xy = their covariance;
// units: the per-unit (cluster) sums Fieller's variance floor needs.
struct Sample {
  std::vector<double> cand, ref;
  std::vector<std::uint32_t> cluster;
  std::size_t clusters = 0;
  stats::MeanCovariance cov;
  double mean_c = 0.0, mean_r = 0.0;
  stats::UnitSums units;
};

Sample make_sample(std::span<const TrialPair> trials, std::size_t task_clusters, std::vector<std::uint32_t>& remap) {
  Sample s;
  s.cand.reserve(trials.size());
  s.ref.reserve(trials.size());
  s.cluster.reserve(trials.size());
  remap.assign(task_clusters, std::numeric_limits<std::uint32_t>::max());
  for (const TrialPair& tp : trials) {
    std::uint32_t& c = remap[tp.cluster];
    if (c == std::numeric_limits<std::uint32_t>::max()) c = static_cast<std::uint32_t>(s.clusters++);
    s.cand.push_back(tp.candidate_score);
    s.ref.push_back(tp.reference_score);
    s.cluster.push_back(c);
  }
  s.cov = stats::clustered_mean_covariance(s.cand, s.ref, s.cluster, s.clusters, /*cr1=*/true);
  s.mean_c = stats::mean(s.cand);
  s.mean_r = stats::mean(s.ref);
  s.units = stats::unit_sums(s.cand, s.ref, s.cluster, s.clusters);
  return s;
}

RatioMoments moments(const Sample& s) { return {s.mean_c, s.mean_r, s.cov.xx, s.cov.yy, s.cov.xy}; }

struct ResultCounts {
  std::size_t ref_passes = 0, cand_passes = 0, results = 0;
  Flips flips;
};

// The 2x2 table of the trials' (0/1) scores: what Tang and Newcombe see. Flips use `passed`; for
// binary tasks score == passed by convention, but the gated metric is the score.
PairedCounts score_table(std::span<const TrialPair> trials) {
  PairedCounts c;
  for (const TrialPair& tp : trials) {
    const bool a = tp.reference_score >= 0.5, b = tp.candidate_score >= 0.5;
    (a ? (b ? c.n11 : c.n_b) : (b ? c.n_c : c.n00)) += 1;
  }
  return c;
}

bool passed_used(const ResultRecord& r) { return !r.error && r.passed; }

ResultCounts count_results(std::span<const TrialPair> trials, const TaskComparison& t, const TaskContext& ctx,
                           std::vector<FlipRef>* lost, std::vector<FlipRef>* gained) {
  ResultCounts rc;
  for (const TrialPair& tp : trials)
    for (std::uint32_t k = tp.first_result; k < tp.first_result + tp.results; ++k) {
      const ResultPair& p = t.result_pairs[k];
      const bool a = passed_used(ctx.reference.record(p.reference_record));
      const bool b = passed_used(ctx.candidate.record(p.candidate_record));
      ++rc.results;
      rc.ref_passes += a;
      rc.cand_passes += b;
      if (a && b) ++rc.flips.both_pass;
      else if (!a && !b) ++rc.flips.both_fail;
      else if (a) {
        ++rc.flips.lost;
        if (lost) lost->push_back({tp.id, p.repeat, tp.bucket, p.reference_record, p.candidate_record});
      } else {
        ++rc.flips.gained;
        if (gained) gained->push_back({tp.id, p.repeat, tp.bucket, p.reference_record, p.candidate_record});
      }
    }
  rc.flips.mcnemar = stats::mcnemar(static_cast<std::int64_t>(rc.flips.lost), static_cast<std::int64_t>(rc.flips.gained));
  return rc;
}

SideStats side(std::size_t passes, std::size_t results, double mean, double var, double alpha) {
  SideStats s;
  s.results = results;
  s.passes = passes;
  s.score_mean = mean;
  s.score_se = std::sqrt(std::max(0.0, var));
  s.pass_rate = static_cast<double>(passes) / static_cast<double>(results);
  const auto k = static_cast<std::int64_t>(passes), n = static_cast<std::int64_t>(results);
  s.wilson = stats::wilson(k, n, alpha);
  s.clopper_pearson = stats::clopper_pearson(k, n, alpha);
  return s;
}

std::optional<double> finite(double v) { return std::isfinite(v) ? std::optional<double>(v) : std::nullopt; }

RatioBound tang_bound(const PairedCounts& table, const CompareOptions& o) {
  const stats::TangTest r = stats::tang_test(table, o.margin, o.alpha);
  return {.method = "tang", .lcb = r.bounds.lo, .ucb = finite(r.bounds.hi), .z_margin = r.z_margin, .p_value = r.p_value};
}

// Fieller with the hidden-loss variance floor (stats/variance_floor.h): without it, a task where no
// paired trial differs gets the bound [R, R] at any n. "fieller_floor" says the floor decided a bound.
RatioBound fieller_bound(const RatioMoments& m, const stats::UnitSums& units, const CompareOptions& o) {
  const stats::FlooredFiellerTest f = stats::floored_fieller_test(m, units, o.margin, o.alpha);
  const stats::FiellerTest& r = f.test;
  RatioBound b{.method = f.floor_lcb || f.floor_ucb ? "fieller_floor" : "fieller",
               .lcb = r.interval.bounds.lo, .z_margin = r.z_margin, .p_value = r.p_value};
  if (r.interval.bounded) b.ucb = r.interval.bounds.hi;
  VarianceFloor v{.units = f.floor.units, .differing_units = f.floor.differing_units, .loss_bound = f.floor.loss_bound, .observed_lcb = f.observed.interval.bounds.lo,
                  .lowered_lcb = f.floor_lcb, .raised_ucb = f.floor_ucb};
  if (f.observed.interval.bounded) v.observed_ucb = f.observed.interval.bounds.hi;
  b.floor = v;
  return b;
}

// A bucket's units (its clusters: trials, or trials sharing a source) as the score bound takes them.
stats::PairedUnits paired_units(const Sample& s, double weight) {
  stats::PairedUnits u{.weight = weight, .cand = std::vector<double>(s.clusters, 0.0), .ref = std::vector<double>(s.clusters, 0.0),
                       .trials = std::vector<double>(s.clusters, 0.0)};
  for (std::size_t i = 0; i < s.cand.size(); ++i) {
    u.cand[s.cluster[i]] += s.cand[i];
    u.ref[s.cluster[i]] += s.ref[i];
    u.trials[s.cluster[i]] += 1.0;
  }
  return u;
}

// The gate's bound wherever Tang's does not apply (stats/stratified_score.h, docs/gate-bound.md).
RatioBound score_bound(const stats::StratifiedScore& score, const CompareOptions& o) {
  const stats::StratifiedScoreTest r = stats::stratified_score_test(score, o.margin, o.alpha);
  return {.method = "stratified_score", .lcb = r.bounds.lo, .ucb = finite(r.bounds.hi), .z_margin = r.z_margin, .p_value = r.p_value};
}

Difference normal_difference(double estimate, double var, double alpha) {
  const double se = std::sqrt(std::max(0.0, var)), z = stats::z_upper(alpha / 2);
  return {.method = "normal", .estimate = estimate, .se = se, .interval = {estimate - z * se, estimate + z * se}};
}

Difference newcombe_difference(const PairedCounts& table, double var, double alpha) {
  const stats::Interval i = stats::newcombe_interval(table, stats::z_upper(alpha / 2));
  return {.method = "newcombe", .estimate = stats::paired_difference(table), .se = std::sqrt(std::max(0.0, var)), .interval = i};
}

}  // namespace

void compute_task_statistics(TaskComparison& t, const TaskContext& ctx) {
  const CompareOptions o = ctx.options.for_task(t.task);
  t.gated = o.gates(t.task);
  t.margin = o.margin;
  // Tang is exact for the case it was built for: one 0/1 result per trial, independent trials.
  const bool tang_ok = t.binary && t.max_repeats == 1 && !t.cluster_field;
  std::vector<std::uint32_t> remap;

  // Buckets: trial_pairs are ordered by bucket.
  struct BucketSpan {
    std::size_t begin, end;
    Sample sample;
  };
  std::vector<BucketSpan> spans;
  for (std::size_t i = 0; i < t.trial_pairs.size();) {
    std::size_t j = i;
    while (j < t.trial_pairs.size() && t.trial_pairs[j].bucket == t.trial_pairs[i].bucket) ++j;
    spans.push_back({i, j, make_sample(std::span(t.trial_pairs).subspan(i, j - i), t.clusters, remap)});
    i = j;
  }
  for (const BucketSpan& bs : spans) {
    const std::span<const TrialPair> trials = std::span(t.trial_pairs).subspan(bs.begin, bs.end - bs.begin);
    const Sample& s = bs.sample;
    const ResultCounts rc = count_results(trials, t, ctx, nullptr, nullptr);
    BucketComparison b;
    b.bucket = trials.front().bucket;
    b.trials = trials.size();
    b.results = rc.results;
    b.clusters = s.clusters;
    b.reference = side(rc.ref_passes, rc.results, s.mean_r, s.cov.yy, o.alpha);
    b.candidate = side(rc.cand_passes, rc.results, s.mean_c, s.cov.xx, o.alpha);
    b.flips = rc.flips;
    const double var_d = s.cov.xx + s.cov.yy - 2 * s.cov.xy;
    if (s.mean_r > 0) {
      b.ratio = s.mean_c / s.mean_r;
      b.ratio_bound = tang_ok ? tang_bound(score_table(trials), o) : score_bound(stats::StratifiedScore({paired_units(s, 1.0)}), o);
    }
    b.difference = tang_ok ? newcombe_difference(score_table(trials), var_d, o.alpha)
                           : normal_difference(s.mean_c - s.mean_r, var_d, o.alpha);
    if (tang_ok) {
      b.regression_test = "mcnemar_exact_one_sided";
      b.regression_p = rc.flips.mcnemar.one_sided_exact;
    } else {
      b.regression_test = "paired_z_one_sided";
      const double d = s.mean_c - s.mean_r, se = std::sqrt(std::max(0.0, var_d));
      b.regression_p = se > 0 ? stats::normal_cdf(d / se) : (d < 0 ? 0.0 : 1.0);
    }
    t.buckets.push_back(std::move(b));
  }

  // The task as a whole.
  const Sample all = make_sample(t.trial_pairs, t.clusters, remap);
  const ResultCounts rc = count_results(t.trial_pairs, t, ctx, &t.lost, &t.gained);
  t.reference = side(rc.ref_passes, rc.results, all.mean_r, all.cov.yy, o.alpha);
  t.candidate = side(rc.cand_passes, rc.results, all.mean_c, all.cov.xx, o.alpha);
  t.flips = rc.flips;

  // The gated metric: the mean score of the single bucket, or the AUC across length buckets.
  RatioMoments m;
  stats::UnitSums unit_sums;  // of the gated metric: the buckets' with the AUC weights
  double var_diff = 0.0;
  std::vector<double> weights(spans.size(), 1.0);
  if (spans.size() >= 2) {
    t.metric = "auc";
    AucSummary a;
    a.axis = stats::to_string(o.auc_axis);
    for (const BucketComparison& b : t.buckets) a.x.push_back(static_cast<double>(b.bucket));
    weights = stats::auc_weights(a.x, o.auc_axis);
    a.weights = weights;
    for (std::size_t k = 0; k < spans.size(); ++k) {
      const double w = weights[k], w2 = w * w;
      const Sample& s = spans[k].sample;
      m.mean_c += w * s.mean_c;
      m.mean_b += w * s.mean_r;
      m.var_c += w2 * s.cov.xx;
      m.var_b += w2 * s.cov.yy;
      m.cov += w2 * s.cov.xy;
      unit_sums.add(s.units, w);
    }
    a.reference = m.mean_b;
    a.candidate = m.mean_c;
    a.reference_se = std::sqrt(m.var_b);
    a.candidate_se = std::sqrt(m.var_c);
    t.auc = std::move(a);
  } else {
    t.metric = "mean_score";
    m = moments(spans.front().sample);
    unit_sums = spans.front().sample.units;
  }
  var_diff = m.var_c + m.var_b - 2 * m.cov;
  t.reference_metric = m.mean_b;
  t.candidate_metric = m.mean_c;
  const bool tang_gate = tang_ok && spans.size() == 1;
  t.difference = tang_gate ? newcombe_difference(score_table(t.trial_pairs), var_diff, o.alpha)
                           : normal_difference(m.mean_c - m.mean_b, var_diff, o.alpha);
  if (!(m.mean_b > 0.0)) {
    if (ctx.gating && t.gated)
      throw Error("task " + t.task + ": the baseline " + ctx.reference.run->path + " never scores (" +
                  (t.metric == "auc" ? std::string("AUC") : std::string("mean score")) +
                  " 0 over " + std::to_string(t.trials) +
                  " paired trials), so candidate/baseline is undefined: check the baseline run (endpoint, grader, errors)");
    t.ratio = {.method = tang_gate ? "tang" : "stratified_score"};
    return;  // the verdict says why (decide_task)
  }
  t.ratio_estimate = m.mean_c / m.mean_b;
  t.point_rule = {.ratio = t.ratio_estimate, .passes = t.ratio_estimate >= o.margin};
  // The gate's bound: Tang for one bucket of independent 0/1 pairs, else the stratified score bound
  // over the buckets with the metric's weights. Fieller (with its variance floor) is reported beside
  // it: on few one-sided losses its size is above alpha (docs/gate-bound.md).
  std::vector<stats::PairedUnits> strata;
  for (std::size_t k = 0; k < spans.size(); ++k) strata.push_back(paired_units(spans[k].sample, weights[k]));
  const stats::StratifiedScore score(strata);
  t.ratio = tang_gate ? tang_bound(score_table(t.trial_pairs), o) : score_bound(score, o);
  t.cross_checks.push_back(fieller_bound(m, unit_sums, o));
  if (m.mean_c > 0.0) {
    const stats::LogRatioWald w = stats::log_ratio_wald(m, stats::z_upper(o.alpha));
    t.cross_checks.push_back({.method = "wald_log", .lcb = w.bounds.lo, .ucb = w.bounds.hi});
  }
  if (o.bootstrap_replicates > 0) {
    std::vector<stats::BootstrapStratum> strata(spans.size());
    for (std::size_t k = 0; k < spans.size(); ++k) {
      stats::BootstrapStratum& st = strata[k];
      const Sample& s = spans[k].sample;
      st.weight = weights[k];
      st.sum_ref.assign(s.clusters, 0.0);
      st.sum_cand.assign(s.clusters, 0.0);
      st.count.assign(s.clusters, 0.0);
      for (std::size_t i = 0; i < s.cand.size(); ++i) {
        st.sum_ref[s.cluster[i]] += s.ref[i];
        st.sum_cand[s.cluster[i]] += s.cand[i];
        st.count[s.cluster[i]] += 1.0;
      }
    }
    const stats::BootstrapResult r = stats::paired_bootstrap_ratio(
        strata, {.replicates = o.bootstrap_replicates, .seed = ctx.bootstrap_seed, .alpha = o.alpha});
    t.cross_checks.push_back({.method = "bootstrap", .lcb = r.bounds.lo, .ucb = finite(r.bounds.hi),
                              .replicates = r.replicates, .undefined_replicates = r.undefined});
  }

  // Power at this n: how many trials decide at the observed ratio, what the gate can resolve. The
  // score test rejects when D >= z_a sqrt(V0), D = S(margin) the observed contrast, V0 its variance
  // under H0 (the restricted MLE at the margin; Tang's for one bucket of 0/1 pairs, the same
  // number); D varies with the observed variance V1. Both shrink as 1/n with the same bucket mix,
  // so n' = n ((z_a sqrt(V0) + z_b sqrt(V1)) / D)^2 trials decide with the given power.
  const double n = static_cast<double>(t.trials);
  const double contrast = m.mean_c - o.margin * m.mean_b;
  const double v0 = score.null_variance(o.margin), v1 = score.observed_variance(o.margin);
  const double spread = stats::z_upper(o.alpha) * std::sqrt(v0) + stats::z_upper(1 - o.power) * std::sqrt(v1);
  t.power.power = o.power;
  if (contrast != 0.0) {
    const double needed = std::max(1.0, std::ceil(n * (spread / contrast) * (spread / contrast)));
    if (std::isfinite(needed) && needed <= 1e12) {
      t.power.trials_needed = needed;
      t.power.additional_trials = std::max(0.0, needed - n);
    }
  }
  t.power.mde_ratio = spread / m.mean_b;
  t.power.mde_difference = (stats::z_upper(o.alpha / 2) + stats::z_upper(1 - o.power)) * t.difference.se;
}

void adjust_regressions(std::vector<TaskComparison>& tasks, double alpha) {
  std::vector<double> p;
  for (const TaskComparison& t : tasks)
    for (const BucketComparison& b : t.buckets) p.push_back(b.regression_p);
  const std::vector<double> holm = stats::holm(p), bh = stats::benjamini_hochberg(p);
  std::size_t i = 0;
  for (TaskComparison& t : tasks)
    for (BucketComparison& b : t.buckets) {
      b.holm_p = holm[i];
      b.bh_p = bh[i];
      b.regression = holm[i] <= alpha;
      ++i;
    }
}

}  // namespace kvgate::compare
