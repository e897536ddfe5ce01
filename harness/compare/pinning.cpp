#include "harness/compare/pinning.h"

#include <optional>
#include <set>

namespace kvgate::compare {

using nlohmann::json;

namespace {

// A value at a path of a JSON object; nullopt when absent (null is a recorded "unset").
std::optional<json> at(const json& j, std::initializer_list<const char*> path) {
  const json* cur = &j;
  for (const char* k : path) {
    if (!cur->is_object()) return std::nullopt;
    const auto it = cur->find(k);
    if (it == cur->end()) return std::nullopt;
    cur = &*it;
  }
  return *cur;
}

std::optional<json> text(const std::string& s) { return s.empty() ? std::nullopt : std::optional<json>(s); }

// The first recorded of several sources (the engine log, which says what the engine did, first).
std::optional<json> first(std::initializer_list<std::optional<json>> sources) {
  for (const auto& s : sources)
    if (s) return s;
  return std::nullopt;
}

// A value that names something: a log that matched no engine records engine null, which says
// nothing about the engine the endpoint probe named.
std::optional<json> named(std::optional<json> v) { return v && v->is_string() ? v : std::nullopt; }

// How the reference decoder computed attention: recorded by the engine; a reference run without
// the field ran exact. Other backends compute as their engine does.
std::optional<json> attention_numerics(const RunManifest& m) {
  if (auto v = at(m.engine, {"attention_numerics"})) return v;
  return m.backend == "reference" ? std::optional<json>("exact") : std::nullopt;
}

struct Source {
  std::string field, label;
  std::optional<json> (*get)(const RunManifest&);
};

const std::vector<Source>& sources() {
  static const std::vector<Source> s = {
      {"kvgate_version", "kvgate version", [](const RunManifest& m) { return text(m.kvgate_version); }},
      {"backend", "backend", [](const RunManifest& m) { return text(m.backend); }},
      {"engine", "engine",
       [](const RunManifest& m) {
         return first({named(at(m.engine, {"log", "engine"})), named(at(m.engine, {"summary", "engine"}))});
       }},
      {"engine_version", "engine version",
       [](const RunManifest& m) {
         return first({at(m.engine, {"log", "facts", "version"}), at(m.engine, {"summary", "version"})});
       }},
      {"model", "model", [](const RunManifest& m) { return text(m.model); }},
      {"model_loaded", "model the engine loaded",
       [](const RunManifest& m) { return first({at(m.engine, {"log", "facts", "model"}), at(m.engine, {"summary", "model_loaded"})}); }},
      {"revision", "model revision", [](const RunManifest& m) { return at(m.engine, {"log", "facts", "revision"}); }},
      {"attention_backend", "attention backend",
       [](const RunManifest& m) { return at(m.engine, {"log", "facts", "attention_backend"}); }},
      {"flash_attn_version", "FlashAttention version",
       [](const RunManifest& m) { return at(m.engine, {"log", "facts", "flash_attn_version"}); }},
      {"attention_numerics", "attention numerics", attention_numerics},
      {"flash_attn", "flash attention (llama.cpp)", [](const RunManifest& m) { return at(m.engine, {"log", "facts", "flash_attn"}); }},
      {"tensor_parallel", "tensor parallel size",
       [](const RunManifest& m) { return at(m.engine, {"log", "facts", "tensor_parallel"}); }},
      {"gpu", "GPU", [](const RunManifest& m) { return at(m.engine, {"log", "facts", "gpu"}); }},
      {"api", "API", [](const RunManifest& m) { return text(m.api); }},
      {"max_tokens", "max tokens", [](const RunManifest& m) { return at(m.sampling, {"max_tokens"}); }},
      {"tasks_sha256", "tasks file (sha256)", [](const RunManifest& m) { return text(m.tasks_sha256); }},
  };
  return s;
}

// Labels that matter when neither run recorded them (the others are noise for hand-made runs).
const std::set<std::string> kReportUnrecorded = {"engine_version", "attention_backend", "tasks_sha256", "revision"};

bool is_hopper(const json& gpu) {
  if (!gpu.is_string()) return false;
  const std::string& g = gpu.get_ref<const std::string&>();
  for (const char* h : {"H100", "H200", "H800", "H20", "GH200"})
    if (g.find(h) != std::string::npos) return true;
  return false;
}

std::string show(const json& v) { return value_text(v); }

// The scales a run quantized with: a file's (its sha256 from the run's identity), a calibrated table,
// or the per-tensor k_scale/v_scale (1.0 is vLLM's uncalibrated default).
std::optional<json> kv_scales(const RunManifest& m) {
  if (m.kv.is_object() && m.kv.contains("scales")) {
    const auto sha = at(m.extra, {"identity", "kv", "scales_sha256"});
    return json(sha && sha->is_string() ? "calibrated (sha256 " + sha->get<std::string>().substr(0, 12) + ")" : "calibrated");
  }
  const auto k = at(m.kv, {"k_scale"}), v = at(m.kv, {"v_scale"});
  if (k || v) return json("k_scale " + (k ? show(*k) : "-") + ", v_scale " + (v ? show(*v) : "-"));
  return std::nullopt;
}

std::optional<json> non_empty(std::optional<json> v) {
  if (!v || v->is_null() || (v->is_array() && v->empty()) || (v->is_object() && v->empty())) return std::nullopt;
  return v;
}

std::optional<json> kv_format(const RunManifest& m) { return first({non_empty(at(m.kv, {"format"})), at(m.kv, {"engine_reported"})}); }

}  // namespace

std::string value_text(const json& v) {
  if (v.is_string()) return v.get<std::string>();
  if (v.is_null()) return "unset";
  return v.dump(-1, ' ', false, json::error_handler_t::replace);
}

std::string kv_settings_line(const Pinning& p) {
  std::string s;
  for (const PinnedFact& f : p.kv_settings) s += (s.empty() ? "" : "; ") + describe(f);
  return s;
}

std::string describe(const PinnedFact& f) {
  const auto side = [](const std::optional<json>& v) { return v ? show(*v) : std::string("(not recorded)"); };
  return f.label + " " + side(f.reference) + " -> " + side(f.candidate);
}

Pinning check_pinning(const RunManifest& ref, const RunManifest& cand, const std::string& ref_label,
                      const std::string& cand_label) {
  Pinning p;
  const auto compare_one = [&](const std::string& field, const std::string& label, const std::optional<json>& a,
                               const std::optional<json>& b) {
    if (a && b) {
      p.compared.push_back(label);
      if (*a != *b) p.differences.push_back({field, label, *a, *b});
    } else if (a || b) {
      p.one_sided.push_back({field, label, a, b});
    } else if (kReportUnrecorded.count(field)) {
      p.unrecorded.push_back(label);
    }
  };
  for (const Source& s : sources()) compare_one(s.field, s.label, s.get(ref), s.get(cand));
  // Sampling, key by key (max_tokens above; seed_per_repeat describes the derivation).
  std::set<std::string> keys;
  for (const json* s : {&ref.sampling, &cand.sampling})
    if (s->is_object())
      for (const auto& item : s->items()) keys.insert(item.key());
  for (const std::string& k : keys) {
    if (k == "max_tokens") continue;
    const auto a = at(ref.sampling, {k.c_str()}), b = at(cand.sampling, {k.c_str()});
    compare_one("sampling." + k, "sampling " + k, a, b);
  }

  // What the comparison changes: listed for the reader, never a difference.
  const auto kv_fact = [&](const char* field, const char* label, std::optional<json> (*get)(const RunManifest&)) {
    const auto a = get(ref), b = get(cand);
    if (a || b) p.kv_settings.push_back({field, label, a, b});
  };
  kv_fact("kv.format", "KV format", kv_format);
  kv_fact("kv.scales", "KV scales", kv_scales);
  kv_fact("kv.skip_layers", "layers kept in bf16", [](const RunManifest& m) { return non_empty(at(m.kv, {"skip_layers"})); });
  kv_fact("kv.kernel_switches", "kernel switches", [](const RunManifest& m) { return non_empty(at(m.kv, {"kernel_switches"})); });
  if (!kv_format(ref) && !kv_format(cand)) p.unrecorded.push_back("KV format");

  // llama.cpp's K and V cache types are the KV settings under test: they should differ. The same
  // types on both sides mean the two servers were started alike, and the comparison measures noise.
  const auto kv_types = [](const RunManifest& m) -> std::optional<std::string> {
    const auto k = at(m.engine, {"log", "facts", "type_k"}), v = at(m.engine, {"log", "facts", "type_v"});
    if (!k || !v || !k->is_string() || !v->is_string()) return std::nullopt;
    return "K " + k->get<std::string>() + ", V " + v->get<std::string>();
  };
  if (const auto a = kv_types(ref), b = kv_types(cand); a && b && *a == *b)
    p.warnings.push_back("both engine logs report the same KV cache types (" + *a + "): " + ref_label + " and " + cand_label +
                         " do not differ in their KV settings; start the candidate's llama-server with its own -ctk/-ctv");

  for (const PinnedFact& d : p.differences) {
    if (d.field != "attention_backend") continue;
    const auto gpu_a = at(ref.engine, {"log", "facts", "gpu"}), gpu_b = at(cand.engine, {"log", "facts", "gpu"});
    const bool hopper = (gpu_a && is_hopper(*gpu_a)) || (gpu_b && is_hopper(*gpu_b));
    p.warnings.push_back(
        "attention backends differ: " + ref_label + " ran on " + show(*d.reference) + ", " + cand_label + " on " +
        show(*d.candidate) + (hopper ? " (Hopper GPU)" : "") +
        ". The accuracy difference is then the KV format and the attention kernel together: the seeds' Hopper FP8 "
        "attention bug (a 128K needle score from 91% to 13%) lived in one backend's FP8 path, and a comparison across "
        "backends is exactly how it hides or appears. Pin the backend (vLLM: --attention-backend or "
        "VLLM_ATTENTION_BACKEND; SGLang: --attention-backend) and re-run, or read this result as format + kernel.");
  }
  return p;
}

}  // namespace kvgate::compare
