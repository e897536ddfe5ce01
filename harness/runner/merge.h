// `kvgate merge`: joins run directories of one configuration, typically the shards of a job
// spread over machines (--shard i/n), into one run directory that `compare` reads like any other
// and that `kvgate run` can resume if parts are missing.
#pragma once
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace kvgate::runner {

struct MergeOptions {
  std::vector<std::string> dirs;
  std::string out;
  bool allow_partial = false;  // shards missing from i/n are allowed (resume the merge to fill them)
  // Identity keys besides the shard that may differ between inputs: a gate's shards on a cluster
  // each reach their own replica of the engine ("endpoints"); run.json keeps every shard's engine.
  std::set<std::string> may_differ{};
};

// Checks the inputs (same identity but for the shard, distinct shards, no pair twice), writes
// OUT/results.jsonl and OUT/run.json atomically, and returns the merged summary.
nlohmann::json merge_runs(const MergeOptions& options);

}  // namespace kvgate::runner
