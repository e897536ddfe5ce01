#include "decoder_cuda/cuda_forward.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "core/error.h"
#include "cuda_check.cuh"
#include "float_formats.h"
#include "kv_format.h"

namespace kvgate::decoder {

namespace kc = kernels::cuda;

namespace {

template <class T>
T* device_alloc(std::vector<void*>& owned, std::size_t n) {
  void* p = nullptr;
  KV_CUDA_CHECK(cudaMalloc(&p, std::max<std::size_t>(1, n) * sizeof(T)));
  owned.push_back(p);
  return static_cast<T*>(p);
}

}  // namespace

CudaWeights::~CudaWeights() {
  for (void* p : owned) cudaFree(p);
}

std::shared_ptr<CudaWeights> CudaWeights::upload(const Model& model, kc::GemmType type) {
  auto w = std::make_shared<CudaWeights>();
  w->type = type;
  const ModelConfig& c = model.config();
  std::vector<std::uint16_t> tmp;
  // A matrix in the GEMM dtype (bf16: RNE, exact for bf16 checkpoints).
  auto matrix = [&](const float* src, std::size_t n) -> const void* {
    if (!src) return nullptr;
    w->bytes += static_cast<double>(n) * (type == kc::GemmType::kBf16 ? 2 : 4);
    if (type == kc::GemmType::kF32) {
      float* d = device_alloc<float>(w->owned, n);
      KV_CUDA_CHECK(cudaMemcpy(d, src, n * sizeof(float), cudaMemcpyHostToDevice));
      return d;
    }
    tmp.resize(n);
    for (std::size_t i = 0; i < n; ++i) tmp[i] = kernels::f32_to_bf16(src[i]);
    auto* d = device_alloc<std::uint16_t>(w->owned, n);
    KV_CUDA_CHECK(cudaMemcpy(d, tmp.data(), n * 2, cudaMemcpyHostToDevice));
    return d;
  };
  auto vec = [&](const float* src, std::size_t n) -> const float* {
    if (!src) return nullptr;
    w->bytes += static_cast<double>(n) * 4;
    float* d = device_alloc<float>(w->owned, n);
    KV_CUDA_CHECK(cudaMemcpy(d, src, n * sizeof(float), cudaMemcpyHostToDevice));
    return d;
  };
  const std::size_t h = c.hidden_size, qw = std::size_t(c.num_heads) * c.head_dim, kw = std::size_t(c.num_kv_heads) * c.head_dim,
                    inter = c.intermediate_size, vocab = c.vocab_size, d = c.head_dim;
  {
    tmp.resize(vocab * h);
    for (std::size_t i = 0; i < vocab * h; ++i) tmp[i] = kernels::f32_to_bf16(model.embed()[i]);
    auto* e = device_alloc<std::uint16_t>(w->owned, vocab * h);
    KV_CUDA_CHECK(cudaMemcpy(e, tmp.data(), vocab * h * 2, cudaMemcpyHostToDevice));
    w->embed = e;
  }
  w->lm_head = matrix(model.lm_head(), vocab * h);
  w->final_norm = vec(model.final_norm(), h);
  w->inv_freq = vec(model.inv_freq().data(), d / 2);
  w->rope_scaling = model.rope_attention_scaling();
  for (int l = 0; l < c.num_layers; ++l) {
    const LayerWeights& L = model.layer(l);
    Layer D;
    D.q = matrix(L.q, qw * h);
    D.k = matrix(L.k, kw * h);
    D.v = matrix(L.v, kw * h);
    D.o = matrix(L.o, h * qw);
    D.gate = matrix(L.gate, inter * h);
    D.up = matrix(L.up, inter * h);
    D.down = matrix(L.down, h * inter);
    D.q_bias = vec(L.q_bias, qw);
    D.k_bias = vec(L.k_bias, kw);
    D.v_bias = vec(L.v_bias, kw);
    D.o_bias = vec(L.o_bias, h);
    D.gate_bias = vec(L.gate_bias, inter);
    D.up_bias = vec(L.up_bias, inter);
    D.down_bias = vec(L.down_bias, h);
    D.input_norm = vec(L.input_norm, h);
    D.post_norm = vec(L.post_norm, h);
    D.q_norm = vec(L.q_norm, d);
    D.k_norm = vec(L.k_norm, d);
    w->layers.push_back(D);
  }
  return w;
}

std::shared_ptr<CudaWeights> CudaWeights::random(const ModelConfig& c, std::uint64_t seed, kc::GemmType type) {
  auto w = std::make_shared<CudaWeights>();
  w->type = type;
  std::uint64_t stream = seed * 1000003ull;
  auto fill = [&](std::size_t n, kc::GemmType t, float scale, float offset, bool count) -> void* {
    void* p = nullptr;
    KV_CUDA_CHECK(cudaMalloc(&p, n * (t == kc::GemmType::kBf16 ? 2 : 4)));
    w->owned.push_back(p);
    kc::fill_random(p, static_cast<std::int64_t>(n), t, ++stream, scale, offset, nullptr);
    if (count) w->bytes += static_cast<double>(n) * (t == kc::GemmType::kBf16 ? 2 : 4);
    return p;
  };
  const std::size_t h = c.hidden_size, qw = std::size_t(c.num_heads) * c.head_dim, kw = std::size_t(c.num_kv_heads) * c.head_dim,
                    inter = c.intermediate_size, vocab = c.vocab_size, d = c.head_dim;
  auto mat = [&](std::size_t out, std::size_t in) { return fill(out * in, type, 1.0f / std::sqrt(static_cast<float>(in)), 0.0f, true); };
  auto norm = [&](std::size_t n) { return static_cast<const float*>(fill(n, kc::GemmType::kF32, 0.1f, 1.0f, true)); };
  w->embed = static_cast<const kc::bf16_t*>(fill(vocab * h, kc::GemmType::kBf16, 1.0f, 0.0f, false));
  w->lm_head = mat(vocab, h);
  w->final_norm = norm(h);
  std::vector<float> inv(d / 2);
  w->rope_scaling = kernels::rope_inv_freq_ref(c.rope, inv.data());
  float* f = device_alloc<float>(w->owned, d / 2);
  KV_CUDA_CHECK(cudaMemcpy(f, inv.data(), inv.size() * sizeof(float), cudaMemcpyHostToDevice));
  w->inv_freq = f;
  for (int l = 0; l < c.num_layers; ++l) {
    Layer D;
    D.q = mat(qw, h);
    D.k = mat(kw, h);
    D.v = mat(kw, h);
    D.o = mat(h, qw);
    D.gate = mat(inter, h);
    D.up = mat(inter, h);
    D.down = mat(h, inter);
    D.input_norm = norm(h);
    D.post_norm = norm(h);
    if (c.qk_norm) {
      D.q_norm = norm(d);
      D.k_norm = norm(d);
    }
    w->layers.push_back(D);
  }
  KV_CUDA_CHECK(cudaDeviceSynchronize());
  return w;
}

CudaForward::CudaForward(const ModelConfig& config, std::shared_ptr<const CudaWeights> weights, const CudaForwardOptions& options)
    : config_(config), w_(std::move(weights)), o_(options) {
  const ModelConfig& c = config_;
  if (c.num_heads % c.num_kv_heads != 0 || c.num_heads / c.num_kv_heads > kc::kMaxTileQ)
    throw Error("--device cuda: " + std::to_string(c.num_heads / std::max(1, c.num_kv_heads)) +
                " query heads per KV head is not supported (at most " + std::to_string(kc::kMaxTileQ) + "); use --device cpu");
  if (o_.max_rows <= 0 || o_.max_seqs <= 0) throw Error("CudaForward: max_rows and max_seqs must be positive", kExitInternal);
  if (o_.max_context <= 0) o_.max_context = std::max(c.max_position_embeddings, 64);
  KV_CUDA_CHECK(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking));
  gemm_ = std::make_unique<kc::Gemm>();
  const std::size_t R = o_.max_rows, h = c.hidden_size, qw = std::size_t(c.num_heads) * c.head_dim,
                    kw = std::size_t(c.num_kv_heads) * c.head_dim, inter = c.intermediate_size, vocab = c.vocab_size;
  x_ = device_alloc<float>(owned_, R * h);
  xn_ = device_alloc<float>(owned_, R * h);
  tmp_ = device_alloc<float>(owned_, R * h);
  q_ = device_alloc<float>(owned_, R * qw);
  attn_ = device_alloc<float>(owned_, R * qw);
  k_ = device_alloc<float>(owned_, R * kw);
  v_ = device_alloc<float>(owned_, R * kw);
  gate_ = device_alloc<float>(owned_, R * inter);
  up_ = device_alloc<float>(owned_, R * inter);
  logits_ = device_alloc<float>(owned_, R * vocab);
  xb_ = device_alloc<kc::bf16_t>(owned_, R * std::max({h, qw, inter}));
  tokens_ = device_alloc<int>(owned_, R);
  seqs_ = device_alloc<int>(owned_, R);
  pos_ = device_alloc<int>(owned_, R);
  ids_ = device_alloc<int>(owned_, R);
  tiles_ = device_alloc<kc::AttentionTile>(owned_, R);
  // Splits: blocks x splits <= 4 * 132 + blocks (attention_splits), or the fixed count asked for.
  const std::size_t blocks = R * c.num_kv_heads;
  const std::size_t entries = o_.splits > 0 ? blocks * o_.splits : 4 * 132 + blocks;
  workspace_ = device_alloc<float>(owned_, entries * kc::kMaxTileQ * (c.head_dim + 2));

