// The CUDA decoder's forward pass over a batch of rows: weights on the device, the
// paged quantized KV cache (kernels/kv_paged_cuda.h) and the scratch of up to max_rows rows. A row
// is (token, sequence slot, position); rows of one sequence are consecutive with ascending
// positions, so one call serves a decode step of many sequences and a prefill chunk alike. The
// maths is the CPU Session's (session.cpp), step for step, with the GEMM operands in `gemm` dtype
// (bf16 by default: the engines' dtype; fp32 for parity runs). Not thread-safe: one owner thread.
#pragma once
#include <compare>
#include <cstdint>
#include <map>
#include <memory>
#include <span>
#include <vector>

#include "harness/decoder/model.h"
#include "kernels/decoder_cuda.h"
#include "kernels/kv_paged_cuda.h"
#include "kernels/kv_store.h"
#include "kernels/prefill_tile_pool.h"
#include "kernels/sampling.h"

namespace kvgate::decoder {

// Device copies of every weight: matrices in the GEMM dtype, norms and biases in fp32. The q, k and
// v projections are one matrix [q | k | v rows][hidden] (one GEMM), gate and up one [gate 0, up 0,
// gate 1, up 1, ... rows][hidden] (interleaved, so the GEMV's SwiGLU epilogue finds both in one
// warp): the same operands as separate GEMMs, in fewer, larger launches.
struct CudaWeights {
  struct Layer {
    const void *qkv = nullptr, *o = nullptr, *gate_up = nullptr, *down = nullptr;
    const float* qkv_bias = nullptr;  // [q | k | v] (missing parts zero), or null when the model has none
    const float *o_bias = nullptr, *gate_bias = nullptr, *up_bias = nullptr, *down_bias = nullptr;
    const float *input_norm = nullptr, *post_norm = nullptr, *q_norm = nullptr, *k_norm = nullptr;
  };
  kernels::cuda::GemmType type = kernels::cuda::GemmType::kBf16;
  const kernels::cuda::bf16_t* embed = nullptr;  // [vocab][hidden], bf16 (exact for bf16 checkpoints)
  const void* lm_head = nullptr;                 // [vocab][hidden]
  const float* final_norm = nullptr;
  const float* inv_freq = nullptr;               // [head_dim / 2]
  float rope_scaling = 1.0f;
  std::vector<Layer> layers;
  double bytes = 0;  // device bytes of the weights read by one decode step (everything but the embedding)

  CudaWeights() = default;
  ~CudaWeights();
  CudaWeights(const CudaWeights&) = delete;
  CudaWeights& operator=(const CudaWeights&) = delete;

  // From a loaded checkpoint.
  static std::shared_ptr<CudaWeights> upload(const Model& model, kernels::cuda::GemmType type);
  // Random weights generated on the device (benchmarks of large shapes: no checkpoint on disk);
  // deterministic in `seed`. The config must be valid (parse_model_config).
  static std::shared_ptr<CudaWeights> random(const ModelConfig& config, std::uint64_t seed, kernels::cuda::GemmType type);

  std::vector<void*> owned;
};

struct CudaForwardOptions {
  kernels::KvStoreOptions kv{};
  int max_rows = 512;      // rows per forward call (prefill chunk, decode batch)
  int max_seqs = 32;       // sequence slots of the cache
  int max_context = 0;     // tokens per sequence (0: the model's max_position_embeddings)
  double kv_pool_gib = 0;  // KV pool size (0: 60% of the free device memory, at most what max_seqs x max_context needs)
  int splits = 0;          // attention splits (0: chosen per call; with emulation: emulation.splits)
  kernels::AttentionEmulation emulation{};  // engine-kernel emulation of the attention (off: exact)
  kernels::cuda::PrefillKernel prefill = kernels::cuda::PrefillKernel::kTensorCore;  // kernel switch "prefill"
  // Prefill chunks in engine numerics decode the pages of the formats the wgmma kernel decodes once a
  // layer into a tile pool before the attention (kernels/prefill_tile_pool.h); false: the attention
  // kernel decodes them itself. Kernel switch "prefill_pool".
  bool prefill_pool = true;
  // Prefill chunks in engine numerics on the wgmma kernel (PagedAttentionArgs::prefill_f16): an fp16
  // cache multiplies fp16 operands, and with the tile pool q8_0, q4_0 and TurboQuant run on fp16
  // images of their pages; false: two bf16 terms an fp16 element (the same values), the others' exact
  // values (the benchmark's and the tests' comparison).
  bool prefill_f16 = true;

  // Decode steps (one row per sequence, logits for every row) replay a CUDA graph of the whole
  // forward, captured once per (rows, context bucket); false launches every kernel each step.
  bool cuda_graphs = true;
  // Forwards of at most this many rows (0-4) with bf16 GEMMs run kernels::cuda::gemv (the norms
  // before qkv and gate_up fused into them, SwiGLU into gate_up's epilogue); the others cuBLAS and
  // the separate kernels. Default 1: measured on the H200 the GEMV wins at batch 1 (5.77 against 6.25
  // ms a step) and loses at 2-4 rows. Kernel switch "gemv".
  int gemv_rows = 1;
  // On the GEMV path, its kernels (GEMVs, qkv_split, kv_write, the decode attention) start with
  // programmatic dependent launch (kernels/pdl.cuh): the same kernels and numbers. Off by default:
  // measured slower (5.92 against 5.81 ms at batch 1).
  bool pdl = false;
};

class CudaForward {
 public:
  CudaForward(const ModelConfig& config, std::shared_ptr<const CudaWeights> weights, const CudaForwardOptions& options);
  ~CudaForward();
  CudaForward(const CudaForward&) = delete;
  CudaForward& operator=(const CudaForward&) = delete;

