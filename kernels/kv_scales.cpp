#include "kernels/kv_scales.h"

#include <cmath>

#include "harness/core/error.h"
#include "harness/core/json_fields.h"
#include "harness/core/jsonl.h"

namespace kvgate::kernels {

using nlohmann::json;

KvScaleTable KvScaleTable::uniform(const KvShape& shape, float k_scale, float v_scale) {
  KvScaleTable t;
  t.k.assign(shape.layers, std::vector<float>(shape.kv_heads, k_scale));
  t.v.assign(shape.layers, std::vector<float>(shape.kv_heads, v_scale));
  return t;
}

namespace {

float scale_value(const json& v, const std::string& where) {
  if (!v.is_number()) throw Error(where + ": a scale must be a number, got " + describe_json_value(v));
  const double d = v.get<double>();
  if (!std::isfinite(d) || d <= 0 || static_cast<float>(d) <= 0.0f || !std::isfinite(static_cast<float>(d)))
    throw Error(where + ": a scale must be finite and positive (an fp32), got " + describe_json_value(v));
  return static_cast<float>(d);
}

// A layer entry's "k" or "v": a number (every head) or an array of kv_heads numbers.
std::vector<float> head_values(const json& v, int kv_heads, const std::string& where, bool& per_head) {
  if (v.is_array()) {
    if (static_cast<int>(v.size()) != kv_heads)
      throw Error(where + ": " + std::to_string(v.size()) + " per-head scales for a model with " +
                  std::to_string(kv_heads) + " KV heads: give one per KV head (or one number per layer)");
    std::vector<float> out;
    for (std::size_t h = 0; h < v.size(); ++h) out.push_back(scale_value(v[h], where + "[" + std::to_string(h) + "]"));
    per_head = true;
    return out;
  }
  return std::vector<float>(kv_heads, scale_value(v, where));
}

KvScaleTable parse_kvgate(const json& j, const KvShape& shape, const std::string& where) {
  FieldReader r(j, where);
  if (r.integer("kvgate_kv_scales") != 1)
    throw Error(where + ": field \"kvgate_kv_scales\" must be 1 (the only version this kvgate reads)");
  const json& layers = r.array("layers");
  if (static_cast<int>(layers.size()) != shape.layers)
    throw Error(where + ": scales for " + std::to_string(layers.size()) + " layers, but the model has " +
                std::to_string(shape.layers) + ": calibrate this model or pass its own scales file");
  KvScaleTable t;
  bool per_head = false;
  for (std::size_t l = 0; l < layers.size(); ++l) {
    const std::string at = where + ": layers[" + std::to_string(l) + "]";
    FieldReader lr(layers[l], at);
    t.k.push_back(head_values(lr.any("k"), shape.kv_heads, at + ".k", per_head));
    t.v.push_back(head_values(lr.any("v"), shape.kv_heads, at + ".v", per_head));
  }
  t.granularity = per_head ? "head" : "tensor";
  if (r.has_value("granularity")) {
    const std::string g = r.str("granularity");
    if (g != "tensor" && g != "head") r.fail("granularity", "must be \"tensor\" or \"head\", got \"" + g + "\"");
    if (g == "tensor" && per_head) r.fail("granularity", "is \"tensor\" but some layers give per-head arrays");
    t.granularity = g;
  }
  return t;
}

KvScaleTable parse_sglang(const json& j, const KvShape& shape, const std::string& where) {
  const std::string at = where + ": kv_cache.scaling_factor";
  const json& sf = FieldReader(FieldReader(j, where).object("kv_cache"), where + ": kv_cache").object("scaling_factor");
  const json& rank0 = FieldReader(sf, at).object("0");
  KvScaleTable t;
  for (int l = 0; l < shape.layers; ++l) {
    auto it = rank0.find(std::to_string(l));
    if (it == rank0.end())
      throw Error(at + ".0: no scale for layer " + std::to_string(l) + " (the model has " + std::to_string(shape.layers) +
                  " layers): use a scales file made for this model");
    const float s = scale_value(*it, at + ".0." + std::to_string(l));
    t.k.emplace_back(shape.kv_heads, s);
    t.v.emplace_back(shape.kv_heads, s);
  }
  if (static_cast<int>(rank0.size()) != shape.layers)
    throw Error(at + ".0: scales for " + std::to_string(rank0.size()) + " layers, but the model has " +
                std::to_string(shape.layers) + ": use a scales file made for this model");
  return t;
}

}  // namespace

KvScaleTable parse_kv_scales(const json& j, const KvShape& shape, const std::string& where) {
  if (!j.is_object()) throw Error(where + ": a KV scales file must be a JSON object, got " + describe_json_value(j));
  if (j.contains("kvgate_kv_scales")) return parse_kvgate(j, shape, where);
  if (j.contains("kv_cache")) return parse_sglang(j, shape, where);
  throw Error(where + ": not a KV scales file: expected kvgate's {\"kvgate_kv_scales\": 1, \"layers\": [...]} or "
                      "SGLang's {\"kv_cache\": {\"scaling_factor\": ...}} (make one with `kvgate calibrate`)");
}

json kv_scales_to_json(const KvScaleTable& table) {
  json layers = json::array();
  for (std::size_t l = 0; l < table.k.size(); ++l) {
    if (table.granularity == "head")
      layers.push_back({{"k", table.k[l]}, {"v", table.v[l]}});
    else
      layers.push_back({{"k", table.k[l].at(0)}, {"v", table.v[l].at(0)}});
  }
  return {{"kvgate_kv_scales", 1}, {"granularity", table.granularity}, {"layers", layers}};
}

json read_kv_scales_file(const std::string& path) {
  const std::string text = read_file(path);
  json j = json::parse(text, nullptr, false);
  if (j.is_discarded()) throw Error(path + ": not valid JSON (a KV scales file is one JSON object)");
  return j;
}

}  // namespace kvgate::kernels
