// harness/compare as a library: pairing and accounting, repeats, method choice, AUC, the verdicts,
// bad input, the task-check seam, the JSON (no NaN, stable names) and determinism.
#include <cmath>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "tests/catch_compat.hpp"
#include "harness/compare/compare.h"
#include "harness/compare/comparison_json.h"
#include "harness/compare/number_format.h"
#include "harness/compare/text_table.h"
#include "harness/compare/verdict.h"
#include "harness/core/error.h"
#include "harness/stats/normal.h"
#include "tests/test_util.h"

using namespace kvgate;
using namespace kvgate::compare;
using kvtest::Approx;
using kvtest::contains;

namespace {

struct Run {
  std::shared_ptr<RunDir> dir = std::make_shared<RunDir>();
  explicit Run(const std::string& label) {
    dir->path = "mem/" + label;
    dir->manifest.label = label;
  }
  Run& add(const std::string& id, const std::string& task, std::int64_t bucket, double score, int repeat = 0,
           std::optional<std::string> error = std::nullopt) {
    ResultRecord r;
    r.id = id;
    r.task = task;
    r.bucket = bucket;
    r.repeat = repeat;
    r.score = score;
    r.passed = score >= 0.5;
    r.error = std::move(error);
    dir->results.records.push_back(std::move(r));
    return *this;
  }
  // A binary single-bucket task laid out from (n11, n_c, n_b, n00) as reference (this) or candidate.
  static std::pair<Run, Run> table(const std::string& task, std::int64_t n11, std::int64_t nc, std::int64_t nb, std::int64_t n00,
                                   std::int64_t bucket = 0) {
    Run base("base"), cand("cand");
    std::int64_t i = 0;
    const auto put = [&](std::int64_t k, double b, double c) {
      for (std::int64_t j = 0; j < k; ++j, ++i) {
        const std::string id = task + "/" + std::to_string(bucket) + "/" + std::to_string(i);
        base.add(id, task, bucket, b);
        cand.add(id, task, bucket, c);
      }
    };
    put(n11, 1, 1);
    put(nc, 0, 1);
    put(nb, 1, 0);
    put(n00, 0, 0);
    return {base, cand};
  }
};

Comparison run(std::vector<Run> runs, CompareOptions o = {}, const std::vector<TaskCheckEntry>& checks = default_task_checks()) {
  std::vector<std::shared_ptr<const RunDir>> dirs;
  for (auto& r : runs) dirs.push_back(r.dir);
  return compare_loaded(dirs, o, checks);
}

const TaskComparison& only_task(const Comparison& c) {
  REQUIRE(c.pairs.size() >= 1);
  REQUIRE(c.pairs[0].tasks.size() == 1);
  return c.pairs[0].tasks[0];
}

// The Fieller cross-check ("fieller" or "fieller_floor"): reported beside the gate's bound.
const RatioBound& fieller_check(const TaskComparison& t) {
  for (const RatioBound& b : t.cross_checks)
    if (b.method.rfind("fieller", 0) == 0) return b;
  FAIL("no Fieller cross-check");
  throw;
}

// Every number in a JSON tree is finite (NaN and infinities would be written as null).
void check_finite(const nlohmann::json& j, const std::string& path = "") {
  if (j.is_number_float()) {
    INFO(path);
    CHECK(std::isfinite(j.get<double>()));
  } else if (j.is_object()) {
    for (auto it = j.begin(); it != j.end(); ++it) check_finite(it.value(), path + "." + it.key());
  } else if (j.is_array()) {
    for (std::size_t i = 0; i < j.size(); ++i) check_finite(j[i], path + "[" + std::to_string(i) + "]");
  }
}

}  // namespace

TEST_CASE("compare: binary single-sample trials gate with Tang (stats.md LLM example)", "[compare]") {
  auto [base, cand] = Run::table("gsm8k", 760, 20, 40, 180);
  const Comparison c = run({base, cand});
  const TaskComparison& t = only_task(c);
  CHECK(t.metric == "mean_score");
  CHECK(t.binary);
  CHECK(t.ratio.method == "tang");
  CHECK(t.ratio_estimate == Approx(0.975).epsilon(1e-12));
  CHECK(t.ratio.lcb == Approx(0.95859251981726887).epsilon(1e-9));
  CHECK(*t.ratio.z_margin == Approx(2.4336952997629157).epsilon(1e-9));
  CHECK(t.verdict == Verdict::pass);
  CHECK(c.verdict == Verdict::pass);
  CHECK(exit_code(c.verdict) == 0);
  // McNemar says "significantly worse" on the same data: both are reported.
  CHECK(t.flips.lost == 40);
  CHECK(t.flips.gained == 20);
  CHECK(t.flips.mcnemar.exact == Approx(0.01348929373119186).epsilon(1e-9));
  CHECK(t.lost.size() == 40);
  CHECK(t.gained.size() == 20);
  CHECK(t.lost.front().id.rfind("gsm8k/", 0) == 0);
  // Cross-checks: Fieller with population-like variances, log-ratio Wald, bootstrap.
  REQUIRE(t.cross_checks.size() == 3);
  CHECK(t.cross_checks[0].method == "fieller");
  CHECK(t.cross_checks[0].lcb == Approx(0.9593).margin(0.001));
  CHECK(t.cross_checks[1].method == "wald_log");
  CHECK(t.cross_checks[1].lcb == Approx(0.959400).margin(0.0002));
  CHECK(t.cross_checks[2].method == "bootstrap");
  CHECK(t.cross_checks[2].lcb == Approx(0.9586).margin(0.004));
  // Newcombe difference (-0.035481, -0.004703); the point rule labelled as such.
  CHECK(t.difference.method == "newcombe");
  CHECK(t.difference.interval.lo == Approx(-0.035480894341588907).epsilon(1e-9));
  CHECK(t.point_rule.passes);
}

