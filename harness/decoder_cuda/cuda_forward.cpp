#include "harness/decoder_cuda/cuda_forward.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>

#include "harness/core/error.h"
#include "kernels/cuda_check.cuh"
#include "kernels/float_formats.h"
#include "kernels/gemv.h"
#include "kernels/kv_format.h"
#include "kernels/paged_attention_prefill.h"

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
  // Matrices stacked by rows ([a rows][k] then [b rows][k]...): one GEMM's operand.
  auto stacked = [&](std::initializer_list<std::pair<const float*, std::size_t>> parts) -> const void* {
    std::vector<float> all;
    for (const auto& [src, n] : parts) all.insert(all.end(), src, src + n);
    return matrix(all.data(), all.size());
  };
  for (int l = 0; l < c.num_layers; ++l) {
    const LayerWeights& L = model.layer(l);
    Layer D;
    D.qkv = stacked({{L.q, qw * h}, {L.k, kw * h}, {L.v, kw * h}});
    D.o = matrix(L.o, h * qw);
    {  // rows interleaved, gate j then up j: the GEMV's SwiGLU epilogue holds both in one warp (gemv.h)
      std::vector<float> gu(2 * inter * h);
      for (std::size_t j = 0; j < inter; ++j) {
        std::copy(L.gate + j * h, L.gate + (j + 1) * h, gu.begin() + 2 * j * h);
        std::copy(L.up + j * h, L.up + (j + 1) * h, gu.begin() + (2 * j + 1) * h);
      }
      D.gate_up = matrix(gu.data(), gu.size());
    }
    D.down = matrix(L.down, h * inter);
    if (L.q_bias || L.k_bias || L.v_bias) {  // absent parts are zero: x + 0 is x
      std::vector<float> b(qw + 2 * kw, 0.0f);
      if (L.q_bias) std::copy(L.q_bias, L.q_bias + qw, b.begin());
      if (L.k_bias) std::copy(L.k_bias, L.k_bias + kw, b.begin() + qw);
      if (L.v_bias) std::copy(L.v_bias, L.v_bias + kw, b.begin() + qw + kw);
      D.qkv_bias = vec(b.data(), b.size());
    }
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
  const std::size_t esize = type == kc::GemmType::kBf16 ? 2 : 4;
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
  // Stacked matrices (fused GEMMs), each part filled from its own stream as a separate one would be.
  auto stacked = [&](std::initializer_list<std::size_t> outs, std::size_t in) -> const void* {
    std::size_t rows = 0;
    for (std::size_t o : outs) rows += o;
    void* p = nullptr;
    KV_CUDA_CHECK(cudaMalloc(&p, rows * in * esize));
    w->owned.push_back(p);
    std::size_t at = 0;
    for (std::size_t o : outs) {
      kc::fill_random(static_cast<char*>(p) + at * in * esize, static_cast<std::int64_t>(o * in), type, ++stream,
                      1.0f / std::sqrt(static_cast<float>(in)), 0.0f, nullptr);
      at += o;
    }
    w->bytes += static_cast<double>(rows * in * esize);
    return p;
  };
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
    D.qkv = stacked({qw, kw, kw}, h);
    D.o = mat(h, qw);
    D.gate_up = stacked({inter, inter}, h);  // random rows: read as interleaved gate/up like any others
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
  qkv_ = device_alloc<float>(owned_, R * (qw + 2 * kw));
  q_ = device_alloc<float>(owned_, R * qw);
  attn_ = device_alloc<float>(owned_, R * qw);
  k_ = device_alloc<float>(owned_, R * kw);
  v_ = device_alloc<float>(owned_, R * kw);
  gate_up_ = device_alloc<float>(owned_, R * 2 * inter);
  act_ = w_->type == kc::GemmType::kF32 ? device_alloc<float>(owned_, R * inter) : nullptr;
  logits_ = device_alloc<float>(owned_, R * vocab);
  xb_ = device_alloc<kc::bf16_t>(owned_, R * std::max({h, qw, inter}));
  // tokens, sequences, positions [R] each, then the tiles [R][3]: one copy per forward.
  static_assert(sizeof(kc::AttentionTile) == 3 * sizeof(int));
  inputs_ = device_alloc<int>(owned_, 6 * R);
  tokens_ = inputs_;
  seqs_ = inputs_ + R;
  pos_ = inputs_ + 2 * R;
  tiles_ = reinterpret_cast<kc::AttentionTile*>(inputs_ + 3 * R);
  KV_CUDA_CHECK(cudaMallocHost(&host_inputs_, 6 * R * sizeof(int)));
  KV_CUDA_CHECK(cudaEventCreateWithFlags(&inputs_copied_, cudaEventDisableTiming));
  ids_ = device_alloc<int>(owned_, R);
  argmax_ws_ = device_alloc<char>(owned_, kc::argmax_workspace_bytes(static_cast<int>(R)));
  // Splits: blocks x splits <= 4 * 132 + blocks (attention_splits), or the fixed count asked for.
  const std::size_t blocks = R * c.num_kv_heads;
  const std::size_t entries = o_.splits > 0 ? blocks * o_.splits : 4 * 132 + blocks;
  workspace_ = device_alloc<float>(owned_, entries * kc::kMaxTileQ * (c.head_dim + 2));

  const kernels::KvShape shape{.layers = c.num_layers, .kv_heads = c.num_kv_heads, .head_dim = c.head_dim};
  const kernels::KvFormatSpec spec = kernels::resolve_kv_format(o_.kv, shape);
  kc::PagedKvOptions po{.page_tokens = 64, .max_seqs = o_.max_seqs, .max_tokens_per_seq = o_.max_context};
  const double page_bytes = kc::PagedKvCache::device_bytes_per_token(spec) * 64;  // all layers, K and V
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
  for (auto& [key, g] : graphs_)
    if (g.exec) cudaGraphExecDestroy(g.exec);
  if (inputs_copied_) cudaEventDestroy(inputs_copied_);
  if (host_inputs_) cudaFreeHost(host_inputs_);
  cache_.reset();
  for (void* p : owned_) cudaFree(p);
  cudaFree(sample_ws_);
  if (stream_) cudaStreamDestroy(stream_);
}

