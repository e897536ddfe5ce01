// The verdicts (product.md "The gate"): per task PASS iff the one-sided (1 - alpha) lower bound of
// candidate/baseline is above the margin, FAIL if the upper bound is below it (or the error rate
// is above --max-error-rate, or a task check fails), else INCONCLUSIVE with the trials that would
// decide it. A pair passes when every task passes, fails when one fails; the overall verdict is
// the same over the gating pairs (every candidate against the baseline).
#pragma once
#include <string>

#include "harness/compare/comparison.h"

namespace kvgate::compare {

void decide_task(TaskComparison& t, const CompareOptions& o, const std::string& reference_label,
                 const std::string& candidate_label);
void decide_pair(PairComparison& p, const std::vector<RunInfo>& runs);
void decide_overall(Comparison& c);

// A gating pair's verdict and its reason in one line, for the last lines a user reads: the task
// that decides (the failing one, else an undecided one, else the one nearest the margin), its
// bound against the margin, flips and McNemar's p, e.g.
// "int4: FAIL (multicode: AUC ratio 0.6825, upper bound 0.7696 < margin 0.950; 20 lost, 0 gained, McNemar p 1.91e-06)".
std::string verdict_line(const Comparison& c, const PairComparison& p);

}  // namespace kvgate::compare
