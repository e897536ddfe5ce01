// One run on its own (`kvgate report RUN_DIR --html F`): per task and per length bucket, pass rate
// with its Wilson interval and the mean score with its standard error; the AUC over lengths; errors
// grouped by message; the NIAH heatmap; the run's metadata. No verdict: there is nothing to compare.
#pragma once
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "harness/core/run_dir.h"
#include "reports/report_writer.h"
#include "harness/stats/interval.h"

namespace kvgate::reports {

struct RunRates {
  std::int64_t bucket = 0;  // 0 for a task's pooled row
  std::size_t trials = 0, results = 0, passes = 0, errors = 0;
  double pass_rate = 0.0;
  stats::Interval wilson{};  // two-sided 1 - alpha, over results
  double score_mean = 0.0;   // mean over trials of the per-trial mean score (errors score 0)
  double score_se = 0.0;     // over trials (CLT)
};

struct RunTaskSummary {
  std::string task{};
  RunRates all{};
  std::vector<RunRates> buckets{};
  std::optional<double> auc{};  // linear token axis over bucket upper edges, two or more length buckets
  bool binary = true;
  int max_repeats = 1;
  std::map<std::string, std::size_t> error_messages{};
};

struct RunSummary {
  std::vector<RunTaskSummary> tasks{};  // by task name
  std::size_t duplicates = 0;           // repeated (id, repeat) lines: the first one counts
};

// Throws kvgate::Error for a run without results (as compare does).
RunSummary summarize_run(const std::shared_ptr<const RunDir>& run, double alpha);

std::string render_run_html(const RunDir& run, const RunSummary& s, const ReportContext& ctx, double alpha);

}  // namespace kvgate::reports
