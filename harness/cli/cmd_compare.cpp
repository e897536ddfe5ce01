// kvgate compare BASELINE CANDIDATE...: pairs runs trial by trial and decides PASS / FAIL / INCONCLUSIVE.
#include <iostream>
#include <memory>

#include "harness/cli/cli_common.h"
#include "harness/compare/compare.h"
#include "harness/compare/comparison_json.h"
#include "harness/compare/number_format.h"
#include "harness/compare/text_table.h"
#include "harness/core/atomic_file.h"
#include "harness/core/error.h"
#include "reports/report_writer.h"

namespace kvgate::cli {

namespace {
struct CompareCli {
  std::vector<std::string> dirs;
  compare::CompareOptions options;
  std::string auc_axis = "linear", errors = "fail", json, markdown, html, junit, tasks;
  bool json_trials = false;
};

// The command that reproduces the decision, for the reports' footers.
std::string command_line(const CompareCli& o, const compare::CompareOptions& opt) {
  std::string s = "kvgate compare";
  for (const std::string& d : o.dirs) s += " " + d;
  s += " --margin " + compare::fixed(opt.margin, 3) + " --alpha " + compare::fixed(opt.alpha, 3) + " --auc-axis " + o.auc_axis +
       " --errors " + o.errors + " --max-error-rate " + compare::fixed(opt.max_error_rate, 3) + " --bootstrap " +
       std::to_string(opt.bootstrap_replicates) + " --seed " + std::to_string(opt.seed);
  if (opt.strict_pinning) s += " --strict-pinning";
  if (!opt.model_config.empty()) s += " --model-config " + opt.model_config;
  return s;
}

int run_compare(const CompareCli& o) {
  const reports::ReportFiles files{.json = o.json, .markdown = o.markdown, .html = o.html, .junit = o.junit};
  reports::check_output_paths(files);
  compare::CompareOptions options = o.options;
  options.auc_axis = o.auc_axis == "log2" ? stats::AucAxis::log2 : stats::AucAxis::linear;
  options.errors = o.errors == "exclude" ? compare::ErrorPolicy::exclude : compare::ErrorPolicy::fail;
  const compare::Comparison c = compare::compare_runs(o.dirs, options);
  // Prompts for the HTML drill-down, read before any file is written (a bad --tasks writes nothing).
  reports::TrialTexts texts;
  if (!o.html.empty()) texts = reports::load_trial_texts(c, {.tasks_path = o.tasks});
  const reports::ReportContext ctx{.command = command_line(o, options), .trials = &texts, .json_trial_pairs = o.json_trials};
  reports::write_reports(files, c, ctx);
  std::cout << compare::format_text(c);
  return compare::exit_code(c.verdict);
}
}  // namespace

void register_compare(CLI::App& app, Commands& commands) {
  auto o = std::make_shared<CompareCli>();
  compare::CompareOptions& opt = o->options;
  CLI::App* sub = app.add_subcommand("compare", "Compare candidate runs with a baseline run: flips, McNemar, AUC, the non-inferiority gate");
  sub->add_option("dirs", o->dirs, "BASELINE_DIR CANDIDATE_DIR [CANDIDATE_DIR...]")->required();
  sub->add_option("--margin", opt.margin, "Non-inferiority margin on candidate/baseline")->check(CLI::Range(0.0, 1.0))->capture_default_str();
  sub->add_option("--alpha", opt.alpha, "One-sided error rate of the gate")->check(CLI::Range(0.0, 0.5))->capture_default_str();
  sub->add_option("--auc-axis", o->auc_axis, "linear (Context Arena, lm-eval) or log2")->check(CLI::IsMember({"linear", "log2"}))->capture_default_str();
  sub->add_option("--max-error-rate", opt.max_error_rate, "A task FAILs when either run has more errors than this fraction of its results")
      ->check(CLI::Range(0.0, 1.0))->capture_default_str();
  sub->add_option("--errors", o->errors, "fail: a result with an error counts as a failure; exclude: pairs with an error are left out (and counted)")
      ->check(CLI::IsMember({"fail", "exclude"}))->capture_default_str();
  sub->add_option("--power", opt.power, "Power for the trials that would decide an INCONCLUSIVE and for the MDE")
      ->check(CLI::Range(0.01, 0.99))->capture_default_str();
  sub->add_option("--bootstrap", opt.bootstrap_replicates, "Replicates of the paired bootstrap cross-check (0: none)")
      ->check(CLI::Range(0, 1000000))->capture_default_str();
  sub->add_option("--seed", opt.seed, "Seed of the bootstrap")->capture_default_str();
  sub->add_flag("--strict-pinning", opt.strict_pinning,
                "Exit 2 when baseline and a candidate differ in more than the KV settings (engine version, model, revision, "
                "attention backend, sampling, max tokens, tasks, kvgate version); without it the differences are listed");
  sub->add_option("--model-config", opt.model_config,
                  "The model's config.json: KV capacity estimates (kvgate capacity, H200 defaults) for runs without an engine log");
  sub->add_option("--json", o->json, "Write every number as JSON (docs/compare-json.md)");
  sub->add_flag("--json-trials", o->json_trials, "Also write every task's per-trial pairs into the JSON");
  sub->add_option("--markdown", o->markdown, "Write a Markdown summary (fits a pull-request comment)");
  sub->add_option("--html", o->html, "Write a self-contained HTML report");
  sub->add_option("--junit", o->junit, "Write JUnit XML (one testcase per gated task and per bucket regression flagged by Holm)");
  sub->add_option("--tasks", o->tasks,
                  "The tasks file the runs were made from, for the prompts of lost trials in --html (default: run.json's tasks_path)");
  sub->footer(
      "PASS when every task's one-sided (1-alpha) lower bound of candidate/baseline is above the margin; FAIL when one\n"
      "task's upper bound is below it or its error rate is too high; else INCONCLUSIVE, with the trials that would decide.\n"
      "Also printed: pinning differences (run.json, engine logs) and what the candidate gains (KV capacity, ITL, TTFT, E2E,\n"
      "output tokens/s, paired per trial). Exit: 0 PASS, 1 FAIL, 3 INCONCLUSIVE, 2 bad input or usage (or --strict-pinning).");
  commands.add(sub, [o] { return run_compare(*o); });
}

}  // namespace kvgate::cli
