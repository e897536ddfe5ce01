// `kvgate gate` as a library: a suite and configurations in, a verdict out. Into DIR it generates
// the trials once (DIR/tasks/<task>.jsonl), runs every configuration on every task
// (DIR/runs/<label>/<task>/, resumable: re-running continues where it stopped), joins each
// configuration's runs (DIR/runs/<label>/run.json + results.jsonl, which `kvgate compare` reads as
// they are), compares candidates with the baseline, writes the reports (DIR/report.*), appends to
// the history when asked, and returns the verdict (exit 0 PASS, 1 FAIL, 3 INCONCLUSIVE). With a
// shard (i/n) it generates every trial the same way but runs only slice i of each task on every
// configuration, and stops there: `merge_gate_shards` (gate/merge_shards.h) joins, compares and reports.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "harness/compare/comparison.h"
#include "harness/gate/configurations.h"
#include "harness/gate/suite.h"
#include "harness/runner/work_plan.h"
#include "reports/report_section.h"

namespace kvgate::gate {

struct GateOptions {
  Suite suite{};
  std::string out_dir{};
  std::vector<Configuration> configs{};  // [0] is the baseline
  std::int64_t max_context = 0;          // 0: read from the servers / the checkpoint
  // Exact lengths: a tokenizer.json, or a server's /tokenize; default: the checkpoint's tokenizer
  // (reference decoder), else an estimate (warned).
  std::string tokenizer{}, tokenize_url{}, tokenize_model{};
  std::string tokenize_api = "auto";  // /tokenize's request shape: auto, llamacpp, vllm, sglang
  std::string golden_prompts{};  // --golden FILE
  std::string gsm8k_data{};      // --gsm8k-data FILE (offline machines)
  std::string history_db{};      // append the result here (required when the suite keeps a history)
  int concurrency = 8;
  std::string progress = "auto";  // per run, as `kvgate run --progress`
  int gen_threads = 0;
  runner::Shard shard{};  // active: run this slice only, no comparison (DIR is a shard directory)
  std::vector<reports::ReportSection> report_sections{};  // added to the HTML and Markdown reports (the ladder)
};

struct GateReport {
  std::string format{};  // "json", "html", "markdown", "junit", "text"
  std::string path{};
};

struct GateResult {
  compare::Verdict verdict = compare::Verdict::inconclusive;
  int exit_code = 3;  // 0 PASS, 1 FAIL, 3 INCONCLUSIVE; 130/143 when stopped by a signal
  bool stopped = false;
  compare::Comparison comparison{};
  std::vector<GateReport> reports{};
  std::string main_report{};  // the HTML report (the JSON until the HTML writer is built)
  std::vector<std::string> skipped_tasks{};  // optional tasks without their input (golden without --golden)
  struct TaskPlan {
    std::string task{}, tasks_path{};
    std::vector<std::int64_t> buckets{};  // empty: no length buckets
  };
  std::vector<TaskPlan> tasks{};
  std::int64_t max_context = 0;  // 0: unknown
  std::string max_context_source{};
  // Each configuration's run of each task: results held and expected (of this shard when sharded).
  struct RunStatus {
    std::string label{}, task{}, dir{};
    std::size_t results = 0, expected = 0;
    bool complete = false;
  };
  std::vector<RunStatus> runs{};
  runner::Shard shard{};  // active: a shard's runs only; no comparison, no reports
  std::vector<std::string> merged_from{};  // a merged gate: the shard directories it joined
  std::vector<std::string> partial{};      // a merged gate with --allow-partial: what is missing (empty: nothing)
};

GateResult run_gate(const GateOptions& options);

// The compare options of a suite: its margin and limits, each task's own margin and whether it
// gates.
compare::CompareOptions compare_options(const Suite& suite);

}  // namespace kvgate::gate
