// The decode-step GEMV (gemv.h). A block stages its input rows in shared memory as fp32 (after the
// fused input step), then each warp streams whole weight rows: lane j reads 16-byte chunks j,
// j + 32, ... (8 bf16 each), kUnroll chunks of kCols weight rows in flight, and accumulates
// chunk-wise in fp32; the warp reduces its lanes with shuffles. The grid is at most one wave of
// resident blocks that loop over the columns, so the input step runs once per block.
#include <cstdint>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "kernels/cuda_check.cuh"
#include "kernels/decoder_ops_device.cuh"
#include "kernels/float_formats.h"
#include "kernels/gemv.h"
#include "kernels/pdl.cuh"

namespace kvgate::kernels::cuda {

namespace {

constexpr int kThreads = 256, kWarps = kThreads / 32;
constexpr int kCols = 2;    // weight rows per warp at a time
constexpr int kUnroll = 4;  // 16-byte chunks per weight row in flight per lane (gemv_tuning tries others)
constexpr int kMaxInputs = 24576;  // k * rows: 96 KiB of fp32 input in shared memory

__device__ __forceinline__ float bf16_lo(unsigned u) { return __uint_as_float(u << 16); }
__device__ __forceinline__ float bf16_hi(unsigned u) { return __uint_as_float(u & 0xffff0000u); }
__device__ __forceinline__ float round_bf16(float v) { return bf16_to_f32(f32_to_bf16(v)); }

// Four elements i..i+3 of an input row (i a multiple of 4, rows 16-byte aligned: k % 8 == 0).
__device__ __forceinline__ float4 ld4(const float* p, int i) { return __ldg(reinterpret_cast<const float4*>(p + i)); }
__device__ __forceinline__ float4 round4(float4 v) { return make_float4(round_bf16(v.x), round_bf16(v.y), round_bf16(v.z), round_bf16(v.w)); }
// v[b] = the four elements at i0 + b * step, for the batch's groups inside the row: N independent loads.
template <int N>
__device__ __forceinline__ void ld_batch(float4 (&v)[N], const float* p, int i0, int step, int k) {
#pragma unroll
  for (int b = 0; b < N; ++b)
    if (i0 + b * step < k) v[b] = ld4(p, i0 + b * step);
}

// The input step: xs[r][i] = the bf16-rounded GEMM operand, as fp32. Each thread owns groups of
// four elements (i = 4 (threadIdx.x + 256 m)); kBatch groups are loaded before any is used, so the
// step costs a few memory round trips, not one per element. Ends with a block barrier.
template <int ROWS, GemvInput IN>
__device__ void stage_input(const GemvArgs& a, float* xs) {
  constexpr int kBatch = 4;
  const int k = a.k, step = 4 * kThreads;
  for (int r = 0; r < ROWS; ++r) {
    float* o = xs + r * k;
    if constexpr (IN == GemvInput::kBf16) {
      const bf16_t* x = static_cast<const bf16_t*>(a.x) + static_cast<std::size_t>(r) * k;
      for (int i = 4 * threadIdx.x; i < k; i += step) {
        const uint2 v = __ldg(reinterpret_cast<const uint2*>(x + i));
        *reinterpret_cast<float4*>(o + i) = make_float4(bf16_lo(v.x), bf16_hi(v.x), bf16_lo(v.y), bf16_hi(v.y));
      }
    } else if constexpr (IN == GemvInput::kF32) {
      const float* x = static_cast<const float*>(a.x) + static_cast<std::size_t>(r) * k;
      for (int i0 = 4 * threadIdx.x; i0 < k; i0 += kBatch * step) {
        float4 v[kBatch];
        ld_batch(v, x, i0, step, k);
#pragma unroll
        for (int b = 0; b < kBatch; ++b)
          if (i0 + b * step < k) *reinterpret_cast<float4*>(o + i0 + b * step) = round4(v[b]);
      }
    } else {  // kRmsNorm: rmsnorm_kernel's arithmetic
      const float* x = static_cast<const float*>(a.x) + static_cast<std::size_t>(r) * k;
      double ss = 0.0;
      for (int i0 = 4 * threadIdx.x; i0 < k; i0 += kBatch * step) {
        float4 v[kBatch];
        ld_batch(v, x, i0, step, k);
#pragma unroll
        for (int b = 0; b < kBatch; ++b)
          if (i0 + b * step < k) {
            ss += static_cast<double>(v[b].x) * v[b].x;
            ss += static_cast<double>(v[b].y) * v[b].y;
            ss += static_cast<double>(v[b].z) * v[b].z;
            ss += static_cast<double>(v[b].w) * v[b].w;
          }
      }
      const float inv = block_inv_rms(ss, k, a.eps);
      for (int i0 = 4 * threadIdx.x; i0 < k; i0 += kBatch * step) {
        float4 v[kBatch], n[kBatch];
        ld_batch(v, x, i0, step, k);
        ld_batch(n, a.norm, i0, step, k);
#pragma unroll
        for (int b = 0; b < kBatch; ++b)
          if (i0 + b * step < k)
            *reinterpret_cast<float4*>(o + i0 + b * step) =
                round4(make_float4(n[b].x * (v[b].x * inv), n[b].y * (v[b].y * inv), n[b].z * (v[b].z * inv), n[b].w * (v[b].w * inv)));
      }
    }
  }
  __syncthreads();
}

template <int ROWS>
__device__ __forceinline__ void fma_chunk(float (&acc)[ROWS], const uint4& w, const float* xs, int k, int e) {
  const unsigned u[4] = {w.x, w.y, w.z, w.w};
#pragma unroll
  for (int r = 0; r < ROWS; ++r) {
    const float4 x0 = *reinterpret_cast<const float4*>(xs + r * k + e);
    const float4 x1 = *reinterpret_cast<const float4*>(xs + r * k + e + 4);
    float s = acc[r];
    s = fmaf(bf16_lo(u[0]), x0.x, s);
    s = fmaf(bf16_hi(u[0]), x0.y, s);
    s = fmaf(bf16_lo(u[1]), x0.z, s);
    s = fmaf(bf16_hi(u[1]), x0.w, s);
    s = fmaf(bf16_lo(u[2]), x1.x, s);
    s = fmaf(bf16_hi(u[2]), x1.y, s);
    s = fmaf(bf16_lo(u[3]), x1.z, s);
    s = fmaf(bf16_hi(u[3]), x1.w, s);
    acc[r] = s;
  }
}

template <int ROWS, GemvInput IN, GemvOutput OUT = GemvOutput::kF32, int kCols = kCols, int kUnroll = kUnroll>
__global__ void __launch_bounds__(kThreads, 3) gemv_kernel(GemvArgs a) {
  static_assert(OUT == GemvOutput::kF32 || kCols == 2, "a warp holds gate j and up j together");
  extern __shared__ float xs[];  // [ROWS][k]
  const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
  const int k = a.k, chunks = k / 8, groups = (a.cols + kCols - 1) / kCols;
  const int stride = gridDim.x * kWarps;
  const uint4* w = reinterpret_cast<const uint4*>(a.w);
  // Weight loads do not depend on the input: this warp's first kUnroll x kCols chunks are issued
  // into registers, and the next batch into L2, before the block prepares its input.
  uint4 wv[kUnroll][kCols];
  auto load = [&](int g, int base) {
    const int c0 = g * kCols;
#pragma unroll
    for (int u = 0; u < kUnroll; ++u)
#pragma unroll
      for (int c = 0; c < kCols; ++c) {  // slots past the row or past a.cols load zeros and are never used
        const int ch = base + u * 32 + lane;
        wv[u][c] = (ch < chunks && c0 + c < a.cols) ? __ldcs(w + static_cast<std::size_t>(c0 + c) * chunks + ch) : make_uint4(0, 0, 0, 0);
      }
  };
  pdl_launch_dependents();
  const int g0 = blockIdx.x * kWarps + warp;
  if (g0 < groups) {
    load(g0, 0);
    for (int c = 0; c < kCols && g0 * kCols + c < a.cols; ++c)
      for (int ch = 32 * kUnroll + lane; ch < chunks && ch < 64 * kUnroll; ch += 32)
        asm volatile("prefetch.global.L2 [%0];" ::"l"(w + static_cast<std::size_t>(g0 * kCols + c) * chunks + ch));
  }
  pdl_wait();  // the input (and y, when accumulating) come from earlier kernels
  stage_input<ROWS, IN>(a, xs);
  for (int g = g0; g < groups; g += stride) {
    const int c0 = g * kCols;
    float acc[kCols][ROWS] = {};
    for (int base = 0; base < chunks; base += 32 * kUnroll) {
      if (g != g0 || base != 0) load(g, base);  // all loads of the batch first, then the FMAs
#pragma unroll
      for (int u = 0; u < kUnroll; ++u) {
        const int ch = base + u * 32 + lane;
        if (ch < chunks)
#pragma unroll
          for (int c = 0; c < kCols; ++c) fma_chunk<ROWS>(acc[c], wv[u][c], xs, k, ch * 8);
      }
    }
#pragma unroll
    for (int c = 0; c < kCols; ++c)
#pragma unroll
      for (int r = 0; r < ROWS; ++r)
        for (int o = 16; o > 0; o >>= 1) acc[c][r] += __shfl_xor_sync(0xffffffffu, acc[c][r], o);
    if (lane != 0) continue;
    if constexpr (OUT == GemvOutput::kSwigluBf16) {  // swiglu_fused_kernel's arithmetic
      const int j = c0 / 2, half = a.cols / 2;
#pragma unroll
      for (int r = 0; r < ROWS; ++r) {
        float g = acc[0][r], u = acc[1][r];
        if (a.gate_bias) g = g + a.gate_bias[j];
        if (a.up_bias) u = u + a.up_bias[j];
        a.y_bf16[static_cast<std::size_t>(r) * half + j] = f32_to_bf16(silu_mul(g, u));
      }
    } else {
#pragma unroll
      for (int c = 0; c < kCols; ++c) {
        if (c0 + c >= a.cols) break;
#pragma unroll
        for (int r = 0; r < ROWS; ++r) {
          float v = acc[c][r];
          if (a.bias) v = v + a.bias[c0 + c];
          float* y = a.y + static_cast<std::size_t>(r) * a.cols + c0 + c;
          if (a.accumulate) v = *y + v;
          *y = v;
        }
      }
    }
  }
}

using Kernel = void (*)(GemvArgs);

template <int ROWS, GemvOutput OUT>
Kernel pick(GemvInput in) {
  switch (in) {
    case GemvInput::kBf16: return gemv_kernel<ROWS, GemvInput::kBf16, OUT>;
    case GemvInput::kF32: return gemv_kernel<ROWS, GemvInput::kF32, OUT>;
    case GemvInput::kRmsNorm: return gemv_kernel<ROWS, GemvInput::kRmsNorm, OUT>;
  }
  return nullptr;
}

template <GemvOutput OUT>
Kernel kernel_for(int rows, GemvInput in) {
  switch (rows) {
    case 1: return pick<1, OUT>(in);
    case 2: return pick<2, OUT>(in);
    case 3: return pick<3, OUT>(in);
    case 4: return pick<4, OUT>(in);
  }
  return nullptr;
}

// Resident blocks per SM for a variant and its shared memory, measured once (and the attribute
// that allows more than 48 KiB set then).
int grid_for(Kernel f, int smem) {
  static std::mutex m;
  static std::vector<std::pair<std::pair<Kernel, int>, int>> known;
  static int sms = 0;
  std::lock_guard<std::mutex> lock(m);
  if (sms == 0) {
    int dev = 0;
    KV_CUDA_CHECK(cudaGetDevice(&dev));
    KV_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
  }
  for (const auto& [key, blocks] : known)
    if (key.first == f && key.second == smem) return blocks;
  KV_CUDA_CHECK(cudaFuncSetAttribute(f, cudaFuncAttributeMaxDynamicSharedMemorySize, kMaxInputs * 4));
  int per_sm = 0;
  KV_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, f, kThreads, smem));
  const int blocks = std::max(1, per_sm) * sms;
  known.push_back({{f, smem}, blocks});
  return blocks;
}

