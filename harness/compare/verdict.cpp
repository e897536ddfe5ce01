#include "harness/compare/verdict.h"

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

const char* to_string(GateBound::Side s) {
  switch (s) {
    case GateBound::Side::above: return "above";
    case GateBound::Side::below: return "below";
    case GateBound::Side::straddles: return "straddles";
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

GateBound gate_bound(const TaskComparison& t, const CompareOptions& o) {
  const RatioBound& r = t.ratio;
  GateBound b{.method = r.method,
              .quantity = t.metric == "auc" ? "AUC ratio" : "ratio",
              .estimate = t.ratio_estimate,
              .lcb = r.lcb,
              .ucb = r.ucb,
              .margin = o.margin,
              .confidence = 1 - o.alpha,
              .trials_needed = t.power.trials_needed,
              .additional_trials = t.power.additional_trials,
              .power = t.power.power};
  b.side = r.lcb > o.margin               ? GateBound::Side::above
           : r.ucb && *r.ucb < o.margin ? GateBound::Side::below
                                        : GateBound::Side::straddles;
  return b;
}

Verdict verdict_of(GateBound::Side s) {
  return s == GateBound::Side::above ? Verdict::pass : s == GateBound::Side::below ? Verdict::fail : Verdict::inconclusive;
}
}  // namespace

void decide_task(TaskComparison& t, const CompareOptions& o, const std::string& reference_label,
                 const std::string& candidate_label) {
  t.other_reasons.clear();
  t.bound.reset();
  bool failed = false;
  const Accounting& a = t.accounting;
  const auto error_rate = [&](double rate, std::size_t errors, std::size_t results, const std::string& label) {
    if (rate <= o.max_error_rate) return;
    failed = true;
    t.other_reasons.push_back("error rate " + percent(rate, 1) + " (" + std::to_string(errors) + " of " + std::to_string(results) +
                              " results) in " + label + " is above --max-error-rate " + percent(o.max_error_rate, 1));
  };
  error_rate(a.reference_error_rate, a.reference_errors, a.reference_results, reference_label);
  error_rate(a.candidate_error_rate, a.candidate_errors, a.candidate_results, candidate_label);
  for (const Finding& f : t.findings)
    if (f.severity == "fail") {
      failed = true;
      t.other_reasons.push_back(f.check + ": " + f.message);
    }
  if (!t.gated) t.other_reasons.insert(t.other_reasons.begin(), kInformative);

  if (!(t.reference_metric > 0.0)) {
    t.verdict = failed ? Verdict::fail : Verdict::inconclusive;
    t.other_reasons.push_back(reference_label + " never scores on this task: " + (t.metric == "auc" ? "AUC ratio" : "ratio") +
                              " undefined");
    return;
  }
  t.bound = gate_bound(t, o);
  t.verdict = failed ? Verdict::fail : verdict_of(t.bound->side);
}

std::string bound_vs_margin(const GateBound& b, const std::string& le) {
  const std::string m = fixed(b.margin, 3);
  switch (b.side) {
    case GateBound::Side::above: return "lower bound " + fixed(b.lcb, 4) + " > margin " + m;
    case GateBound::Side::below: return "upper bound " + fixed(*b.ucb, 4) + " < margin " + m;
    case GateBound::Side::straddles: break;
  }
  return "lower bound " + fixed(b.lcb, 4) + " " + le + " margin " + m + " " + le + " upper bound " +
         (b.ucb ? fixed(*b.ucb, 4) : std::string("unbounded"));
}

std::string bound_reason(const GateBound& b) {
  std::string s = b.quantity + " " + fixed(b.estimate, 4) + ": " + bound_vs_margin(b) + " (" + b.method + ", one-sided " +
                  fixed(100 * b.confidence, 1) + "%)";
  if (b.side != GateBound::Side::straddles) return s;
  if (b.additional_trials)
    s += "; about " + fixed(*b.additional_trials, 0) + " more paired trials (" + fixed(*b.trials_needed, 0) +
         " in all, same bucket mix) would decide it at the observed ratio with " + percent(b.power, 0) + " power";
  else
    s += "; the estimate sits on the margin, so no number of trials decides it at the observed ratio";
  return s;
}

std::vector<std::string> reasons(const TaskComparison& t) {
  std::vector<std::string> out = t.other_reasons;
  if (t.bound) out.push_back(bound_reason(*t.bound));
  return out;
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
  // A FAIL by error rate or a failed check says so, unless the bound fails the task too.
  if (!t.bound || (t.verdict == Verdict::fail && t.bound->side != GateBound::Side::below)) {
    why += t.other_reasons.empty() ? std::string("undecided") : t.other_reasons.front();
  } else {
    const GateBound& b = *t.bound;
    why += b.quantity + " " + fixed(b.estimate, 4) + ", ";
    if (b.side != GateBound::Side::straddles) why += bound_vs_margin(b);
    else  // shorter than bound_vs_margin's: the last lines stay one line each
      why += "bounds [" + fixed(b.lcb, 4) + ", " + (b.ucb ? fixed(*b.ucb, 4) : std::string("unbounded")) + "] hold margin " +
             fixed(b.margin, 3);
    why += "; " + std::to_string(t.flips.lost) + " lost, " + std::to_string(t.flips.gained) + " gained, McNemar p " +
           p_value(t.flips.mcnemar.exact);
    if (t.verdict == Verdict::inconclusive && b.additional_trials)
      why += "; about " + fixed(*b.additional_trials, 0) + " more trials would decide";
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
