// The run directory as a journal: one kvgate process at a time, the configuration a resume must
// match, setting an old run aside (--force-new), dropping error lines to retry them
// (--retry-errors), and the (trial, repeat) pairs already done.
#pragma once
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "harness/core/result.h"
#include "harness/core/trial.h"
#include "harness/runner/work_plan.h"

namespace kvgate::runner {

// Exclusive use of RUN_DIR by one process: flock(2) on RUN_DIR/.kvgate.lock, released by the
// kernel however the process ends (SIGKILL included). Error if another process holds it.
class RunDirLock {
 public:
  explicit RunDirLock(const std::string& dir);
  ~RunDirLock();
  RunDirLock(const RunDirLock&) = delete;
  RunDirLock& operator=(const RunDirLock&) = delete;

 private:
  int fd_ = -1;
};

// A run.json identity in the form run_identity writes: a reference run's identity without
// "attention_numerics" ran the kernel switch "numerics" it names, else exact.
nlohmann::json comparable_identity(nlohmann::json identity);

// "field: before -> now" for each key whose value differs (keys in `ignore` skipped).
std::vector<std::string> identity_differences(const nlohmann::json& before, const nlohmann::json& now,
                                              const std::set<std::string>& ignore = {});

// Moves run.json and results.jsonl into RUN_DIR/superseded/<UTC time>/ and returns that folder.
std::string supersede_run(const std::string& dir);

// Rewrites a results file without its error lines (atomically); returns how many it dropped.
std::size_t drop_error_lines(const std::string& results_path);

// The (id, repeat) pairs of a journal. Error when a pair appears twice, or a line's trial is not
// in the tasks file or not in this shard (the journal belongs to another run).
DoneSet journal_pairs(const std::vector<ResultRecord>& records, const std::string& path, const TasksFile& tasks,
                      const Shard& shard);

}  // namespace kvgate::runner