TEST_CASE("compare: the small-n example is INCONCLUSIVE with the trials that would decide it", "[compare]") {
  auto [base, cand] = Run::table("gsm8k", 150, 4, 8, 38);
  const Comparison c = run({base, cand});
  const TaskComparison& t = only_task(c);
  CHECK(t.verdict == Verdict::inconclusive);
  CHECK(t.ratio.lcb == Approx(0.93434726095713177).epsilon(1e-9));
  CHECK(t.point_rule.passes);  // the seeds' rule would have shipped it
  REQUIRE(t.power.trials_needed);
  CHECK(*t.power.trials_needed > 200);
  CHECK(*t.power.additional_trials == *t.power.trials_needed - 200);
  CHECK(t.power.mde_ratio > 0);
  CHECK_THAT(reasons(t).back(), contains("more paired trials"));
  CHECK(exit_code(c.verdict) == 3);
}

TEST_CASE("compare: a clear drop FAILs on the upper bound", "[compare]") {
  auto [base, cand] = Run::table("gsm8k", 250, 5, 60, 85);
  const Comparison c_t = run({base, cand});
  const TaskComparison& t = only_task(c_t);
  CHECK(t.verdict == Verdict::fail);
  REQUIRE(t.ratio.ucb);
  CHECK(*t.ratio.ucb < 0.95);
  CHECK_FALSE(t.point_rule.passes);
}

TEST_CASE("compare: missing, duplicated and errored results are counted, never silently dropped", "[compare]") {
  Run base("base"), cand("cand");
  for (int i = 0; i < 200; ++i) {
    const std::string id = "g/" + std::to_string(i);
    if (i != 7) base.add(id, "gsm8k", 0, 1.0);  // missing in the baseline
    if (i != 3 && i != 4) cand.add(id, "gsm8k", 0, 1.0, 0, i == 9 ? std::optional<std::string>("HTTP 500") : std::nullopt);
  }
  base.add("g/11", "gsm8k", 0, 0.0);  // duplicate: the first line (a pass) is used
  const Comparison c = run({base, cand});
  const TaskComparison& t = only_task(c);
  const Accounting& a = t.accounting;
  CHECK(a.reference_results == 199);
  CHECK(a.candidate_results == 198);
  REQUIRE(a.missing_in_candidate.size() == 2);
  CHECK(a.missing_in_candidate[0].id == "g/3");
  REQUIRE(a.missing_in_reference.size() == 1);
  CHECK(a.missing_in_reference[0].id == "g/7");
  REQUIRE(a.duplicates_reference.size() == 1);
  CHECK(a.duplicates_reference[0].id == "g/11");
  CHECK(a.paired_results == 197);
  CHECK(a.candidate_errors == 1);
  CHECK(a.candidate_error_rate == Approx(1.0 / 198));
  // The error counts as a failure: one lost flip, on g/9.
  CHECK(t.flips.lost == 1);
  REQUIRE(t.lost.size() == 1);
  CHECK(t.lost[0].id == "g/9");
  CHECK(t.reference.passes == 197);  // the duplicate's failing line is not used
  CHECK(c.warnings.size() >= 3);
  CHECK_THAT(format_text(c), contains("no counterpart"));
}

TEST_CASE("compare: an error rate above --max-error-rate FAILs with that reason", "[compare]") {
  Run base("base"), cand("cand");
  for (int i = 0; i < 100; ++i) {
    const std::string id = "g/" + std::to_string(i);
    base.add(id, "gsm8k", 0, 1.0);
    cand.add(id, "gsm8k", 0, 1.0, 0, i < 3 ? std::optional<std::string>("timeout") : std::nullopt);
  }
  CompareOptions o;
  o.errors = ErrorPolicy::exclude;  // even with the errors left out of the statistics
  const Comparison c = run({base, cand}, o);
  const TaskComparison& t = only_task(c);
  CHECK(t.accounting.excluded_results == 3);
  CHECK(t.accounting.paired_results == 97);
  CHECK(t.ratio.lcb > 0.95);  // the ratio alone would pass
  CHECK(t.verdict == Verdict::fail);
  CHECK_THAT(reasons(t).front(), contains("error rate 3.0%"));
  CHECK_THAT(reasons(t).front(), contains("--max-error-rate 2.0%"));
  o.max_error_rate = 0.05;
  CHECK(only_task(run({base, cand}, o)).verdict == Verdict::pass);
}

