#include "harness/compare/pairing.h"

#include <algorithm>
#include <map>
#include <unordered_map>

#include "harness/core/error.h"

namespace kvgate::compare {

namespace {

std::string task_list(const std::vector<std::string>& tasks) {
  std::string s;
  for (const auto& t : tasks) s += (s.empty() ? "" : ", ") + t;
  return s;
}

void check_task_sets(const IndexedRun& ref, const IndexedRun& cand) {
  std::vector<std::string> only_ref, only_cand;
  for (const auto& [task, count] : ref.tasks)
    if (!cand.tasks.count(task)) only_ref.push_back(task);
  for (const auto& [task, count] : cand.tasks)
    if (!ref.tasks.count(task)) only_cand.push_back(task);
  if (only_ref.empty() && only_cand.empty()) return;
  std::string msg = "the runs hold different tasks:";
  if (!only_ref.empty()) msg += " " + ref.run->path + " has " + task_list(only_ref) + " (not in " + cand.run->path + ");";
  if (!only_cand.empty()) msg += " " + cand.run->path + " has " + task_list(only_cand) + " (not in " + ref.run->path + ");";
  msg += " compare runs of the same tasks file (or merge the missing runs in first)";
  throw Error(msg);
}

// A result's score and pass under the error policy: an error is a failure, never a silent pass.
double used_score(const ResultRecord& r) { return r.error ? 0.0 : r.score; }
double used_passed(const ResultRecord& r) { return r.error ? 0.0 : (r.passed ? 1.0 : 0.0); }

// The cluster key of a trial: its `cluster` field when the results carry one, else the trial itself.
bool cluster_key(const ResultRecord& r, const std::string& where, std::string& key) {
  const auto it = r.extra.find("cluster");
  if (it == r.extra.end() || it->is_null()) return false;
  if (it->is_string()) key = "s:" + it->get<std::string>();
  else if (it->is_number_integer()) key = "i:" + it->dump();
  else throw Error(where + ": trial \"" + r.id + "\": field \"cluster\" must be a string or an integer (trials sharing a source share it)");
  return true;
}

struct Pending {
  std::size_t task;
  ResultPair pair;
};

// Results of one bucket of one task, to find buckets the runs do not share.
struct BucketSeen {
  std::size_t reference_only = 0, candidate_only = 0, paired = 0, excluded = 0;
};

void check_buckets(const TaskComparison& t, const std::map<std::int64_t, BucketSeen>& seen, const IndexedRun& ref,
                   const IndexedRun& cand) {
  const bool no_length = seen.count(0) > 0;
  for (const auto& [bucket, s] : seen) {
    if (bucket < 0)
      throw Error("task " + t.task + ": bucket " + std::to_string(bucket) +
                  " is negative: a bucket is a length in tokens, or 0 for tasks without a length");
    if (no_length && bucket != 0)
      throw Error("task " + t.task + " mixes bucket 0 (no length) with length bucket " + std::to_string(bucket) +
                  ": give every trial of a long-context task its length bucket");
    if (s.paired == 0)
      throw Error("task " + t.task + " bucket " + std::to_string(bucket) + " is empty after pairing: " +
                  std::to_string(s.reference_only) + " results only in " + ref.run->path + ", " +
                  std::to_string(s.candidate_only) + " only in " + cand.run->path + ", " + std::to_string(s.excluded) +
                  " left out for errors; finish both runs (re-running `kvgate run` with the same --out resumes) so they share the bucket");
  }
}

}  // namespace

std::vector<TaskComparison> pair_tasks(const IndexedRun& ref, const IndexedRun& cand, const CompareOptions& options) {
  check_task_sets(ref, cand);
  std::vector<TaskComparison> tasks;
  std::map<std::string, std::size_t> task_index;
  for (const auto& [name, count] : ref.tasks) {
    task_index[name] = tasks.size();
    TaskComparison t;
    t.task = name;
    t.accounting.reference_results = count.results;
    t.accounting.reference_errors = count.errors;
    t.accounting.candidate_results = cand.tasks.at(name).results;
    t.accounting.candidate_errors = cand.tasks.at(name).errors;
    tasks.push_back(std::move(t));
  }
  auto ref_of = [&](const IndexedRun& run, std::uint32_t rec) {
    const ResultRecord& r = run.record(rec);
    return ResultRef{r.id, r.repeat, r.bucket, rec};
  };
  for (std::uint32_t rec : ref.duplicates)
    tasks[task_index.at(ref.record(rec).task)].accounting.duplicates_reference.push_back(ref_of(ref, rec));
  for (std::uint32_t rec : cand.duplicates)
    tasks[task_index.at(cand.record(rec).task)].accounting.duplicates_candidate.push_back(ref_of(cand, rec));

  // Merge-join the sorted keys; pairs come out in (id, repeat) order.
  std::vector<std::map<std::int64_t, BucketSeen>> seen(tasks.size());
  // Results of one task come in runs (ids share a prefix): look the task up once per run.
  const std::string* last_task = nullptr;
  std::size_t last_index = 0;
  const auto index_of = [&](const std::string& task) {
    if (!last_task || *last_task != task) last_index = task_index.at(task), last_task = &task;
    return last_index;
  };
  std::vector<Pending> pending;
  pending.reserve(std::min(ref.keys.size(), cand.keys.size()));
  std::size_t i = 0, j = 0;
  while (i < ref.keys.size() || j < cand.keys.size()) {
    // Three-way on (id, repeat): < 0 the reference key comes first (only in the reference run).
    int order = i == ref.keys.size() ? 1 : j == cand.keys.size() ? -1 : ref.keys[i].id.compare(cand.keys[j].id);
    if (order == 0) order = ref.keys[i].repeat < cand.keys[j].repeat ? -1 : ref.keys[i].repeat > cand.keys[j].repeat ? 1 : 0;
    if (order < 0) {
      const ResultRecord& r = ref.record(ref.keys[i].record);
      const std::size_t ti = index_of(r.task);
      tasks[ti].accounting.missing_in_candidate.push_back(ref_of(ref, ref.keys[i].record));
      ++seen[ti][r.bucket].reference_only;
      ++i;
      continue;
    }
    if (order > 0) {
      const ResultRecord& r = cand.record(cand.keys[j].record);
      const std::size_t ti = index_of(r.task);
      tasks[ti].accounting.missing_in_reference.push_back(ref_of(cand, cand.keys[j].record));
      ++seen[ti][r.bucket].candidate_only;
      ++j;
      continue;
    }
    const ResultRecord& a = ref.record(ref.keys[i].record);
    const ResultRecord& b = cand.record(cand.keys[j].record);
    if (a.task != b.task || a.bucket != b.bucket)
      throw Error("trial \"" + a.id + "\" is task " + a.task + " bucket " + std::to_string(a.bucket) + " in " + ref.run->path +
                  " but task " + b.task + " bucket " + std::to_string(b.bucket) + " in " + cand.run->path +
                  ": the runs were made from different tasks files; compare runs of the same tasks file");
    const std::size_t ti = index_of(a.task);
    if (options.errors == ErrorPolicy::exclude && (a.error || b.error)) {
      ++tasks[ti].accounting.excluded_results;
      ++seen[ti][a.bucket].excluded;
    } else {
      pending.push_back({ti, {ref.keys[i].record, cand.keys[j].record, a.repeat}});
      ++seen[ti][a.bucket].paired;
    }
    ++i, ++j;
  }

  // Group each task's pairs into trials (consecutive pairs with one id).
  std::vector<std::vector<ResultPair>> by_task(tasks.size());
  for (const Pending& p : pending) by_task[p.task].push_back(p.pair);
  for (std::size_t ti = 0; ti < tasks.size(); ++ti) {
    TaskComparison& t = tasks[ti];
    check_buckets(t, seen[ti], ref, cand);
    t.result_pairs = std::move(by_task[ti]);
    t.binary = true;
    std::unordered_map<std::string, std::uint32_t> cluster_ids;  // only for results that carry `cluster`
    std::uint32_t next_cluster = 0;
    std::string key;
    const std::string where = results_path(ref.run->path);
    for (std::size_t k = 0; k < t.result_pairs.size();) {
      const ResultRecord& first = ref.record(t.result_pairs[k].reference_record);
      TrialPair trial;
      trial.id = first.id;
      trial.bucket = first.bucket;
      trial.first_result = static_cast<std::uint32_t>(k);
      while (k < t.result_pairs.size() && ref.record(t.result_pairs[k].reference_record).id == first.id) {
        const ResultRecord& a = ref.record(t.result_pairs[k].reference_record);
        const ResultRecord& b = cand.record(t.result_pairs[k].candidate_record);
        const double sa = used_score(a), sb = used_score(b);
        t.binary = t.binary && (sa == 0.0 || sa == 1.0) && (sb == 0.0 || sb == 1.0);
        trial.reference_score += sa;
        trial.candidate_score += sb;
        trial.reference_passed += used_passed(a);
        trial.candidate_passed += used_passed(b);
        ++trial.results;
        ++k;
      }
      const double n = trial.results;
      trial.reference_score /= n, trial.candidate_score /= n, trial.reference_passed /= n, trial.candidate_passed /= n;
      t.max_repeats = std::max<int>(t.max_repeats, static_cast<int>(trial.results));
      if (cluster_key(first, where, key)) {
        t.cluster_field = true;
        const auto [it, inserted] = cluster_ids.try_emplace(key, next_cluster);
        next_cluster += inserted;
        trial.cluster = it->second;
      } else {
        trial.cluster = next_cluster++;  // a trial of its own: its repeats are its cluster
      }
      t.trial_pairs.push_back(std::move(trial));
    }
    std::stable_sort(t.trial_pairs.begin(), t.trial_pairs.end(),
                     [](const TrialPair& a, const TrialPair& b) { return a.bucket < b.bucket; });
    t.trials = t.trial_pairs.size();
    t.results = t.result_pairs.size();
    t.clusters = next_cluster;
    t.accounting.paired_results = t.results;
    t.accounting.paired_trials = t.trials;
    const auto rate = [](std::size_t e, std::size_t n) { return n ? static_cast<double>(e) / static_cast<double>(n) : 0.0; };
    t.accounting.reference_error_rate = rate(t.accounting.reference_errors, t.accounting.reference_results);
    t.accounting.candidate_error_rate = rate(t.accounting.candidate_errors, t.accounting.candidate_results);
  }
  return tasks;
}

}  // namespace kvgate::compare
