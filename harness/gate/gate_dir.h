// DIR/gate.json, the record of a gate directory: the plan its trials came from (suite, seed, each
// task's buckets, the token counter), the shard it holds ("i/n", or null for a whole gate), the
// configurations it ran, the sha256 of each tasks file (equal in every shard of one gate: the proof
// that shards ran the same trials), and for a merged gate the shard directories it joined.
#pragma once
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "harness/gate/configurations.h"
#include "harness/runner/work_plan.h"

namespace kvgate::gate {

inline constexpr const char* kGateSchema = "kvgate-gate/1";

std::string shard_text(const runner::Shard& shard);  // "i/n", "" when not sharded

// A new DIR: records the plan and shard. An existing one: the same plan and shard resume; another
// plan or shard is refused (Error names what differs), rather than mixing two gates in one DIR.
void check_or_record_plan(const std::string& dir, const nlohmann::json& plan, const runner::Shard& shard);

// After the trials exist: the configurations, each tasks file's sha256, and `inputs` (the suite's
// source, the maximum context and where it came from, the skipped tasks), added to gate.json.
void record_trials_and_configurations(const std::string& dir, const std::map<std::string, std::string>& tasks_sha256,
                                      const std::vector<Configuration>& configs, const nlohmann::json& inputs);

// A configuration as gate.json keeps it (label, backend, model or model_dir and kv_format,
// endpoints), and back: enough for the reports of a merged gate, which runs nothing.
nlohmann::json configuration_record(const Configuration& config);
Configuration configuration_from_record(const nlohmann::json& record, const std::string& where);

// DIR/gate.json as read; Error names the path when it is missing or not a gate record.
nlohmann::json read_gate_record(const std::string& dir);

}  // namespace kvgate::gate
