// A loaded checkpoint: its config and every weight as fp32 (F32 tensors are used in place from the
// memory mapping when aligned; BF16/F16 are widened exactly). Immutable once loaded, so one Model
// serves any number of Sessions.
#pragma once
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "harness/decoder/model_config.h"
#include "harness/decoder/safetensors.h"

namespace kvgate::decoder {

// One decoder layer's weights, each a flat fp32 array in Hugging Face layout ([out][in] for
// projections). Biases and q/k norms are null when the family has none.
struct LayerWeights {
  const float* input_norm = nullptr;                      // [hidden]
  const float *q = nullptr, *k = nullptr, *v = nullptr, *o = nullptr;
  const float *q_bias = nullptr, *k_bias = nullptr, *v_bias = nullptr, *o_bias = nullptr;
  const float *q_norm = nullptr, *k_norm = nullptr;       // [head_dim], Qwen3
  const float* post_norm = nullptr;                       // [hidden]
  const float *gate = nullptr, *up = nullptr, *down = nullptr;
  const float *gate_bias = nullptr, *up_bias = nullptr, *down_bias = nullptr;
};

class Model {
 public:
  // Loads DIR (config.json, generation_config.json, model.safetensors or its shards). Every tensor
  // the config implies must be present with its shape; unused tensors are reported once as a warning.
  static std::shared_ptr<const Model> load(const std::string& dir);

  const ModelConfig& config() const { return config_; }
  const std::string& dir() const { return dir_; }
  const float* embed() const { return embed_; }      // [vocab][hidden]
  const float* final_norm() const { return final_norm_; }
  const float* lm_head() const { return lm_head_; }  // [vocab][hidden] (the embedding when tied)
  const LayerWeights& layer(int i) const { return layers_[i]; }
  const std::vector<float>& inv_freq() const { return inv_freq_; }  // [head_dim / 2]
  float rope_attention_scaling() const { return rope_scaling_; }
  std::int64_t parameter_count() const { return parameters_; }

 private:
  Model() = default;
  const float* weight(const std::string& name, std::vector<std::int64_t> shape);
  const float* optional_weight(bool present, const std::string& name, std::vector<std::int64_t> shape);

  ModelConfig config_;
  std::string dir_;
  std::unique_ptr<Checkpoint> checkpoint_;
  std::vector<std::vector<float>> owned_;  // widened BF16/F16 (or unaligned F32) tensors
  std::set<std::string> used_;
  const float* embed_ = nullptr;
  const float* final_norm_ = nullptr;
  const float* lm_head_ = nullptr;
  std::vector<LayerWeights> layers_;
  std::vector<float> inv_freq_;
  float rope_scaling_ = 1.0f;
  std::int64_t parameters_ = 0;
};

}  // namespace kvgate::decoder
