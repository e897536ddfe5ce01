// What a report says about a run, read from its run.json (as the manifest object of the compare
// JSON, or a RunManifest): engine and version, model, KV format, sampling, tasks file, dates.
// Missing fields stay empty: a hand-made run directory has only a label.
#pragma once
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "harness/core/manifest.h"

namespace kvgate::reports {

struct RunFacts {
  std::string label, backend, endpoint, model, api;
  std::string engine, engine_version;  // run.json engine.summary (the driver's probe), else engine.{name,version}
  std::string attention_numerics;      // the reference decoder's engine.attention_numerics ("exact" when absent)
  std::string kv_format;               // kv.format, else what the engine reported (kv.engine_reported)
  std::string kv_details;              // the other kv fields, "key value, ..."
  std::string sampling;                // "temperature 0, top_p 1, max_tokens 512, seed 7, ..."
  std::string tasks_path, tasks_sha256, started_at, ended_at, kvgate_version, kvgate_commit;
};

RunFacts run_facts(const nlohmann::json& manifest);  // not an object: every field empty
RunFacts run_facts(const RunManifest& manifest);

// "engine version" ("vllm 0.6.3"), or the part that is known, or "" when neither is.
std::string engine_name(const RunFacts& f);

// Rows for a metadata table: (field, value), in a fixed order, every field (empty values included).
std::vector<std::pair<std::string, std::string>> fact_rows(const RunFacts& f);

// A short scalar rendering of a JSON value: strings as is, numbers as JSON writes them, objects and
// arrays as compact JSON.
std::string scalar_text(const nlohmann::json& v);

}  // namespace kvgate::reports
