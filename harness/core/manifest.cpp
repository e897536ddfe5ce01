#include "harness/core/manifest.h"

#include <chrono>
#include <ctime>

#include "harness/core/atomic_file.h"
#include "harness/core/error.h"
#include "harness/core/json_fields.h"
#include "harness/core/jsonl.h"

namespace kvgate {

using nlohmann::json;

namespace {
const char* const kStringFields[] = {"kvgate_version", "kvgate_commit", "backend",    "endpoint",   "model",
                                     "api",            "tasks_path",    "tasks_sha256", "started_at", "ended_at"};
const char* const kObjectFields[] = {"engine", "kv", "sampling"};

// Templates on constness, so reading and writing share one name table.
template <class M>
auto string_field(M& m, std::string_view key) -> decltype(&m.label) {
  if (key == "kvgate_version") return &m.kvgate_version;
  if (key == "kvgate_commit") return &m.kvgate_commit;
  if (key == "backend") return &m.backend;
  if (key == "endpoint") return &m.endpoint;
  if (key == "model") return &m.model;
  if (key == "api") return &m.api;
  if (key == "tasks_path") return &m.tasks_path;
  if (key == "tasks_sha256") return &m.tasks_sha256;
  if (key == "started_at") return &m.started_at;
  if (key == "ended_at") return &m.ended_at;
  return nullptr;
}
template <class M>
auto object_field(M& m, std::string_view key) -> decltype(&m.engine) {
  if (key == "engine") return &m.engine;
  if (key == "kv") return &m.kv;
  if (key == "sampling") return &m.sampling;
  return nullptr;
}
}  // namespace

json to_json(const RunManifest& m) {
  json j = m.extra.is_object() ? m.extra : json::object();
  j["label"] = m.label;
  for (const char* k : kStringFields) j[k] = *string_field(m, k);
  for (const char* k : kObjectFields) j[k] = *object_field(m, k);
  return j;
}

RunManifest manifest_from_json(const json& j, const std::string& where) {
  FieldReader f(j, where);
  RunManifest m;
  m.label = f.str("label");
  for (auto it = j.begin(); it != j.end(); ++it) {
    if (it.key() == "label") continue;
    if (std::string* s = string_field(m, it.key())) {
      if (!it->is_null()) *s = f.str(it.key().c_str());
    } else if (json* o = object_field(m, it.key())) {
      if (!it->is_null()) *o = f.object(it.key().c_str());
    } else {
      m.extra[it.key()] = it.value();
    }
  }
  return m;
}

RunManifest read_manifest(const std::string& path) {
  const std::string text = read_file(path);
  json j;
  try {
    j = json::parse(text);
  } catch (const json::parse_error& e) {
    throw Error(path + ": not valid JSON (" + std::string(e.what()) + ")");
  }
  return manifest_from_json(j, path);
}

void write_manifest(const std::string& path, const RunManifest& m) {
  write_file_atomic(path, to_json(m).dump(2, ' ', false, json::error_handler_t::replace) + "\n");
}

std::string utc_now_rfc3339() {
  std::time_t t = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

}  // namespace kvgate
