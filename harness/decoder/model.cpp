#include "harness/decoder/model.h"

#include <algorithm>
#include <cstdint>
#include <cstring>

#include "harness/core/error.h"
#include "harness/core/log.h"
#include "kernels/float_formats.h"

namespace kvgate::decoder {

namespace {

std::string shape_text(const std::vector<std::int64_t>& s) {
  std::string out = "[";
  for (std::size_t i = 0; i < s.size(); ++i) out += (i ? ", " : "") + std::to_string(s[i]);
  return out + "]";
}

}  // namespace

const float* Model::weight(const std::string& name, std::vector<std::int64_t> shape) {
  const TensorView* t = checkpoint_->find(name);
  if (!t)
    throw Error(dir_ + ": tensor \"" + name + "\" is missing from the checkpoint (config.json says " +
                config_.architecture + " with these settings needs it)");
  if (t->shape != shape)
    throw Error(t->file + ": tensor \"" + name + "\" has shape " + shape_text(t->shape) + " but config.json implies " +
                shape_text(shape));
  used_.insert(name);
  std::int64_t n = 1;
  for (auto d : shape) n *= d;
  parameters_ += n;
  if (t->dtype == "F32") {
    if (reinterpret_cast<std::uintptr_t>(t->data) % alignof(float) == 0) return reinterpret_cast<const float*>(t->data);
    std::vector<float> v(static_cast<std::size_t>(n));
    std::memcpy(v.data(), t->data, t->bytes);
    owned_.push_back(std::move(v));
    return owned_.back().data();
  }
  std::vector<float> v(static_cast<std::size_t>(n));
  if (t->dtype == "BF16" || t->dtype == "F16") {
    const bool bf16 = t->dtype == "BF16";
    for (std::int64_t i = 0; i < n; ++i) {
      const std::uint16_t h = static_cast<std::uint16_t>(t->data[2 * i] | (t->data[2 * i + 1] << 8));
      v[i] = bf16 ? kernels::bf16_to_f32(h) : kernels::f16_to_f32(h);
    }
  } else {
    throw Error(t->file + ": tensor \"" + name + "\" has dtype " + t->dtype +
                "; the reference decoder reads F32, BF16 or F16 weights");
  }
  owned_.push_back(std::move(v));
  return owned_.back().data();
}

const float* Model::optional_weight(bool present, const std::string& name, std::vector<std::int64_t> shape) {
  return present ? weight(name, std::move(shape)) : nullptr;
}

std::shared_ptr<const Model> Model::load(const std::string& dir) {
  std::shared_ptr<Model> m(new Model());
  m->dir_ = dir;
  m->config_ = load_model_config(dir);
  m->checkpoint_ = Checkpoint::open(dir);
  const ModelConfig& c = m->config_;
  const std::int64_t h = c.hidden_size, q = std::int64_t{c.num_heads} * c.head_dim,
                     kv = std::int64_t{c.num_kv_heads} * c.head_dim, inter = c.intermediate_size, v = c.vocab_size;
  m->embed_ = m->weight("model.embed_tokens.weight", {v, h});
  m->final_norm_ = m->weight("model.norm.weight", {h});
  // Tied: transformers uses the embedding as lm_head whatever lm_head.weight holds.
  m->lm_head_ = c.tie_word_embeddings ? m->embed_ : m->weight("lm_head.weight", {v, h});
  for (int i = 0; i < c.num_layers; ++i) {
    const std::string p = "model.layers." + std::to_string(i) + ".";
    LayerWeights L;
    L.input_norm = m->weight(p + "input_layernorm.weight", {h});
    L.q = m->weight(p + "self_attn.q_proj.weight", {q, h});
    L.k = m->weight(p + "self_attn.k_proj.weight", {kv, h});
    L.v = m->weight(p + "self_attn.v_proj.weight", {kv, h});
    L.o = m->weight(p + "self_attn.o_proj.weight", {h, q});
    L.q_bias = m->optional_weight(c.qkv_bias, p + "self_attn.q_proj.bias", {q});
    L.k_bias = m->optional_weight(c.qkv_bias, p + "self_attn.k_proj.bias", {kv});
    L.v_bias = m->optional_weight(c.qkv_bias, p + "self_attn.v_proj.bias", {kv});
    L.o_bias = m->optional_weight(c.o_bias, p + "self_attn.o_proj.bias", {h});
    L.q_norm = m->optional_weight(c.qk_norm, p + "self_attn.q_norm.weight", {c.head_dim});
    L.k_norm = m->optional_weight(c.qk_norm, p + "self_attn.k_norm.weight", {c.head_dim});
    L.post_norm = m->weight(p + "post_attention_layernorm.weight", {h});
    L.gate = m->weight(p + "mlp.gate_proj.weight", {inter, h});
    L.up = m->weight(p + "mlp.up_proj.weight", {inter, h});
    L.down = m->weight(p + "mlp.down_proj.weight", {h, inter});
    L.gate_bias = m->optional_weight(c.mlp_bias, p + "mlp.gate_proj.bias", {inter});
    L.up_bias = m->optional_weight(c.mlp_bias, p + "mlp.up_proj.bias", {inter});
    L.down_bias = m->optional_weight(c.mlp_bias, p + "mlp.down_proj.bias", {h});
    m->layers_.push_back(L);
  }
  // transformers ignores extra tensors (with a warning); so do we, naming a few.
  std::vector<std::string> unused;
  for (const auto& [name, t] : m->checkpoint_->tensors())
    if (!m->used_.count(name) &&
        !(c.tie_word_embeddings && name == "lm_head.weight") && name.find("rotary_emb.inv_freq") == std::string::npos)
      unused.push_back(name);
  if (!unused.empty()) {
    std::string list;
    for (std::size_t i = 0; i < unused.size() && i < 5; ++i) list += (i ? ", " : "") + unused[i];
    log_warn(dir + ": " + std::to_string(unused.size()) + " checkpoint tensor(s) not used by " + c.architecture + ": " +
             list + (unused.size() > 5 ? ", ..." : ""));
  }
  m->inv_freq_.resize(c.head_dim / 2);
  m->rope_scaling_ = kernels::rope_inv_freq_ref(c.rope, m->inv_freq_.data());
  return m;
}

}  // namespace kvgate::decoder
