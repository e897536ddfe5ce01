// kvgate report RUN_DIR... --html F: one run's rates, or (two or more) the comparison page of
// `kvgate compare --html` with the first directory as the baseline.
#include <iostream>
#include <memory>

#include "harness/cli/cli_common.h"
#include "harness/compare/compare.h"
#include "harness/core/atomic_file.h"
#include "harness/core/error.h"
#include "reports/report_writer.h"
#include "reports/run_report.h"

namespace kvgate::cli {

namespace {

struct ReportCli {
  std::vector<std::string> dirs;
  std::string html, tasks;
  compare::CompareOptions options;
};

int run_report(const ReportCli& o) {
  reports::check_output_path(o.html, "--html");
  std::string command = "kvgate report";
  for (const std::string& d : o.dirs) command += " " + d;
  if (o.dirs.size() == 1) {
    const auto run = std::make_shared<const RunDir>(load_run_dir(o.dirs[0]));
    const reports::RunSummary s = reports::summarize_run(run, o.options.alpha);
    write_file_atomic(o.html, reports::render_run_html(*run, s, {.command = command}, o.options.alpha));
    std::cout << "kvgate report: wrote " << o.html << " (" << s.tasks.size() << " tasks of " << run->path << ")\n";
    return 0;
  }
  const compare::Comparison c = compare::compare_runs(o.dirs, o.options);
  const reports::TrialTexts texts = reports::load_trial_texts(c, {.tasks_path = o.tasks});
  reports::write_report(o.html, reports::ReportFormat::html, c, {.command = command, .trials = &texts});
  std::cout << "kvgate report: wrote " << o.html << " (" << compare::to_string(c.verdict) << ")\n";
  return 0;  // a report, not a gate: `kvgate compare` carries the verdict's exit code
}

}  // namespace

void register_report(CLI::App& app, Commands& commands) {
  auto o = std::make_shared<ReportCli>();
  CLI::App* sub = app.add_subcommand("report", "Render run directories (the first is the baseline) as a self-contained HTML report");
  sub->add_option("dirs", o->dirs, "RUN_DIR... (one run: its rates; two or more: the comparison, the first being the baseline)")->required();
  sub->add_option("--html", o->html, "HTML file to write")->required();
  sub->add_option("--tasks", o->tasks, "The tasks file the runs were made from, for the prompts of lost trials (default: run.json's tasks_path)");
  sub->add_option("--margin", o->options.margin, "Non-inferiority margin on candidate/baseline")->check(CLI::Range(0.0, 1.0))->capture_default_str();
  sub->add_option("--alpha", o->options.alpha, "One-sided error rate of each bound")->check(CLI::Range(0.0, 0.5))->capture_default_str();
  sub->footer("Exit: 0 when the report is written (whatever the verdict: `kvgate compare` gates), 2 bad input or usage.");
  commands.add(sub, [o] { return run_report(*o); });
}

}  // namespace kvgate::cli
