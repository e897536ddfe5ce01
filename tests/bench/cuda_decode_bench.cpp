// cuda-decode-bench: the CUDA decoder against the device's own ceilings, measured in the same run
// (METHOD.md): a large device-to-device copy gives the bandwidth (bytes read + written / time).
//
//   attention   paged decode attention per KV format at 8K/32K/128K tokens per sequence, Qwen3-8B
//               heads (32 q / 8 kv, d 128), batch = 128K / ctx so every size streams the same bytes
//               (far past the 60 MB L2; --tokens N: N / ctx): stored bytes read / time, and that over copy bandwidth, on
//               the tensor-core kernel (where it takes the format) and the CUDA-core kernel
//               (--decode-kernels tensor_core,cuda_core; generic: the kernel shapes outside the decode
//               path run), for --heads 32 (GQA 4, default) and e.g. 64 (Qwen3-32B's GQA 8); the
//               split pass and the split merge launched plainly or (--attention-pdl) with
//               programmatic dependent launch, as the engine's decode steps launch them; each timed
//               run is --launches (default 10) launches back to back, as a graph replays them
//   decode      end-to-end decode steps of a random Qwen3-8B-shaped model (weights generated on the
//               device) at batch 1 and 32: tokens/s and the floor (weights + KV bytes / bandwidth)
//               with CUDA graphs off and/or on (--graphs off,on: both in one run, the same weights),
//               and batches of 1-4 on cuBLAS, the fused GEMV, or the GEMV path with programmatic
//               dependent launch (--gemv off,on,pdl; default off,on; the engine takes the GEMV at batch 1)
//   profile     (--profile) the pieces of a batch-1 and batch-32 step one at a time, 36 launches over
//               the 36 layers' weights: separate q/k/v and gate/up GEMMs against the fused ones, the
//               o/down GEMMs (residual in the epilogue), the lm head, argmax, the small kernels, and
//               at batches of 1-4 the GEMVs with the kernel before them fused in (gemv.h)
//   sampling    (--sampling) a sampled step's draw at each of --batches: the host path (copy the logits
//               back, sample_ref a row at a time) against sample_rows on the device (sampling.h)
//   prefill     tokens/s of prefill at `--prefill N[,M...]` tokens per KV format
//               (`--prefill-formats`, default bf16), attention kernel (`--prefill-kernels`: tensor_core,
//               the default path; bf16x3; mma_sync; generic, the CUDA-core kernel; a "+engine" suffix:
//               engine numerics, Q and P in bf16; "+fa3": engine numerics with fp8 Q and P as
//               FlashAttention-3 computes an fp8 cache; else exact; then "+direct": without the prefill
//               tile pool or fp16 operands, the attention kernel decoding its pages itself) and rows
//               per forward call
//               (`--prefill-chunks`, default the CUDA engine's: cuda_default_prefill_chunk, 8192 on an H100), and
//               sequences prefilled together (`--prefill-batch B[,...]`, default 1: each forward holds
//               chunk / B consecutive rows of each of B sequences, all advancing together, their last
//               rows at the end as the engine places them); then 32 greedy decode steps at batch B, and
//               the trials an hour of NIAH trials of that length with 32 output tokens
//               (B x 3600 / (prefill + 32 steps))
//   prefill attention  (--prefill-attention N[,M...], no model needed) one 512-row chunk's attention
//               alone at the end of an N-token sequence, per --prefill-formats and --prefill-kernels:
//               time per launch, TFLOPS (4 x head_dim flops per query vector and visible token; the
//               exact mode's extra term products not counted) and what the attention of a whole
//               N-token prefill of the 36-layer model would take at that rate
//
// Options: kUsage below (cuda-decode-bench --help).
// Prints tables; medians of --reps timed runs after warm-up, CUDA events.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include <cuda_profiler_api.h>
#include <nlohmann/json.hpp>

#include "harness/core/error.h"
#include "harness/core/rng.h"
#include "kernels/cuda_check.cuh"
#include "kernels/cuda_info.h"
#include "harness/decoder/kernel_switches.h"
#include "harness/decoder/model_config.h"
#include "harness/decoder_cuda/cuda_forward.h"
#include "kernels/gemv.h"
#include "kernels/kv_format.h"
#include "kernels/kv_paged_cuda.h"
#include "kernels/paged_attention_decode.h"
#include "kernels/prefill_tile_pool.h"
#include "kernels/sampling.h"

namespace kc = kvgate::kernels::cuda;
namespace kk = kvgate::kernels;
using kvgate::decoder::CudaForward;
using kvgate::decoder::CudaWeights;