  const kernels::KvShape shape{.layers = c.num_layers, .kv_heads = c.num_kv_heads, .head_dim = c.head_dim};
  const kernels::KvFormatSpec spec = kernels::resolve_kv_format(o_.kv, shape);
  kc::PagedKvOptions po{.page_tokens = 64, .max_seqs = o_.max_seqs, .max_tokens_per_seq = o_.max_context};
  const double page_bytes = spec.bytes_per_token() * 64;  // all layers, K and V
  const int pages_per_seq = (o_.max_context + 63) / 64;
  double pages = static_cast<double>(pages_per_seq) * o_.max_seqs;
  if (o_.kv_pool_gib > 0) {
    pages = std::min(pages, o_.kv_pool_gib * 1073741824.0 / page_bytes);
  } else {
    std::size_t free_b = 0, total_b = 0;
    KV_CUDA_CHECK(cudaMemGetInfo(&free_b, &total_b));
    pages = std::min(pages, 0.6 * static_cast<double>(free_b) / page_bytes);
  }
  po.num_pages = static_cast<int>(std::max(1.0, std::floor(pages)));
  cache_ = std::make_unique<kc::PagedKvCache>(spec, po);
}

CudaForward::~CudaForward() {
  if (stream_) cudaStreamSynchronize(stream_);
  cache_.reset();
  for (void* p : owned_) cudaFree(p);
  if (stream_) cudaStreamDestroy(stream_);
}

