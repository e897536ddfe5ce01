// KV scales: the per-layer (optionally per-KV-head) dequantization multipliers of the per-tensor
// formats (x ~ q * scale), uncalibrated (1.0) or calibrated (`kvgate calibrate`, checkpoint scales).
//
// kvgate's scales file ("granularity" is "tensor" or "head"; a head entry is an array of kv_heads):
//   {"kvgate_kv_scales": 1, "granularity": "tensor",
//    "layers": [{"k": 0.0123, "v": 0.0045}, ...]}          one entry per layer, in order
// Also read: SGLang's --quantization-param-path layout (one scale per layer for K and V, keyed by
// TP rank then layer; rank "0" is used):
//   {"kv_cache": {"dtype": "float8_e4m3fn", "scaling_factor": {"0": {"0": 0.0123, "1": ...}}}}
#pragma once
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "kernels/kv_store.h"

namespace kvgate::kernels {

struct KvScaleTable {
  std::string granularity = "tensor";  // "tensor": one value per layer; "head": one per KV head
  std::vector<std::vector<float>> k, v;  // [layer][kv_head], always filled for every head

  static KvScaleTable uniform(const KvShape& shape, float k_scale, float v_scale);
  float k_at(int layer, int head) const { return k[layer][head]; }
  float v_at(int layer, int head) const { return v[layer][head]; }
};

// Parses a scales object for a model of `shape`; `where` names it in errors (a path or
// "--kv-scales"). Every scale must be finite and positive; the layer (and head) counts must match.
KvScaleTable parse_kv_scales(const nlohmann::json& j, const KvShape& shape, const std::string& where);

// The table in kvgate's format (what run.json records and `kvgate calibrate` writes).
nlohmann::json kv_scales_to_json(const KvScaleTable& table);

// Reads and parses a JSON file (errors name the path); parse_kv_scales checks its content.
nlohmann::json read_kv_scales_file(const std::string& path);

}  // namespace kvgate::kernels