namespace {

struct Timer {
  cudaEvent_t a, b;
  Timer() {
    KV_CUDA_CHECK(cudaEventCreate(&a));
    KV_CUDA_CHECK(cudaEventCreate(&b));
  }
  ~Timer() {
    cudaEventDestroy(a);
    cudaEventDestroy(b);
  }
  // Median milliseconds of `reps` runs of fn after `warm` warm-up runs.
  template <class Fn>
  double median_ms(int warm, int reps, cudaStream_t s, Fn fn) {
    for (int i = 0; i < warm; ++i) fn();
    KV_CUDA_CHECK(cudaStreamSynchronize(s));
    std::vector<double> t;
    for (int i = 0; i < reps; ++i) {
      KV_CUDA_CHECK(cudaEventRecord(a, s));
      fn();
      KV_CUDA_CHECK(cudaEventRecord(b, s));
      KV_CUDA_CHECK(cudaEventSynchronize(b));
      float ms = 0;
      KV_CUDA_CHECK(cudaEventElapsedTime(&ms, a, b));
      t.push_back(ms);
    }
    std::sort(t.begin(), t.end());
    return t[t.size() / 2];
  }
};

// Device-to-device copy of 4 GiB: bytes read + written per second.
double copy_bandwidth(int reps) {
  const std::size_t n = std::size_t{4} << 30;
  kk::DeviceBuffer<std::uint8_t> a(n), b(n);
  KV_CUDA_CHECK(cudaMemset(a.get(), 0x5A, n));
  Timer t;
  const double ms = t.median_ms(2, reps, nullptr, [&] { KV_CUDA_CHECK(cudaMemcpyAsync(b.get(), a.get(), n, cudaMemcpyDeviceToDevice)); });
  return 2.0 * n / (ms * 1e-3);
}

std::vector<std::string> split(const std::string& s) {
  std::vector<std::string> out;
  std::size_t p = 0;
  while (p <= s.size()) {
    const std::size_t q = std::min(s.find(',', p), s.size());
    if (q > p) out.push_back(s.substr(p, q - p));
    p = q + 1;
  }
  return out;
}

struct AttnResult {
  std::string format;
  int ctx;
  double ms, bytes, tbps;
};

// A one-layer paged cache (8 KV heads, d 128, pages of 64) with `seqs` sequences of `ctx` tokens reserved.
std::unique_ptr<kc::PagedKvCache> bench_cache(const std::string& format, int seqs, int ctx) {
  const kk::KvFormatSpec spec = kk::resolve_kv_format({format, nlohmann::json::object()}, {.layers = 1, .kv_heads = 8, .head_dim = 128});
  auto cache = std::make_unique<kc::PagedKvCache>(spec, kc::PagedKvOptions{.page_tokens = 64, .max_seqs = seqs, .max_tokens_per_seq = ctx});
  for (int s = 0; s < seqs; ++s) cache->reserve(s, ctx);
  cache->sync_block_table(nullptr);
  return cache;
}

// Random K/V (sd 2 and 1) through kv_write into every sequence of `cache` up to ctx tokens, 4096 rows at a time.
void fill_cache(kc::PagedKvCache& cache, int seqs, int ctx) {
  const int kv_heads = 8, d = 128, chunk = 4096;
  kk::DeviceBuffer<float> k(static_cast<std::size_t>(chunk) * kv_heads * d), v(k.size());
  kc::fill_random(k.get(), static_cast<std::int64_t>(k.size()), kc::GemmType::kF32, 1, 2.0f, 0.0f, nullptr);
  kc::fill_random(v.get(), static_cast<std::int64_t>(v.size()), kc::GemmType::kF32, 2, 1.0f, 0.0f, nullptr);
  std::vector<int> seq(chunk), pos(chunk);
  kk::DeviceBuffer<int> dseq(chunk), dpos(chunk);
  for (int s = 0; s < seqs; ++s)
    for (int t0 = 0; t0 < ctx; t0 += chunk) {
      const int n = std::min(chunk, ctx - t0);
      for (int i = 0; i < n; ++i) {
        seq[i] = s;
        pos[i] = t0 + i;
      }
      KV_CUDA_CHECK(cudaMemcpy(dseq.get(), seq.data(), n * sizeof(int), cudaMemcpyHostToDevice));
      KV_CUDA_CHECK(cudaMemcpy(dpos.get(), pos.data(), n * sizeof(int), cudaMemcpyHostToDevice));
      kc::kv_write(cache.codec(0), {.k = k.get(), .v = v.get(), .row_seq = dseq.get(), .row_pos = dpos.get(), .rows = n,
                                    .kv_heads = kv_heads, .block_table = cache.block_table(),
                                    .max_pages = cache.max_pages_per_seq(), .page_tokens = 64, .k_pool = cache.k_pool(0),
                                    .v_pool = cache.v_pool(0), .absmax = nullptr},
                   nullptr);
    }
  KV_CUDA_CHECK(cudaDeviceSynchronize());
}

// Median ms of paged_attention over a filled bench_cache for query rows at positions qpos grouped in
// `tiles` (random q, sd 2, `heads` query heads over the 8 KV heads), the split count sized for
// split_ctx as the forward sizes it; `kernels` carries the kernel choice (decode / prefill fields).
// launches: calls per timed run, back to back, the run's time divided among them (1: each run pays
// the host's enqueue of its first kernel while the device idles).
// pool: the prefill tile pool where the call takes one (each timed launch includes its decoding pass)
// and an fp16 cache's fp16 operands; false: neither (the kernel on the cache's own tiles, "+direct").
double time_paged_attention(const kc::PagedKvCache& cache, const std::vector<kc::AttentionTile>& tiles, const std::vector<int>& qpos,
                            int heads, int max_tile_rows, int split_ctx, const kc::PagedAttentionArgs& kernels, int warm,
                            int reps, int launches = 1, bool pool = false) {
  const int kv_heads = 8, d = 128, num_tiles = static_cast<int>(tiles.size());
  kk::DeviceBuffer<kc::AttentionTile> dt(tiles.size());
  dt.upload(tiles.data());
  kk::DeviceBuffer<int> dq(qpos.size());
  dq.upload(qpos.data());
  kk::DeviceBuffer<float> q(qpos.size() * heads * d), out(q.size());
  kc::fill_random(q.get(), static_cast<std::int64_t>(q.size()), kc::GemmType::kF32, 3, 2.0f, 0.0f, nullptr);
  const int splits = kc::attention_splits(num_tiles, kv_heads, split_ctx, 64);
  kk::DeviceBuffer<float> ws(kc::attention_workspace_floats(num_tiles, kv_heads, splits, d));
  kc::PagedAttentionArgs a = kernels;
  a.q = q.get(), a.out = out.get(), a.row_pos = dq.get(), a.tiles = dt.get(), a.num_tiles = num_tiles, a.heads = heads;
  a.kv_heads = kv_heads, a.window = 0, a.max_tile_rows = max_tile_rows, a.max_ctx = split_ctx, a.scale = 1.0f / std::sqrt(128.0f);
  a.block_table = cache.block_table(), a.max_pages = cache.max_pages_per_seq(), a.page_tokens = 64;
  a.k_pool = cache.k_pool(0), a.v_pool = cache.v_pool(0), a.cache_pages = cache.options().num_pages;
  a.splits = splits, a.workspace = ws.get();
  a.prefill_f16 = pool;
  kc::PrefillTilePool tile_pool;
  if (pool) tile_pool.prepare(cache.codec(0), a, tiles.data(), num_tiles, qpos.data(), nullptr);
  Timer t;
  const double ms = t.median_ms(warm, reps, nullptr, [&] {
    for (int i = 0; i < launches; ++i) kc::paged_attention(cache.codec(0), a, nullptr);
  });
  KV_CUDA_CHECK(cudaDeviceSynchronize());
  return ms / launches;
}

// Decode attention over `total` cached tokens split into sequences of `ctx`.
// split_ctx: the context the split count is sized for (the forward passes a power-of-two bucket).
// heads: query heads over 8 KV heads (32: Qwen3-8B's GQA 4; 64: Qwen3-32B's GQA 8).
AttnResult bench_attention(const std::string& format, int ctx, int total, int reps, int split_ctx = 0,
                           kc::DecodeKernel kernel = kc::DecodeKernel::kTensorCore, int heads = 32, bool pdl = false,
                           int launches = 1) {
  if (split_ctx <= 0) split_ctx = ctx;
  const int batch = std::max(1, total / ctx);
  const auto cache = bench_cache(format, batch, ctx);
  const kc::KvLayerCodec& lc = cache->codec(0);
  if (kernel == kc::DecodeKernel::kTensorCore && !kc::decode_tensor_core_takes(lc)) return {format, ctx, -1.0, 0.0, 0.0};
  fill_cache(*cache, batch, ctx);
  // One query row per sequence at the last position.
  std::vector<kc::AttentionTile> tiles;
  std::vector<int> qpos;
  for (int s = 0; s < batch; ++s) {
    tiles.push_back({s, s, 1});
    qpos.push_back(ctx - 1);
  }
  const double ms = time_paged_attention(*cache, tiles, qpos, heads, 1, split_ctx, {.pdl = pdl, .decode = kernel}, 3, reps, launches);
  const double bytes = static_cast<double>(batch) * ctx * 8 * (lc.k_bytes + lc.v_bytes);
  return {format, ctx, ms, bytes, bytes / (ms * 1e-3) / 1e12};
}

// One prefill chunk's attention alone: the last 512 rows of a `ctx`-token sequence (positions
// ctx - 512 .. ctx - 1, Qwen3-8B heads, tiles as the forward makes them) over its cache, on `kernel`.
// Returns ms per launch; `pairs` gets the (query vector, visible token) pairs the launch scores.
double bench_prefill_attention(const std::string& format, int ctx, const kc::PagedAttentionArgs& kernel, bool pool, int reps,
                               double& pairs) {
  const int heads = 32, rows = std::min(512, ctx), per_tile = kc::attention_rows_per_tile(heads / 8);
  const auto cache = bench_cache(format, 1, ctx);
  fill_cache(*cache, 1, ctx);
  std::vector<kc::AttentionTile> tiles;
  std::vector<int> qpos(rows);
  pairs = 0;
  for (int r = 0; r < rows; ++r) {
    qpos[r] = ctx - rows + r;
    pairs += static_cast<double>(heads) * (qpos[r] + 1);
    if (r % per_tile == 0) tiles.push_back({0, r, 0});
    ++tiles.back().rows;
  }
  return time_paged_attention(*cache, tiles, qpos, heads, per_tile, ctx, kernel, 2, reps, 1, pool);
}

// A --prefill-kernels entry: a "prefill" switch value, then "+engine" for engine numerics or "+fa3"
// for engine numerics with FlashAttention-3's fp8 Q and P (else exact), then "+direct" to run
// without the prefill tile pool (the engine's "prefill_pool": false) or fp16 operands.
bool prefill_direct(const std::string& entry) { return entry.ends_with("+direct"); }
std::string prefill_numerics_of(const std::string& entry) {
  return prefill_direct(entry) ? entry.substr(0, entry.size() - std::string("+direct").size()) : entry;
}
std::string prefill_kernel_of(const std::string& entry) {
  const std::string e = prefill_numerics_of(entry);
  for (const std::string suffix : {"+engine", "+fa3"})
    if (e.size() > suffix.size() && e.ends_with(suffix)) return e.substr(0, e.size() - suffix.size());
  return e;
}
kc::PagedAttentionArgs prefill_choice(const std::string& entry) {
  const std::string e = prefill_numerics_of(entry);
  kc::PagedAttentionArgs a{.prefill = kc::prefill_kernel_named(prefill_kernel_of(entry))};
  const bool fa3 = e.ends_with("+fa3");
  a.emulation.numerics = fa3 || e.ends_with("+engine") ? kk::AttentionNumerics::kEngine : kk::AttentionNumerics::kExact;
  a.emulation.q_fp8 = a.emulation.pv_fp8 = fa3;
  return a;
}

// One piece of a decode step timed alone: `fn(layer)` for the 36 layers back to back, per launch.
struct ProfileRow {
  std::string what;
  double us, bytes;  // per launch; bytes: weights read (0: not a GEMM)
};

void profile(const kvgate::decoder::ModelConfig& cfg, const CudaWeights& w, int batch, int reps, double bw) {
  const int L = cfg.num_layers, h = cfg.hidden_size, d = cfg.head_dim, qw = cfg.num_heads * d, kw = cfg.num_kv_heads * d,
            inter = cfg.intermediate_size, vocab = cfg.vocab_size;
  kc::Gemm gemm;
  cudaStream_t s = nullptr;
  KV_CUDA_CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  const std::size_t R = batch;
  kk::DeviceBuffer<std::uint16_t> xb(R * std::max(h, inter));
  kk::DeviceBuffer<float> x(R * h), y(R * 2 * inter), q(R * qw), k(R * kw), v(R * kw), logits(R * vocab);
  kk::DeviceBuffer<int> pos(R), ids(R);
  kc::fill_random(xb.get(), static_cast<std::int64_t>(xb.size()), kc::GemmType::kBf16, 7, 1.0f, 0.0f, s);
  kc::fill_random(x.get(), static_cast<std::int64_t>(x.size()), kc::GemmType::kF32, 8, 1.0f, 0.0f, s);
  kc::fill_random(y.get(), static_cast<std::int64_t>(y.size()), kc::GemmType::kF32, 9, 1.0f, 0.0f, s);
  std::vector<int> hp(R, 2048);
  pos.upload(hp.data());
  const std::size_t e = 2;  // bf16 weights
  auto part = [&](const void* base, std::size_t row0) { return static_cast<const char*>(base) + row0 * h * e; };
  Timer t;
  std::vector<ProfileRow> rows;
  auto time = [&](const std::string& what, double bytes, auto fn) {
    const double ms = t.median_ms(2, reps, s, [&] {
      for (int l = 0; l < L; ++l) fn(l);
    });
    rows.push_back({what, ms * 1e3 / L, bytes});
  };
  const int n = batch;
  time("q, k, v: 3 GEMMs", double(qw + 2 * kw) * h * e, [&](int l) {
    const auto& W = w.layers[l];
    gemm.run(w.type, xb.get(), part(W.qkv, 0), nullptr, y.get(), n, h, qw, s);
    gemm.run(w.type, xb.get(), part(W.qkv, qw), nullptr, y.get(), n, h, kw, s);
    gemm.run(w.type, xb.get(), part(W.qkv, qw + kw), nullptr, y.get(), n, h, kw, s);
  });
  time("qkv: 1 fused GEMM", double(qw + 2 * kw) * h * e,
       [&](int l) { gemm.run(w.type, xb.get(), w.layers[l].qkv, nullptr, y.get(), n, h, qw + 2 * kw, s); });
  time("gate, up: 2 GEMMs", 2.0 * inter * h * e, [&](int l) {
    gemm.run(w.type, xb.get(), part(w.layers[l].gate_up, 0), nullptr, y.get(), n, h, inter, s);
    gemm.run(w.type, xb.get(), part(w.layers[l].gate_up, inter), nullptr, y.get(), n, h, inter, s);
  });
  time("gate_up: 1 fused GEMM", 2.0 * inter * h * e,
       [&](int l) { gemm.run(w.type, xb.get(), w.layers[l].gate_up, nullptr, y.get(), n, h, 2 * inter, s); });
  time("o GEMM, then add", double(h) * qw * e, [&](int l) {
    gemm.run(w.type, xb.get(), w.layers[l].o, nullptr, y.get(), n, qw, h, s);
    kc::add(x.get(), y.get(), static_cast<std::int64_t>(n) * h, s);
  });
  time("o GEMM, x += (epilogue)", double(h) * qw * e,
       [&](int l) { gemm.run(w.type, xb.get(), w.layers[l].o, nullptr, x.get(), n, qw, h, s, true); });
  time("down GEMM, x += (epilogue)", double(h) * inter * e,
       [&](int l) { gemm.run(w.type, xb.get(), w.layers[l].down, nullptr, x.get(), n, inter, h, s, true); });
  time("lm head GEMM", double(vocab) * h * e,
       [&](int) { gemm.run(w.type, xb.get(), w.lm_head, nullptr, logits.get(), n, h, vocab, s); });
  if (kc::gemv_supported(n, inter, h)) {  // the decode-step GEMVs with the kernel before each fused in
    auto wt = [](const void* p) { return static_cast<const kc::bf16_t*>(p); };
    time("qkv: GEMV + input rmsnorm", double(qw + 2 * kw) * h * e, [&](int l) {
      kc::gemv({.input = kc::GemvInput::kRmsNorm, .x = x.get(), .norm = w.layers[l].input_norm, .w = wt(w.layers[l].qkv),
                .y = y.get(), .rows = n, .k = h, .cols = qw + 2 * kw},
               s);
    });
    time("o: GEMV (fp32 in), x +=", double(h) * qw * e, [&](int l) {
      kc::gemv({.input = kc::GemvInput::kF32, .x = q.get(), .w = wt(w.layers[l].o), .y = x.get(), .rows = n, .k = qw, .cols = h,
                .accumulate = true},
               s);
    });
    time("o: GEMV (bf16 in), x +=", double(h) * qw * e, [&](int l) {
      kc::gemv({.input = kc::GemvInput::kBf16, .x = xb.get(), .w = wt(w.layers[l].o), .y = x.get(), .rows = n, .k = qw, .cols = h,
                .accumulate = true},
               s);
    });
    time("gate_up: GEMV + rmsnorm", 2.0 * inter * h * e, [&](int l) {
      kc::gemv({.input = kc::GemvInput::kRmsNorm, .x = x.get(), .norm = w.layers[l].post_norm, .w = wt(w.layers[l].gate_up),
                .y = y.get(), .rows = n, .k = h, .cols = 2 * inter},
               s);
    });
    time("gate_up: GEMV + rmsnorm, swiglu", 2.0 * inter * h * e, [&](int l) {
      kc::gemv({.input = kc::GemvInput::kRmsNorm, .output = kc::GemvOutput::kSwigluBf16, .x = x.get(), .norm = w.layers[l].post_norm,
                .w = wt(w.layers[l].gate_up), .y_bf16 = xb.get(), .rows = n, .k = h, .cols = 2 * inter},
               s);
    });
    time("down: GEMV (bf16 in), x +=", double(h) * inter * e, [&](int l) {
      kc::gemv({.input = kc::GemvInput::kBf16, .x = xb.get(), .w = wt(w.layers[l].down), .y = x.get(), .rows = n, .k = inter,
                .cols = h, .accumulate = true},
               s);
    });
    time("lm head GEMV (bf16 in)", double(vocab) * h * e, [&](int) {
      kc::gemv({.x = xb.get(), .w = wt(w.lm_head), .y = logits.get(), .rows = n, .k = h, .cols = vocab}, s);
    });
    if (n == 1)  // other (weight rows per warp, chunks in flight) variants on the o, gate_up and down shapes
      for (auto [cw, u] : {std::pair{1, 4}, {1, 8}, {2, 2}, {2, 4}, {2, 8}, {4, 2}, {4, 4}})
        for (auto [name, k, cols] : {std::tuple{"o", qw, h}, {"gate_up", h, 2 * inter}, {"down", inter, h}}) {
          const std::string what = std::string(name) + " GEMV bf16 in, " + std::to_string(cw) + "x" + std::to_string(u);
          time(what, double(cols) * k * e, [&, cw = cw, u = u, k = k, cols = cols, name = std::string(name)](int l) {
            const void* m = name == "o" ? w.layers[l].o : name == "down" ? w.layers[l].down : w.layers[l].gate_up;
            kc::gemv_tuning({.x = xb.get(), .w = wt(m), .y = y.get(), .rows = 1, .k = k, .cols = cols}, cw, u, s);
          });
        }
  }
  kk::DeviceBuffer<char> argmax_ws(kc::argmax_workspace_bytes(n));
  time("argmax, 64 chunks then merge", 0,
       [&](int) { kc::argmax_rows_chunked(logits.get(), n, vocab, ids.get(), argmax_ws.get(), s); });
  time("rmsnorm (hidden, to bf16)", 0,
       [&](int l) { kc::rmsnorm(x.get(), w.layers[l].input_norm, n, h, 1e-6f, nullptr, xb.get(), s); });
  time("qkv_split (q/k norm, RoPE)", 0, [&](int l) {
    kc::qkv_split({.qkv = y.get(), .q_norm = w.layers[l].q_norm, .k_norm = w.layers[l].k_norm, .positions = pos.get(),
                   .inv_freq = w.inv_freq, .rows = n, .q_heads = cfg.num_heads, .kv_heads = cfg.num_kv_heads, .head_dim = d,
                   .q = q.get(), .k = k.get(), .v = v.get()},
                  s);
  });
  time("swiglu_fused (to bf16)", 0, [&](int) { kc::swiglu_fused(y.get(), n, inter, nullptr, nullptr, nullptr, xb.get(), s); });
  KV_CUDA_CHECK(cudaStreamSynchronize(s));
  KV_CUDA_CHECK(cudaStreamDestroy(s));
  // One layer's decode attention (bf16 cache, 2048 tokens a sequence, the split count sized for the
  // forward's bucket, 4096) on either kernel.
  for (const auto kernel : {kc::DecodeKernel::kTensorCore, kc::DecodeKernel::kCudaCore}) {
    const AttnResult a = bench_attention("bf16", 2048, 2048 * batch, reps, 4096, kernel);
    rows.push_back({std::string("attention bf16 2K, ") + (kernel == kc::DecodeKernel::kTensorCore ? "tensor core" : "cuda core"),
                    a.ms * 1e3, 0});
  }
  std::printf("\nprofile, batch %d: each piece alone, 36 launches back to back (per launch; GEMMs: weight bytes / time)\n", batch);
  std::printf("%-30s %10s %10s %8s\n", "piece", "us", "TB/s", "of_copy");
  for (const auto& r : rows) {
    if (r.bytes > 0)
      std::printf("%-30s %10.2f %10.3f %7.1f%%\n", r.what.c_str(), r.us, r.bytes / (r.us * 1e-6) / 1e12,
                  100.0 * r.bytes / (r.us * 1e-6) / bw);
    else
      std::printf("%-30s %10.2f %10s %8s\n", r.what.c_str(), r.us, "-", "-");
  }
  std::fflush(stdout);
}

// A sampled decode step's draw (temperature 0.7, Qwen3's 151,936 logits a row, normal logits of
// sd 2): the host path the engine took before (copy the rows back, sample_ref a row at a time)
// against sample_rows on the device (the ids copied back), the same tokens from both.
void bench_sampling(int batch, int reps) {
  const int vocab = 151936;
  kk::DeviceBuffer<float> logits(static_cast<std::size_t>(batch) * vocab);
  kc::fill_random(logits.get(), static_cast<std::int64_t>(logits.size()), kc::GemmType::kF32, 7, 2.0f, 0.0f, nullptr);
  std::vector<kc::SampleRow> rows(batch);
  kvgate::Rng rng(11);
  for (auto& r : rows) r = {{.temperature = 0.7}, rng.uniform()};
  std::vector<float> host(logits.size());
  std::vector<int> host_ids(batch), dev_ids(batch);
  kk::SamplerWorkspace sws;
  kk::DeviceBuffer<int> ids(batch);
  const std::size_t bytes = kc::sample_workspace_bytes(batch, vocab);
  kk::DeviceBuffer<char> ws(bytes);
  Timer t;
  const double host_ms = t.median_ms(1, reps, nullptr, [&] {
    logits.download(host.data());
    for (int r = 0; r < batch; ++r)
      host_ids[r] = kk::sample_ref(host.data() + static_cast<std::size_t>(r) * vocab, vocab, rows[r].params, rows[r].u, sws);
  });
  const double dev_ms = t.median_ms(1, reps, nullptr, [&] {
    kc::sample_rows(logits.get(), vocab, rows.data(), batch, ids.get(), ws.get(), bytes, nullptr);
    ids.download(dev_ids.data());
  });
  std::printf("%6d %12.3f %12.3f %8.1fx %10s\n", batch, host_ms, dev_ms, host_ms / dev_ms, host_ids == dev_ids ? "yes" : "NO");
  std::fflush(stdout);
}

kvgate::decoder::ModelConfig qwen3_8b() {
  const nlohmann::json j = {{"architectures", {"Qwen3ForCausalLM"}}, {"model_type", "qwen3"}, {"hidden_size", 4096},
                            {"intermediate_size", 12288}, {"num_hidden_layers", 36}, {"num_attention_heads", 32},
                            {"num_key_value_heads", 8}, {"head_dim", 128}, {"vocab_size", 151936},
                            {"max_position_embeddings", 40960}, {"rms_norm_eps", 1e-6}, {"rope_theta", 1000000.0},
                            {"tie_word_embeddings", false}, {"hidden_act", "silu"}, {"torch_dtype", "bfloat16"}};
  return kvgate::decoder::parse_model_config(j, "qwen3-8b shape");
}

}  // namespace

