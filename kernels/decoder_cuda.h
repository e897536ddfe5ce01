// The CUDA kernels of the reference decoder's forward pass, on device pointers and one
// stream. Each has a CPU twin in ops_ref.h (tests/test-kernels.cpp checks both): embedding,
// RMSNorm (also Qwen3's q/k norm), RoPE, SwiGLU, residual add, greedy sampling, and the GEMM
// through cuBLAS (bf16 operands, fp32 accumulation and output). The residual stream and every
// norm/RoPE/softmax step are fp32; matrices take bf16 inputs (the engines' dtype).
// Only in a CUDA build (KVGATE_HAVE_CUDA); kv_paged_cuda.h holds the cache and attention.
#pragma once
#if defined(KVGATE_HAVE_CUDA)
#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

namespace kvgate::kernels::cuda {

using bf16_t = std::uint16_t;  // raw bf16 bits (float_formats.h's f32_to_bf16 rounding: RNE)

// out[i][:] = widen(table[ids[i]][:]): rows of a bf16 table into fp32.
void embedding(const bf16_t* table, int dim, const int* ids, int n, float* out, cudaStream_t s);
// out[i] = x[i] + y[i] (out may alias x). With bias: x[r][c] += bias[c] for rows x cols (y null).
void add(float* x, const float* y, std::int64_t n, cudaStream_t s);
void add_bias(float* x, const float* bias, int rows, int cols, cudaStream_t s);
// out[i] = silu(gate[i]) * up[i], silu(g) = g / (1 + exp(-g)) in fp32; into fp32 and/or bf16
// (either output may be null; out_f32 may alias gate).
void swiglu(const float* gate, const float* up, std::int64_t n, float* out_f32, bf16_t* out_bf16, cudaStream_t s);
// rmsnorm_ref on rows of dim: fp64 sum of squares, fp32 scaling. out_f32 may alias x; either
// output may be null.
void rmsnorm(const float* x, const float* weight, int rows, int dim, float eps, float* out_f32, bf16_t* out_bf16,
             cudaStream_t s);
// rope_ref in place: x [rows][heads][head_dim], row r at positions[r] (device); cos/sin of the fp32
// angle in fp64, as the twin.
void rope(float* x, int rows, int heads, int head_dim, const int* positions, const float* inv_freq,
          float attention_scaling, cudaStream_t s);
// Greedy: ids[r] = argmax of logits[r][0..n) in two passes: kArgmaxChunks blocks per row, then one
// block merges them in chunk order (one block per row took ~110 us for 152K logits on an H200, this
// 8). Same result as sample_ref: the first maximum (ties: lowest id), NaNs skipped, index 0 when
// logits[r][0] is NaN.
// `workspace`: argmax_workspace_bytes(rows) bytes of device memory.
constexpr int kArgmaxChunks = 64;
inline std::size_t argmax_workspace_bytes(int rows) { return static_cast<std::size_t>(rows) * kArgmaxChunks * 8; }
void argmax_rows_chunked(const float* logits, int rows, int n, int* ids, void* workspace, cudaStream_t s);

// After the fused QKV GEMM: qkv [rows][q_heads*d | kv_heads*d | kv_heads*d] (the concatenated
// projections' output) plus the concatenated bias, then Qwen3's q/k norm (when q_norm is set) and
// RoPE, into contiguous q [rows][q_heads*d], k and v [rows][kv_heads*d]. The same arithmetic as
// add_bias, rmsnorm (same threads and reduction order) and rope on the separate outputs.
struct QkvSplitArgs {
  const float* qkv = nullptr;
  const float* bias = nullptr;  // [(q_heads + 2 kv_heads) * d] or null
  const float* q_norm = nullptr;  // [d] or null (then k_norm too)
  const float* k_norm = nullptr;
  float eps = 1e-6f;
  const int* positions = nullptr;  // device [rows]
  const float* inv_freq = nullptr;
  float attention_scaling = 1.0f;
  int rows = 0, q_heads = 0, kv_heads = 0, head_dim = 0;
  float* q = nullptr;
  float* k = nullptr;
  float* v = nullptr;
  bool pdl = false;  // programmatic dependent launch (pdl.cuh)
};
void qkv_split(const QkvSplitArgs& a, cudaStream_t s);
// qkv_split, and in the same kernel kv_write's encoding of each row's K and V (the vectors just
// split) into the cache: w gives the cache and the rows' sequences and positions (its k, v are not
// read). The same bytes as qkv_split then kv_write; not for kivi2 layers (kv_paged_cuda.h).
struct KvLayerCodec;
struct KvWriteArgs;
void qkv_split_write(const QkvSplitArgs& a, const KvLayerCodec& c, const KvWriteArgs& w, cudaStream_t s);
// After the fused gate+up GEMM: gate_up [rows][inter][2] (gate j, up j: the stacked weights'
// rows interleaved) plus their biases (either may be null), swiglu into [rows][inter] fp32 and/or
// bf16; the same arithmetic as swiglu.
void swiglu_fused(const float* gate_up, int rows, int inter, const float* gate_bias, const float* up_bias, float* out_f32,
                  bf16_t* out_bf16, cudaStream_t s);

// The GEMM operand dtype: bf16 (tensor cores, fp32 accumulation; the default) or fp32 (plain fp32
// arithmetic, no TF32: a parity mode that matches the CPU path to rounding).
enum class GemmType { kBf16, kF32 };
const char* gemm_type_name(GemmType t);

// p[i] = offset + scale * u_i, u_i uniform in [-1, 1) from a counter hash of (seed, i): random
// weights generated on the device (benchmarks of large shapes), in bf16 or fp32.
void fill_random(void* p, std::int64_t n, GemmType type, std::uint64_t seed, float scale, float offset, cudaStream_t s);

// cuBLAS: y[rows][cols] (fp32) = x[rows][k] * w[cols][k]^T (+ bias[cols]), x and w both of `type`,
// fp32 accumulation (CUBLAS_COMPUTE_32F). accumulate: y += x * w^T instead (cuBLAS's beta = 1: the
// residual add in the GEMM's epilogue; no bias then). The handle owns a fixed workspace, so a run
// can be captured into a CUDA graph (no allocation during capture).
class Gemm {
 public:
  Gemm();
  ~Gemm();
  Gemm(const Gemm&) = delete;
  Gemm& operator=(const Gemm&) = delete;
  void run(GemmType type, const void* x, const void* w, const float* bias, float* y, int rows, int k, int cols,
           cudaStream_t s, bool accumulate = false);

 private:
  void* handle_ = nullptr;  // cublasHandle_t
  void* workspace_ = nullptr;
  cudaStream_t stream_ = nullptr;
  bool stream_set_ = false;
};

}  // namespace kvgate::kernels::cuda
#endif