int CudaForward::context_bucket(int max_ctx) {
  int b = 64;
  while (b < max_ctx && b < (1 << 30)) b *= 2;
  return b;
}

void CudaForward::forward(std::span<const int> tokens, std::span<const int> seqs, std::span<const int> positions,
                          int first_logit, bool greedy) {
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
  // The kernels read positions from the device; max_ctx only sizes the split count, so the
  // bucket (>= every position + 1) keeps every launch parameter fixed while a graph is replayed.
  max_ctx_ = context_bucket(max_ctx_);
  splits_ = o_.splits > 0 ? o_.splits : kc::attention_splits(num_tiles_, c.num_kv_heads, max_ctx_, 64);
  cache_->sync_block_table(stream_);
  pool_args_ = {.heads = c.num_heads, .kv_heads = c.num_kv_heads, .max_tile_rows = max_tile_rows_, .max_ctx = max_ctx_,
                .max_pages = cache_->max_pages_per_seq(), .emulation = o_.emulation, .prefill = o_.prefill,
                .prefill_f16 = o_.prefill_f16};
  if (o_.prefill_pool && max_tile_rows_ >= 2) {
    // The first layer whose codec takes a pool (TurboQuant keeps its first layers in bf16); every
    // layer of that format reads the same plan.
    int l = 0;
    while (l + 1 < c.num_layers && !kc::prefill_tile_pool_takes(cache_->codec(l), pool_args_)) ++l;
    pool_layer_ = l;
    tile_pool_.prepare(cache_->codec(l), pool_args_, host_tiles_.data(), num_tiles_, positions.data(), stream_);
  }
  // Stage the inputs in pinned memory (once the previous forward's copy has read it), one copy.
  KV_CUDA_CHECK(cudaEventSynchronize(inputs_copied_));
  const std::size_t R = o_.max_rows;
  std::copy(tokens.begin(), tokens.end(), host_inputs_);
  std::copy(seqs.begin(), seqs.end(), host_inputs_ + R);
  std::copy(positions.begin(), positions.end(), host_inputs_ + 2 * R);
  std::memcpy(host_inputs_ + 3 * R, host_tiles_.data(), host_tiles_.size() * sizeof(kc::AttentionTile));
  KV_CUDA_CHECK(cudaMemcpyAsync(inputs_, host_inputs_, (3 * R + 3 * host_tiles_.size()) * sizeof(int), cudaMemcpyHostToDevice,
                                stream_));
  KV_CUDA_CHECK(cudaEventRecord(inputs_copied_, stream_));

  const bool decode_step = first_logit == 0 && max_tile_rows_ == 1;
  if (!o_.cuda_graphs || !decode_step) {
    launch_all(n, first_logit, greedy);
    return;
  }
  const bool gemv = use_gemv(n);
  const GraphKey key{.rows = n, .ctx_bucket = max_ctx_, .greedy = greedy, .gemv = gemv, .pdl = gemv && o_.pdl};
  GraphEntry& g = graphs_[key];
  g.last_use = ++graph_clock_;
  if (!g.exec) {
    // The first step of a shape runs eagerly: lazy module loading, cuBLAS's heuristics and the
    // kernels' one-time attribute setup happen outside any capture.
    if (g.seen++ == 0) {
      launch_all(n, first_logit, greedy);
      return;
    }
    constexpr int kMaxGraphs = 32;
    int execs = 0;
    for (const auto& [k, e] : graphs_) execs += e.exec != nullptr;
    if (execs >= kMaxGraphs) {  // drop the least recently used executable graph (never g: it has none; g stays valid)
      auto victim = graphs_.end();
      for (auto it = graphs_.begin(); it != graphs_.end(); ++it)
        if (it->second.exec && (victim == graphs_.end() || it->second.last_use < victim->second.last_use)) victim = it;
      if (victim != graphs_.end()) {
        KV_CUDA_CHECK(cudaStreamSynchronize(stream_));
        KV_CUDA_CHECK(cudaGraphExecDestroy(victim->second.exec));
        graphs_.erase(victim);
      }
    }
    cudaGraph_t graph = nullptr;
    KV_CUDA_CHECK(cudaStreamBeginCapture(stream_, cudaStreamCaptureModeRelaxed));
    try {
      launch_all(n, first_logit, greedy);
    } catch (...) {
      cudaStreamEndCapture(stream_, &graph);
      if (graph) cudaGraphDestroy(graph);
      throw;
    }
    KV_CUDA_CHECK(cudaStreamEndCapture(stream_, &graph));
    const cudaError_t st = cudaGraphInstantiate(&g.exec, graph, 0);
    cudaGraphDestroy(graph);
    KV_CUDA_CHECK(st);
    ++graph_stats_.captured;
  }
  KV_CUDA_CHECK(cudaGraphLaunch(g.exec, stream_));
  ++graph_stats_.replayed;
}