void launch(Kernel f, const GemvArgs& a, int cols_per_warp, cudaStream_t s) {
  const int smem = a.rows * a.k * static_cast<int>(sizeof(float));
  const int groups = (a.cols + cols_per_warp - 1) / cols_per_warp;
  const int blocks = std::min(grid_for(f, smem), (groups + kWarps - 1) / kWarps);
  launch_kernel(a.pdl, f, dim3(blocks), dim3(kThreads), smem, s, a);
}

}  // namespace

bool gemv_supported(int rows, int k, int cols, GemvOutput out) {
  return rows >= 1 && rows <= kGemvMaxRows && k > 0 && k % 8 == 0 && k * rows <= kMaxInputs && cols > 0 &&
         (out == GemvOutput::kF32 || cols % 2 == 0);
}

void gemv(const GemvArgs& a, cudaStream_t s) {
  const bool swiglu = a.output == GemvOutput::kSwigluBf16;
  if (!gemv_supported(a.rows, a.k, a.cols, a.output))
    throw Error("gemv: unsupported shape rows=" + std::to_string(a.rows) + " k=" + std::to_string(a.k) + " cols=" +
                    std::to_string(a.cols) + " (rows 1-4, k a multiple of 8, k * rows <= " + std::to_string(kMaxInputs) +
                    ", cols even for the SwiGLU output)",
                kExitInternal);
  if ((a.input == GemvInput::kRmsNorm) != (a.norm != nullptr))
    throw Error("gemv: the norm weight goes with GemvInput::kRmsNorm only", kExitInternal);
  if (swiglu ? (a.y_bf16 == nullptr || a.y != nullptr || a.bias != nullptr || a.accumulate)
             : (a.y == nullptr || a.y_bf16 != nullptr || a.gate_bias != nullptr || a.up_bias != nullptr))
    throw Error("gemv: GemvOutput::kF32 writes y (with bias, accumulate); kSwigluBf16 writes y_bf16 (with gate_bias, up_bias)",
                kExitInternal);
  auto aligned = [](const void* p) { return reinterpret_cast<std::uintptr_t>(p) % 16 == 0; };  // vector loads
  if (!aligned(a.x) || !aligned(a.w) || !aligned(a.norm) || !aligned(a.gate_bias) || !aligned(a.up_bias))
    throw Error("gemv: input, weight, norm and SwiGLU bias pointers must be 16-byte aligned", kExitInternal);
  const Kernel f = swiglu ? kernel_for<GemvOutput::kSwigluBf16>(a.rows, a.input) : kernel_for<GemvOutput::kF32>(a.rows, a.input);
  launch(f, a, kCols, s);
}

