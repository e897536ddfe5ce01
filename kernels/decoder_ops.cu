// The element-wise, normalization, RoPE and sampling kernels of the CUDA decoder, and its cuBLAS
// GEMM (decoder_cuda.h). Each follows its CPU twin in ops_ref.h step for step (same fp32/fp64
// choices); only reduction order and expf's last bit may differ.
#include <cublas_v2.h>

#include <algorithm>
#include <climits>
#include <cstdint>
#include <string>

#include "kernels/cuda_check.cuh"
#include "kernels/decoder_cuda.h"
#include "kernels/decoder_ops_device.cuh"
#include "kernels/pdl.cuh"
#include "kernels/float_formats.h"

namespace kvgate::kernels::cuda {

namespace {

constexpr int kThreads = 256;

unsigned blocks_for(std::int64_t n) {
  const std::int64_t b = (n + kThreads - 1) / kThreads;
  return static_cast<unsigned>(b < 65535 * 16 ? (b > 0 ? b : 1) : 65535 * 16);
}

__global__ void embedding_kernel(const bf16_t* __restrict__ table, int dim, const int* __restrict__ ids, int n,
                                 float* __restrict__ out) {
  const std::int64_t total = static_cast<std::int64_t>(n) * dim;
  for (std::int64_t i = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; i < total;
       i += static_cast<std::int64_t>(gridDim.x) * blockDim.x) {
    const std::int64_t r = i / dim, c = i % dim;
    out[i] = bf16_to_f32(table[static_cast<std::int64_t>(ids[r]) * dim + c]);
  }
}

__global__ void add_kernel(float* x, const float* __restrict__ y, std::int64_t n) {
  for (std::int64_t i = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<std::int64_t>(gridDim.x) * blockDim.x)
    x[i] = x[i] + y[i];
}

__global__ void add_bias_kernel(float* x, const float* __restrict__ bias, int rows, int cols) {
  const std::int64_t n = static_cast<std::int64_t>(rows) * cols;
  for (std::int64_t i = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<std::int64_t>(gridDim.x) * blockDim.x)
    x[i] = x[i] + bias[i % cols];
}

__global__ void swiglu_kernel(const float* gate, const float* __restrict__ up, std::int64_t n, float* out,
                              bf16_t* __restrict__ out_bf16) {
  for (std::int64_t i = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<std::int64_t>(gridDim.x) * blockDim.x) {
    const float g = gate[i];
    const float v = silu_mul(g, up[i]);
    if (out_bf16) out_bf16[i] = f32_to_bf16(v);
    if (out) out[i] = v;
  }
}

// One block per row; the sum of squares in fp64 (the twin's), reduced through shared memory. The row is
// read twice (the second read hits the cache): at 1024 threads a block, two blocks an SM need at most
// 32 registers a thread (docs/bench-notes/prefill-elementwise-2026-12-07.md).
__global__ void rmsnorm_kernel(const float* x, const float* __restrict__ weight, int dim, float eps, float* out,
                               bf16_t* out_bf16) {
  const float* xr = x + static_cast<std::int64_t>(blockIdx.x) * dim;
  double ss = 0.0;
  for (int i = threadIdx.x; i < dim; i += blockDim.x) ss += static_cast<double>(xr[i]) * xr[i];
  const float inv = block_inv_rms(ss, dim, eps);
  float* o = out ? out + static_cast<std::int64_t>(blockIdx.x) * dim : nullptr;
  bf16_t* ob = out_bf16 ? out_bf16 + static_cast<std::int64_t>(blockIdx.x) * dim : nullptr;
  for (int i = threadIdx.x; i < dim; i += blockDim.x) {
    const float v = weight[i] * (xr[i] * inv);
    if (ob) ob[i] = f32_to_bf16(v);
    if (o) o[i] = v;  // after the read of xr[i] by this same thread: aliasing is safe
  }
}

// One block per row, one thread per rotary pair index i (looping), every head of the row.
__global__ void rope_kernel(float* x, int heads, int head_dim, const int* __restrict__ positions,
                            const float* __restrict__ inv_freq, float attention_scaling) {
  const int half = head_dim / 2;
  const float pos = static_cast<float>(positions[blockIdx.x]);
  for (int i = threadIdx.x; i < half; i += blockDim.x) {
    const float angle = __fmul_rn(inv_freq[i], pos);
    const float c = __fmul_rn(static_cast<float>(cos(static_cast<double>(angle))), attention_scaling);
    const float sn = __fmul_rn(static_cast<float>(sin(static_cast<double>(angle))), attention_scaling);
    for (int h = 0; h < heads; ++h) {
      float* v = x + (static_cast<std::int64_t>(blockIdx.x) * heads + h) * head_dim;
      const float x1 = v[i], x2 = v[i + half];
      v[i] = __fsub_rn(__fmul_rn(x1, c), __fmul_rn(x2, sn));  // no FMA contraction: the twin's rounding
      v[i + half] = __fadd_rn(__fmul_rn(x2, c), __fmul_rn(x1, sn));
    }
  }
}

// One element of swiglu_fused: the biases, then swiglu's arithmetic.
__device__ float swiglu_biased(float g, float u, const float* gate_bias, const float* up_bias, int c) {
  if (gate_bias) g = g + gate_bias[c];
  if (up_bias) u = u + up_bias[c];
  return silu_mul(g, u);
}

__global__ void swiglu_fused_kernel(const float* __restrict__ gu, int rows, int inter, const float* __restrict__ gate_bias,
                                    const float* __restrict__ up_bias, float* __restrict__ out, bf16_t* __restrict__ out_bf16) {
  const std::int64_t n = static_cast<std::int64_t>(rows) * inter;
  for (std::int64_t i = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<std::int64_t>(gridDim.x) * blockDim.x) {
    const std::int64_t r = i / inter, c = i % inter;
    const float v = swiglu_biased(gu[r * 2 * inter + 2 * c], gu[r * 2 * inter + 2 * c + 1], gate_bias, up_bias, static_cast<int>(c));
    if (out_bf16) out_bf16[i] = f32_to_bf16(v);
    if (out) out[i] = v;
  }
}

// Even inter: two columns a thread, their (gate, up) pairs one 16-byte load, rows along gridDim.y, so
// no element pays the flat index's 64-bit division and modulo
// (docs/bench-notes/prefill-elementwise-2026-12-07.md).
__global__ void swiglu_fused_pairs_kernel(const float4* __restrict__ gu, int rows, int inter, const float* __restrict__ gate_bias,
                                          const float* __restrict__ up_bias, float* __restrict__ out, bf16_t* __restrict__ out_bf16) {
  const int pairs = inter / 2;
  for (int r = blockIdx.y; r < rows; r += gridDim.y)
    for (int j = blockIdx.x * blockDim.x + threadIdx.x; j < pairs; j += gridDim.x * blockDim.x) {
      const float4 x = gu[static_cast<std::int64_t>(r) * pairs + j];
      const float v0 = swiglu_biased(x.x, x.y, gate_bias, up_bias, 2 * j), v1 = swiglu_biased(x.z, x.w, gate_bias, up_bias, 2 * j + 1);
      const std::int64_t o = static_cast<std::int64_t>(r) * inter + 2 * j;
      if (out_bf16)
        *reinterpret_cast<std::uint32_t*>(out_bf16 + o) = static_cast<std::uint32_t>(f32_to_bf16(v0)) |
                                                         static_cast<std::uint32_t>(f32_to_bf16(v1)) << 16;
      if (out) *reinterpret_cast<float2*>(out + o) = make_float2(v0, v1);
    }
}

// (value, index) pairs: the larger value, on equal values the lower index; NaN values never win
// (v > bv and v == bv are false), index INT_MAX marks "none yet".
__device__ void argmax_take(float& bv, int& bi, float v, int i) {
  if (v > bv || (v == bv && i < bi)) {
    bv = v;
    bi = i;
  }
}

// Reduces the block's pairs (blockDim.x a multiple of 32, at most 1024); thread 0 gets the result.
__device__ void argmax_block(float& bv, int& bi) {
  __shared__ float sv[32];
  __shared__ int si[32];
  for (int o = 16; o > 0; o >>= 1) {
    const float v = __shfl_down_sync(0xffffffffu, bv, o);
    const int i = __shfl_down_sync(0xffffffffu, bi, o);
    argmax_take(bv, bi, v, i);
  }
  if ((threadIdx.x & 31) == 0) {
    sv[threadIdx.x >> 5] = bv;
    si[threadIdx.x >> 5] = bi;
  }
  __syncthreads();
  if (threadIdx.x == 0)
    for (int w = 1; w < static_cast<int>(blockDim.x >> 5); ++w) argmax_take(bv, bi, sv[w], si[w]);
}

__global__ void argmax_chunk_kernel(const float* __restrict__ logits, int n, float* __restrict__ wv, int* __restrict__ wi) {
  const float* row = logits + static_cast<std::int64_t>(blockIdx.y) * n;
  const int per = (n + gridDim.x - 1) / gridDim.x, lo = blockIdx.x * per, hi = min(n, lo + per);
  float bv = -INFINITY;
  int bi = INT_MAX;
  for (int i = lo + threadIdx.x; i < hi; i += blockDim.x) argmax_take(bv, bi, row[i], i);
  argmax_block(bv, bi);
  if (threadIdx.x == 0) {
    wv[blockIdx.y * gridDim.x + blockIdx.x] = bv;
    wi[blockIdx.y * gridDim.x + blockIdx.x] = bi;
  }
}

__global__ void argmax_merge_kernel(const float* __restrict__ logits, int n, const float* __restrict__ wv,
                                    const int* __restrict__ wi, int* __restrict__ ids) {
  float bv = -INFINITY;
  int bi = INT_MAX;
  for (int c = threadIdx.x; c < kArgmaxChunks; c += blockDim.x)
    argmax_take(bv, bi, wv[blockIdx.x * kArgmaxChunks + c], wi[blockIdx.x * kArgmaxChunks + c]);
  argmax_block(bv, bi);
  if (threadIdx.x == 0) {
    const float first = logits[static_cast<std::int64_t>(blockIdx.x) * n];
    ids[blockIdx.x] = (first != first || bi == INT_MAX) ? 0 : bi;  // sample_ref keeps 0 when logits[0] is NaN
  }
}

__global__ void fill_random_kernel(void* p, std::int64_t n, bool bf16, std::uint64_t seed, float scale, float offset) {
  for (std::int64_t i = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<std::int64_t>(gridDim.x) * blockDim.x) {
    std::uint64_t z = seed + 0x9e3779b97f4a7c15ull * static_cast<std::uint64_t>(i + 1);  // splitmix64
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    z ^= z >> 31;
    const float u = static_cast<float>(z >> 40) * (1.0f / 8388608.0f) - 1.0f;  // 24 bits -> [-1, 1)
    const float v = offset + scale * u;
    if (bf16) static_cast<bf16_t*>(p)[i] = f32_to_bf16(v);
    else static_cast<float*>(p)[i] = v;
  }
}

}  // namespace

void fill_random(void* p, std::int64_t n, GemmType type, std::uint64_t seed, float scale, float offset, cudaStream_t s) {
  if (n <= 0) return;
  fill_random_kernel<<<blocks_for(n), kThreads, 0, s>>>(p, n, type == GemmType::kBf16, seed, scale, offset);
  KV_CUDA_CHECK_LAUNCH();
}

void embedding(const bf16_t* table, int dim, const int* ids, int n, float* out, cudaStream_t s) {
  if (n <= 0) return;
  embedding_kernel<<<blocks_for(std::int64_t{n} * dim), kThreads, 0, s>>>(table, dim, ids, n, out);
  KV_CUDA_CHECK_LAUNCH();
}

void add(float* x, const float* y, std::int64_t n, cudaStream_t s) {
  if (n <= 0) return;
  add_kernel<<<blocks_for(n), kThreads, 0, s>>>(x, y, n);
  KV_CUDA_CHECK_LAUNCH();
}

void add_bias(float* x, const float* bias, int rows, int cols, cudaStream_t s) {
  if (rows <= 0) return;
  add_bias_kernel<<<blocks_for(std::int64_t{rows} * cols), kThreads, 0, s>>>(x, bias, rows, cols);
  KV_CUDA_CHECK_LAUNCH();
}

void swiglu(const float* gate, const float* up, std::int64_t n, float* out_f32, bf16_t* out_bf16, cudaStream_t s) {
  if (n <= 0) return;
  swiglu_kernel<<<blocks_for(n), kThreads, 0, s>>>(gate, up, n, out_f32, out_bf16);
  KV_CUDA_CHECK_LAUNCH();
}

void rmsnorm(const float* x, const float* weight, int rows, int dim, float eps, float* out_f32, bf16_t* out_bf16,
             cudaStream_t s) {
  if (rows <= 0) return;
  rmsnorm_kernel<<<rows, norm_threads(dim), 0, s>>>(x, weight, dim, eps, out_f32, out_bf16);
  KV_CUDA_CHECK_LAUNCH();
}

void swiglu_fused(const float* gate_up, int rows, int inter, const float* gate_bias, const float* up_bias, float* out_f32,
                  bf16_t* out_bf16, cudaStream_t s) {
  if (rows <= 0) return;
  if (inter % 2 == 0) {
    const int pairs = inter / 2;
    const dim3 grid(std::min((pairs + kThreads - 1) / kThreads, 1024), std::min(rows, 65535));
    swiglu_fused_pairs_kernel<<<grid, kThreads, 0, s>>>(reinterpret_cast<const float4*>(gate_up), rows, inter, gate_bias, up_bias,
                                                         out_f32, out_bf16);
  } else {
    swiglu_fused_kernel<<<blocks_for(std::int64_t{rows} * inter), kThreads, 0, s>>>(gate_up, rows, inter, gate_bias, up_bias,
                                                                                    out_f32, out_bf16);
  }
  KV_CUDA_CHECK_LAUNCH();
}

void rope(float* x, int rows, int heads, int head_dim, const int* positions, const float* inv_freq,
          float attention_scaling, cudaStream_t s) {
  if (rows <= 0) return;
  rope_kernel<<<rows, 64, 0, s>>>(x, heads, head_dim, positions, inv_freq, attention_scaling);
  KV_CUDA_CHECK_LAUNCH();
}

void argmax_rows_chunked(const float* logits, int rows, int n, int* ids, void* workspace, cudaStream_t s) {
  if (rows <= 0) return;
  auto* wv = static_cast<float*>(workspace);
  auto* wi = reinterpret_cast<int*>(wv + static_cast<std::size_t>(rows) * kArgmaxChunks);
  argmax_chunk_kernel<<<dim3(kArgmaxChunks, rows), kThreads, 0, s>>>(logits, n, wv, wi);
  KV_CUDA_CHECK_LAUNCH();
  argmax_merge_kernel<<<rows, kArgmaxChunks, 0, s>>>(logits, n, wv, wi, ids);
  KV_CUDA_CHECK_LAUNCH();
}

#define KV_CUBLAS_CHECK(expr)                                                                           \
  do {                                                                                                  \
    cublasStatus_t st_ = (expr);                                                                        \
    if (st_ != CUBLAS_STATUS_SUCCESS)                                                                   \
      throw ::kvgate::Error(std::string("cuBLAS error ") + cublasGetStatusString(st_) + " in " #expr, \
                            ::kvgate::kExitInternal);                                                  \
  } while (0)

// cuBLAS's recommended workspace on Hopper; set after every cublasSetStream (which resets it).
constexpr std::size_t kGemmWorkspace = std::size_t{32} << 20;

Gemm::Gemm() {
  cublasHandle_t h = nullptr;
  KV_CUBLAS_CHECK(cublasCreate(&h));
  handle_ = h;
  KV_CUDA_CHECK(cudaMalloc(&workspace_, kGemmWorkspace));
  // bf16 inputs, fp32 compute: tensor cores with fp32 accumulation (CUBLAS_COMPUTE_32F), no
  // reduced-precision reduction.
  KV_CUBLAS_CHECK(cublasSetMathMode(h, CUBLAS_DEFAULT_MATH));
}

Gemm::~Gemm() {
  if (handle_) cublasDestroy(static_cast<cublasHandle_t>(handle_));
  cudaFree(workspace_);
}

const char* gemm_type_name(GemmType t) { return t == GemmType::kBf16 ? "bf16" : "fp32"; }

void Gemm::run(GemmType type, const void* x, const void* w, const float* bias, float* y, int rows, int k, int cols,
               cudaStream_t s, bool accumulate) {
  if (rows <= 0) return;
  if (accumulate && bias) throw Error("Gemm::run: accumulate with a bias (order of the adds)", kExitInternal);
  auto h = static_cast<cublasHandle_t>(handle_);
  if (!stream_set_ || stream_ != s) {
    KV_CUBLAS_CHECK(cublasSetStream(h, s));
    KV_CUBLAS_CHECK(cublasSetWorkspace(h, workspace_, kGemmWorkspace));
    stream_ = s;
    stream_set_ = true;
  }
  const float one = 1.0f, beta = accumulate ? 1.0f : 0.0f;
  // Column-major view: y^T [cols x rows] = w [k x cols]^T * x^T [k x rows].
  const cudaDataType_t t = type == GemmType::kBf16 ? CUDA_R_16BF : CUDA_R_32F;
  KV_CUBLAS_CHECK(cublasGemmEx(h, CUBLAS_OP_T, CUBLAS_OP_N, cols, rows, k, &one, w, t, k, x, t, k, &beta, y, CUDA_R_32F,
                               cols, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
  if (bias) add_bias(y, bias, rows, cols, s);
}

}  // namespace kvgate::kernels::cuda
