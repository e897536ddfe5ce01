// `kvgate gate --dry-run`: the plan of a gate before any spend. Per task and bucket the trials,
// repeats and requests, the prompt tokens (a long-context bucket's trials are fitted to exactly
// that length; other tasks' prompts are short and not counted without rendering them) and the most
// output tokens a request may take; totals per configuration and for the gate; with a shard count,
// what each shard gets. Counted from the suite alone: nothing is generated, read from a server or sent.
#pragma once
#include <string>

#include <nlohmann/json.hpp>

#include "harness/gate/gate.h"

namespace kvgate::gate {

// options.shard (when active) is marked as this process's shard; shard_count > 1 splits the plan.
nlohmann::json dry_run_plan(const GateOptions& options, int shard_count);

// The plan as a table for people.
std::string dry_run_text(const nlohmann::json& plan);

}  // namespace kvgate::gate