bool CudaForward::prefill_pool_pairs() const {
  return pool_args_.tile_pool && kc::prefill_pool_pairs_takes(cache_->codec(pool_layer_), pool_args_);
}

void CudaForward::launch_all(int n, int first_logit, bool greedy) {
  const ModelConfig& c = config_;
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
    if (greedy) kc::argmax_rows_chunked(logits_, m, c.vocab_size, ids_, argmax_ws_, stream_);
  }
}

bool CudaForward::use_gemv(int n) const {
  const ModelConfig& c = config_;
  return n <= o_.gemv_rows && w_->type == kc::GemmType::kBf16 && kc::gemv_supported(n, c.hidden_size, c.num_heads * c.head_dim) &&
         kc::gemv_supported(n, c.num_heads * c.head_dim, c.hidden_size);
}

void CudaForward::layer(int l, int n) {
  if (use_gemv(n)) return layer_gemv(l, n);
  const ModelConfig& c = config_;
  const CudaWeights::Layer& L = w_->layers[l];
  const kc::GemmType t = w_->type;
  const bool bf16 = t == kc::GemmType::kBf16;
  const int h = c.hidden_size, qw = c.num_heads * c.head_dim, kw = c.num_kv_heads * c.head_dim, inter = c.intermediate_size;
  const float eps = c.rms_norm_eps;
  const void* in = bf16 ? static_cast<const void*>(xb_) : xn_;
  kc::rmsnorm(x_, L.input_norm, n, h, eps, bf16 ? nullptr : xn_, bf16 ? xb_ : nullptr, stream_);
  // One GEMM for q, k and v, then bias, q/k norm and RoPE while splitting its output.
  gemm_->run(t, in, L.qkv, nullptr, qkv_, n, h, qw + 2 * kw, stream_);
  attend(l, n, /*pdl=*/false);  // into xb_ (bf16 GEMMs) or attn_
  project_add(n, bf16 ? static_cast<const void*>(xb_) : attn_, L.o, L.o_bias, qw);
  kc::rmsnorm(x_, L.post_norm, n, h, eps, bf16 ? nullptr : xn_, bf16 ? xb_ : nullptr, stream_);
  // One GEMM for gate and up; SwiGLU reads its (gate j, up j) pairs.
  gemm_->run(t, in, L.gate_up, nullptr, gate_up_, n, h, 2 * inter, stream_);
  kc::swiglu_fused(gate_up_, n, inter, L.gate_bias, L.up_bias, bf16 ? nullptr : act_, bf16 ? xb_ : nullptr, stream_);
  project_add(n, bf16 ? static_cast<const void*>(xb_) : act_, L.down, L.down_bias, inter);
}

