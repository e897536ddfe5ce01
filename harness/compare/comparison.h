// The decision of `kvgate compare`: ONE structure that holds every number, shared by the text table,
// the JSON file (docs/compare-json.md) and the report writers (Markdown, HTML, JUnit; pinning and
// latency). Built by compare_runs (compare.h).
//
// Vocabulary: a *run* is a run directory; a *pair* compares a candidate run with a reference run
// (the baseline, or another candidate); a *trial* is one task instance (`id`), a *result* one
// (trial, repeat). "reference" is the denominator of the ratio, "candidate" the numerator.
#pragma once
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "harness/compare/gains.h"
#include "harness/compare/options.h"
#include "harness/compare/pinning.h"
#include "harness/core/run_dir.h"
#include "harness/stats/interval.h"
#include "harness/stats/mcnemar.h"

namespace kvgate::compare {

enum class Verdict { pass, fail, inconclusive };
const char* to_string(Verdict v);  // "PASS", "FAIL", "INCONCLUSIVE"
int exit_code(Verdict v);          // 0, 1, 3

struct RunInfo {
  std::string label{};  // run.json "label" (the directory name when empty)
  std::string path{};
  std::size_t results = 0;          // lines read
  std::size_t torn_tail_bytes = 0;  // a cut-short last line that was skipped
  std::shared_ptr<const RunDir> run{};  // every record (response, grade details, extra fields) for drill-down
  RunPerformance performance{};         // latency percentiles and KV capacity
};

// One (trial, repeat) named in a list (missing, duplicated, flipped). `record` indexes
// RunDir::results.records of the run it comes from (for flips: the reference run; see FlipRef).
struct ResultRef {
  std::string id{};
  int repeat = 0;
  std::int64_t bucket = 0;
  std::uint32_t record = 0;
};

// A flipped result: both records, so reports can show the two responses side by side.
struct FlipRef {
  std::string id{};
  int repeat = 0;
  std::int64_t bucket = 0;
  std::uint32_t reference_record = 0;
  std::uint32_t candidate_record = 0;
};

// The paired results of one trial, repeats averaged (errors count as failures unless excluded).
struct TrialPair {
  std::string id{};
  std::int64_t bucket = 0;
  std::uint32_t cluster = 0;  // dense index within the task (one per trial unless results carry `cluster`)
  std::uint32_t first_result = 0, results = 0;  // the range in TaskComparison::result_pairs
  double reference_score = 0.0, candidate_score = 0.0;    // mean score over the paired repeats
  double reference_passed = 0.0, candidate_passed = 0.0;  // pass rate over the paired repeats
};

struct ResultPair {
  std::uint32_t reference_record = 0, candidate_record = 0;
  int repeat = 0;
};

// Counts that never drop anything silently.
struct Accounting {
  std::size_t reference_results = 0, candidate_results = 0;  // unique (id, repeat) in each run
  std::size_t reference_errors = 0, candidate_errors = 0;    // of those, results with `error` set
  double reference_error_rate = 0.0, candidate_error_rate = 0.0;
  std::size_t paired_results = 0;  // (id, repeat) in both runs, used in the statistics
  std::size_t paired_trials = 0;
  std::size_t excluded_results = 0;  // pairs left out because a side errored (--errors exclude)
  std::vector<ResultRef> missing_in_candidate{};  // in the reference run only
  std::vector<ResultRef> missing_in_reference{};  // in the candidate run only
  std::vector<ResultRef> duplicates_reference{};  // repeated (id, repeat) lines; the first one is used
  std::vector<ResultRef> duplicates_candidate{};
};

// One side (reference or candidate) of a bucket or a task.
struct SideStats {
  std::size_t results = 0, passes = 0;
  double score_mean = 0.0;  // mean over trials of the per-trial mean score
  double score_se = 0.0;    // clustered (CR1) standard error of score_mean
  double pass_rate = 0.0;   // passes / results
  stats::Interval wilson{};           // of pass_rate over results, two-sided 1 - alpha
  stats::Interval clopper_pearson{};  // idem, exact
};

struct Flips {
  std::size_t lost = 0;       // reference pass, candidate fail (regressions, "b")
  std::size_t gained = 0;     // reference fail, candidate pass (improvements, "c")
  std::size_t both_pass = 0;
  std::size_t both_fail = 0;
  stats::McNemarResult mcnemar{};  // on (lost, gained), over results
};

// Fieller's variance floor (stats/variance_floor.h): the contrast's variance is never taken below
// that of a hidden loss process that `units` units without an observed loss cannot exclude.
struct VarianceFloor {
  double units = 0.0;       // effective independent units at risk (reference-score weighted)
  double differing_units = 0.0;  // effective units with a paired difference (>= z^2: no floor)
  double loss_bound = 0.0;  // q = z^2 / (units + z^2): the hidden loss fraction the floor assumes
  double observed_lcb = 0.0;             // Fieller's bounds on the observed variances alone
  std::optional<double> observed_ucb{};  // empty = unbounded
  bool lowered_lcb = false;  // the floor decided lcb (then method is "fieller_floor")
  bool raised_ucb = false;   // the floor decided ucb (idem)
};

// A bound on the ratio candidate/reference by one method.
struct RatioBound {
  std::string method{};       // "tang", "stratified_score", "fieller", "fieller_floor", "wald_log", "bootstrap"
  double lcb = 0.0;         // one-sided (1 - alpha) lower bound
  std::optional<double> ucb{};  // one-sided (1 - alpha) upper bound; empty = unbounded
  std::optional<double> z_margin{};  // test statistic at the margin (tang, stratified_score, fieller)
  std::optional<double> p_value{};   // one-sided non-inferiority p (tang, stratified_score, fieller)
  int replicates = 0, undefined_replicates = 0;  // bootstrap only
  std::optional<VarianceFloor> floor{};          // fieller and fieller_floor only
};

// Where the gate's bound puts a task against its margin: the typed reason of the verdict that
// decide_task (verdict.h) records and every writer renders from (verdict.h's bound_reason for the
// text table, JSON, Markdown and JUnit; the HTML banner its own sentence). Set whenever the ratio is defined.
struct GateBound {
  enum class Side {
    above,      // lcb > margin: the bound passes the task
    below,      // ucb < margin: the bound fails it
    straddles,  // lcb <= margin <= ucb: undecided at this n
  };
  Side side = Side::straddles;
  std::string method{};    // "tang" or "stratified_score" (TaskComparison::ratio.method)
  std::string quantity{};  // what is bounded: "AUC ratio" (length buckets) or "ratio" (mean score)
  double estimate = 0.0;   // candidate_metric / reference_metric
  double lcb = 0.0;
  std::optional<double> ucb{};  // empty = unbounded
  double margin = 0.95;
  double confidence = 0.95;  // one-sided level of both bounds, 1 - alpha
  // When it straddles: paired trials (same bucket mix) that decide at the observed ratio with
  // `power`, in all and beyond those run; empty when the estimate sits on the margin.
  std::optional<double> trials_needed{}, additional_trials{};
  double power = 0.8;
};
const char* to_string(GateBound::Side s);  // "above", "below", "straddles"

struct Difference {
  std::string method{};  // "newcombe" (binary, single sample) or "normal" (clustered SE)
  double estimate = 0.0;  // candidate - reference, in score units
  double se = 0.0;
  stats::Interval interval{};  // two-sided 1 - alpha
};

struct BucketComparison {
  std::int64_t bucket = 0;  // upper edge in tokens; 0 = no length
  std::size_t trials = 0, results = 0, clusters = 0;
  SideStats reference{}, candidate{};
  std::optional<double> ratio{};  // score_mean ratio; empty when the reference mean is 0
  std::optional<RatioBound> ratio_bound{};  // same method choice as the task; not gated
  Difference difference{};
  Flips flips{};
  std::string regression_test{};  // "mcnemar_exact_one_sided" or "paired_z_one_sided"
  double regression_p = 1.0;    // H1: the candidate is worse in this bucket
  double holm_p = 1.0;          // Holm over every bucket of every task of this pair
  double bh_p = 1.0;            // Benjamini-Hochberg, same family (exploratory)
  bool regression = false;      // holm_p <= alpha
};

struct AucSummary {
  std::string axis{};  // "linear" or "log2"
  std::vector<double> x{}, weights{};  // bucket upper edges and their weights (sum 1)
  double reference = 0.0, candidate = 0.0;        // on the score scale (x100 for Context Arena's percent)
  double reference_se = 0.0, candidate_se = 0.0;
};

struct PowerSummary {
  double power = 0.8;
  std::optional<double> trials_needed{};      // paired trials (same bucket mix) to decide at the observed ratio
  std::optional<double> additional_trials{};  // trials_needed - trials, at least 0
  double mde_ratio = 0.0;       // the gate decides a true ratio at margin +- this with the given power
  double mde_difference = 0.0;  // Miller Eq.10: detectable paired difference (two-sided alpha)
};

// The seed articles' rule, reported as such: a point estimate, not a test.
struct PointRule {
  double ratio = 0.0;
  bool passes = false;  // ratio >= margin
};

// A task-specific finding (golden structural breaks). "fail" findings fail the task.
struct Finding {
  std::string check{};     // e.g. "golden.invalid_json"
  std::string severity{};  // "fail", "warn", "info"
  std::string message{};
  std::vector<FlipRef> trials{};
};

struct TaskComparison {
  std::string task{};
  Verdict verdict = Verdict::inconclusive;
  bool gated = true;     // false: informative (a suite's `gate: false`): its verdict never decides the pair's
  double margin = 0.95;  // the margin this task was decided at (its own, or the comparison's)
  // What decided besides the bound, in order: the informative note, error rates above
  // --max-error-rate, failed checks, a reference that never scores. reasons(t) (verdict.h) adds the
  // bound's sentence: that is the list every writer prints.
  std::vector<std::string> other_reasons{};
  std::optional<GateBound> bound{};  // empty when the reference never scores (no ratio to bound)
  std::string metric{};  // "mean_score" (one bucket) or "auc" (two or more length buckets)
  bool binary = false; // every paired score is 0 or 1
  int max_repeats = 1;
  bool cluster_field = false;  // clusters came from a `cluster` field of the results
  std::size_t trials = 0, results = 0, clusters = 0;
  SideStats reference{}, candidate{};  // pooled over buckets
  double reference_metric = 0.0, candidate_metric = 0.0;  // the gated metric (mean score or AUC)
  RatioBound ratio{};                 // the gate's method: "tang" or "stratified_score"
  double ratio_estimate = 0.0;      // candidate_metric / reference_metric
  std::vector<RatioBound> cross_checks{};  // "fieller"/"fieller_floor", "wald_log", "bootstrap"
  Difference difference{};
  PointRule point_rule{};
  PowerSummary power{};
  Flips flips{};
  std::vector<FlipRef> lost{}, gained{};
  std::optional<AucSummary> auc{};
  std::vector<BucketComparison> buckets{};  // ascending bucket
  Accounting accounting{};
  std::vector<Finding> findings{};
  std::vector<TrialPair> trial_pairs{};    // ordered by (bucket, id)
  std::vector<ResultPair> result_pairs{};
};

struct PairComparison {
  std::size_t reference = 0, candidate = 0;  // indices into Comparison::runs
  bool gating = true;  // candidate vs baseline; candidate vs candidate pairs inform only
  Verdict verdict = Verdict::inconclusive;
  std::vector<std::string> reasons{};
  std::vector<TaskComparison> tasks{};  // by task name
  Pinning pinning{};  // every difference but the KV settings
  Gains gains{};      // what the candidate gains: latency ratios, KV capacity
};

struct Comparison {
  CompareOptions options{};
  std::vector<RunInfo> runs{};           // runs[0] is the baseline
  std::vector<PairComparison> pairs{};   // each candidate vs the baseline, then candidates pairwise
  Verdict verdict = Verdict::inconclusive;  // over the gating pairs
  std::vector<std::string> reasons{};
  std::vector<std::string> warnings{};   // missing, duplicated, torn lines: counted, never dropped silently
};

}  // namespace kvgate::compare