  const ModelConfig& config() const { return config_; }
  const CudaForwardOptions& options() const { return o_; }
  kernels::cuda::PagedKvCache& cache() { return *cache_; }
  cudaStream_t stream() const { return stream_; }

  // Runs the rows (n <= max_rows), appending their K/V to the cache (pages reserved here), and
  // computes the logits of rows [first_logit, n) into the device buffer logits() [n - first_logit][vocab];
  // greedy: also their argmax on the device (ids_to_host). A decode step (every row its own
  // sequence, first_logit 0) replays its CUDA graph when options().cuda_graphs is set.
  void forward(std::span<const int> tokens, std::span<const int> seqs, std::span<const int> positions, int first_logit,
               bool greedy = false);
  const float* logits() const { return logits_; }
  // Copies `rows` logits rows to the host / the greedy ids of `rows` rows (waits for the stream).
  void logits_to_host(int rows, float* host);
  void argmax(int rows, int* host_ids);
  // The ids forward(..., greedy = true) computed, for its first `rows` logits rows (waits).
  void ids_to_host(int rows, int* host_ids);
  // Logits rows first_row .. first_row + rows.size() - 1 drawn on the device with sample_ref's rule
  // (sampling.h), one SampleRow each, into host_ids (waits).
  void sample(int first_row, std::span<const kernels::cuda::SampleRow> rows, int* host_ids);
  // Turns graph replay of decode steps on or off from the next forward (benchmarks: both on one cache).
  void set_cuda_graphs(bool on) { o_.cuda_graphs = on; }
  // The same for the GEMV path (benchmarks).
  void set_gemv_rows(int rows) { o_.gemv_rows = rows; }
  void set_pdl(bool on) { o_.pdl = on; }
  // Graphs captured and replays so far (tests, benchmarks).
  struct GraphStats {
    int captured = 0;
    long long replayed = 0;
  };
  GraphStats graph_stats() const { return graph_stats_; }
  // The prefill tile pool's device bytes (0 while no forward took it).
  std::size_t tile_pool_bytes() const { return tile_pool_.bytes(); }
  // Whether the last forward's prefill attention took the pool's pages two a step
  // (prefill_pool_pairs_takes: its weights round otherwise than the kernel decoding its own pages).
  bool prefill_pool_pairs() const;
  // The running maxima of what was written, [layer][kv_head] for K and V (waits for the stream).
  void absmax(std::vector<std::vector<float>>& k, std::vector<std::vector<float>>& v);

 private:
  void layer(int l, int n);
  // The layer with kernels::cuda::gemv for its four projections (n <= 4 rows, bf16 weights).
  void layer_gemv(int l, int n);
  bool use_gemv(int n) const;
  void attend(int l, int n, bool pdl);
  void project_add(int n, const void* a, const void* w, const float* bias, int k);
  // Every kernel of one forward after the inputs are on the device (what a graph captures).
  void launch_all(int n, int first_logit, bool greedy);
  // Power-of-two context bucket that sizes the attention's split count: constant across the
  // steps of one graph, and the same with and without graphs (so both give the same numbers).
  static int context_bucket(int max_ctx);

  struct GraphKey {
    int rows, ctx_bucket;
    bool greedy, gemv, pdl;
    auto operator<=>(const GraphKey&) const = default;
  };
  struct GraphEntry {
    cudaGraphExec_t exec = nullptr;
    int seen = 0;
    long long last_use = 0;
  };

  ModelConfig config_;
  std::shared_ptr<const CudaWeights> w_;
  CudaForwardOptions o_;
  std::unique_ptr<kernels::cuda::PagedKvCache> cache_;
  std::unique_ptr<kernels::cuda::Gemm> gemm_;
  cudaStream_t stream_ = nullptr;
  std::vector<void*> owned_;
  float *x_, *xn_, *qkv_, *q_, *k_, *v_, *attn_, *tmp_, *gate_up_, *act_, *logits_, *workspace_;
  kernels::cuda::bf16_t* xb_;
  int *inputs_, *tokens_, *seqs_, *pos_, *ids_;  // tokens_/seqs_/pos_/tiles_ live in inputs_ (one copy a step)
  kernels::cuda::AttentionTile* tiles_;
  void* argmax_ws_ = nullptr;
  void* sample_ws_ = nullptr;  // sample()'s workspace, grown on demand (sampling runs outside graphs)
  std::size_t sample_ws_bytes_ = 0;
  int* host_inputs_ = nullptr;          // pinned staging of inputs_
  cudaEvent_t inputs_copied_ = nullptr;  // the staging buffer may be rewritten once this completed
  int num_tiles_ = 0, max_tile_rows_ = 0, max_ctx_ = 0, splits_ = 1;
  std::vector<kernels::cuda::AttentionTile> host_tiles_;
  // The prefill chunks' tile pool and this forward's pool fields of the attention's arguments (null
  // on decode steps, which never take it: CUDA graphs capture them).
  kernels::cuda::PrefillTilePool tile_pool_;
  kernels::cuda::PagedAttentionArgs pool_args_;
  int pool_layer_ = 0;  // the layer whose codec planned the pool
  std::map<GraphKey, GraphEntry> graphs_;
  long long graph_clock_ = 0;
  GraphStats graph_stats_;
};

}  // namespace kvgate::decoder