TEST_CASE("compare: repeats are averaged per trial and gate with the stratified score bound", "[compare]") {
  Run base("base"), cand("cand");
  for (int i = 0; i < 120; ++i)
    for (int k = 0; k < 3; ++k) {
      const std::string id = "m/" + std::to_string(i);
      base.add(id, "niah", 0, (i + k) % 5 == 0 ? 0.0 : 1.0, k);
      cand.add(id, "niah", 0, (i + k) % 5 == 0 || (i + 2 * k) % 17 == 0 ? 0.0 : 1.0, k);
    }
  const Comparison c_t = run({base, cand});
  const TaskComparison& t = only_task(c_t);
  CHECK(t.max_repeats == 3);
  CHECK(t.trials == 120);
  CHECK(t.results == 360);
  // Averaged repeats are fractional scores: the stratified score bound gates, Fieller is reported.
  // 17 trials lost a third of their score: 17 effective differing units >= z^2, so Fieller's
  // bound on the observed variance stands, untouched by its variance floor.
  CHECK(t.ratio.method == "stratified_score");
  CHECK(t.ratio.lcb < t.ratio_estimate);
  REQUIRE(t.ratio.ucb);
  CHECK(*t.ratio.ucb > t.ratio_estimate);
  const RatioBound& f = fieller_check(t);
  CHECK(f.method == "fieller");
  REQUIRE(f.floor);
  CHECK(f.floor->differing_units == Approx(17.0).epsilon(1e-9));
  CHECK(f.floor->loss_bound == 0.0);
  CHECK(f.lcb == f.floor->observed_lcb);
  CHECK(t.clusters == 120);
  const TrialPair& first = t.trial_pairs.front();  // m/0: repeats 0,1,2 -> base 0,1,1
  CHECK(first.id == "m/0");
  CHECK(first.results == 3);
  CHECK(first.reference_score == Approx(2.0 / 3));
  CHECK(t.buckets.size() == 1);
  CHECK(t.buckets[0].regression_test == "paired_z_one_sided");
}

namespace {

// stats.md's AUC toy: 5 length buckets of 100 NIAH trials, the candidate losing 42 of them.
std::pair<Run, Run> auc_toy_runs() {
  const std::int64_t x[] = {8192, 16384, 32768, 65536, 131072};
  const double base_rate[] = {0.90, 0.85, 0.80, 0.70, 0.60}, cand_rate[] = {0.90, 0.84, 0.78, 0.66, 0.52};
  Run base("base"), cand("cand");
  for (int k = 0; k < 5; ++k)
    for (int i = 0; i < 100; ++i) {
      const std::string id = "n/" + std::to_string(x[k]) + "/" + std::to_string(i);
      base.add(id, "niah", x[k], i < base_rate[k] * 100 ? 1.0 : 0.0);
      cand.add(id, "niah", x[k], i < cand_rate[k] * 100 ? 1.0 : 0.0);
    }
  return {base, cand};
}

}  // namespace

TEST_CASE("compare: AUC across length buckets (stats.md toy) on both axes", "[compare]") {
  const auto [base, cand] = auc_toy_runs();
  const Comparison c_lin = run({base, cand});
  const TaskComparison& lin = only_task(c_lin);
  CHECK(lin.metric == "auc");
  CHECK(lin.ratio.method == "stratified_score");
  REQUIRE(lin.auc);
  CHECK(lin.auc->axis == "linear");
  CHECK(lin.auc->reference == Approx(0.715).epsilon(1e-12));
  CHECK(lin.auc->candidate == Approx(0.67266666666666667).epsilon(1e-12));
  CHECK(lin.ratio_estimate == Approx(0.94079254079254079).epsilon(1e-12));
  CHECK(lin.auc->weights[3] == Approx(48.0 / 120));
  CHECK(lin.buckets.size() == 5);
  CHECK(lin.buckets[4].flips.lost == 8);
  CHECK_FALSE(lin.point_rule.passes);
  CompareOptions o;
  o.auc_axis = stats::AucAxis::log2;
  const Comparison c_lg = run({base, cand}, o);
  const TaskComparison& lg = only_task(c_lg);
  CHECK(lg.auc->axis == "log2");
  CHECK(lg.ratio_estimate == Approx(0.96451612903225806).epsilon(1e-12));
  CHECK(lg.point_rule.passes);  // the axis alone flips the point rule
}

TEST_CASE("compare: Holm flags the bucket that regressed", "[compare]") {
  Run base("base"), cand("cand");
  for (std::int64_t b : {4096, 8192, 16384})
    for (int i = 0; i < 100; ++i) {
      const std::string id = "n/" + std::to_string(b) + "/" + std::to_string(i);
      base.add(id, "niah", b, 1.0);
      cand.add(id, "niah", b, b == 16384 && i < 20 ? 0.0 : 1.0);
    }
  const Comparison c_t = run({base, cand});
  const TaskComparison& t = only_task(c_t);
  REQUIRE(t.buckets.size() == 3);
  CHECK_FALSE(t.buckets[0].regression);
  CHECK_FALSE(t.buckets[1].regression);
  CHECK(t.buckets[2].regression);
  CHECK(t.buckets[2].regression_test == "mcnemar_exact_one_sided");
  CHECK(t.buckets[2].holm_p == Approx(3 * std::pow(0.5, 20)));
  CHECK(t.buckets[2].bh_p <= t.buckets[2].holm_p);
}

