// What a gate will do before it does any of it: the model's maximum context and where it came
// from, each task's length buckets within it, the tasks left out (golden without prompts). The gate
// runs this plan; `kvgate gate --dry-run` prints it.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "harness/gate/gate.h"

namespace kvgate::gate {

struct PlannedTask {
  const TaskSpec* spec = nullptr;  // into GateOptions::suite (which must outlive the plan)
  std::vector<std::int64_t> buckets{};
  std::string tasks_path{};  // DIR/tasks/<task>.jsonl
};

struct GatePlan {
  std::int64_t max_context = 0;  // 0: unknown
  std::string max_context_source{};
  nlohmann::json max_context_engine{};  // the limiting endpoint's engine summary (null: not an endpoint)
  std::vector<PlannedTask> tasks{};
  std::vector<std::string> skipped_tasks{};
};

// ask_servers false (a dry run): the context comes from --max-context or a checkpoint only, and a
// ladder up to the context of an endpoint then needs --max-context (Error says so).
GatePlan plan_gate(const GateOptions& options, bool ask_servers);

// DIR/tasks/<task>.jsonl
std::string task_file(const std::string& dir, const std::string& task);

}  // namespace kvgate::gate
