#include "harness/gate/join_runs.h"

#include "harness/compare/compare.h"
#include "harness/core/atomic_file.h"
#include "harness/core/jsonl.h"
#include "harness/core/manifest.h"
#include "harness/core/sha256.h"
#include "harness/gate/gate_reports.h"

namespace kvgate::gate {

using nlohmann::json;

std::shared_ptr<const RunDir> join_runs(const std::string& dir, const Configuration& c, const std::vector<PlannedTask>& tasks) {
  auto joined = std::make_shared<RunDir>();
  joined->path = dir + "/runs/" + c.label;
  RunManifest& m = joined->manifest;
  json per_task = json::object();
  std::string results;
  // The joined run's tasks are several files: their sha256 is that of the lines "<task> <sha256>\n"
  // in the suite's order, so two configurations that ran the same task files pin the same value.
  std::string task_shas;
  bool all_recorded = true;
  for (const PlannedTask& p : tasks) {
    const std::string sub = joined->path + "/" + p.spec->task;
    RunDir r = load_run_dir(sub);
    if (m.kvgate_version.empty()) {
      m = r.manifest;
      m.extra = json::object();
      m.sampling = json::object();
      m.tasks_path = dir + "/tasks";
      m.tasks_sha256.clear();
    }
    if (!r.manifest.started_at.empty() && (m.started_at.empty() || r.manifest.started_at < m.started_at))
      m.started_at = r.manifest.started_at;
    if (r.manifest.ended_at > m.ended_at) m.ended_at = r.manifest.ended_at;
    per_task[p.spec->task] = {{"run", sub},
                              {"tasks_path", r.manifest.tasks_path},
                              {"tasks_sha256", r.manifest.tasks_sha256},
                              {"sampling", r.manifest.sampling},
                              {"repeats", p.spec->repeats},
                              {"summary", r.manifest.extra.value("summary", json())}};
    all_recorded = all_recorded && !r.manifest.tasks_sha256.empty();
    task_shas += p.spec->task + " " + r.manifest.tasks_sha256 + "\n";
    for (ResultRecord& rec : r.results.records) {
      results += to_json(rec).dump() + "\n";
      joined->results.records.push_back(std::move(rec));
    }
    joined->results.torn_tail_bytes += r.results.torn_tail_bytes;
  }
  m.label = c.label;
  if (all_recorded && !task_shas.empty()) m.tasks_sha256 = sha256_hex(task_shas);
  m.extra["gate_tasks"] = per_task;
  m.extra["joined_by"] = "kvgate gate: the task runs under this directory, one after another";
  write_file_atomic(results_path(joined->path), results);
  write_manifest(manifest_path(joined->path), m);
  return joined;
}

void compare_and_report(GateResult& result, const GateOptions& o, const std::vector<PlannedTask>& tasks) {
  std::vector<std::shared_ptr<const RunDir>> runs;
  for (const Configuration& c : o.configs) runs.push_back(join_runs(o.out_dir, c, tasks));
  result.comparison = compare::compare_loaded(runs, compare_options(o.suite));
  for (const std::string& p : result.partial) result.comparison.warnings.push_back("partial gate (--allow-partial): " + p);
  result.verdict = result.comparison.verdict;
  result.exit_code = compare::exit_code(result.verdict);
  write_gate_reports(result, o);
}

}  // namespace kvgate::gate