TEST_CASE("compare: a `cluster` field makes trials share a cluster", "[compare]") {
  Run base("base"), cand("cand");
  for (int i = 0; i < 60; ++i) {
    const std::string id = "r/" + std::to_string(i);
    base.add(id, "mrcr", 0, 0.8 + 0.002 * (i % 10));
    cand.add(id, "mrcr", 0, 0.79 + 0.002 * (i % 7));
    base.dir->results.records.back().extra["cluster"] = "doc-" + std::to_string(i / 4);
    cand.dir->results.records.back().extra["cluster"] = "doc-" + std::to_string(i / 4);
  }
  const Comparison c_t = run({base, cand});
  const TaskComparison& t = only_task(c_t);
  CHECK(t.cluster_field);
  CHECK(t.clusters == 15);
  CHECK(t.buckets[0].clusters == 15);
  // Every conversation scores about 0.01 lower, spread over all 15: a measured spread, not a
  // degenerate one (the floor is off from z^2 = 2.7 differing units on); the units are clusters.
  CHECK(t.ratio.method == "stratified_score");
  const RatioBound& f = fieller_check(t);
  CHECK(f.method == "fieller");
  REQUIRE(f.floor);
  CHECK(f.floor->units == Approx(15.0).margin(0.01));  // the clusters, not the 60 trials
  CHECK(f.floor->differing_units > 2.7);
  // The score bound's units are the clusters too: the same 60 trials as 60 sources bound tighter.
  Run b60("base"), c60("cand");
  for (std::size_t i = 0; i < base.dir->results.records.size(); ++i) {
    b60.add(base.dir->results.records[i].id, "mrcr", 0, base.dir->results.records[i].score);
    c60.add(cand.dir->results.records[i].id, "mrcr", 0, cand.dir->results.records[i].score);
  }
  const Comparison c60_t = run({b60, c60});
  CHECK(only_task(c60_t).ratio.lcb > t.ratio.lcb);
  base.dir->results.records[0].extra["cluster"] = nlohmann::json::array();
  CHECK_THROWS_AS(run({base, cand}), Error);
}

TEST_CASE("compare: several candidates, each against the baseline and pairwise", "[compare]") {
  auto [base, good] = Run::table("gsm8k", 380, 2, 2, 16);
  auto [base2, bad] = Run::table("gsm8k", 280, 2, 102, 16);
  good.dir->manifest.label = "calibrated";
  bad.dir->manifest.label = "scale-1.0";
  const Comparison c = run({base, good, bad});
  REQUIRE(c.pairs.size() == 3);
  CHECK(c.pairs[0].gating);
  CHECK(c.pairs[1].gating);
  CHECK_FALSE(c.pairs[2].gating);
  CHECK(c.pairs[2].reference == 1);
  CHECK(c.pairs[2].candidate == 2);
  CHECK(c.pairs[0].verdict == Verdict::pass);
  CHECK(c.pairs[1].verdict == Verdict::fail);
  CHECK(c.verdict == Verdict::fail);  // every candidate must pass
  CHECK(c.pairs[2].verdict == Verdict::fail);
  const std::string text = format_text(c);
  CHECK_THAT(text, contains("scale-1.0 vs calibrated (candidates compared, not gated)"));
  CHECK_THAT(text, contains("verdict: FAIL (calibrated: PASS, scale-1.0: FAIL)"));
}

TEST_CASE("compare: bad input is a kvgate::Error naming the problem", "[compare]") {
  auto [base, cand] = Run::table("gsm8k", 80, 2, 2, 16);
  SECTION("different task sets") {
    cand.add("x/1", "niah", 4096, 1.0);
    try {
      run({base, cand});
      FAIL("no error");
    } catch (const Error& e) {
      CHECK(e.exit_code() == 2);
      CHECK_THAT(std::string(e.what()), contains("mem/cand has niah (not in mem/base)"));
    }
  }
  SECTION("a trial's bucket differs between the runs") {
    cand.dir->results.records[5].bucket = 4096;
    CHECK_THROWS_WITH(run({base, cand}), contains("different tasks files"));
  }
  SECTION("an empty bucket") {
    base.add("n/1", "niah", 4096, 1.0).add("n/2", "niah", 8192, 1.0);
    cand.add("n/1", "niah", 4096, 1.0).add("n/3", "niah", 8192, 1.0);
    CHECK_THROWS_WITH(run({base, cand}), contains("task niah bucket 8192 is empty after pairing"));
  }
  SECTION("bucket 0 mixed with lengths") {
    base.add("n/1", "niah", 0, 1.0).add("n/2", "niah", 8192, 1.0);
    cand.add("n/1", "niah", 0, 1.0).add("n/2", "niah", 8192, 1.0);
    CHECK_THROWS_WITH(run({base, cand}), contains("mixes bucket 0"));
  }
  SECTION("a baseline that never passes") {
    auto [zb, zc] = Run::table("gsm8k", 0, 10, 0, 90);
    CHECK_THROWS_WITH(run({zb, zc}), contains("never scores"));
  }
  SECTION("one run, or an empty run") {
    CHECK_THROWS_WITH(run({base}), contains("at least one candidate"));
    Run empty("empty");
    CHECK_THROWS_WITH(run({base, empty}), contains("no results"));
  }
  SECTION("options out of range") {
    CompareOptions o;
    o.alpha = 0.7;
    CHECK_THROWS_WITH(run({base, cand}, o), contains("--alpha"));
  }
}

