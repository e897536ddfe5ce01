#include "harness/gate/gate_dir.h"

#include <filesystem>

#include "harness/core/atomic_file.h"
#include "harness/core/error.h"
#include "harness/core/json_fields.h"
#include "harness/core/jsonl.h"
#include "harness/core/manifest.h"
#include "harness/core/version.h"

namespace kvgate::gate {

using nlohmann::json;
namespace fs = std::filesystem;

namespace {

std::string record_path(const std::string& dir) { return dir + "/gate.json"; }

json shard_json(const runner::Shard& s) { return s.active() ? json(shard_text(s)) : json(nullptr); }

}  // namespace

std::string shard_text(const runner::Shard& s) { return s.active() ? std::to_string(s.index) + "/" + std::to_string(s.count) : ""; }

json read_gate_record(const std::string& dir) {
  const std::string path = record_path(dir);
  if (!fs::is_regular_file(path)) throw Error(dir + ": no gate.json: not a directory written by `kvgate gate` (check the path)");
  const json j = json::parse(read_file(path), nullptr, false);
  if (j.is_discarded() || !j.is_object() || j.value("schema", "") != kGateSchema)
    throw Error(path + ": not a kvgate gate record: pass a directory written by `kvgate gate`");
  return j;
}

void check_or_record_plan(const std::string& dir, const json& plan, const runner::Shard& shard) {
  const std::string path = record_path(dir);
  if (fs::exists(path)) {
    const json old = read_gate_record(dir);
    if (old.contains("merged_from"))
      throw Error(dir + ": holds a merged gate (kvgate gate --merge): run shards and whole gates in another --out");
    if (old.value("plan", json()) != plan) {
      std::string what;
      const json& a = old["plan"];
      for (const char* k : {"suite", "seed", "tasks", "token_counter", "golden_prompts", "gsm8k_data"})
        if (a.value(k, json()) != plan.value(k, json())) what += (what.empty() ? "" : ", ") + std::string(k);
      throw Error(dir + ": holds a gate made with another " + (what.empty() ? std::string("plan") : what) +
                  "; its trials and runs belong to that one: re-run with the same suite and inputs to resume, or pass another --out");
    }
    const json old_shard = old.value("shard", json());
    if (old_shard != shard_json(shard))
      throw Error(dir + ": holds " + (old_shard.is_null() ? std::string("a whole gate") : "shard " + old_shard.get<std::string>()) +
                  ", not " + (shard.active() ? "shard " + shard_text(shard) : std::string("a whole gate")) +
                  ": give each shard its own --out (e.g. gate/shard-$SLURM_ARRAY_TASK_ID)");
    return;
  }
  write_file_atomic(path, json{{"schema", kGateSchema}, {"kvgate_version", version()}, {"created_at", utc_now_rfc3339()},
                               {"plan", plan}, {"shard", shard_json(shard)}}
                              .dump(2) +
                              "\n");
}

void record_trials_and_configurations(const std::string& dir, const std::map<std::string, std::string>& tasks_sha256,
                                      const std::vector<Configuration>& configs, const json& inputs) {
  json j = read_gate_record(dir);
  j["inputs"] = inputs;
  j["tasks_sha256"] = tasks_sha256;
  json c = json::array();
  for (const Configuration& x : configs) c.push_back(configuration_record(x));
  j["configurations"] = c;
  write_file_atomic(record_path(dir), j.dump(2) + "\n");
}

json configuration_record(const Configuration& c) {
  json j = {{"label", c.label}, {"backend", c.backend.kind}};
  if (c.backend.kind == "reference") {
    j["model_dir"] = c.backend.reference.model_dir;
    j["kv_format"] = c.kv_format;
    j["device"] = c.backend.reference.device;
  } else {
    j["model"] = c.backend.http.model;
    j["endpoints"] = c.backend.http.endpoints;
    j["kv_format"] = c.kv_format.empty() ? json(nullptr) : json(c.kv_format);
  }
  if (!c.kv.format.empty()) j["kv"] = c.kv.record();
  return j;
}

Configuration configuration_from_record(const json& r, const std::string& where) {
  const FieldReader f(r, where);
  Configuration c{.label = f.str("label")};
  c.backend.kind = f.str("backend");
  if (c.backend.kind == "reference") {
    c.backend.reference.model_dir = f.str("model_dir");
    c.kv_format = f.str("kv_format");
    c.backend.reference.kv_format = c.kv_format;
    c.backend.reference.device = f.str("device");
  } else {
    if (r.contains("kv_format") && r["kv_format"].is_string()) c.kv_format = r["kv_format"].get<std::string>();
    c.backend.http.model = f.str("model");
    for (const json& e : f.array("endpoints")) c.backend.http.endpoints.push_back(e.get<std::string>());
  }
  // The settings as recorded (a merged gate runs nothing: they name the configuration in its reports).
  if (r.contains("kv") && r["kv"].is_object()) {
    const json& k = r["kv"];
    c.kv.format = k.value("format", c.kv_format);
    if (k.contains("scales") && k["scales"].is_string()) c.kv.scales = k["scales"].get<std::string>();
    if (k.contains("skip_layers") && k["skip_layers"].is_array()) c.kv.skip_layers = k["skip_layers"].get<std::vector<int>>();
    c.kv.params = k.value("params", json::object());
    c.kv.kernel_switches = k.value("kernel_switches", json::object());
    if (c.backend.kind == "reference") {
      c.backend.reference.kv_params = c.kv.kv_params();
      c.backend.reference.kernel_switches = c.kv.kernel_switches;
    }
  }
  return c;
}

}  // namespace kvgate::gate
