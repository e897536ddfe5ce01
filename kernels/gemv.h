// Hand-written GEMV for decode steps of 1-4 rows: y[rows][cols] = in(x)[rows][k] W^T,
// W bf16 [cols][k], fp32 accumulation, like the cuBLAS bf16 GEMM (decoder_cuda.h's Gemm) but
// streaming the weights near copy bandwidth, and with the kernel before it fused in as the input
// step, so a decode step launches fewer kernels:
//   kBf16     x is bf16 [rows][k]
//   kF32      x is fp32 [rows][k], rounded to bf16 (to_bf16 then the GEMM)
//   kRmsNorm  x is fp32 [rows][k]: bf16(rmsnorm(x) * norm) (rmsnorm then the GEMM)
// The input step is the same arithmetic as the separate kernel (decoder_ops_device.cuh); the
// products bf16 x bf16 are exact in fp32 and the sums run in another order than cuBLAS's.
// Output, with the kernel after the GEMM fused in as its epilogue:
//   kF32         as Gemm::run and the add after it: v = acc (+ bias[c]); accumulate: y = y + v
//   kSwigluBf16  the gate/up projection with W's rows interleaved (row 2j gate j, row 2j + 1 up j,
//                the engine's gate_up layout): y_bf16[r][j] = bf16(silu(g + gate_bias[j]) *
//                (u + up_bias[j])), swiglu_fused's arithmetic, so the down projection reads bf16
// Only in a CUDA build (KVGATE_HAVE_CUDA).
#pragma once
#if defined(KVGATE_HAVE_CUDA)
#include <cuda_runtime.h>

#include "kernels/decoder_cuda.h"

namespace kvgate::kernels::cuda {

enum class GemvInput { kBf16, kF32, kRmsNorm };
enum class GemvOutput { kF32, kSwigluBf16 };
constexpr int kGemvMaxRows = 4;

struct GemvArgs {
  GemvInput input = GemvInput::kBf16;
  GemvOutput output = GemvOutput::kF32;
  const void* x = nullptr;           // see GemvInput
  const float* norm = nullptr;       // kRmsNorm: [k]
  float eps = 1e-6f;                 // kRmsNorm
  const float* gate_bias = nullptr;  // kSwigluBf16: [cols / 2] or null
  const float* up_bias = nullptr;    // kSwigluBf16: [cols / 2] or null
  const bf16_t* w = nullptr;         // [cols][k]
  const float* bias = nullptr;       // kF32: [cols] or null
  float* y = nullptr;                // kF32: [rows][cols]; must not overlap the input
  bf16_t* y_bf16 = nullptr;          // kSwigluBf16: [rows][cols / 2]; must not overlap the input
  int rows = 0, k = 0, cols = 0;
  bool accumulate = false;
  bool pdl = false;  // programmatic dependent launch: the first weights load while the previous kernel ends (pdl.cuh)
};

// Whether gemv() takes this shape: 1..kGemvMaxRows rows, k a multiple of 8 whose fp32 input rows
// fit the kernel's shared memory (k * rows <= 24576), cols > 0 (even for kSwigluBf16). Otherwise
// use Gemm and the separate kernels.
bool gemv_supported(int rows, int k, int cols, GemvOutput out = GemvOutput::kF32);
// Throws an Error for a shape gemv_supported() refuses. The first launch of each variant sets its
// shared-memory attribute (run it once outside a CUDA graph capture).
void gemv(const GemvArgs& a, cudaStream_t s);
// Benchmarks only: one bf16 row with another (weight rows per warp, chunks in flight) variant:
// (1,4) (1,8) (2,2) (2,4) (2,8) (4,2) (4,4); gemv() runs (2,4).
void gemv_tuning(const GemvArgs& a, int cols_per_warp, int unroll, cudaStream_t s);

}  // namespace kvgate::kernels::cuda
#endif