void CudaForward::forward(std::span<const int> tokens, std::span<const int> seqs, std::span<const int> positions,
                          int first_logit) {
  const ModelConfig& c = config_;
  const int n = static_cast<int>(tokens.size());
  if (n <= 0 || n > o_.max_rows || seqs.size() != tokens.size() || positions.size() != tokens.size())
    throw Error("CudaForward: bad row count", kExitInternal);
  // Pages for every row, then the tiles: runs of one sequence, at most rows_per_tile rows each.
  const int per_tile = kc::attention_rows_per_tile(c.num_heads / c.num_kv_heads);
  host_tiles_.clear();
  max_ctx_ = 0;
  for (int r = 0; r < n; ++r) {
    if (tokens[r] < 0 || tokens[r] >= c.vocab_size) throw Error("CudaForward: token id out of range", kExitInternal);
    if (r == n - 1 || seqs[r + 1] != seqs[r]) cache_->reserve(seqs[r], positions[r] + 1);
    max_ctx_ = std::max(max_ctx_, positions[r] + 1);
    if (host_tiles_.empty() || host_tiles_.back().seq != seqs[r] || host_tiles_.back().rows == per_tile)
      host_tiles_.push_back({seqs[r], r, 0});
    ++host_tiles_.back().rows;
  }
  num_tiles_ = static_cast<int>(host_tiles_.size());
  max_tile_rows_ = 0;
  for (const auto& t : host_tiles_) max_tile_rows_ = std::max(max_tile_rows_, t.rows);
  splits_ = o_.splits > 0 ? o_.splits : kc::attention_splits(num_tiles_, c.num_kv_heads, max_ctx_, 64);
  cache_->sync_block_table(stream_);
  KV_CUDA_CHECK(cudaMemcpyAsync(tokens_, tokens.data(), n * sizeof(int), cudaMemcpyHostToDevice, stream_));
  KV_CUDA_CHECK(cudaMemcpyAsync(seqs_, seqs.data(), n * sizeof(int), cudaMemcpyHostToDevice, stream_));
  KV_CUDA_CHECK(cudaMemcpyAsync(pos_, positions.data(), n * sizeof(int), cudaMemcpyHostToDevice, stream_));
  KV_CUDA_CHECK(cudaMemcpyAsync(tiles_, host_tiles_.data(), host_tiles_.size() * sizeof(kc::AttentionTile),
                                cudaMemcpyHostToDevice, stream_));
  kc::embedding(w_->embed, c.hidden_size, tokens_, n, x_, stream_);
  for (int l = 0; l < c.num_layers; ++l) layer(l, n);
  if (first_logit < n) {
    const int m = n - first_logit;
    const bool bf16 = w_->type == kc::GemmType::kBf16;
    const std::size_t h = c.hidden_size;
    kc::rmsnorm(x_ + first_logit * h, w_->final_norm, m, c.hidden_size, c.rms_norm_eps, bf16 ? nullptr : xn_,
                bf16 ? xb_ : nullptr, stream_);
    gemm_->run(w_->type, bf16 ? static_cast<const void*>(xb_) : xn_, w_->lm_head, nullptr, logits_, m, c.hidden_size,
               c.vocab_size, stream_);
  }
}