// Decode steps: each projection one GEMV launch with the kernel before or after it fused in (gemv.h):
// the input rmsnorms into qkv and gate_up, SwiGLU into gate_up's epilogue (bf16 out, so down
// reads bf16 as o does the attention's output). The layer is 4 GEMVs, qkv_split, kv_write and the
// attention (a kernel and its split merge).
void CudaForward::layer_gemv(int l, int n) {
  const ModelConfig& c = config_;
  const CudaWeights::Layer& L = w_->layers[l];
  const int h = c.hidden_size, qw = c.num_heads * c.head_dim, kw = c.num_kv_heads * c.head_dim, inter = c.intermediate_size;
  const bool pdl = o_.pdl;
  auto wt = [](const void* p) { return static_cast<const kc::bf16_t*>(p); };
  kc::gemv({.input = kc::GemvInput::kRmsNorm, .x = x_, .norm = L.input_norm, .eps = c.rms_norm_eps, .w = wt(L.qkv), .y = qkv_,
            .rows = n, .k = h, .cols = qw + 2 * kw, .pdl = pdl},
           stream_);
  attend(l, n, pdl);
  kc::gemv({.input = kc::GemvInput::kBf16, .x = xb_, .w = wt(L.o), .bias = L.o_bias, .y = x_, .rows = n, .k = qw, .cols = h,
            .accumulate = true, .pdl = pdl},
           stream_);
  kc::gemv({.input = kc::GemvInput::kRmsNorm, .output = kc::GemvOutput::kSwigluBf16, .x = x_, .norm = L.post_norm,
            .eps = c.rms_norm_eps, .gate_bias = L.gate_bias, .up_bias = L.up_bias, .w = wt(L.gate_up), .y_bf16 = xb_,
            .rows = n, .k = h, .cols = 2 * inter, .pdl = pdl},
           stream_);
  if (kc::gemv_supported(n, inter, h)) {
    kc::gemv({.input = kc::GemvInput::kBf16, .x = xb_, .w = wt(L.down), .bias = L.down_bias, .y = x_, .rows = n, .k = inter,
              .cols = h, .accumulate = true, .pdl = pdl},
             stream_);
  } else {  // the intermediate rows do not fit the GEMV's shared memory
    project_add(n, xb_, L.down, L.down_bias, inter);
  }
}