constexpr const char* kUsage =
    "usage: cuda-decode-bench [--formats a,b,...|none] [--contexts 8192,32768,131072] [--no-model] [--prefill N[,M]]\n"
    "                         [--decode-context N] [--decode-formats a,b,...|none] [--reps N] [--graphs off,on]\n"
    "                         [--batches 1,32] [--profile] [--gemv off,on,pdl] [--prefill-formats a,b,...]\n"
    "                         [--prefill-kernels tensor_core,tensor_core+engine,tensor_core+fa3,bf16x3,generic] [--decode-kernels tensor_core,cuda_core,generic]\n"
    "                         [--heads 32,64] [--splits N] [--ncu-step] [--sampling] [--prefill-attention N[,M]]\n"
    "                         [--prefill-chunks 2048,8192] [--prefill-batch 1,2,4,8] [--attention-pdl] [--launches N] [--tokens N]\n"
    "Decode attention per KV format against the device's copy bandwidth, then end-to-end decode steps and\n"
    "prefill of a random Qwen3-8B-shaped model (--no-model: attention only). Needs a CUDA device.\n"
    "  --splits N    the end-to-end decode's attention split count (0: the engine's choice)\n"
    "  --prefill-chunks N,...  rows per prefill forward (default the CUDA engine's on this GPU: 8192 with\n"
    "                70 GiB or more, else 2048)\n"
    "  --prefill-batch B,...  sequences prefilled together (default 1), each forward chunk / B rows of each,\n"
    "                then 32 decode steps at batch B; tokens/s and trials/h count all B\n"
    "  --sampling    a sampled step's draw per --batches: the host sampler against the device's\n"
    "  --attention-pdl  the decode attention table's two kernels (split pass, merge) launched with\n"
    "                programmatic dependent launch, as the engine's decode steps launch them\n"
    "  --launches N  the decode attention table's launches per timed run, back to back (default 10;\n"
    "                1: each run also holds the host's enqueue of its first kernel, 4-14 us)\n"
    "  --tokens N    the decode attention table's cached tokens per launch (default 131072; batch = N / context):\n"
    "                time against bytes at two sizes separates a launch's fixed cost from its streaming rate\n"
    "  --ncu-step    one more step of each end-to-end configuration, and one more prefill of each\n"
    "                --prefill configuration, between cudaProfilerStart/Stop (ncu --profile-from-start off;\n"
    "                scripts/device/step-profile)\n"
    "Medians of --reps timed runs after warm-up (CUDA events). Header of tests/bench/cuda_decode_bench.cpp: details.\n";