void CudaForward::layer(int l, int n) {
  const ModelConfig& c = config_;
  const CudaWeights::Layer& L = w_->layers[l];
  const kc::GemmType t = w_->type;
  const bool bf16 = t == kc::GemmType::kBf16;
  const int h = c.hidden_size, d = c.head_dim, qw = c.num_heads * d, kw = c.num_kv_heads * d, inter = c.intermediate_size;
  const float eps = c.rms_norm_eps;
  const void* in = bf16 ? static_cast<const void*>(xb_) : xn_;
  kc::rmsnorm(x_, L.input_norm, n, h, eps, bf16 ? nullptr : xn_, bf16 ? xb_ : nullptr, stream_);
  gemm_->run(t, in, L.q, L.q_bias, q_, n, h, qw, stream_);
  gemm_->run(t, in, L.k, L.k_bias, k_, n, h, kw, stream_);
  gemm_->run(t, in, L.v, L.v_bias, v_, n, h, kw, stream_);
  if (L.q_norm) {
    kc::rmsnorm(q_, L.q_norm, n * c.num_heads, d, eps, q_, nullptr, stream_);
    kc::rmsnorm(k_, L.k_norm, n * c.num_kv_heads, d, eps, k_, nullptr, stream_);
  }
  kc::rope(q_, n, c.num_heads, d, pos_, w_->inv_freq, w_->rope_scaling, stream_);
  kc::rope(k_, n, c.num_kv_heads, d, pos_, w_->inv_freq, w_->rope_scaling, stream_);
  const kc::PagedKvCache& cache = *cache_;
  kc::kv_write(cache.codec(l), {.k = k_, .v = v_, .row_seq = seqs_, .row_pos = pos_, .rows = n, .kv_heads = c.num_kv_heads,
                                .block_table = cache.block_table(), .max_pages = cache.max_pages_per_seq(), .page_tokens = 64,
                                .k_pool = cache.k_pool(l), .v_pool = cache.v_pool(l),
                                .absmax = cache.absmax() + static_cast<std::size_t>(l) * c.num_kv_heads * 2},
               stream_);
  const float scale = static_cast<float>(1.0 / std::sqrt(static_cast<double>(d)));
  kc::paged_attention(cache.codec(l),
                      {.q = q_, .out = attn_, .row_pos = pos_, .tiles = tiles_, .num_tiles = num_tiles_, .heads = c.num_heads,
                       .kv_heads = c.num_kv_heads, .window = c.layer_window[l], .max_tile_rows = max_tile_rows_, .max_ctx = max_ctx_, .scale = scale,
                       .block_table = cache.block_table(), .max_pages = cache.max_pages_per_seq(), .page_tokens = 64,
                       .k_pool = cache.k_pool(l), .v_pool = cache.v_pool(l), .splits = splits_, .workspace = workspace_,
                       .emulation = o_.emulation, .prefill = o_.prefill},
                      stream_);
  if (bf16) kc::to_bf16(attn_, static_cast<std::int64_t>(n) * qw, xb_, stream_);
  gemm_->run(t, bf16 ? static_cast<const void*>(xb_) : attn_, L.o, L.o_bias, tmp_, n, qw, h, stream_);
  kc::add(x_, tmp_, static_cast<std::int64_t>(n) * h, stream_);
  kc::rmsnorm(x_, L.post_norm, n, h, eps, bf16 ? nullptr : xn_, bf16 ? xb_ : nullptr, stream_);
  gemm_->run(t, in, L.gate, L.gate_bias, gate_, n, h, inter, stream_);
  gemm_->run(t, in, L.up, L.up_bias, up_, n, h, inter, stream_);
  kc::swiglu(gate_, up_, static_cast<std::int64_t>(n) * inter, bf16 ? nullptr : gate_, bf16 ? xb_ : nullptr, stream_);
  gemm_->run(t, bf16 ? static_cast<const void*>(xb_) : gate_, L.down, L.down_bias, tmp_, n, inter, h, stream_);
  kc::add(x_, tmp_, static_cast<std::int64_t>(n) * h, stream_);
}

