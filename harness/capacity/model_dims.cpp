#include "harness/capacity/model_dims.h"

#include "harness/core/error.h"
#include "harness/core/json_fields.h"
#include "harness/core/jsonl.h"

namespace kvgate::capacity {

using nlohmann::json;

double ModelDims::weight_bytes(const std::string& dtype) const {
  if (dtype == "bf16") return 2.0 * static_cast<double>(params());
  if (dtype == "fp8") return static_cast<double>(linear_params) + 2.0 * static_cast<double>(other_params);
  throw Error("--weights-dtype " + dtype + ": unknown (known: bf16, fp8)");
}

ModelDims model_dims_from_config(const json& config, const std::string& where) {
  const json& c = config.is_object() && config.contains("text_config") ? config["text_config"] : config;
  FieldReader r(c, where);
  ModelDims m;
  const std::string type = r.opt_str("model_type").value_or("");
  m.name = type.empty() ? "model" : type;
  if (auto n = FieldReader(config, where).opt_str("_name_or_path")) m.name = *n;
  auto positive = [&](const char* key) {
    const std::int64_t v = r.integer(key);
    if (v <= 0 || v > (1LL << 31) - 1) r.fail(key, "must be a positive 32-bit integer, got " + std::to_string(v));
    return v;
  };
  m.layers = static_cast<int>(positive("num_hidden_layers"));
  m.heads = static_cast<int>(positive("num_attention_heads"));
  m.kv_heads = r.has_value("num_key_value_heads") ? static_cast<int>(positive("num_key_value_heads")) : m.heads;
  m.hidden = positive("hidden_size");
  m.head_dim = r.has_value("head_dim") ? static_cast<int>(positive("head_dim")) : static_cast<int>(m.hidden / m.heads);
  m.intermediate = positive("intermediate_size");
  m.vocab = positive("vocab_size");
  m.tied_embeddings = r.opt_boolean("tie_word_embeddings").value_or(false);
  if (const auto lt = c.find("layer_types"); lt != c.end() && lt->is_array())
    for (const auto& t : *lt)
      if (!t.is_string() || (t.get<std::string>() != "full_attention" && t.get<std::string>() != "attention"))
        throw Error(where + ": layer_types has " + describe_json_value(t) +
                    ": the capacity planner handles models whose every layer is full attention (sliding-window and "
                    "linear-attention layers keep less than a token's KV each)");

  const long long h = m.hidden, q = static_cast<long long>(m.heads) * m.head_dim, kv = static_cast<long long>(m.kv_heads) * m.head_dim;
  long long attn = h * q + 2 * h * kv + q * h;
  long long mlp = 3 * h * m.intermediate, router = 0;
  const long long experts = r.opt_integer("num_experts").value_or(r.opt_integer("num_local_experts").value_or(0));
  if (experts > 0) {  // MoE: every expert's MLP is resident; the router is a small dense matrix
    const long long moe_inter = r.opt_integer("moe_intermediate_size").value_or(m.intermediate);
    mlp = experts * 3 * h * moe_inter;
    router = experts * h;
  }
  // Biases: Qwen2 has q/k/v biases; Llama-style configs say so with attention_bias.
  long long bias = 0;
  if (type == "qwen2" || type == "qwen2_moe") bias = q + 2 * kv;
  else if (r.opt_boolean("attention_bias").value_or(false)) bias = q + 2 * kv + h;
  const long long qk_norm = (type == "qwen3" || type == "qwen3_moe") ? 2LL * m.head_dim : 0;
  m.linear_params = m.layers * (attn + mlp);
  m.other_params = m.vocab * h * (m.tied_embeddings ? 1 : 2) + m.layers * (2 * h + qk_norm + bias + router) + h;
  return m;
}

ModelDims read_model_dims(const std::string& config_path) {
  json j = json::parse(read_file(config_path), nullptr, false);
  if (j.is_discarded()) throw Error(config_path + ": not valid JSON (pass the model's config.json)");
  return model_dims_from_config(j, config_path);
}

}  // namespace kvgate::capacity
