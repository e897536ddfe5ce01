#include "harness/decoder/session.h"

#include <algorithm>
#include <cmath>

#include "harness/core/error.h"

namespace kvgate::decoder {

Session::Session(std::shared_ptr<const Model> model, const SessionOptions& options)
    : model_(std::move(model)), options_(options), pool_(std::max(1, options.threads)) {
  if (options_.max_chunk <= 0) throw Error("decoder: max_chunk must be positive", kExitUsage);
  const ModelConfig& c = model_->config();
  kv_ = kernels::make_kv_store(options_.kv, {.layers = c.num_layers, .kv_heads = c.num_kv_heads, .head_dim = c.head_dim});
  const std::size_t rows = options_.max_chunk;
  const std::size_t h = c.hidden_size, qw = std::size_t(c.num_heads) * c.head_dim,
                    kw = std::size_t(c.num_kv_heads) * c.head_dim, inter = c.intermediate_size;
  x_.resize(rows * h);
  xn_.resize(rows * h);
  tmp_.resize(rows * h);
  q_.resize(rows * qw);
  attn_.resize(rows * qw);
  k_.resize(rows * kw);
  v_.resize(rows * kw);
  gate_.resize(rows * inter);
  up_.resize(rows * inter);
  logits_.resize(rows * static_cast<std::size_t>(c.vocab_size));
  pos_.resize(rows);
  scores_.resize(pool_.size());
}

void Session::reset() {
  kv_->truncate(0);
  position_ = 0;
}

void check_token_ids(std::span<const int> tokens, int vocab) {
  for (std::size_t i = 0; i < tokens.size(); ++i)
    if (tokens[i] < 0 || tokens[i] >= vocab)
      throw Error("token id " + std::to_string(tokens[i]) + " (at index " + std::to_string(i) +
                  ") is outside the model's vocabulary of " + std::to_string(vocab) +
                  ": the tokenizer does not match the checkpoint");
}

void Session::forward(std::span<const int> tokens, int logit_rows, const LogitsFn& on_logits) {
  check_token_ids(tokens, model_->config().vocab_size);
  const int total = static_cast<int>(tokens.size());
  const int first_logit = total - std::clamp(logit_rows, 0, total);
  const int vocab = model_->config().vocab_size;
  for (int off = 0; off < total; off += options_.max_chunk) {
    const int n = std::min(options_.max_chunk, total - off);
    const int from = std::clamp(first_logit - off, 0, n);
    run_chunk(tokens.data() + off, n, from);
    if (on_logits)
      for (int r = from; r < n; ++r) on_logits(off + r, logits_.data() + static_cast<std::size_t>(r - from) * vocab);
  }
}

const float* Session::step(int token) {
  check_token_ids(std::span<const int>(&token, 1), model_->config().vocab_size);
  run_chunk(&token, 1, 0);
  return logits_.data();
}

void Session::matmul(const float* x, const float* w, const float* bias, float* y, int rows, int k, int cols) {
  const kernels::MatmulArgs a{.x = x, .w = w, .bias = bias, .y = y, .rows = rows, .k = k, .cols = cols};
  const int parts = pool_.size();
  if (parts == 1 || static_cast<double>(rows) * k * cols < 65536.0 || cols < 8 * parts) {
    kernels::matmul_ref(a);
    return;
  }
  pool_.run(parts, [&](int t, int) {
    kernels::MatmulArgs b = a;
    b.col_begin = static_cast<int>(static_cast<std::int64_t>(cols) * t / parts) / 4 * 4;
    b.col_end = t + 1 == parts ? cols : static_cast<int>(static_cast<std::int64_t>(cols) * (t + 1) / parts) / 4 * 4;
    kernels::matmul_ref(b);
  });
}

void Session::attention(int layer, int rows) {
  const ModelConfig& c = model_->config();
  const int d = c.head_dim, heads = c.num_heads, group = c.num_heads / c.num_kv_heads, qw = heads * d;
  const int window = c.layer_window[layer];
  const int lo = pos_[0], hi = pos_[rows - 1];
  const int first = window > 0 ? std::max(0, lo - window + 1) : 0;
  const int ctx = hi + 1, len = ctx - first;
  const std::size_t per_head = static_cast<std::size_t>(len) * d;
  if (kv_k_.size() < per_head * c.num_kv_heads) {
    kv_k_.resize(per_head * c.num_kv_heads);
    kv_v_.resize(per_head * c.num_kv_heads);
  }
  // Read (dequantize) each KV head once; then query rows x heads in parallel, each task the same
  // maths as kernels::attention_kv_ref.
  for (int h = 0; h < c.num_kv_heads; ++h)
    kv_->read(layer, h, first, ctx, kv_k_.data() + h * per_head, kv_v_.data() + h * per_head);
  const float scale = static_cast<float>(1.0 / std::sqrt(static_cast<double>(d)));
  const bool engine = options_.attention.numerics == kernels::AttentionNumerics::kEngine;
  const int blocks = std::max(1, std::min(rows, (2 * pool_.size() + heads - 1) / heads));
  pool_.run(heads * blocks, [&](int task, int worker) {
    const int h = task % heads, b = task / heads;
    const int r0 = rows * b / blocks, r1 = rows * (b + 1) / blocks;
    if (r1 <= r0) return;
    std::vector<float>& scores = scores_[worker];
    const std::size_t need = static_cast<std::size_t>(r1 - r0) * len;
    if (scores.size() < need) scores.resize(need);
    const std::size_t kvh = static_cast<std::size_t>(h / group);
    const kernels::AttentionArgs args{.q = q_.data() + static_cast<std::size_t>(r0) * qw,
                                 .k = kv_k_.data() + kvh * per_head,
                                 .v = kv_v_.data() + kvh * per_head,
                                 .out = attn_.data() + static_cast<std::size_t>(r0) * qw,
                                 .q_pos = pos_.data() + r0,
                                 .rows = r1 - r0,
                                 .ctx = ctx,
                                 .first = first,
                                 .head_dim = d,
                                 .group = 1,
                                 .q_stride = qw,
                                 .q_offset = h * d,
                                 .out_stride = qw,
                                 .window = window,
                                 .scale = scale,
                                 .scores = scores.data(),
                                 .bf16_q = engine,
                                 .bf16_p = engine};
    if (options_.attention.active()) kernels::attention_rows_emulated_ref(args, options_.attention);
    else kernels::attention_rows_ref(args);
  });
}

void Session::run_chunk(const int* ids, int n, int logits_from) {
  const ModelConfig& c = model_->config();
  const int h = c.hidden_size, d = c.head_dim, qw = c.num_heads * d, kw = c.num_kv_heads * d, inter = c.intermediate_size;
  const float eps = c.rms_norm_eps;
  for (int i = 0; i < n; ++i) pos_[i] = position_ + i;
  kernels::embedding_ref(model_->embed(), h, ids, n, x_.data());
  for (int l = 0; l < c.num_layers; ++l) {
    const LayerWeights& L = model_->layer(l);
    kernels::rmsnorm_ref(x_.data(), L.input_norm, n, h, eps, xn_.data());
    matmul(xn_.data(), L.q, L.q_bias, q_.data(), n, h, qw);
    matmul(xn_.data(), L.k, L.k_bias, k_.data(), n, h, kw);
    matmul(xn_.data(), L.v, L.v_bias, v_.data(), n, h, kw);
    if (L.q_norm) {  // Qwen3: RMSNorm over each head before RoPE
      kernels::rmsnorm_ref(q_.data(), L.q_norm, n * c.num_heads, d, eps, q_.data());
      kernels::rmsnorm_ref(k_.data(), L.k_norm, n * c.num_kv_heads, d, eps, k_.data());
    }
    kernels::rope_ref(q_.data(), n, c.num_heads, d, pos_.data(), model_->inv_freq().data(), model_->rope_attention_scaling());
    kernels::rope_ref(k_.data(), n, c.num_kv_heads, d, pos_.data(), model_->inv_freq().data(), model_->rope_attention_scaling());
    for (int i = 0; i < n; ++i)
      kv_->append(l, k_.data() + static_cast<std::size_t>(i) * kw, v_.data() + static_cast<std::size_t>(i) * kw);
    attention(l, n);
    matmul(attn_.data(), L.o, L.o_bias, tmp_.data(), n, qw, h);
    kernels::add_ref(x_.data(), tmp_.data(), static_cast<std::int64_t>(n) * h);
    kernels::rmsnorm_ref(x_.data(), L.post_norm, n, h, eps, xn_.data());
    matmul(xn_.data(), L.gate, L.gate_bias, gate_.data(), n, h, inter);
    matmul(xn_.data(), L.up, L.up_bias, up_.data(), n, h, inter);
    kernels::swiglu_ref(gate_.data(), up_.data(), static_cast<std::int64_t>(n) * inter, gate_.data());
    matmul(gate_.data(), L.down, L.down_bias, tmp_.data(), n, inter, h);
    kernels::add_ref(x_.data(), tmp_.data(), static_cast<std::int64_t>(n) * h);
  }
  position_ += n;
  if (logits_from < n) {
    const int m = n - logits_from;
    kernels::rmsnorm_ref(x_.data() + static_cast<std::size_t>(logits_from) * h, model_->final_norm(), m, h, eps, xn_.data());
    matmul(xn_.data(), model_->lm_head(), nullptr, logits_.data(), m, h, c.vocab_size);
  }
}

}  // namespace kvgate::decoder