void CudaForward::logits_to_host(int rows, float* host) {
  KV_CUDA_CHECK(cudaMemcpyAsync(host, logits_, static_cast<std::size_t>(rows) * config_.vocab_size * sizeof(float),
                                cudaMemcpyDeviceToHost, stream_));
  KV_CUDA_CHECK(cudaStreamSynchronize(stream_));
}

void CudaForward::argmax(int rows, int* host_ids) {
  kc::argmax_rows(logits_, rows, config_.vocab_size, ids_, stream_);
  KV_CUDA_CHECK(cudaMemcpyAsync(host_ids, ids_, rows * sizeof(int), cudaMemcpyDeviceToHost, stream_));
  KV_CUDA_CHECK(cudaStreamSynchronize(stream_));
}

void CudaForward::absmax(std::vector<std::vector<float>>& k, std::vector<std::vector<float>>& v) {
  const int L = config_.num_layers, H = config_.num_kv_heads;
  std::vector<float> a(static_cast<std::size_t>(L) * H * 2);
  KV_CUDA_CHECK(cudaMemcpyAsync(a.data(), cache_->absmax(), a.size() * sizeof(float), cudaMemcpyDeviceToHost, stream_));
  KV_CUDA_CHECK(cudaStreamSynchronize(stream_));
  k.assign(L, std::vector<float>(H));
  v.assign(L, std::vector<float>(H));
  for (int l = 0; l < L; ++l)
    for (int hh = 0; hh < H; ++hh) {
      k[l][hh] = a[(static_cast<std::size_t>(l) * H + hh) * 2];
      v[l][hh] = a[(static_cast<std::size_t>(l) * H + hh) * 2 + 1];
    }
}

}  // namespace kvgate::decoder