// After the fused QKV projection: bias, q/k norm and RoPE while splitting, and the cache write, in
// one kernel (qkv_split_write; kivi2: qkv_split, then kv_write's in-place quantization); then the
// attention into xb_ (bf16, the o projection's operand, with bf16 GEMMs) or attn_ (fp32 GEMMs).
void CudaForward::attend(int l, int n, bool pdl) {
  const ModelConfig& c = config_;
  const CudaWeights::Layer& L = w_->layers[l];
  const int d = c.head_dim;
  const kc::QkvSplitArgs split{.qkv = qkv_, .bias = L.qkv_bias, .q_norm = L.q_norm, .k_norm = L.k_norm, .eps = c.rms_norm_eps,
                                .positions = pos_, .inv_freq = w_->inv_freq, .attention_scaling = w_->rope_scaling, .rows = n,
                                .q_heads = c.num_heads, .kv_heads = c.num_kv_heads, .head_dim = d, .q = q_, .k = k_, .v = v_, .pdl = pdl};
  const kc::PagedKvCache& cache = *cache_;
  const kc::KvWriteArgs write{.k = k_, .v = v_, .row_seq = seqs_, .row_pos = pos_, .rows = n, .kv_heads = c.num_kv_heads,
                              .block_table = cache.block_table(), .max_pages = cache.max_pages_per_seq(), .page_tokens = 64,
                              .k_pool = cache.k_pool(l), .v_pool = cache.v_pool(l),
                              .absmax = cache.absmax() + static_cast<std::size_t>(l) * c.num_kv_heads * 2, .pdl = pdl};
  if (cache.codec(l).kivi_residual > 0) {  // kivi2 quantizes in place after the writes (kv_write)
    kc::qkv_split(split, stream_);
    kc::kv_write(cache.codec(l), write, stream_);
  } else {
    kc::qkv_split_write(split, cache.codec(l), write, stream_);
  }
  const float scale = static_cast<float>(1.0 / std::sqrt(static_cast<double>(d)));
  kc::paged_attention(cache.codec(l),
                      {.q = q_, .out = attn_, .out_bf16 = w_->type == kc::GemmType::kBf16 ? xb_ : nullptr, .row_pos = pos_,
                       .tiles = tiles_, .num_tiles = num_tiles_, .heads = c.num_heads,
                       .kv_heads = c.num_kv_heads, .window = c.layer_window[l], .max_tile_rows = max_tile_rows_, .max_ctx = max_ctx_, .scale = scale,
                       .block_table = cache.block_table(), .max_pages = cache.max_pages_per_seq(), .page_tokens = 64,
                       .k_pool = cache.k_pool(l), .v_pool = cache.v_pool(l), .cache_pages = cache.options().num_pages,
                       .splits = splits_, .workspace = workspace_,
                       .emulation = o_.emulation, .prefill = o_.prefill, .pdl = pdl, .tile_pool = pool_args_.tile_pool,
                       .pool_plan = pool_args_.pool_plan, .pool_seqs = pool_args_.pool_seqs, .pool_pages = pool_args_.pool_pages,
                       .pool_table = pool_args_.pool_table,
                       .prefill_f16 = o_.prefill_f16},
                      stream_);
}

// x += a W^T (the residual add in cuBLAS's epilogue), or with a bias: t = a W^T, t += bias, x += t.
void CudaForward::project_add(int n, const void* a, const void* w, const float* bias, int k) {
  const int h = config_.hidden_size;
  if (bias) {
    gemm_->run(w_->type, a, w, bias, tmp_, n, k, h, stream_);
    kc::add(x_, tmp_, static_cast<std::int64_t>(n) * h, stream_);
  } else {
    gemm_->run(w_->type, a, w, nullptr, x_, n, k, h, stream_, /*accumulate=*/true);
  }
}

void CudaForward::logits_to_host(int rows, float* host) {
  KV_CUDA_CHECK(cudaMemcpyAsync(host, logits_, static_cast<std::size_t>(rows) * config_.vocab_size * sizeof(float),
                                cudaMemcpyDeviceToHost, stream_));
  KV_CUDA_CHECK(cudaStreamSynchronize(stream_));
}

void CudaForward::argmax(int rows, int* host_ids) {
  kc::argmax_rows_chunked(logits_, rows, config_.vocab_size, ids_, argmax_ws_, stream_);
  ids_to_host(rows, host_ids);
}

void CudaForward::sample(int first_row, std::span<const kc::SampleRow> rows, int* host_ids) {
  const int n = static_cast<int>(rows.size());
  if (n == 0) return;
  if (first_row < 0 || first_row + n > o_.max_rows)
    throw Error("CudaForward::sample: logits rows " + std::to_string(first_row) + ".." + std::to_string(first_row + n - 1) +
                    " outside the " + std::to_string(o_.max_rows) + " the forward holds",
                kExitInternal);
  const int vocab = config_.vocab_size;
  const std::size_t need = kc::sample_workspace_bytes(n, vocab);
  if (sample_ws_bytes_ < need) {
    KV_CUDA_CHECK(cudaStreamSynchronize(stream_));  // the old buffer may still be in use
    cudaFree(sample_ws_);
    sample_ws_ = nullptr;
    sample_ws_bytes_ = 0;
    KV_CUDA_CHECK(cudaMalloc(&sample_ws_, need));
    sample_ws_bytes_ = need;
  }
  kc::sample_rows(logits_ + static_cast<std::size_t>(first_row) * vocab, vocab, rows.data(), n, ids_, sample_ws_,
                  sample_ws_bytes_, stream_);
  ids_to_host(n, host_ids);
}

void CudaForward::ids_to_host(int rows, int* host_ids) {
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