int main(int argc, char** argv) try {
  std::vector<std::string> formats = {"bf16", "fp16", "fp8_e4m3", "fp8_e5m2", "fp8_per_token_head", "int8_per_token_head",
                                      "int4_per_token_head", "nvfp4", "q8_0", "q4_0", "turboquant_k8v4",
                                      "turboquant_4bit_nc", "turboquant_k3v4_nc", "turboquant_3bit_nc"};
  std::vector<int> contexts = {8192, 32768, 131072};
  std::vector<std::string> decode_formats = {"bf16", "fp8_e4m3", "int4_per_token_head"};
  bool model = true, profile_steps = false;
  std::vector<int> prefills = {32768}, prefill_attention;
  std::vector<std::string> prefill_formats = {"bf16"}, prefill_kernels = {"tensor_core"};
  std::vector<int> prefill_chunks, prefill_batches = {1};  // chunks: the engine's default unless given
  std::vector<std::string> decode_kernels = {"tensor_core", "cuda_core"};
  std::vector<int> attention_heads = {32};
  std::vector<bool> graph_modes = {true};
  std::vector<std::string> gemv_modes = {"off", "on"};
  std::vector<int> batches = {1, 32};
  int decode_ctx = 4096, reps = 20, splits = 0, launches = 10, total = 131072;
  bool ncu_step = false, sampling = false, attention_pdl = false;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--help" || a == "-h") {
      std::fputs(kUsage, stdout);
      return 0;
    }
    auto next = [&]() -> std::string {
      if (i + 1 >= argc) throw kvgate::Error(a + " needs a value");
      return argv[++i];
    };
    // A whole non-negative integer of the option's value, or an Error naming the option.
    auto integer = [&](const std::string& v) {
      std::size_t used = 0;
      int n = -1;
      try {
        n = std::stoi(v, &used);
      } catch (const std::exception&) {
        used = 0;
      }
      if (used != v.size() || n < 0) throw kvgate::Error(a + " takes non-negative integers, not '" + v + "'");
      return n;
    };
    if (a == "--formats") formats = next() == "none" ? std::vector<std::string>{} : split(argv[i]);
    else if (a == "--decode-formats") decode_formats = next() == "none" ? std::vector<std::string>{} : split(argv[i]);
    else if (a == "--contexts") {
      contexts.clear();
      for (const auto& c : split(next())) contexts.push_back(integer(c));
    } else if (a == "--no-model") model = false;
    else if (a == "--prefill") {
      prefills.clear();
      for (const auto& c : split(next()))
        if (const int n = integer(c); n > 0) prefills.push_back(n);
    } else if (a == "--prefill-chunks") {
      prefill_chunks.clear();
      for (const auto& c : split(next())) {
        const int n = integer(c);
        if (n < 1 || n > 65536) throw kvgate::Error("--prefill-chunks: rows per forward call, 1..65536, not " + c);
        prefill_chunks.push_back(n);
      }
    } else if (a == "--prefill-batch") {
      prefill_batches.clear();
      for (const auto& c : split(next())) {
        const int b = integer(c);
        if (b < 1 || b > 64) throw kvgate::Error("--prefill-batch: sequences prefilled together, 1..64, not " + c);
        prefill_batches.push_back(b);
      }
    } else if (a == "--prefill-attention") {
      for (const auto& c : split(next()))
        if (const int n = integer(c); n > 0) prefill_attention.push_back(n);
    } else if (a == "--prefill-formats") prefill_formats = split(next());
    else if (a == "--prefill-kernels") {
      prefill_kernels = split(next());
      for (const auto& entry : prefill_kernels) {
        const std::string k = prefill_kernel_of(entry);
        if (k != "tensor_core" && k != "bf16x3" && k != "mma_sync" && k != "generic")
          throw kvgate::Error("--prefill-kernels: tensor_core, bf16x3, mma_sync or generic, each optionally +engine (engine "
                              "numerics) or +fa3 (engine numerics, fp8 Q and P), then optionally +direct (no prefill tile "
                              "pool or fp16 operands), not " + entry);
        if (k == "bf16x3" && k != entry)
          throw kvgate::Error("--prefill-kernels: bf16x3 is an exact-numerics term count, not " + entry);
      }
    }
    else if (a == "--decode-kernels") {
      decode_kernels = split(next());
      for (const auto& k : decode_kernels)
        if (k != "tensor_core" && k != "cuda_core" && k != "generic")
          throw kvgate::Error("--decode-kernels: tensor_core, cuda_core or generic, not " + k);
    } else if (a == "--heads") {
      attention_heads.clear();
      for (const auto& h : split(next())) {
        attention_heads.push_back(integer(h));
        if (attention_heads.back() % 8 != 0 || attention_heads.back() < 8 || attention_heads.back() > 128)
          throw kvgate::Error("--heads: query heads over the 8 KV heads, a multiple of 8 from 8 to 128, not " + h);
      }
    } else if (a == "--decode-context") decode_ctx = integer(next());
    else if (a == "--reps") reps = integer(next());
    else if (a == "--launches") launches = integer(next());
    else if (a == "--tokens") total = integer(next());
    else if (a == "--profile") profile_steps = true;
    else if (a == "--splits") splits = integer(next());
    else if (a == "--ncu-step") ncu_step = true;
    else if (a == "--sampling") sampling = true;
    else if (a == "--attention-pdl") attention_pdl = true;
    else if (a == "--batches") {
      batches.clear();
      for (const auto& b : split(next())) batches.push_back(integer(b));
    } else if (a == "--graphs") {
      graph_modes.clear();
      for (const auto& g : split(next())) {
        if (g != "on" && g != "off") throw kvgate::Error("--graphs takes on, off or off,on");
        graph_modes.push_back(g == "on");
      }
    }
    else if (a == "--gemv") {
      gemv_modes.clear();
      for (const auto& g : split(next())) {
        if (g != "on" && g != "off" && g != "pdl") throw kvgate::Error("--gemv takes off, on, pdl or a list (off,on,pdl)");
        gemv_modes.push_back(g);
      }
    }
    else throw kvgate::Error("unknown option " + a + " (--help lists them)");
  }
  if (reps < 1 || launches < 1 || total < 1 || decode_ctx < 1 || std::count(batches.begin(), batches.end(), 0) > 0 ||
      std::count(contexts.begin(), contexts.end(), 0) > 0)
    throw kvgate::Error("--reps, --launches, --tokens, --decode-context, --batches and --contexts take values of at least 1");
  if (prefill_chunks.empty()) {
    const kk::CudaDeviceInfo gpu = kk::cuda_current_device();
    prefill_chunks.push_back(kvgate::decoder::cuda_default_prefill_chunk(gpu.name, gpu.total_bytes));
  }
  for (const int chunk : prefill_chunks)
    for (const int batch : prefill_batches)
      if (chunk < batch)
        throw kvgate::Error("--prefill-batch " + std::to_string(batch) + " needs --prefill-chunks of at least " +
                            std::to_string(batch) + " rows (one row of each sequence a forward), not " + std::to_string(chunk));
  std::printf("device: %s\n", kk::cuda_describe().c_str());
  const double bw = copy_bandwidth(reps);
  std::printf("copy bandwidth (device-to-device, read + write): %.3f TB/s\n\n", bw / 1e12);

  std::printf("decode attention: heads q/8 (32/8: Qwen3-8B), d 128, %d cached tokens per launch, one query per sequence,\n"
              "%d launches back to back per timed run\n", total, launches);
  std::printf("%-22s %-11s %5s %8s %6s %10s %12s %9s %8s\n", "format", "kernel", "heads", "context", "batch", "time_us",
              "bytes_MB", "TB/s", "of_copy");
  for (int heads : attention_heads)
    for (const auto& f : formats)
      for (const std::string& kn : decode_kernels) {
        const kc::DecodeKernel kernel = kn == "cuda_core" ? kc::DecodeKernel::kCudaCore
                                        : kn == "generic" ? kc::DecodeKernel::kGeneric
                                                          : kc::DecodeKernel::kTensorCore;
        for (int ctx : contexts) {
          const AttnResult r = bench_attention(f, ctx, total, reps, 0, kernel, heads, attention_pdl, launches);
          if (r.ms < 0) break;  // the tensor-core kernel does not take this format
          std::printf("%-22s %-11s %2d/%-2d %8d %6d %10.1f %12.1f %9.3f %7.1f%%\n", f.c_str(), kn.c_str(), heads, 8, ctx,
                      std::max(1, total / ctx), r.ms * 1e3, r.bytes / 1e6, r.tbps, 100.0 * r.tbps * 1e12 / bw);
          std::fflush(stdout);
        }
      }

  if (!prefill_attention.empty()) {
    std::printf("\nprefill attention: one chunk of 512 rows at the end of the context (32/8 heads, d 128)\n");
    std::printf("%-22s %-12s %8s %10s %8s %12s\n", "kv", "attention", "context", "us/launch", "TFLOPS", "est_prefill_s");
    for (const int ctx : prefill_attention)
      for (const std::string& f : prefill_formats)
        for (const std::string& kn : prefill_kernels) {
          double pairs = 0;
          const double ms = bench_prefill_attention(f, ctx, prefill_choice(kn), !prefill_direct(kn), reps, pairs);
          const double flops_per_s = 4.0 * 128 * pairs / (ms * 1e-3);
          // A whole prefill: 36 layers x 32 heads x ctx (ctx + 1) / 2 pairs at this rate.
          const double est_s = 36.0 * 4.0 * 128 * 32 * static_cast<double>(ctx) * (ctx + 1) / 2 / flops_per_s;
          std::printf("%-22s %-12s %8d %10.1f %8.1f %12.1f\n", f.c_str(), kn.c_str(), ctx, ms * 1e3, flops_per_s / 1e12, est_s);
          std::fflush(stdout);
        }
  }
  if (sampling) {
    std::printf("\nsampled draw (temperature 0.7, 151936 logits a row): host (copy + sample_ref) against sample_rows\n");
    std::printf("%6s %12s %12s %9s %10s\n", "batch", "host_ms", "device_ms", "speed-up", "same_ids");
    for (int batch : batches) bench_sampling(batch, reps);
  }
  if (model) {
    const auto cfg = qwen3_8b();
    auto w = CudaWeights::random(cfg, 42, kc::GemmType::kBf16);
    std::printf("\nrandom Qwen3-8B-shaped model on the device: %.2f GB of weights read per step\n", w->bytes / 1e9);
    if (profile_steps)
      for (int batch : batches) profile(cfg, *w, batch, reps, bw);
    std::printf("\nend-to-end decode (fused QKV and gate/up GEMMs; graphs: each step replayed as one CUDA graph)\n");
    std::printf("%-8s %6s %8s %6s %5s %12s %12s %12s %8s %9s\n", "kv", "batch", "context", "graphs", "gemv", "ms/step",
                "tokens/s", "floor_tok/s", "of_floor", "captured");
    for (const std::string& f : decode_formats)
      for (int batch : batches) {
        CudaForward fw(cfg, w, {.kv = {f, nlohmann::json::object()}, .max_rows = 512, .max_seqs = batch, .max_context = decode_ctx + 64,
                                           .splits = splits});
        // Prefill every sequence to decode_ctx tokens (random ids), then time decode steps.
        kvgate::Rng rng(9);
        std::vector<int> toks(512), seqs(512), pos(512);
        for (int s = 0; s < batch; ++s)
          for (int t0 = 0; t0 < decode_ctx; t0 += 512) {
            const int n = std::min(512, decode_ctx - t0);
            toks.resize(n);
            seqs.assign(n, s);
            pos.resize(n);
            for (int i = 0; i < n; ++i) {
              toks[i] = static_cast<int>(rng.below(cfg.vocab_size));
              pos[i] = t0 + i;
            }
            fw.forward(toks, seqs, pos, n);
          }
        std::vector<int> dt(batch), ds(batch), dp(batch), ids(batch);
        for (int s = 0; s < batch; ++s) {
          dt[s] = 1 + s;
          ds[s] = s;
          dp[s] = decode_ctx;
        }
        for (const std::string& gemv : gemv_modes)
        for (bool graphs : graph_modes) {
          fw.set_cuda_graphs(graphs);
          fw.set_gemv_rows(gemv == "off" ? 0 : 4);
          fw.set_pdl(gemv == "pdl");
          Timer t;
          int step = 0;
          const int steps = 16;
          const double ms = t.median_ms(2, steps, fw.stream(), [&] {
            for (int s = 0; s < batch; ++s) dp[s] = decode_ctx + (step % 60);
            ++step;
            fw.forward(dt, ds, dp, 0, /*greedy=*/true);
            fw.ids_to_host(batch, ids.data());
          });
          const double kv_bytes = static_cast<double>(batch) * decode_ctx *
                                  kk::resolve_kv_format({f, nlohmann::json::object()}, {.layers = cfg.num_layers, .kv_heads = 8, .head_dim = 128}).bytes_per_token();
          const double floor_s = (w->bytes + kv_bytes) / bw;
          std::printf("%-8s %6d %8d %6s %5s %12.3f %12.1f %12.1f %7.1f%% %9d\n", f.substr(0, 8).c_str(), batch, decode_ctx,
                      graphs ? "on" : "off", gemv.c_str(), ms, batch / (ms * 1e-3), batch / floor_s, 100.0 * floor_s / (ms * 1e-3),
                      fw.graph_stats().captured);
          std::fflush(stdout);
          if (ncu_step) {  // one more step inside a profiler range: ncu --profile-from-start off times its kernels
            KV_CUDA_CHECK(cudaStreamSynchronize(fw.stream()));
            KV_CUDA_CHECK(cudaProfilerStart());
            fw.forward(dt, ds, dp, 0, /*greedy=*/true);
            fw.ids_to_host(batch, ids.data());
            KV_CUDA_CHECK(cudaProfilerStop());
          }
        }
      }
    if (!prefills.empty())
      std::printf("\nprefill of `batch` sequences together, then 32 decode steps at that batch\n"
                  "%-22s %-19s %8s %6s %5s %10s %10s %10s %10s\n",
                  "kv", "attention", "tokens", "chunk", "batch", "seconds", "tokens/s", "decode32_s", "trials/h");
    for (const int prefill : prefills)
      for (const std::string& f : prefill_formats)
        for (const std::string& kernel : prefill_kernels)
          for (const int chunk : prefill_chunks)
            for (const int batch : prefill_batches) {
      const kc::PagedAttentionArgs choice = prefill_choice(kernel);
      CudaForward fw(cfg, w, {.kv = {f, nlohmann::json::object()}, .max_rows = chunk, .max_seqs = batch, .max_context = prefill + 64,
                              .emulation = choice.emulation, .prefill = choice.prefill, .prefill_pool = !prefill_direct(kernel),
                              .prefill_f16 = !prefill_direct(kernel)});
      // Each forward: `per` consecutive rows of every sequence, all advancing together; in the last,
      // each sequence's last row at the end (the engine's layout: the logits rows are those rows).
      const int per = chunk / batch;
      std::vector<int> toks, seqs, pos;
      kvgate::Rng rng(5);
      auto run_prefill = [&] {
        for (int t0 = 0; t0 < prefill; t0 += per) {
          const int n = std::min(per, prefill - t0);
          const bool last = t0 + n == prefill;
          toks.clear();
          seqs.clear();
          pos.clear();
          auto add = [&](int b, int p) {
            toks.push_back(static_cast<int>(rng.below(cfg.vocab_size)));
            seqs.push_back(b);
            pos.push_back(p);
          };
          for (int b = 0; b < batch; ++b)
            for (int i = 0; i < n - (last ? 1 : 0); ++i) add(b, t0 + i);
          if (last)
            for (int b = 0; b < batch; ++b) add(b, prefill - 1);
          const int rows = static_cast<int>(toks.size());
          fw.forward(toks, seqs, pos, last ? rows - batch : rows);
        }
      };
      Timer t;
      const double ms = t.median_ms(0, 1, fw.stream(), run_prefill);
      if (ncu_step) {  // the prefill once more inside a profiler range (its kernels by name: ncu_step_summary.py)
        KV_CUDA_CHECK(cudaStreamSynchronize(fw.stream()));
        KV_CUDA_CHECK(cudaProfilerStart());
        run_prefill();
        KV_CUDA_CHECK(cudaStreamSynchronize(fw.stream()));
        KV_CUDA_CHECK(cudaProfilerStop());
      }
      // 32 greedy steps of the B sequences after their prefill (what a NIAH trial's answer takes).
      std::vector<int> dt(batch, 1), ds(batch), dp(batch), id(batch);
      for (int b = 0; b < batch; ++b) ds[b] = b;
      Timer td;
      const double decode_ms = td.median_ms(0, 1, fw.stream(), [&] {
        for (int i = 0; i < 32; ++i) {
          std::fill(dp.begin(), dp.end(), prefill + i);
          fw.forward(dt, ds, dp, 0, /*greedy=*/true);
          fw.ids_to_host(batch, id.data());
          for (int b = 0; b < batch; ++b) dt[b] = 1 + id[b] % 1000;
        }
      });
      std::printf("%-22s %-19s %8d %6d %5d %10.2f %10.0f %10.2f %10.0f\n", f.c_str(), kernel.c_str(), prefill, chunk, batch,
                  ms * 1e-3, static_cast<double>(batch) * prefill / (ms * 1e-3), decode_ms * 1e-3,
                  batch * 3600.0 / ((ms + decode_ms) * 1e-3));
      std::fflush(stdout);
            }
  }
  return 0;
} catch (const std::exception& e) {
  std::fprintf(stderr, "cuda-decode-bench: %s\n", e.what());
  return 2;
}
