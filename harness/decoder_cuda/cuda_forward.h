// The CUDA decoder's forward pass over a batch of rows (issue #12): weights on the device, the
// paged quantized KV cache (kernels/kv_paged_cuda.h) and the scratch of up to max_rows rows. A row
// is (token, sequence slot, position); rows of one sequence are consecutive with ascending
// positions, so one call serves a decode step of many sequences and a prefill chunk alike. The
// maths is the CPU Session's (session.cpp), step for step, with the GEMM operands in `gemm` dtype
// (bf16 by default: the engines' dtype; fp32 for parity runs). Not thread-safe: one owner thread.
#pragma once
#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "decoder/model.h"
#include "decoder_cuda.h"
#include "kv_paged_cuda.h"
#include "kv_store.h"

namespace kvgate::decoder {

// Device copies of every weight: matrices in the GEMM dtype, norms and biases in fp32.
struct CudaWeights {
  struct Layer {
    const void *q = nullptr, *k = nullptr, *v = nullptr, *o = nullptr, *gate = nullptr, *up = nullptr, *down = nullptr;
    const float *q_bias = nullptr, *k_bias = nullptr, *v_bias = nullptr, *o_bias = nullptr;
    const float *gate_bias = nullptr, *up_bias = nullptr, *down_bias = nullptr;
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
  // computes the logits of rows [first_logit, n) into the device buffer logits() [n - first_logit][vocab].
  void forward(std::span<const int> tokens, std::span<const int> seqs, std::span<const int> positions, int first_logit);
  const float* logits() const { return logits_; }
  // Copies `rows` logits rows to the host / the greedy ids of `rows` rows (waits for the stream).
  void logits_to_host(int rows, float* host);
  void argmax(int rows, int* host_ids);
  // The running maxima of what was written, [layer][kv_head] for K and V (waits for the stream).
  void absmax(std::vector<std::vector<float>>& k, std::vector<std::vector<float>>& v);

 private:
  void layer(int l, int n);

  ModelConfig config_;
  std::shared_ptr<const CudaWeights> w_;
  CudaForwardOptions o_;
  std::unique_ptr<kernels::cuda::PagedKvCache> cache_;
  std::unique_ptr<kernels::cuda::Gemm> gemm_;
  cudaStream_t stream_ = nullptr;
  std::vector<void*> owned_;
  float *x_, *xn_, *q_, *k_, *v_, *attn_, *tmp_, *gate_, *up_, *logits_, *workspace_;
  kernels::cuda::bf16_t* xb_;
  int *tokens_, *seqs_, *pos_, *ids_;
  kernels::cuda::AttentionTile* tiles_;
  int num_tiles_ = 0, max_tile_rows_ = 0, max_ctx_ = 0, splits_ = 1;
  std::vector<kernels::cuda::AttentionTile> host_tiles_;
};

}  // namespace kvgate::decoder
