// The verdicts (product.md "The gate"): per task PASS iff the one-sided (1 - alpha) lower bound of
// candidate/baseline is above the margin, FAIL if the upper bound is below it (or the error rate
// is above --max-error-rate, or a task check fails), else INCONCLUSIVE with the trials that would
// decide it. A pair passes when every task passes, fails when one fails; the overall verdict is
// the same over the gating pairs (every candidate against the baseline).
#pragma once
#include <string>
#include <vector>

#include "harness/compare/comparison.h"

namespace kvgate::compare {

// Records the task's GateBound (t.bound) and its other reasons, then its verdict.
void decide_task(TaskComparison& t, const CompareOptions& o, const std::string& reference_label,
                 const std::string& candidate_label);
void decide_pair(PairComparison& p, const std::vector<RunInfo>& runs);
void decide_overall(Comparison& c);

// The bound against the margin: "lower bound 0.9582 > margin 0.950", "upper bound 0.7657 < margin
// 0.950", or "lower bound L <le> margin M <le> upper bound U" (U "unbounded" when there is none).
std::string bound_vs_margin(const GateBound& b, const std::string& le = "<=");
// The bound's reason in one sentence, e.g. "AUC ratio 0.6774: upper bound 0.7657 < margin 0.950
// (stratified_score, one-sided 95.0%)", and for a straddling bound how many trials would decide.
std::string bound_reason(const GateBound& b);
// Every reason of a task's verdict, the bound's last: t.other_reasons, then bound_reason(*t.bound).
std::vector<std::string> reasons(const TaskComparison& t);

// A gating pair's verdict and its reason in one line, for the last lines a user reads: the task
// that decides (the failing one, else an undecided one, else the one nearest the margin), its
// bound against the margin, flips and McNemar's p, e.g.
// "int4: FAIL (multicode: AUC ratio 0.6825, upper bound 0.7696 < margin 0.950; 20 lost, 0 gained, McNemar p 1.91e-06)".
std::string verdict_line(const Comparison& c, const PairComparison& p);

}  // namespace kvgate::compare
