#include "harness/decoder/kv_flags.h"
#include "harness/decoder/kernel_switches.h"

#include "harness/core/error.h"
#include "harness/core/jsonl.h"
#include "harness/core/sha256.h"

namespace kvgate::decoder {

kernels::KvStoreOptions kv_store_options(const KvFlags& f) {
  if (f.format.empty()) throw Error("--kv-format: missing: pass the KV-cache format (bf16, fp8_e4m3, int4_per_token_head, ...)");
  kernels::KvStoreOptions o{.format = f.format};
  if (!f.params.empty()) {
    const bool from_file = f.params[0] == '@';
    const std::string text = from_file ? read_file(f.params.substr(1)) : f.params;
    nlohmann::json j = nlohmann::json::parse(text, nullptr, false);
    if (j.is_discarded() || !j.is_object())
      throw Error("--kv-params " + (from_file ? f.params : std::string("")) +
                  ": not a JSON object; e.g. --kv-params '{\"k_scale\": 0.05, \"v_scale\": 0.02}' or @params.json "
                  "(each format's parameters: docs/kv-formats.md)");
    o.params = std::move(j);
  }
  const auto put = [&](const char* key, const std::string& flag, const std::string& value) {
    if (value.empty()) return;
    if (o.params.contains(key))
      throw Error(flag + " and --kv-params both set \"" + key + "\": give it once");
    o.params[key] = value;
  };
  put("skip_layers", "--kv-skip-layers", f.skip_layers);
  put("scales", "--kv-scales", f.scales);
  return o;
}

nlohmann::json parse_kernel_switches(const std::string& v) {
  if (v.empty()) return nlohmann::json::object();
  const bool from_file = v[0] == '@';
  const nlohmann::json j = nlohmann::json::parse(from_file ? read_file(v.substr(1)) : v, nullptr, false);
  if (j.is_discarded() || !j.is_object())
    throw Error("--kernel-switches " + (from_file ? v : std::string("")) +
                ": not a JSON object; e.g. --kernel-switches '{\"q_fp8\": true}' or @switches.json (engine-kernel "
                "emulation switches; omit the flag for exact attention)");
  resolve_kernel_switches(j);  // a bad switch fails here, before any engine or run starts
  return j;
}

nlohmann::json with_numerics(nlohmann::json switches, const std::string& numerics) {
  if (numerics.empty()) return switches;
  resolve_numerics(numerics, kernels::AttentionNumerics::kExact);  // "exact" or "engine", else an Error naming the fix
  if (!switches.is_object()) switches = nlohmann::json::object();
  if (const auto it = switches.find("numerics"); it != switches.end() && *it != "" && *it != numerics)
    throw Error("--numerics " + numerics + " contradicts the kernel switch \"numerics\": " + it->dump() +
                ": give the attention numerics once (drop one of them)");
  switches["numerics"] = numerics;
  return switches;
}

nlohmann::json kv_identity(const kernels::KvStoreOptions& o) {
  nlohmann::json id = {{"format", o.format}, {"params", o.params}};
  if (auto it = o.params.find("scales"); it != o.params.end() && it->is_string())
    id["scales_sha256"] = sha256_file(it->get<std::string>());
  return id;
}

}  // namespace kvgate::decoder
