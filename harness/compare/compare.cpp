#include "harness/compare/compare.h"

#include <filesystem>

#include "harness/compare/verdict.h"
#include "harness/compare/pairing.h"
#include "harness/compare/run_index.h"
#include "harness/compare/task_stats.h"
#include "harness/core/error.h"
#include "harness/core/rng.h"

namespace kvgate::compare {

namespace {

std::string run_label(const RunDir& run) {
  if (!run.manifest.label.empty()) return run.manifest.label;
  const std::filesystem::path p(run.path);
  return p.filename().empty() ? p.parent_path().filename().string() : p.filename().string();
}

void pair_warnings(Comparison& c, const PairComparison& p) {
  const std::string who = c.runs[p.candidate].label + " vs " + c.runs[p.reference].label + ", task ";
  if (!p.pinning.differences.empty()) {
    std::string list;
    for (const PinnedFact& d : p.pinning.differences) list += (list.empty() ? "" : "; ") + describe(d);
    c.warnings.push_back(c.runs[p.candidate].label + " vs " + c.runs[p.reference].label + ": not pinned, differs in more than the KV settings: " + list);
  }

  for (const TaskComparison& t : p.tasks) {
    const Accounting& a = t.accounting;
    if (!a.missing_in_candidate.empty())
      c.warnings.push_back(who + t.task + ": " + std::to_string(a.missing_in_candidate.size()) + " results of " +
                           c.runs[p.reference].label + " have no counterpart in " + c.runs[p.candidate].label +
                           " and are left out (accounting.missing_in_candidate lists them)");
    if (!a.missing_in_reference.empty())
      c.warnings.push_back(who + t.task + ": " + std::to_string(a.missing_in_reference.size()) + " results of " +
                           c.runs[p.candidate].label + " have no counterpart in " + c.runs[p.reference].label +
                           " and are left out (accounting.missing_in_reference lists them)");
    if (a.excluded_results > 0)
      c.warnings.push_back(who + t.task + ": " + std::to_string(a.excluded_results) +
                           " paired results left out because a side has an error (--errors exclude)");
  }
}

}  // namespace

Comparison compare_loaded(std::vector<std::shared_ptr<const RunDir>> runs, const CompareOptions& options,
                          const std::vector<TaskCheckEntry>& checks) {
  validate(options);
  if (runs.size() < 2)
    throw Error("compare needs a baseline and at least one candidate: kvgate compare BASELINE_DIR CANDIDATE_DIR [CANDIDATE_DIR...]");
  Comparison c;
  c.options = options;
  std::vector<IndexedRun> index;
  for (auto& run : runs) {
    RunInfo info{.label = run_label(*run), .path = run->path, .results = run->results.records.size(),
                 .torn_tail_bytes = run->results.torn_tail_bytes, .run = run,
                 .performance = run_performance(*run, options)};
    if (info.torn_tail_bytes > 0)
      c.warnings.push_back(info.label + ": a cut-short last line of " + std::to_string(info.torn_tail_bytes) + " bytes in " +
                           results_path(info.path) + " was skipped (a killed run; `kvgate run` with the same --out resumes it)");
    index.push_back(index_run(run));
    if (!index.back().duplicates.empty())
      c.warnings.push_back(info.label + ": " + std::to_string(index.back().duplicates.size()) +
                           " results repeat an earlier line's (id, repeat); the first line of each is used "
                           "(accounting.duplicates_* lists them)");
    c.runs.push_back(std::move(info));
  }

  // Pinning first: with --strict-pinning a difference stops here, before any statistics.
  std::vector<std::string> unpinned;
  for (std::size_t k = 1; k < runs.size(); ++k) {
    const Pinning pin = check_pinning(runs[0]->manifest, runs[k]->manifest, c.runs[0].label, c.runs[k].label);
    for (const PinnedFact& d : pin.differences) unpinned.push_back(c.runs[k].label + ": " + describe(d));
  }
  if (options.strict_pinning && !unpinned.empty()) {
    std::string list;
    for (const std::string& u : unpinned) list += "\n  " + u;
    throw Error("--strict-pinning: the baseline " + c.runs[0].label + " and its candidates differ in more than the KV settings:" +
                list + "\nre-run with everything but the KV settings pinned, or drop --strict-pinning to compare anyway");
  }

  const auto compare_pair = [&](std::size_t r, std::size_t k, bool gating) {
    PairComparison p{.reference = r, .candidate = k, .gating = gating};
    p.pinning = check_pinning(runs[r]->manifest, runs[k]->manifest, c.runs[r].label, c.runs[k].label);
    p.tasks = pair_tasks(index[r], index[k], options);
    for (TaskComparison& t : p.tasks) {
      const std::uint64_t seed =
          derive_seed(options.seed, "bootstrap/" + std::to_string(r) + "/" + std::to_string(k) + "/" + t.task);
      compute_task_statistics(t, {.reference = index[r], .candidate = index[k], .options = options, .gating = gating,
                                  .bootstrap_seed = seed});
      for (const TaskCheckEntry& e : checks)
        if (e.task == t.task) {
          std::vector<Finding> found = e.check({.task = t, .reference = index[r], .candidate = index[k], .options = options});
          t.findings.insert(t.findings.end(), found.begin(), found.end());
        }
    }
    adjust_regressions(p.tasks, options.alpha);
    std::vector<std::vector<std::pair<std::uint32_t, std::uint32_t>>> trials;
    for (const TaskComparison& t : p.tasks)
      for (const TrialPair& tp : t.trial_pairs) {
        auto& v = trials.emplace_back();
        for (std::uint32_t i = tp.first_result; i < tp.first_result + tp.results; ++i)
          v.emplace_back(t.result_pairs[i].reference_record, t.result_pairs[i].candidate_record);
      }
    p.gains = pair_gains({.reference = *runs[r], .candidate = *runs[k], .trials = trials}, c.runs[r].performance,
                         c.runs[k].performance, options);
    const std::string ref_label = (r == 0 ? "the baseline " : "the reference ") + c.runs[r].label;
    const std::string cand_label = "the candidate " + c.runs[k].label;
    for (TaskComparison& t : p.tasks) decide_task(t, options.for_task(t.task), ref_label, cand_label);
    decide_pair(p, c.runs);
    pair_warnings(c, p);
    c.pairs.push_back(std::move(p));
  };
  for (std::size_t k = 1; k < runs.size(); ++k) compare_pair(0, k, true);
  for (std::size_t i = 1; i < runs.size(); ++i)
    for (std::size_t j = i + 1; j < runs.size(); ++j) compare_pair(i, j, false);
  decide_overall(c);
  return c;
}

Comparison compare_runs(const std::vector<std::string>& dirs, const CompareOptions& options,
                        const std::vector<TaskCheckEntry>& checks) {
  validate(options);
  if (dirs.size() < 2)
    throw Error("compare needs a baseline and at least one candidate: kvgate compare BASELINE_DIR CANDIDATE_DIR [CANDIDATE_DIR...]");
  std::vector<std::shared_ptr<const RunDir>> runs;
  for (const std::string& d : dirs) runs.push_back(std::make_shared<const RunDir>(load_run_dir(d)));
  return compare_loaded(std::move(runs), options, checks);
}

}  // namespace kvgate::compare
