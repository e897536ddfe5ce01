#include "harness/compare/gate.h"

#include <cmath>

#include "harness/compare/number_format.h"

namespace kvgate::compare {

const char* to_string(Verdict v) {
  switch (v) {
    case Verdict::pass: return "PASS";
    case Verdict::fail: return "FAIL";
    case Verdict::inconclusive: return "INCONCLUSIVE";
  }
  return "?";
}

int exit_code(Verdict v) { return v == Verdict::pass ? 0 : v == Verdict::fail ? 1 : 3; }

namespace {
// Worst first: FAIL > INCONCLUSIVE > PASS.
Verdict combine(Verdict a, Verdict b) {
  if (a == Verdict::fail || b == Verdict::fail) return Verdict::fail;
  if (a == Verdict::inconclusive || b == Verdict::inconclusive) return Verdict::inconclusive;
  return Verdict::pass;
}

constexpr const char* kInformative = "informative (the suite's gate: false): this verdict does not decide the pair's";

std::string confidence(const CompareOptions& o) { return "one-sided " + fixed(100 * (1 - o.alpha), 1) + "%"; }
}  // namespace

void decide_task(TaskComparison& t, const CompareOptions& o, const std::string& reference_label,
                 const std::string& candidate_label) {
  t.reasons.clear();
  bool failed = false;
  const Accounting& a = t.accounting;
  const auto error_rate = [&](double rate, std::size_t errors, std::size_t results, const std::string& label) {
    if (rate <= o.max_error_rate) return;
    failed = true;
    t.reasons.push_back("error rate " + percent(rate, 1) + " (" + std::to_string(errors) + " of " + std::to_string(results) +
                        " results) in " + label + " is above --max-error-rate " + percent(o.max_error_rate, 1));
  };
  error_rate(a.reference_error_rate, a.reference_errors, a.reference_results, reference_label);
  error_rate(a.candidate_error_rate, a.candidate_errors, a.candidate_results, candidate_label);
  for (const Finding& f : t.findings)
    if (f.severity == "fail") {
      failed = true;
      t.reasons.push_back(f.check + ": " + f.message);
    }

  const std::string what = t.metric == "auc" ? "AUC ratio" : "ratio";
  if (!(t.reference_metric > 0.0)) {
    t.verdict = failed ? Verdict::fail : Verdict::inconclusive;
    t.reasons.push_back(reference_label + " never scores on this task: " + what + " undefined");
    if (!t.gated) t.reasons.insert(t.reasons.begin(), kInformative);
    return;
  }
  const RatioBound& r = t.ratio;
  const std::string m = fixed(o.margin, 3);
  // When the variance floor decided the bound, say so: the bound then rests on how many trials
  // showed no loss, not on a measured spread.
  std::string floor_note;
  if (r.floor && (r.floor->lowered_lcb || r.floor->raised_ucb))
    floor_note = (r.floor->differing_units > 0 ? ": only " + fixed(r.floor->differing_units, 1) +
                                                     " effective trials differ, too few to measure a spread"
                                               : std::string(": no paired trial differs")) +
                 ", so the bound is what " + fixed(r.floor->units, 1) + " effective trials without a loss can show";
  const std::string bounds = "(" + r.method + ", " + confidence(o) + floor_note + ")";
  Verdict v;
  if (r.lcb > o.margin) {
    v = Verdict::pass;
    t.reasons.push_back(what + " " + fixed(t.ratio_estimate, 4) + ": lower bound " + fixed(r.lcb, 4) + " > margin " + m + " " + bounds);
  } else if (r.ucb && *r.ucb < o.margin) {
    v = Verdict::fail;
    t.reasons.push_back(what + " " + fixed(t.ratio_estimate, 4) + ": upper bound " + fixed(*r.ucb, 4) + " < margin " + m + " " + bounds);
  } else {
    v = Verdict::inconclusive;
    std::string msg = what + " " + fixed(t.ratio_estimate, 4) + ": lower bound " + fixed(r.lcb, 4) + " <= margin " + m +
                      " <= upper bound " + (r.ucb ? fixed(*r.ucb, 4) : std::string("unbounded")) + " " + bounds;
    if (t.power.additional_trials)
      msg += "; about " + fixed(*t.power.additional_trials, 0) + " more paired trials (" + fixed(*t.power.trials_needed, 0) +
             " in all, same bucket mix) would decide it at the observed ratio with " + percent(t.power.power, 0) + " power";
    else
      msg += "; the estimate sits on the margin, so no number of trials decides it at the observed ratio";
    t.reasons.push_back(msg);
  }
  t.verdict = failed ? Verdict::fail : v;
  if (!t.gated) t.reasons.insert(t.reasons.begin(), kInformative);
}

void decide_pair(PairComparison& p, const std::vector<RunInfo>& runs) {
  p.reasons.clear();
  Verdict v = Verdict::pass;
  std::size_t pass = 0, fail = 0, inconclusive = 0, informative = 0;
  for (const TaskComparison& t : p.tasks) {
    if (!t.gated) {
      ++informative;
      continue;
    }
    v = combine(v, t.verdict);
    (t.verdict == Verdict::pass ? pass : t.verdict == Verdict::fail ? fail : inconclusive) += 1;
    if (t.verdict != Verdict::pass) p.reasons.push_back(t.task + ": " + to_string(t.verdict));
  }
  p.verdict = v;
  p.reasons.insert(p.reasons.begin(), runs[p.candidate].label + " vs " + runs[p.reference].label + ": " + std::to_string(pass) +
                                          " PASS, " + std::to_string(fail) + " FAIL, " + std::to_string(inconclusive) +
                                          " INCONCLUSIVE of " + std::to_string(p.tasks.size() - informative) +
                                          (informative ? " gated tasks (" + std::to_string(informative) + " informative)" : " tasks"));
}

std::string verdict_line(const Comparison& c, const PairComparison& p) {
  std::string line = c.runs[p.candidate].label + ": " + to_string(p.verdict);
  const TaskComparison* decisive = nullptr;
  std::size_t gated = 0;
  const auto slack = [](const TaskComparison& t) { return t.ratio.lcb - t.margin; };
  for (const TaskComparison& t : p.tasks) {
    if (!t.gated) continue;
    ++gated;
    if (!decisive || (t.verdict == Verdict::fail && decisive->verdict != Verdict::fail) ||
        (t.verdict == Verdict::inconclusive && decisive->verdict == Verdict::pass) ||
        (t.verdict == decisive->verdict && t.verdict == Verdict::pass && slack(t) < slack(*decisive)))
      decisive = &t;
  }
  if (!decisive) return line;
  const TaskComparison& t = *decisive;
  std::string why = t.task + ": ";
  // A FAIL by error rate or a failed check says so (decide_task puts those reasons first).
  const bool bound_decides = t.reference_metric > 0.0 && (t.verdict != Verdict::fail || (t.ratio.ucb && *t.ratio.ucb < t.margin));
  if (!bound_decides) why += t.reasons.empty() ? std::string("undecided") : t.reasons.front();
  else {
    const std::string m = fixed(t.margin, 3);
    why += (t.metric == "auc" ? "AUC ratio " : "ratio ") + fixed(t.ratio_estimate, 4) + ", ";
    if (t.ratio.lcb > t.margin) why += "lower bound " + fixed(t.ratio.lcb, 4) + " > margin " + m;
    else if (t.ratio.ucb && *t.ratio.ucb < t.margin) why += "upper bound " + fixed(*t.ratio.ucb, 4) + " < margin " + m;
    else why += "bounds [" + fixed(t.ratio.lcb, 4) + ", " + (t.ratio.ucb ? fixed(*t.ratio.ucb, 4) : std::string("unbounded")) + "] hold margin " + m;
    why += "; " + std::to_string(t.flips.lost) + " lost, " + std::to_string(t.flips.gained) + " gained, McNemar p " +
           p_value(t.flips.mcnemar.exact);
    if (t.verdict == Verdict::inconclusive && t.power.additional_trials)
      why += "; about " + fixed(*t.power.additional_trials, 0) + " more trials would decide";
  }
  if (gated > 1) why += " (" + std::to_string(gated - 1) + " more gated task" + (gated > 2 ? "s" : "") + " in the report)";
  return line + " (" + why + ")";
}

void decide_overall(Comparison& c) {
  c.reasons.clear();
  Verdict v = Verdict::pass;
  for (const PairComparison& p : c.pairs) {
    if (!p.gating) continue;
    v = combine(v, p.verdict);
    c.reasons.push_back(c.runs[p.candidate].label + ": " + to_string(p.verdict));
  }
  c.verdict = v;
}

}  // namespace kvgate::compare
