#include "harness/compare/run_index.h"

#include <algorithm>

#include "harness/core/error.h"

namespace kvgate::compare {

IndexedRun index_run(std::shared_ptr<const RunDir> run) {
  IndexedRun out;
  out.run = std::move(run);
  const auto& records = out.run->results.records;
  const std::string file = results_path(out.run->path);
  if (records.empty()) throw Error(file + ": no results: run the tasks first (kvgate run), or pass another run directory");
  if (records.size() > 0xffffffffu) throw Error(file + ": more than 2^32 results");
  out.keys.reserve(records.size());
  for (std::uint32_t i = 0; i < records.size(); ++i) out.keys.push_back({records[i].id, records[i].repeat, i});
  // Ties broken by line order, so the first line of a duplicated (id, repeat) is the one kept.
  std::sort(out.keys.begin(), out.keys.end(), [](const IndexedRun::Key& a, const IndexedRun::Key& b) {
    if (const int c = a.id.compare(b.id); c != 0) return c < 0;
    if (a.repeat != b.repeat) return a.repeat < b.repeat;
    return a.record < b.record;
  });
  std::size_t kept = 0;
  for (std::size_t i = 0; i < out.keys.size(); ++i) {
    const auto& k = out.keys[i];
    if (kept > 0) {
      const auto& prev = out.keys[kept - 1];
      if (prev.id == k.id) {
        const ResultRecord &a = records[prev.record], &b = records[k.record];
        if (a.task != b.task || a.bucket != b.bucket)
          throw Error(file + ": trial \"" + a.id + "\" appears as task " + a.task + " bucket " + std::to_string(a.bucket) +
                      " and as task " + b.task + " bucket " + std::to_string(b.bucket) +
                      ": the run mixes results of different tasks files; re-run into a fresh directory");
        if (prev.repeat == k.repeat) {
          out.duplicates.push_back(k.record);
          continue;
        }
      }
    }
    out.keys[kept++] = k;
  }
  out.keys.resize(kept);
  std::sort(out.duplicates.begin(), out.duplicates.end());
  IndexedRun::TaskCount* count = nullptr;  // results of one task come in runs: look the name up once per run
  const std::string* task = nullptr;
  for (const auto& k : out.keys) {
    const ResultRecord& r = records[k.record];
    if (!task || *task != r.task) count = &out.tasks[r.task], task = &r.task;
    ++count->results;
    count->errors += r.error.has_value();
  }
  return out;
}

}  // namespace kvgate::compare
