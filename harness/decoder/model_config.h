// A Hugging Face config.json of the decoder families the reference decoder runs: LlamaForCausalLM,
// MistralForCausalLM, Qwen2ForCausalLM (q/k/v bias), Qwen3ForCausalLM (q_norm/k_norm). Missing
// keys take transformers' defaults for that family; anything the decoder cannot run faithfully
// (another activation, partial rotary, dynamic RoPE, quantized weights) is an Error, never ignored.
#pragma once
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "kernels/ops_ref.h"

namespace kvgate::decoder {

enum class Arch { llama, mistral, qwen2, qwen3 };
std::string arch_name(Arch a);  // "llama", ...

struct ModelConfig {
  Arch arch = Arch::llama;
  std::string architecture;  // as in config.json, e.g. "Qwen3ForCausalLM"
  int hidden_size = 0, intermediate_size = 0, num_layers = 0;
  int num_heads = 0, num_kv_heads = 0, head_dim = 0, vocab_size = 0;
  int max_position_embeddings = 0;
  float rms_norm_eps = 1e-6f;
  kernels::RopeParams rope;
  bool tie_word_embeddings = false;
  bool qkv_bias = false, o_bias = false, mlp_bias = false;
  bool qk_norm = false;
  std::vector<int> layer_window;  // per layer: sliding window in tokens, 0 = full attention
  std::vector<int> eos_token_ids;  // config.json, then generation_config.json (union, in order)
  int bos_token_id = -1;
  std::string dtype;  // torch_dtype / dtype as written (informational: the CPU path computes in fp32)

  nlohmann::json to_json() const;  // what run.json records about the model
};

// Parses config.json's object; `where` names the file in errors.
ModelConfig parse_model_config(const nlohmann::json& j, const std::string& where);
// DIR/config.json, plus the eos ids of DIR/generation_config.json when present.
ModelConfig load_model_config(const std::string& dir);

}  // namespace kvgate::decoder
