// Device steps shared by the forward-pass kernels (decoder_ops.cu, qkv_split.cu) and the GEMV
// kernels that fuse them (gemv.cu), so the fused and the separate kernels compute the same numbers.
#pragma once
#include <cuda_runtime.h>

namespace kvgate::kernels::cuda {

// 1 / rms of a row: the thread's strided fp64 sum of squares `ss` reduced over the block (warp
// shuffles, then the warps in order), the twin's fp32 variance and fp64 square root. Every thread
// of the block calls it; it synchronizes the block twice.
__device__ inline float block_inv_rms(double ss, int dim, float eps) {
  __shared__ double partial[32];
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
  __syncthreads();  // partial[] may be reused by the next call
  return inv;
}

// Threads of a normalization block over `dim` elements (rmsnorm_kernel's rows, qkv_split's heads):
// the block size fixes the reduction order, so both use this.
__host__ __device__ inline int norm_threads(int dim) { return dim >= 1024 ? 1024 : (dim >= 256 ? 256 : (dim >= 128 ? 128 : 64)); }

// swiglu_ref's silu(g) * u: g / (1 + exp(-g)), then times u, each step rounded in fp32.
__device__ inline float silu_mul(float g, float u) {
  const float silu = __fdiv_rn(g, __fadd_rn(1.0f, expf(-g)));
  return __fmul_rn(silu, u);
}

}  // namespace kvgate::kernels::cuda
