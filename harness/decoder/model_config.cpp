#include "harness/decoder/model_config.h"

#include <cmath>
#include <filesystem>

#include "harness/core/error.h"
#include "harness/core/json_fields.h"
#include "harness/core/jsonl.h"

namespace kvgate::decoder {

using nlohmann::json;

namespace {

const char* const kSupported = "LlamaForCausalLM, MistralForCausalLM, Qwen2ForCausalLM, Qwen3ForCausalLM";

Arch arch_of(const FieldReader& f) {
  std::string name;
  if (f.has_value("architectures")) {
    const json& a = f.array("architectures");
    if (a.empty() || !a[0].is_string()) f.fail("architectures", "must list the model class, e.g. [\"Qwen3ForCausalLM\"]");
    name = a[0].get<std::string>();
  } else if (f.has_value("model_type")) {
    name = f.str("model_type");
  } else {
    f.fail("architectures", "missing (and no model_type): cannot tell the model family");
  }
  if (name == "LlamaForCausalLM" || name == "llama") return Arch::llama;
  if (name == "MistralForCausalLM" || name == "mistral") return Arch::mistral;
  if (name == "Qwen2ForCausalLM" || name == "qwen2") return Arch::qwen2;
  if (name == "Qwen3ForCausalLM" || name == "qwen3") return Arch::qwen3;
  throw Error(f.where() + ": model class \"" + name + "\" is not supported by the reference decoder (supported: " +
              kSupported + ")");
}

int positive(const FieldReader& f, const char* key) {
  const std::int64_t v = f.integer(key);
  if (v <= 0 || v > (1 << 30)) f.fail(key, "must be a positive integer, got " + std::to_string(v));
  return static_cast<int>(v);
}

int positive_or(const FieldReader& f, const char* key, int fallback) {
  return f.has_value(key) ? positive(f, key) : fallback;
}

double number_or(const FieldReader& f, const char* key, double fallback) {
  return f.has_value(key) ? f.number(key) : fallback;
}

// rope_parameters (transformers 5) or the legacy rope_theta + rope_scaling pair.
kernels::RopeParams parse_rope(const FieldReader& cfg, int head_dim, int max_pos) {
  json rp = json::object();
  std::string where = cfg.where();
  // transformers 5: `rope_scaling or rope_parameters` (a non-empty legacy rope_scaling wins).
  if (cfg.has_value("rope_scaling") && !cfg.object("rope_scaling").empty()) {
    rp = cfg.object("rope_scaling");
    where += ": rope_scaling";
  } else if (cfg.has_value("rope_parameters")) {
    rp = cfg.object("rope_parameters");
    where += ": rope_parameters";
  }
  const FieldReader r(rp, where);
  kernels::RopeParams p;
  p.dim = head_dim;
  p.theta = r.has_value("rope_theta") ? r.number("rope_theta") : number_or(cfg, "rope_theta", 10000.0);
  if (!(p.theta > 1.0)) throw Error(where + ": rope_theta must be greater than 1, got " + std::to_string(p.theta));
  const double partial = r.has_value("partial_rotary_factor") ? r.number("partial_rotary_factor")
                                                               : number_or(cfg, "partial_rotary_factor", 1.0);
  if (partial != 1.0)
    throw Error(where + ": partial_rotary_factor " + std::to_string(partial) +
                " is not supported by the reference decoder (only full rotary, 1.0)");
  std::string type = "default";
  if (r.has_value("rope_type")) type = r.str("rope_type");
  else if (r.has_value("type")) type = r.str("type");
  const auto factor = [&] {
    const double v = r.number("factor");
    if (!(v >= 1.0)) r.fail("factor", "must be at least 1, got " + std::to_string(v));
    return v;
  };
  // standardize_rope_params: a top-level original_max_position_embeddings wins, then the rope
  // dict's, then max_position_embeddings.
  const auto original = [&] {
    if (cfg.has_value("original_max_position_embeddings")) return positive(cfg, "original_max_position_embeddings");
    if (r.has_value("original_max_position_embeddings")) return positive(r, "original_max_position_embeddings");
    return max_pos;
  };
  if (type == "default" || type == "none") {
    p.type = kernels::RopeType::standard;
  } else if (type == "linear") {
    p.type = kernels::RopeType::linear;
    p.factor = factor();
  } else if (type == "llama3") {
    p.type = kernels::RopeType::llama3;
    p.factor = factor();
    p.low_freq_factor = r.number("low_freq_factor");
    p.high_freq_factor = r.number("high_freq_factor");
    if (!(p.high_freq_factor > p.low_freq_factor && p.low_freq_factor > 0))
      throw Error(where + ": llama3 needs 0 < low_freq_factor < high_freq_factor");
    p.original_max_position_embeddings = original();
  } else if (type == "yarn") {
    // transformers 5: the factor as given (transformers 4 replaced it by max_position_embeddings /
    // original_max_position_embeddings); attention_factor from mscale/mscale_all_dim or 0.1 ln(factor) + 1.
    p.type = kernels::RopeType::yarn;
    p.factor = factor();
    p.original_max_position_embeddings = original();
    p.attention_factor = number_or(r, "attention_factor", 0.0);
    p.beta_fast = number_or(r, "beta_fast", 32.0);
    p.beta_slow = number_or(r, "beta_slow", 1.0);
    p.mscale = number_or(r, "mscale", 0.0);
    p.mscale_all_dim = number_or(r, "mscale_all_dim", 0.0);
    if (r.has_value("truncate")) p.truncate = r.boolean("truncate");
  } else {
    throw Error(where + ": rope type \"" + type +
                "\" is not supported by the reference decoder (supported: default, linear, llama3, yarn)");
  }
  return p;
}

void add_eos(std::vector<int>& ids, const json& v, const std::string& where) {
  const auto add = [&](const json& x) {
    if (!x.is_number_integer() || x.get<std::int64_t>() < 0)
      throw Error(where + ": eos_token_id must be a non-negative integer or a list of them");
    const int id = static_cast<int>(x.get<std::int64_t>());
    for (int e : ids)
      if (e == id) return;
    ids.push_back(id);
  };
  if (v.is_null()) return;
  if (v.is_array()) {
    for (const json& x : v) add(x);
  } else {
    add(v);
  }
}

}  // namespace

std::string arch_name(Arch a) {
  switch (a) {
    case Arch::llama: return "llama";
    case Arch::mistral: return "mistral";
    case Arch::qwen2: return "qwen2";
    case Arch::qwen3: return "qwen3";
  }
  return "?";
}

ModelConfig parse_model_config(const json& j, const std::string& where) {
  const FieldReader f(j, where);
  ModelConfig c;
  c.arch = arch_of(f);
  c.architecture = f.has_value("architectures") ? f.array("architectures")[0].get<std::string>() : f.str("model_type");
  if (f.has_value("quantization_config"))
    throw Error(where + ": quantized checkpoints (quantization_config) are not supported by the reference decoder; "
                        "use the bf16/fp16/fp32 weights");
  if (f.has_value("hidden_act") && f.str("hidden_act") != "silu")
    f.fail("hidden_act", "must be \"silu\" (SwiGLU MLP), got \"" + f.str("hidden_act") + "\"");
  c.hidden_size = positive(f, "hidden_size");
  c.intermediate_size = positive(f, "intermediate_size");
  c.num_layers = positive(f, "num_hidden_layers");
  c.num_heads = positive(f, "num_attention_heads");
  c.vocab_size = positive(f, "vocab_size");
  c.num_kv_heads = positive_or(f, "num_key_value_heads", c.arch == Arch::mistral ? 8 : c.num_heads);
  if (c.num_heads % c.num_kv_heads != 0)
    throw Error(where + ": num_attention_heads (" + std::to_string(c.num_heads) +
                ") must be a multiple of num_key_value_heads (" + std::to_string(c.num_kv_heads) + ")");
  if (f.has_value("head_dim")) {
    c.head_dim = positive(f, "head_dim");
  } else if (c.arch == Arch::qwen3) {
    c.head_dim = 128;  // Qwen3Config's default
  } else {
    if (c.hidden_size % c.num_heads != 0)
      throw Error(where + ": hidden_size must be a multiple of num_attention_heads when head_dim is not given");
    c.head_dim = c.hidden_size / c.num_heads;
  }
  if (c.head_dim % 2 != 0) f.fail("head_dim", "must be even (rotary pairs), got " + std::to_string(c.head_dim));
  c.max_position_embeddings =
      positive_or(f, "max_position_embeddings", c.arch == Arch::llama ? 2048 : c.arch == Arch::mistral ? 131072 : 32768);
  const double eps = number_or(f, "rms_norm_eps", 1e-6);
  if (!(eps > 0)) f.fail("rms_norm_eps", "must be positive");
  c.rms_norm_eps = static_cast<float>(eps);
  c.rope = parse_rope(f, c.head_dim, c.max_position_embeddings);
  c.tie_word_embeddings = f.has_value("tie_word_embeddings") && f.boolean("tie_word_embeddings");
  const bool attention_bias = f.has_value("attention_bias") && f.boolean("attention_bias");
  switch (c.arch) {
    case Arch::qwen2: c.qkv_bias = true; break;  // Qwen2Attention: q/k/v always biased, o never
    case Arch::mistral: break;
    case Arch::llama:
    case Arch::qwen3: c.qkv_bias = c.o_bias = attention_bias; break;
  }
  c.mlp_bias = c.arch == Arch::llama && f.has_value("mlp_bias") && f.boolean("mlp_bias");
  c.qk_norm = c.arch == Arch::qwen3;

  // Sliding windows as each family's modeling code applies them. Mistral: every layer, from
  // sliding_window (default 4096, null = none). Qwen2/Qwen3: the window exists only with
  // use_sliding_window; layer_types (or layers from max_window_layers on) say which layers use it.
  c.layer_window.assign(c.num_layers, 0);
  if (c.arch == Arch::mistral) {
    const int w = !f.has("sliding_window") ? 4096 : f.has_value("sliding_window") ? positive(f, "sliding_window") : 0;
    c.layer_window.assign(c.num_layers, w);
  } else if (c.arch == Arch::qwen2 || c.arch == Arch::qwen3) {
    const bool on = f.has_value("use_sliding_window") && f.boolean("use_sliding_window");
    const int w = !on ? 0 : !f.has("sliding_window") ? 4096 : f.has_value("sliding_window") ? positive(f, "sliding_window") : 0;
    if (f.has_value("layer_types")) {
      const json& types = f.array("layer_types");
      if (static_cast<int>(types.size()) != c.num_layers)
        f.fail("layer_types", "must have one entry per layer (" + std::to_string(c.num_layers) + ")");
      for (int i = 0; i < c.num_layers; ++i) {
        const std::string t = types[i].is_string() ? types[i].get<std::string>() : "";
        if (t == "sliding_attention") c.layer_window[i] = w;
        else if (t != "full_attention") f.fail("layer_types", "entries must be \"full_attention\" or \"sliding_attention\"");
      }
    } else if (w > 0) {
      const int from = f.has_value("max_window_layers") ? static_cast<int>(f.integer("max_window_layers")) : 28;
      for (int i = from < 0 ? 0 : from; i < c.num_layers; ++i) c.layer_window[i] = w;
    }
  }
  if (f.has("eos_token_id")) add_eos(c.eos_token_ids, f.any("eos_token_id"), where);
  if (f.has_value("bos_token_id")) c.bos_token_id = static_cast<int>(f.integer("bos_token_id"));
  if (f.has_value("torch_dtype")) c.dtype = f.str("torch_dtype");
  else if (f.has_value("dtype")) c.dtype = f.str("dtype");
  return c;
}

ModelConfig load_model_config(const std::string& dir) {
  const std::string path = dir + "/config.json";
  if (!std::filesystem::exists(path))
    throw Error("--model-dir " + dir + ": no config.json there (expected a Hugging Face checkpoint directory)");
  json j;
  try {
    j = json::parse(read_file(path));
  } catch (const json::parse_error& e) {
    throw Error(path + ": not valid JSON (" + e.what() + ")");
  }
  ModelConfig c = parse_model_config(j, path);
  const std::string gen = dir + "/generation_config.json";
  if (std::filesystem::exists(gen)) {
    json g;
    try {
      g = json::parse(read_file(gen));
    } catch (const json::parse_error& e) {
      throw Error(gen + ": not valid JSON (" + e.what() + ")");
    }
    if (g.is_object() && g.contains("eos_token_id")) add_eos(c.eos_token_ids, g["eos_token_id"], gen);
  }
  return c;
}

nlohmann::json ModelConfig::to_json() const {
  static const char* const kRope[] = {"default", "linear", "llama3", "yarn"};
  json rope_j = {{"type", kRope[static_cast<int>(rope.type)]}, {"theta", rope.theta}};
  if (rope.type != kernels::RopeType::standard) rope_j["factor"] = rope.factor;
  if (rope.original_max_position_embeddings > 0)
    rope_j["original_max_position_embeddings"] = rope.original_max_position_embeddings;
  return {{"architecture", architecture}, {"arch", arch_name(arch)},       {"hidden_size", hidden_size},
          {"intermediate_size", intermediate_size}, {"layers", num_layers}, {"heads", num_heads},
          {"kv_heads", num_kv_heads},        {"head_dim", head_dim},       {"vocab_size", vocab_size},
          {"rope", rope_j},                  {"tie_word_embeddings", tie_word_embeddings},
          {"dtype", dtype}};
}

}  // namespace kvgate::decoder
