// `--shard auto`: the shard index and count from the scheduler that started this process. Slurm
// job arrays set SLURM_ARRAY_TASK_ID (and _MIN, _MAX, _STEP, _COUNT); Kubernetes Indexed Jobs set
// JOB_COMPLETION_INDEX but not the completion count, which comes from --shard-count or
// KVGATE_SHARD_COUNT (set it in the Job's pod template, equal to spec.completions).
#pragma once
#include <functional>
#include <optional>
#include <string>

#include "harness/runner/work_plan.h"

namespace kvgate::gate {

// Reads one environment variable (nullptr when unset); std::getenv in the product.
using EnvLookup = std::function<const char*(const char*)>;

// "i/n" as `kvgate run --shard`, or "auto" read from the environment. `shard_count` (--shard-count)
// gives or overrides the count. Errors name the variable or flag and the fix: neither scheduler's
// variables set, both set, an index outside the count, a non-number.
runner::Shard resolve_shard(const std::string& text, std::optional<int> shard_count, const EnvLookup& env);

// Where an "auto" shard came from, for the log: "Slurm array task 3 (SLURM_ARRAY_TASK_ID 4, min 1,
// count 4)". "" for an explicit i/n.
std::string describe_shard_source(const std::string& text, const EnvLookup& env);

}  // namespace kvgate::gate
