#include "reports/run_facts.h"

namespace kvgate::reports {

using nlohmann::json;

namespace {

std::string str(const json& j, const char* key) {
  if (!j.is_object()) return {};
  const auto it = j.find(key);
  return it == j.end() || it->is_null() ? std::string() : scalar_text(*it);
}

const json& obj(const json& j, const char* key) {
  static const json empty = json::object();
  if (!j.is_object()) return empty;
  const auto it = j.find(key);
  return it != j.end() && it->is_object() ? *it : empty;
}

// "k v, k v" over an object's fields, skipping `skip` and nulls, in the object's (sorted) order.
std::string joined_fields(const json& o, std::initializer_list<const char*> skip) {
  std::string out;
  for (auto it = o.begin(); it != o.end(); ++it) {
    bool skipped = it->is_null() || ((it->is_array() || it->is_object()) && it->empty());
    for (const char* s : skip) skipped = skipped || it.key() == s;
    if (skipped) continue;
    if (!out.empty()) out += ", ";
    out += it.key() + " " + scalar_text(*it);
  }
  return out;
}

}  // namespace

std::string scalar_text(const json& v) {
  if (v.is_string()) return v.get<std::string>();
  return v.dump(-1, ' ', false, json::error_handler_t::replace);
}

RunFacts run_facts(const json& m) {
  RunFacts f;
  if (!m.is_object()) return f;
  f.label = str(m, "label");
  f.backend = str(m, "backend");
  f.endpoint = str(m, "endpoint");
  f.model = str(m, "model");
  f.api = str(m, "api");
  const json& engine = obj(m, "engine");
  const json& summary = obj(engine, "summary");
  f.engine = str(summary, "engine");
  if (f.engine.empty()) f.engine = str(engine, "name");
  if (f.engine.empty()) f.engine = str(engine, "engine");
  f.engine_version = str(summary, "version");
  if (f.engine_version.empty()) f.engine_version = str(engine, "version");
  f.attention_numerics = str(engine, "attention_numerics");
  if (f.attention_numerics.empty() && f.backend == "reference") f.attention_numerics = "exact";  // a run.json without the field ran exact
  const json& kv = obj(m, "kv");
  f.kv_format = str(kv, "format");
  if (f.kv_format.empty()) f.kv_format = str(kv, "engine_reported");
  f.kv_details = joined_fields(kv, {"format"});
  f.sampling = joined_fields(obj(m, "sampling"), {"seed_per_repeat", "extra_body"});
  const json& extra_body = obj(obj(m, "sampling"), "extra_body");
  if (!extra_body.empty()) f.sampling += (f.sampling.empty() ? "" : ", ") + std::string("extra_body ") + scalar_text(extra_body);
  f.tasks_path = str(m, "tasks_path");
  f.tasks_sha256 = str(m, "tasks_sha256");
  f.started_at = str(m, "started_at");
  f.ended_at = str(m, "ended_at");
  f.kvgate_version = str(m, "kvgate_version");
  f.kvgate_commit = str(m, "kvgate_commit");
  return f;
}

RunFacts run_facts(const RunManifest& manifest) { return run_facts(to_json(manifest)); }

std::string engine_name(const RunFacts& f) {
  if (f.engine.empty()) return f.engine_version;
  return f.engine_version.empty() ? f.engine : f.engine + " " + f.engine_version;
}

std::vector<std::pair<std::string, std::string>> fact_rows(const RunFacts& f) {
  return {{"engine", engine_name(f)},
          {"model", f.model},
          {"KV format", f.kv_format},
          {"KV details", f.kv_details},
          {"sampling", f.sampling},
          {"backend", f.backend},
          {"endpoint", f.endpoint},
          {"API", f.api},
          {"tasks file", f.tasks_path},
          {"tasks sha256", f.tasks_sha256},
          {"started", f.started_at},
          {"ended", f.ended_at},
          {"kvgate", f.kvgate_version + (f.kvgate_commit.empty() ? "" : " (" + f.kvgate_commit + ")")}};
}

}  // namespace kvgate::reports
