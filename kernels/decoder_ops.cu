// The element-wise, normalization, RoPE and sampling kernels of the CUDA decoder, and its cuBLAS
// GEMM (decoder_cuda.h). Each follows its CPU twin in ops_ref.h step for step (same fp32/fp64
// choices); only reduction order and expf's last bit may differ.
#include <cublas_v2.h>

#include <string>

#include "cuda_check.cuh"
#include "decoder_cuda.h"
#include "float_formats.h"

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
    const float silu = __fdiv_rn(g, __fadd_rn(1.0f, expf(-g)));
    const float v = __fmul_rn(silu, up[i]);
    if (out_bf16) out_bf16[i] = f32_to_bf16(v);
    if (out) out[i] = v;
  }
}

__global__ void to_bf16_kernel(const float* __restrict__ x, std::int64_t n, bf16_t* __restrict__ out) {
  for (std::int64_t i = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<std::int64_t>(gridDim.x) * blockDim.x)
    out[i] = f32_to_bf16(x[i]);
}

// One block per row; the sum of squares in fp64 (the twin's), reduced through shared memory.
__global__ void rmsnorm_kernel(const float* x, const float* __restrict__ weight, int dim, float eps, float* out,
                               bf16_t* out_bf16) {
  __shared__ double partial[32];
  const float* xr = x + static_cast<std::int64_t>(blockIdx.x) * dim;
  double ss = 0.0;
  for (int i = threadIdx.x; i < dim; i += blockDim.x) ss += static_cast<double>(xr[i]) * xr[i];
  for (int o = 16; o > 0; o >>= 1) ss += __shfl_xor_sync(0xffffffffu, ss, o);
  if ((threadIdx.x & 31) == 0) partial[threadIdx.x >> 5] = ss;
  __syncthreads();
  if (threadIdx.x == 0) {
    double t = 0.0;
    for (int w = 0; w < static_cast<int>(blockDim.x >> 5); ++w) t += partial[w];
    partial[0] = t;
  }
  __syncthreads();
  const float variance = static_cast<float>(partial[0] / dim);
  const float inv = static_cast<float>(1.0 / sqrt(static_cast<double>(variance + eps)));
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

__device__ bool better(float v, int i, float bv, int bi) { return v > bv || (v == bv && i < bi) || (bi < 0); }

__global__ void argmax_kernel(const float* __restrict__ logits, int n, int* ids) {
  const float* row = logits + static_cast<std::int64_t>(blockIdx.x) * n;
  float bv = -INFINITY;
  int bi = -1;
  for (int i = threadIdx.x; i < n; i += blockDim.x)
    if (better(row[i], i, bv, bi)) {
      bv = row[i];
      bi = i;
    }
  __shared__ float sv[kThreads];
  __shared__ int si[kThreads];
  sv[threadIdx.x] = bv;
  si[threadIdx.x] = bi;
  __syncthreads();
  for (int s = blockDim.x / 2; s > 0; s >>= 1) {
    if (threadIdx.x < s) {
      const float v = sv[threadIdx.x + s];
      const int i = si[threadIdx.x + s];
      if (i >= 0 && (si[threadIdx.x] < 0 || v > sv[threadIdx.x] || (v == sv[threadIdx.x] && i < si[threadIdx.x]))) {
        sv[threadIdx.x] = v;
        si[threadIdx.x] = i;
      }
    }
    __syncthreads();
  }
  // All-NaN row: the twin keeps index 0.
  if (threadIdx.x == 0) ids[blockIdx.x] = si[0] < 0 ? 0 : si[0];
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

void to_bf16(const float* x, std::int64_t n, bf16_t* out, cudaStream_t s) {
  if (n <= 0) return;
  to_bf16_kernel<<<blocks_for(n), kThreads, 0, s>>>(x, n, out);
  KV_CUDA_CHECK_LAUNCH();
}

void rmsnorm(const float* x, const float* weight, int rows, int dim, float eps, float* out_f32, bf16_t* out_bf16,
             cudaStream_t s) {
  if (rows <= 0) return;
  const int threads = dim >= 1024 ? 1024 : (dim >= 256 ? 256 : (dim >= 128 ? 128 : 64));
  rmsnorm_kernel<<<rows, threads, 0, s>>>(x, weight, dim, eps, out_f32, out_bf16);
  KV_CUDA_CHECK_LAUNCH();
}

void rope(float* x, int rows, int heads, int head_dim, const int* positions, const float* inv_freq,
          float attention_scaling, cudaStream_t s) {
  if (rows <= 0) return;
  rope_kernel<<<rows, 64, 0, s>>>(x, heads, head_dim, positions, inv_freq, attention_scaling);
  KV_CUDA_CHECK_LAUNCH();
}

void argmax_rows(const float* logits, int rows, int n, int* ids, cudaStream_t s) {
  if (rows <= 0) return;
  argmax_kernel<<<rows, kThreads, 0, s>>>(logits, n, ids);
  KV_CUDA_CHECK_LAUNCH();
}

#define KV_CUBLAS_CHECK(expr)                                                                           \
  do {                                                                                                  \
    cublasStatus_t st_ = (expr);                                                                        \
    if (st_ != CUBLAS_STATUS_SUCCESS)                                                                   \
      throw ::kvgate::Error(std::string("cuBLAS error ") + cublasGetStatusString(st_) + " in " #expr, \
                            ::kvgate::kExitInternal);                                                  \
  } while (0)

Gemm::Gemm() {
  cublasHandle_t h = nullptr;
  KV_CUBLAS_CHECK(cublasCreate(&h));
  handle_ = h;
  // bf16 inputs, fp32 compute: tensor cores with fp32 accumulation (CUBLAS_COMPUTE_32F), no
  // reduced-precision reduction.
  KV_CUBLAS_CHECK(cublasSetMathMode(h, CUBLAS_DEFAULT_MATH));
}

Gemm::~Gemm() {
  if (handle_) cublasDestroy(static_cast<cublasHandle_t>(handle_));
}

const char* gemm_type_name(GemmType t) { return t == GemmType::kBf16 ? "bf16" : "fp32"; }

void Gemm::run(GemmType type, const void* x, const void* w, const float* bias, float* y, int rows, int k, int cols,
               cudaStream_t s) {
  if (rows <= 0) return;
  auto h = static_cast<cublasHandle_t>(handle_);
  KV_CUBLAS_CHECK(cublasSetStream(h, s));
  const float one = 1.0f, zero = 0.0f;
  // Column-major view: y^T [cols x rows] = w [k x cols]^T * x^T [k x rows].
  const cudaDataType_t t = type == GemmType::kBf16 ? CUDA_R_16BF : CUDA_R_32F;
  KV_CUBLAS_CHECK(cublasGemmEx(h, CUBLAS_OP_T, CUBLAS_OP_N, cols, rows, k, &one, w, t, k, x, t, k, &zero, y, CUDA_R_32F,
                               cols, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
  if (bias) add_bias(y, bias, rows, cols, s);
}

}  // namespace kvgate::kernels::cuda