TEST_CASE("compare: a candidate that never passes, as the reference of a pairwise comparison, is reported, not an error",
          "[compare]") {
  auto [base, good] = Run::table("gsm8k", 90, 2, 2, 6);
  auto [base2, dead] = Run::table("gsm8k", 0, 0, 94, 6);
  const Comparison c = run({base, dead, good});
  REQUIRE(c.pairs.size() == 3);
  const TaskComparison& t = c.pairs[2].tasks[0];  // good vs dead
  CHECK(t.verdict == Verdict::inconclusive);
  CHECK_THAT(reasons(t).back(), contains("never scores"));
  check_finite(to_json(c));
  CHECK_THAT(format_text(c), !contains("nan"));
}

TEST_CASE("compare: task checks (the golden seam) can fail a task", "[compare]") {
  auto [base, cand] = Run::table("golden", 95, 2, 1, 2);
  std::vector<TaskCheckEntry> checks = {{"golden", [](const TaskCheckInput& in) {
                                           Finding f{.check = "golden.invalid_json", .severity = "fail",
                                                     .message = "1 answer is no longer valid JSON"};
                                           const TrialPair& tp = in.task.trial_pairs.front();
                                           f.trials.push_back({tp.id, 0, tp.bucket, 0, 0});
                                           return std::vector<Finding>{f};
                                         }}};
  CHECK(only_task(run({base, cand})).verdict == Verdict::pass);
  const Comparison c = run({base, cand}, {}, checks);
  const TaskComparison& t = only_task(c);
  CHECK(t.verdict == Verdict::fail);
  REQUIRE(t.findings.size() == 1);
  CHECK_THAT(reasons(t).front(), contains("golden.invalid_json"));
  CHECK(to_json(c)["pairs"][0]["tasks"][0]["findings"][0]["check"] == "golden.invalid_json");
}

TEST_CASE("compare JSON: stable names, no NaN, unbounded bounds as null, per-trial records reachable", "[compare][json]") {
  auto [base, cand] = Run::table("gsm8k", 150, 4, 8, 38);
  base.dir->results.records[0].grade = {{"details", {{"depth", 40}}}};
  const Comparison c = run({base, cand});
  const nlohmann::json j = to_json(c);
  CHECK(j["schema"] == "kvgate-compare/1");
  CHECK(j["verdict"] == "INCONCLUSIVE");
  CHECK(j["exit_code"] == 3);
  CHECK(j["options"]["margin"] == 0.95);
  CHECK(j["runs"][0]["role"] == "baseline");
  const auto& t = j["pairs"][0]["tasks"][0];
  for (const char* key : {"task", "verdict", "reasons", "metric", "binary", "max_repeats", "trials", "results", "reference",
                          "candidate", "reference_metric", "candidate_metric", "ratio", "cross_checks", "difference",
                          "point_rule", "power", "flips", "auc", "buckets", "accounting", "findings"}) {
    INFO(key);
    CHECK(t.contains(key));
  }
  CHECK(t["ratio"]["method"] == "tang");
  CHECK(t["ratio"]["lcb"].get<double>() == Approx(0.93434726095713177).epsilon(1e-9));
  CHECK(t["flips"]["lost_results"].size() == 8);
  CHECK(t["flips"]["mcnemar"].contains("midp"));
  CHECK(t["buckets"][0]["reference"].contains("wilson"));
  CHECK_FALSE(t.contains("trial_pairs"));
  CHECK(to_json(c, {.trial_pairs = true})["pairs"][0]["tasks"][0]["trial_pairs"].size() == 200);
  check_finite(j);
  // Drill-down: a flip names both records; extra fields of a record stay reachable.
  const FlipRef& f = c.pairs[0].tasks[0].lost.front();
  const ResultRecord& rec = c.runs[0].run->results.records[f.reference_record];
  CHECK(rec.id == f.id);
  CHECK(c.runs[0].run->results.records[0].grade["details"]["depth"] == 40);

  // An unbounded Fieller bound (the cross-check) is null, not inf.
  Run b("b"), d("d");
  for (int i = 0; i < 20; ++i) {
    b.add("r/" + std::to_string(i), "mrcr", 0, i == 0 ? 0.05 : 0.0);
    d.add("r/" + std::to_string(i), "mrcr", 0, i < 3 ? 0.05 : 0.0);
  }
  const Comparison u = run({b, d});
  CHECK_FALSE(fieller_check(only_task(u)).ucb);
  const nlohmann::json uj = to_json(u);
  const nlohmann::json& checks = uj["pairs"][0]["tasks"][0]["cross_checks"];
  REQUIRE(checks[0]["method"].get<std::string>().rfind("fieller", 0) == 0);
  CHECK(checks[0]["ucb"].is_null());
  CHECK(only_task(u).verdict == Verdict::inconclusive);
  check_finite(to_json(u));
}

