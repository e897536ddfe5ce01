// The end of a gate, whole or merged from shards: each configuration's task runs joined into
// DIR/runs/<label>/ (run.json + results.jsonl, which `kvgate compare` and `kvgate report` read as
// they are), the candidates compared with the baseline, the reports written.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "harness/core/run_dir.h"
#include "harness/gate/gate.h"
#include "harness/gate/plan.h"

namespace kvgate::gate {

// The joined run.json's tasks_sha256 is the sha256 of "<task> <tasks_sha256>\n" per task, in the
// suite's order (empty when a task run recorded none); extra.gate_tasks keeps each task's own.
std::shared_ptr<const RunDir> join_runs(const std::string& dir, const Configuration& config, const std::vector<PlannedTask>& tasks);

// Joins, compares (the suite's compare options), fills result.comparison, verdict and exit code,
// writes the reports (gate_reports.h).
void compare_and_report(GateResult& result, const GateOptions& options, const std::vector<PlannedTask>& tasks);

}  // namespace kvgate::gate
