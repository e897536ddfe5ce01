// What the capacity planner needs from a Hugging Face config.json: the KV shape and a parameter count
// for the weights (Llama, Mistral, Qwen2, Qwen3 and their MoE variants; multimodal configs through
// "text_config").
#pragma once
#include <string>

#include <nlohmann/json.hpp>

#include "kernels/kv_store.h"

namespace kvgate::capacity {

struct ModelDims {
  std::string name;  // "model_type" (and "_name_or_path" when present), for the table's title
  int layers = 0, heads = 0, kv_heads = 0, head_dim = 0;
  long long hidden = 0, intermediate = 0, vocab = 0;
  bool tied_embeddings = false;
  long long linear_params = 0;  // attention and MLP weight matrices (what FP8 checkpoints store in 1 byte)
  long long other_params = 0;   // embeddings, lm_head, norms, biases (kept in 16 bits)

  kernels::KvShape kv_shape() const { return {layers, kv_heads, head_dim}; }
  long long params() const { return linear_params + other_params; }
  // Weight bytes of the checkpoint in `dtype`: "bf16" (2 bytes a parameter) or "fp8" (linear weights
  // 1 byte, the rest 2; block scales not counted).
  double weight_bytes(const std::string& dtype) const;
};

// `where` names the config in errors (its path).
ModelDims model_dims_from_config(const nlohmann::json& config, const std::string& where);
ModelDims read_model_dims(const std::string& config_path);

}  // namespace kvgate::capacity