TEST_CASE("compare: deterministic, and the bootstrap follows --seed", "[compare]") {
  auto [base, cand] = Run::table("gsm8k", 150, 4, 8, 38);
  const std::string a = to_json(run({base, cand})).dump(), b = to_json(run({base, cand})).dump();
  CHECK(a == b);
  CompareOptions o;
  o.seed = 99;
  const Comparison c_t1 = run({base, cand});
  const TaskComparison& t1 = only_task(c_t1);
  const Comparison c_t2 = run({base, cand}, o);
  const TaskComparison& t2 = only_task(c_t2);
  CHECK(t1.cross_checks.back().method == "bootstrap");
  CHECK(t1.cross_checks.back().lcb != t2.cross_checks.back().lcb);
  CHECK(t1.ratio.lcb == t2.ratio.lcb);  // the gate never depends on the seed
  o.bootstrap_replicates = 0;
  const Comparison none = run({base, cand}, o);
  for (const RatioBound& r : only_task(none).cross_checks) CHECK(r.method != "bootstrap");
}

TEST_CASE("compare JSON: every field name is documented in docs/compare-json.md", "[compare][json]") {
  const std::string doc = kvtest::read_text("docs/compare-json.md");
  // A comparison that fills every optional part: AUC, several candidates, a finding, trial pairs.
  Run base("base"), cand("cand"), other("other");
  for (std::int64_t b : {4096, 8192})
    for (int i = 0; i < 50; ++i) {
      const std::string id = "n/" + std::to_string(b) + "/" + std::to_string(i);
      base.add(id, "niah", b, i < 45 ? 1.0 : 0.0);
      cand.add(id, "niah", b, i < 44 || i == 47 ? 1.0 : 0.0);
      other.add(id, "niah", b, i < 40 ? 1.0 : 0.0);
    }
  base.add("n/4096/0", "niah", 4096, 1.0);  // a duplicate
  std::vector<TaskCheckEntry> checks = {{"niah", [](const TaskCheckInput&) {
                                           return std::vector<Finding>{{.check = "x", .severity = "warn", .message = "m"}};
                                         }}};
  const nlohmann::json j = to_json(run({base, cand, other}, {}, checks), {.trial_pairs = true});
  std::vector<std::string> missing;
  std::function<void(const nlohmann::json&)> walk = [&](const nlohmann::json& v) {
    if (v.is_object()) {
      for (auto it = v.begin(); it != v.end(); ++it) {
        if (it.key() != "manifest" && doc.find("`" + it.key() + "`") == std::string::npos &&
            doc.find("`" + it.key() + "[]`") == std::string::npos)
          missing.push_back(it.key());
        if (it.key() != "manifest") walk(it.value());
      }
    } else if (v.is_array()) {
      for (const auto& x : v) walk(x);
    }
  };
  walk(j);
  INFO("undocumented: " << nlohmann::json(missing).dump());
  CHECK(missing.empty());
}

// ---- Zero paired variance: Fieller's variance floor (stats/variance_floor.h). Expected values:
// tests/tools/stats_reference_values.py, "Fieller's variance floor" (mpmath).
namespace {
// Every trial passes on both sides, in length buckets of the given sizes (repeats per trial).
std::pair<Run, Run> all_pass(const std::vector<std::pair<std::int64_t, int>>& buckets, int repeats = 1) {
  Run base("bf16"), cand("fp8");
  for (const auto& [bucket, n] : buckets)
    for (int i = 0; i < n; ++i)
      for (int k = 0; k < repeats; ++k) {
        const std::string id = "m/" + std::to_string(bucket) + "/" + std::to_string(i);
        base.add(id, "multicode", bucket, 1.0, k);
        cand.add(id, "multicode", bucket, 1.0, k);
      }
  return {base, cand};
}
}  // namespace