void gemv_tuning(const GemvArgs& a, int cols_per_warp, int unroll, cudaStream_t s) {
  if (a.rows != 1 || a.input != GemvInput::kBf16 || a.output != GemvOutput::kF32 || !gemv_supported(a.rows, a.k, a.cols))
    throw Error("gemv_tuning: one bf16 row only", kExitInternal);
  Kernel f = nullptr;
  if (cols_per_warp == 1 && unroll == 4) f = gemv_kernel<1, GemvInput::kBf16, GemvOutput::kF32, 1, 4>;
  if (cols_per_warp == 1 && unroll == 8) f = gemv_kernel<1, GemvInput::kBf16, GemvOutput::kF32, 1, 8>;
  if (cols_per_warp == 2 && unroll == 2) f = gemv_kernel<1, GemvInput::kBf16, GemvOutput::kF32, 2, 2>;
  if (cols_per_warp == 2 && unroll == 4) f = gemv_kernel<1, GemvInput::kBf16, GemvOutput::kF32, 2, 4>;
  if (cols_per_warp == 2 && unroll == 8) f = gemv_kernel<1, GemvInput::kBf16, GemvOutput::kF32, 2, 8>;
  if (cols_per_warp == 4 && unroll == 2) f = gemv_kernel<1, GemvInput::kBf16, GemvOutput::kF32, 4, 2>;
  if (cols_per_warp == 4 && unroll == 4) f = gemv_kernel<1, GemvInput::kBf16, GemvOutput::kF32, 4, 4>;
  if (!f) throw Error("gemv_tuning: no such variant", kExitInternal);
  launch(f, a, cols_per_warp, s);
}

}  // namespace kvgate::kernels::cuda
