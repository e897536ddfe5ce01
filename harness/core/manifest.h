// run.json: what produced a run directory (product.md "Files"). Only `label` is required, so a
// hand-made run directory works with `compare`; everything else is provenance.
#pragma once
#include <string>

#include <nlohmann/json.hpp>

namespace kvgate {

struct RunManifest {
  std::string label;
  std::string kvgate_version;
  std::string kvgate_commit;
  std::string backend;    // "openai" (HTTP endpoint) or "reference" (kvgate's decoder)
  std::string endpoint;   // base URL(s), comma separated; never carries credentials
  std::string model;
  std::string api;        // "chat" or "completions"
  nlohmann::json engine = nlohmann::json::object();    // metadata read from the server or its log
  nlohmann::json kv = nlohmann::json::object();        // {"format", "scales", "skip_layers", switches}
  nlohmann::json sampling = nlohmann::json::object();  // temperature, top_p, seed, max_tokens, ...
  std::string tasks_path;
  std::string tasks_sha256;
  std::string started_at;  // RFC 3339, UTC
  std::string ended_at;
  nlohmann::json extra = nlohmann::json::object();  // other fields, kept through a round trip
};

nlohmann::json to_json(const RunManifest& m);
RunManifest manifest_from_json(const nlohmann::json& j, const std::string& where);

RunManifest read_manifest(const std::string& path);
void write_manifest(const std::string& path, const RunManifest& m);  // atomic

// "2026-11-29T16:15:02Z"
std::string utc_now_rfc3339();

}  // namespace kvgate
