#include "harness/gate/shard_env.h"

#include <charconv>

#include "harness/core/error.h"

namespace kvgate::gate {

namespace {

std::optional<long> read_number(const EnvLookup& env, const char* name) {
  const char* v = env(name);
  if (!v || !*v) return std::nullopt;
  const std::string s(v);
  long n = 0;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), n);
  if (ec != std::errc() || end != s.data() + s.size() || n < 0)
    throw Error("--shard auto: " + std::string(name) + "=\"" + s + "\" is not a non-negative integer: fix the variable or pass --shard i/n");
  return n;
}

runner::Shard checked(long index, long count, const std::string& what) {
  if (count < 1) throw Error("--shard auto: " + what + ": the shard count is " + std::to_string(count) + ": it must be at least 1");
  if (index >= count)
    throw Error("--shard auto: " + what + ": index " + std::to_string(index) + " is not below the count " + std::to_string(count) +
                ": number the array 0..N-1 (Slurm --array=0-" + std::to_string(count - 1) + ") or fix --shard-count");
  return runner::Shard{.index = static_cast<int>(index), .count = static_cast<int>(count)};
}

// Slurm: the array's ids from MIN in steps of STEP (--array=1-8:2 gives 1,3,5,7 -> shards 0..3);
// the count from SLURM_ARRAY_TASK_COUNT, else from MIN/MAX/STEP.
runner::Shard from_slurm(const EnvLookup& env, std::optional<int> shard_count) {
  const long id = *read_number(env, "SLURM_ARRAY_TASK_ID");
  const long min = read_number(env, "SLURM_ARRAY_TASK_MIN").value_or(0);
  const long step = read_number(env, "SLURM_ARRAY_TASK_STEP").value_or(1);
  if (step < 1) throw Error("--shard auto: SLURM_ARRAY_TASK_STEP must be at least 1");
  if (id < min || (id - min) % step != 0)
    throw Error("--shard auto: SLURM_ARRAY_TASK_ID " + std::to_string(id) + " is not on the array's range from SLURM_ARRAY_TASK_MIN " +
                std::to_string(min) + " in steps of " + std::to_string(step) + ": use a range array (--array=0-N-1)");
  const long index = (id - min) / step;
  std::optional<long> count;
  if (shard_count) count = *shard_count;
  else if (auto c = read_number(env, "SLURM_ARRAY_TASK_COUNT")) count = *c;
  else if (auto max = read_number(env, "SLURM_ARRAY_TASK_MAX")) count = (*max - min) / step + 1;
  if (!count)
    throw Error("--shard auto: SLURM_ARRAY_TASK_ID is set but neither SLURM_ARRAY_TASK_COUNT nor SLURM_ARRAY_TASK_MAX: pass "
                "--shard-count N");
  return checked(index, *count, "SLURM_ARRAY_TASK_ID " + std::to_string(id));
}

runner::Shard from_kubernetes(const EnvLookup& env, std::optional<int> shard_count) {
  const long index = *read_number(env, "JOB_COMPLETION_INDEX");
  std::optional<long> count;
  if (shard_count) count = *shard_count;
  else if (auto c = read_number(env, "KVGATE_SHARD_COUNT")) count = *c;
  if (!count)
    throw Error("--shard auto: JOB_COMPLETION_INDEX is set (a Kubernetes Indexed Job) but not the count: pass --shard-count N or set "
                "KVGATE_SHARD_COUNT to the Job's spec.completions");
  return checked(index, *count, "JOB_COMPLETION_INDEX " + std::to_string(index));
}

bool set(const EnvLookup& env, const char* name) {
  const char* v = env(name);
  return v && *v;
}

}  // namespace

runner::Shard resolve_shard(const std::string& text, std::optional<int> shard_count, const EnvLookup& env) {
  if (text != "auto") {
    runner::Shard s = runner::parse_shard(text);
    if (shard_count && *shard_count != s.count)
      throw Error("--shard " + text + " and --shard-count " + std::to_string(*shard_count) + " disagree: drop --shard-count");
    return s;
  }
  if (shard_count && *shard_count < 1) throw Error("--shard-count must be at least 1");
  const bool slurm = set(env, "SLURM_ARRAY_TASK_ID"), k8s = set(env, "JOB_COMPLETION_INDEX");
  if (slurm && k8s)
    throw Error("--shard auto: both SLURM_ARRAY_TASK_ID and JOB_COMPLETION_INDEX are set: pass --shard i/n to say which one counts");
  if (slurm) return from_slurm(env, shard_count);
  if (k8s) return from_kubernetes(env, shard_count);
  throw Error("--shard auto: neither a Slurm job array (SLURM_ARRAY_TASK_ID) nor a Kubernetes Indexed Job (JOB_COMPLETION_INDEX) "
              "started this process: pass --shard i/n (e.g. --shard 0/4), or run it as an array task");
}

std::string describe_shard_source(const std::string& text, const EnvLookup& env) {
  if (text != "auto") return "";
  if (set(env, "SLURM_ARRAY_TASK_ID")) return std::string("Slurm array task SLURM_ARRAY_TASK_ID=") + env("SLURM_ARRAY_TASK_ID");
  if (set(env, "JOB_COMPLETION_INDEX")) return std::string("Kubernetes Indexed Job JOB_COMPLETION_INDEX=") + env("JOB_COMPLETION_INDEX");
  return "";
}

}  // namespace kvgate::gate