TEST_CASE("compare: no paired difference over 24 trials (the demo model's 4K/8K AUC) is INCONCLUSIVE, not a 1.000 PASS",
          "[compare][floor]") {
  // 20 trials at 4K and 4 at 8K, AUC weights 1/2, 1/2. Every trial passes on both sides, so bucket
  // k's restricted MLE loses q_k = max(0, 1 - n_k / (lambda w_k)) of its units (H0: sum_k w_k q_k =
  // 1 - t), V(t) = sum_k w_k^2 q_k (1 - q_k) / n_k: at t = 0.95 the 4-trial bucket alone can hide
  // the loss (q = 0.1, Z = 2/3). lcb = 0.798261 (mpmath: tests/tools/stats_reference_values.py).
  // Fieller's floor said 0.831313 (13.33 Kish units); Fieller alone [1.000, 1.000], a PASS.
  auto [base, cand] = all_pass({{4096, 20}, {8192, 4}});
  const Comparison c = run({base, cand});
  const TaskComparison& t = only_task(c);
  CHECK(t.metric == "auc");
  CHECK(t.ratio_estimate == 1.0);
  CHECK(t.ratio.method == "stratified_score");
  CHECK(t.ratio.lcb == Approx(0.79826068739864758).epsilon(1e-9));
  CHECK(*t.ratio.z_margin == Approx(2.0 / 3).epsilon(1e-9));
  const RatioBound& f = fieller_check(t);
  CHECK(f.method == "fieller_floor");
  CHECK(f.lcb == Approx(0.83131340866612204).epsilon(1e-9));
  REQUIRE(f.floor);
  CHECK(f.floor->observed_lcb == Approx(1.0).epsilon(1e-12));
  CHECK(f.floor->units == Approx(40.0 / 3).epsilon(1e-12));
  CHECK(f.floor->lowered_lcb);
  CHECK(t.verdict == Verdict::inconclusive);
  // Nothing varies, so n' = n z^2 / Z(margin)^2 = 24 (1.6449 / (2/3))^2 = 146.1 -> 147 (V0 scales as 1/n).
  REQUIRE(t.power.trials_needed);
  CHECK(*t.power.trials_needed == 147);
  CHECK(*t.power.additional_trials == 123);
  CHECK(t.power.mde_ratio > 0.1);
  CHECK_THAT(reasons(t).back(), contains("stratified_score"));
  CHECK_THAT(reasons(t).back(), contains("about 123 more paired trials (147 in all"));
  // A bucket's own bound (binary, single sample: Tang) is not 1 either: 20 / (20 + z^2) = 0.880817.
  REQUIRE(t.buckets[0].ratio_bound);
  CHECK(t.buckets[0].ratio_bound->method == "tang");
  CHECK(t.buckets[0].ratio_bound->lcb == Approx(20 / (20 + stats::z_upper(0.05) * stats::z_upper(0.05))).epsilon(1e-9));
  // The JSON names the gate's bound and records Fieller's floor in its cross-check.
  const nlohmann::json j = to_json(c, {});
  CHECK(j["pairs"][0]["tasks"][0]["ratio"]["method"] == "stratified_score");
  const nlohmann::json& r = j["pairs"][0]["tasks"][0]["cross_checks"][0];
  CHECK(r["method"] == "fieller_floor");
  CHECK(r["floor"]["units"].get<double>() == Approx(40.0 / 3));
  CHECK(r["floor"]["observed_lcb"].get<double>() == Approx(1.0));
  CHECK(r["floor"]["lowered_lcb"] == true);
}

TEST_CASE("compare: no paired difference: the bound rises toward 1 with n, and agrees with Tang on one bucket",
          "[compare][floor]") {
  const double z2 = stats::z_upper(0.05) * stats::z_upper(0.05);
  // One bucket, binary, single sample: Tang gates (n / (n + z^2)); Fieller's cross-check agrees.
  // Two repeats per trial: the stratified score bound gates, units = the trials (not the results),
  // the same bound. Two buckets of 150: AUC, PASS. mpmath: 0.648883, 0.917276, 0.991062 (the last
  // from the closed form of the test above: equal buckets lose alike, as one bucket of 300).
  for (int n : {5, 30, 300}) {
    INFO("n = " << n);
    const auto [base, cand] = all_pass({{0, n}});
    const Comparison c = run({base, cand});
    const TaskComparison& t = only_task(c);
    CHECK(t.ratio.method == "tang");
    CHECK(t.ratio.lcb == Approx(n / (n + z2)).epsilon(1e-9));
    REQUIRE(!t.cross_checks.empty());
    CHECK(t.cross_checks[0].method == "fieller_floor");
    CHECK(t.cross_checks[0].lcb == Approx(t.ratio.lcb).margin(1e-9));
    CHECK(t.verdict == (n == 300 ? Verdict::pass : Verdict::inconclusive));
    const auto [rb, rc] = all_pass({{0, n}}, 2);
    const Comparison cr = run({rb, rc});
    const TaskComparison& tr = only_task(cr);
    CHECK(tr.ratio.method == "stratified_score");
    CHECK(tr.ratio.lcb == Approx(n / (n + z2)).epsilon(1e-9));
    CHECK(tr.verdict == t.verdict);
    if (n < 300) {
      // units > 51.40 decides: 52 trials, with either method.
      CHECK(*t.power.trials_needed == 52);
      CHECK(*tr.power.trials_needed == 52);
    }
  }
  const auto [base, cand] = all_pass({{4096, 150}, {8192, 150}});
  const Comparison c = run({base, cand});
  const TaskComparison& t = only_task(c);
  CHECK(t.ratio.method == "stratified_score");
  CHECK(t.ratio.lcb == Approx(0.99106212782487182).epsilon(1e-9));
  CHECK(t.verdict == Verdict::pass);
  CHECK_THAT(reasons(t).back(), contains("lower bound 0.9911 > margin"));
}

