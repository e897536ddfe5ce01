// `kvgate gate --merge SHARD_DIR... --out DIR`: joins the shard directories of one gate (each made
// by `kvgate gate --shard i/n`), then compares and reports as the whole gate would. Every shard
// must hold the same plan and byte-identical trials (sha256 of each tasks file) and the same
// configurations (endpoints may differ: each shard may reach its own replica); missing shards and
// unfinished runs are named, or with allow_partial merged as they are and the reports marked partial.
#pragma once
#include <string>
#include <vector>

#include "harness/gate/gate.h"

namespace kvgate::gate {

struct MergeShardsOptions {
  std::vector<std::string> shard_dirs{};
  std::string out_dir{};  // new, empty, or an earlier merge (remade)
  bool allow_partial = false;
  std::string history_db{};  // --history FILE (required when the suite keeps a history)
};

GateResult merge_gate_shards(const MergeShardsOptions& options);

// What a merge would find, without writing: per shard directory its shard and runs, the missing
// shards and unfinished runs. For `--merge ... --dry-run`.
nlohmann::json inspect_shards(const std::vector<std::string>& shard_dirs);

}  // namespace kvgate::gate