TEST_CASE("compare: with real flips the floor leaves Fieller's AUC bound as it was", "[compare][floor]") {
  // stats.md's AUC toy (5 buckets of 100, 42 lost): the observed variance is far above the floor.
  const auto [base, cand] = auc_toy_runs();
  const Comparison c = run({base, cand});
  const TaskComparison& t = only_task(c);
  CHECK(t.ratio.method == "stratified_score");
  const RatioBound& f = fieller_check(t);
  CHECK(f.method == "fieller");
  REQUIRE(f.floor);
  CHECK_FALSE(f.floor->lowered_lcb);
  CHECK_FALSE(f.floor->raised_ucb);
  CHECK(f.lcb == f.floor->observed_lcb);
  CHECK(f.ucb == f.floor->observed_ucb);
  // With 42 flips spread over the buckets the two bounds agree closely.
  CHECK(t.ratio.lcb == Approx(f.lcb).margin(0.01));
  // The 8K bucket has no flip (90/100 on both sides): its own (Tang) bound is 0.970816, not 1.
  REQUIRE(t.buckets[0].ratio_bound);
  CHECK(t.buckets[0].ratio_bound->method == "tang");
  CHECK(t.buckets[0].ratio_bound->lcb == Approx(0.97081573168884872).epsilon(1e-9));
}

TEST_CASE("compare: the gate's bound is a record (side, bounds, margin, method) that every reason renders", "[compare][bound]") {
  // Straddling (Tang, one bucket): the record holds the numbers, the reason and the JSON read them.
  auto [base, cand] = Run::table("gsm8k", 150, 4, 8, 38);
  const Comparison open = run({base, cand});
  const TaskComparison& t = only_task(open);
  REQUIRE(t.bound);
  const GateBound& b = *t.bound;
  CHECK(b.side == GateBound::Side::straddles);
  CHECK(b.method == "tang");
  CHECK(b.quantity == "ratio");
  CHECK(b.lcb == t.ratio.lcb);
  CHECK(b.ucb == t.ratio.ucb);
  CHECK(b.estimate == t.ratio_estimate);
  CHECK(b.margin == 0.95);
  CHECK(b.confidence == Approx(0.95));
  CHECK(b.additional_trials == t.power.additional_trials);
  CHECK(reasons(t).back() == bound_reason(b));
  CHECK(to_json(open)["pairs"][0]["tasks"][0]["ratio"]["side"] == "straddles");
  CHECK_THAT(verdict_line(open, open.pairs[0]), contains("bounds [" + fixed(b.lcb, 4) + ", " + fixed(*b.ucb, 4) + "] hold margin 0.950"));

  // Below: the upper bound fails the task; above: the lower bound passes it (AUC over two buckets).
  auto [base2, drop] = Run::table("gsm8k", 250, 5, 60, 85);
  const Comparison failed = run({base2, drop});
  REQUIRE(only_task(failed).bound);
  CHECK(only_task(failed).bound->side == GateBound::Side::below);
  CHECK(to_json(failed)["pairs"][0]["tasks"][0]["ratio"]["side"] == "below");
  CHECK_THAT(verdict_line(failed, failed.pairs[0]),
             contains("upper bound " + fixed(*only_task(failed).bound->ucb, 4) + " < margin 0.950"));

  // A task's own margin is the one its record holds (and the sentence prints).
  CompareOptions o;
  o.task_margins["gsm8k"] = 0.8;
  const Comparison loose = run({base, cand}, o);
  REQUIRE(only_task(loose).bound);
  CHECK(only_task(loose).bound->margin == 0.8);
  CHECK(only_task(loose).bound->side == GateBound::Side::above);
  CHECK_THAT(reasons(only_task(loose)).back(), contains("> margin 0.800"));

  // No ratio, no record: the reason says why instead, and the JSON side is null.
  auto [base3, good] = Run::table("gsm8k", 90, 2, 2, 6);
  auto [base4, dead] = Run::table("gsm8k", 0, 0, 94, 6);
  const Comparison none = run({base3, dead, good});
  CHECK_FALSE(none.pairs[2].tasks[0].bound);
  CHECK(to_json(none)["pairs"][2]["tasks"][0]["ratio"]["side"].is_null());
}

TEST_CASE("compare: bound_reason renders the record alone", "[compare][bound]") {
  GateBound b{.side = GateBound::Side::below, .method = "stratified_score", .quantity = "AUC ratio", .estimate = 0.6774,
              .lcb = 0.6, .ucb = 0.7657, .margin = 0.95, .confidence = 0.95};
  CHECK(bound_reason(b) == "AUC ratio 0.6774: upper bound 0.7657 < margin 0.950 (stratified_score, one-sided 95.0%)");
  b.side = GateBound::Side::above;
  b.lcb = 0.9582;
  CHECK(bound_reason(b) == "AUC ratio 0.6774: lower bound 0.9582 > margin 0.950 (stratified_score, one-sided 95.0%)");
  b.side = GateBound::Side::straddles;
  b.ucb.reset();
  b.trials_needed = 400;
  b.additional_trials = 100;
  CHECK(bound_reason(b) ==
        "AUC ratio 0.6774: lower bound 0.9582 <= margin 0.950 <= upper bound unbounded (stratified_score, one-sided 95.0%); about 100 "
        "more paired trials (400 in all, same bucket mix) would decide it at the observed ratio with 80% power");
}
