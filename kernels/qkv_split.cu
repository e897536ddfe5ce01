// qkv_split and qkv_split_write (decoder_cuda.h): after the fused QKV projection, one warp per
// (row, head) adds the bias, applies the q/k norm and RoPE, and splits q, k and v;
// qkv_split_write also encodes each row's K and V into the paged cache (kv_encode.cuh), so a decode
// step runs one kernel where it ran qkv_split then kv_write (3.4 us a layer at batch 1).
// Built with -fmad=false, as kv_write.cu, for the cache's bytes. The split's own numbers barely
// depend on it: RoPE is written in _rn intrinsics and the norm's products are not followed by an
// add; only the norm's fp64 sum of squares is no longer contracted into a DFMA (as the CPU twin).
#include <algorithm>
#include <string>

#include "harness/core/error.h"
#include "kernels/cuda_check.cuh"
#include "kernels/decoder_cuda.h"
#include "kernels/decoder_ops_device.cuh"
#include "kernels/kv_encode.cuh"
#include "kernels/pdl.cuh"

namespace kvgate::kernels::cuda {

namespace {

constexpr int kMaxQkvHeadDim = 256;
constexpr int kSplitWarps = 8;
// From this many rows (a prefill chunk) a block takes every head of its row, so the row's fp64
// cos/sin are computed once for all its heads, not once a head (40 times a row for Qwen3-8B), and a
// chunk launches a block a row (docs/bench-notes/prefill-elementwise-2026-12-07.md); a decode step's
// few rows keep a block a head, spreading its cache writes over the GPU.
constexpr int kRowsForRowBlocks = 128;

// rope_kernel's cos and sin of one pair index (of the fp32 angle in fp64), times the attention scaling.
__device__ float2 rope_cos_sin(float inv_freq, float pos, float attention_scaling) {
  const float angle = __fmul_rn(inv_freq, pos);
  return make_float2(__fmul_rn(static_cast<float>(cos(static_cast<double>(angle))), attention_scaling),
                     __fmul_rn(static_cast<float>(sin(static_cast<double>(angle))), attention_scaling));
}

// rope_kernel's rotation of one pair (no FMA contraction).
__device__ void rope_rotate(float& x1, float& x2, float2 cs) {
  const float a = x1, b = x2;
  x1 = __fsub_rn(__fmul_rn(a, cs.x), __fmul_rn(b, cs.y));
  x2 = __fadd_rn(__fmul_rn(b, cs.x), __fmul_rn(a, cs.y));
}

// block_inv_rms of a head as rmsnorm_kernel's block of norm_threads(d) threads takes it (thread t sums
// elements t, t + T, ... in fp64; each warp's shuffle sum; the warps' sums in order), on one warp:
// lane l plays thread 32 w + l of every warp w, so the sum is rounded exactly as there.
__device__ float warp_inv_rms(const float* x, int d, float eps, int lane) {
  const int threads = norm_threads(d);
  double t = 0.0;
  for (int w = 0; w < threads / 32; ++w) {
    double ss = 0.0;
    for (int i = 32 * w + lane; i < d; i += threads) ss += static_cast<double>(x[i]) * x[i];
    for (int o = 16; o > 0; o >>= 1) ss += __shfl_xor_sync(0xffffffffu, ss, o);
    t += ss;
  }
  const float variance = static_cast<float>(t / d);
  return static_cast<float>(1.0 / sqrt(static_cast<double>(variance + eps)));
}

// Head hid of row r of the fused QKV output, on one warp: bias, q/k norm, RoPE (cs: the row's cos/sin);
// V heads are copied (+ bias). Returns the vector written (in a.q, a.k or a.v). buf: head_dim shared
// floats of this warp.
__device__ float* split_head(const QkvSplitArgs& a, int hid, int r, const float2* cs, float* buf, int lane) {
  const int d = a.head_dim;
  const int width = (a.q_heads + 2 * a.kv_heads) * d, off = hid * d;
  const float* src = a.qkv + static_cast<std::int64_t>(r) * width + off;
  const float* bias = a.bias ? a.bias + off : nullptr;
  float* out;
  const float* norm = nullptr;
  if (hid < a.q_heads) {
    out = a.q + (static_cast<std::int64_t>(r) * a.q_heads + hid) * d;
    norm = a.q_norm;
  } else if (hid < a.q_heads + a.kv_heads) {
    out = a.k + (static_cast<std::int64_t>(r) * a.kv_heads + (hid - a.q_heads)) * d;
    norm = a.k_norm;
  } else {  // V: bias only (warp-uniform branch)
    out = a.v + (static_cast<std::int64_t>(r) * a.kv_heads + (hid - a.q_heads - a.kv_heads)) * d;
    for (int i = lane; i < d; i += 32) out[i] = bias ? src[i] + bias[i] : src[i];
    return out;
  }
  for (int i = lane; i < d; i += 32) buf[i] = bias ? src[i] + bias[i] : src[i];
  __syncwarp();
  if (norm) {
    const float inv = warp_inv_rms(buf, d, a.eps, lane);
    for (int i = lane; i < d; i += 32) buf[i] = norm[i] * (buf[i] * inv);
    __syncwarp();
  }
  const int half = d / 2;
  for (int i = lane; i < half; i += 32) {
    float x1 = buf[i], x2 = buf[i + half];
    rope_rotate(x1, x2, cs[i]);
    out[i] = x1;
    out[i + half] = x2;
  }
  return out;
}

// Block (row, group of hpb heads), a warp a head. With kWrite, each K and V warp then encodes the
// vector it wrote into the cache (visible to its lanes after __syncwarp), E as kv_write_kernel's.
// At most 64 registers, four blocks an SM: uncapped it took 96, and two blocks an SM left too few
// warps to hide the loads (docs/bench-notes/prefill-elementwise-2026-12-07.md).
template <int E, bool kWrite>
__global__ void __launch_bounds__(kSplitWarps * 32, 4) qkv_split_kernel(QkvSplitArgs a, KvLayerCodec c, KvWriteArgs w, int hpb) {
  pdl_launch_dependents();
  pdl_wait();
  __shared__ float2 cs[kMaxQkvHeadDim / 2];
  __shared__ float buf[kSplitWarps][kMaxQkvHeadDim];
  const int r = blockIdx.x, warp = threadIdx.x >> 5, lane = threadIdx.x & 31, warps = blockDim.x >> 5;
  const float pos = static_cast<float>(a.positions[r]);
  for (int i = threadIdx.x; i < a.head_dim / 2; i += blockDim.x) cs[i] = rope_cos_sin(a.inv_freq[i], pos, a.attention_scaling);
  __syncthreads();
  const int h1 = min(a.q_heads + 2 * a.kv_heads, (blockIdx.y + 1) * hpb);
  for (int hid = blockIdx.y * hpb + warp; hid < h1; hid += warps) {  // warp-uniform
    const float* out = split_head(a, hid, r, cs, buf[warp], lane);
    __syncwarp();  // out is written and buf free
    if constexpr (kWrite) {
      if (hid >= a.q_heads) {
        const bool is_k = hid < a.q_heads + a.kv_heads;
        kv_encode::write_vector<E>(c, w, is_k, hid - a.q_heads - (is_k ? 0 : a.kv_heads), r, out, lane, buf[warp]);
        __syncwarp();
      }
    }
  }
}

// Grid and block of a split: rows x head groups, a warp a head; at least two warps, so that a
// decode step's 64 cos/sin pairs a head (head_dim 128) take one round of the block's threads.
struct SplitLaunch {
  dim3 grid, block;
  int hpb;
};
SplitLaunch split_launch(const QkvSplitArgs& a) {
  const int heads = a.q_heads + 2 * a.kv_heads, hpb = a.rows >= kRowsForRowBlocks ? heads : 1;
  return {dim3(a.rows, (heads + hpb - 1) / hpb), dim3(32 * std::clamp(hpb, 2, kSplitWarps)), hpb};
}

void check_split(const QkvSplitArgs& a) {
  if (a.head_dim <= 0 || a.head_dim > kMaxQkvHeadDim || a.head_dim % 2 != 0 || (a.q_norm == nullptr) != (a.k_norm == nullptr))
    throw Error("qkv_split: head_dim must be even and at most 256, q_norm and k_norm both set or both null", kExitInternal);
}

}  // namespace

void qkv_split(const QkvSplitArgs& a, cudaStream_t s) {
  if (a.rows <= 0) return;
  check_split(a);
  const SplitLaunch l = split_launch(a);
  launch_kernel(a.pdl, qkv_split_kernel<0, false>, l.grid, l.block, 0, s, a, KvLayerCodec{}, KvWriteArgs{}, l.hpb);
}

void qkv_split_write(const QkvSplitArgs& a, const KvLayerCodec& c, const KvWriteArgs& w, cudaStream_t s) {
  if (a.rows <= 0) return;
  check_split(a);
  if (c.kivi_residual > 0 || c.head_dim != a.head_dim || w.kv_heads != a.kv_heads || w.rows != a.rows || w.row_pos == nullptr ||
      w.row_seq == nullptr)
    throw Error("qkv_split_write: the cache write must match the split (rows, KV heads, head_dim), and kivi2 layers take "
                "qkv_split then kv_write",
                kExitInternal);
  const SplitLaunch l = split_launch(a);
  switch (a.head_dim) {
    case 64: launch_kernel(a.pdl, qkv_split_kernel<2, true>, l.grid, l.block, 0, s, a, c, w, l.hpb); break;
    case 128: launch_kernel(a.pdl, qkv_split_kernel<4, true>, l.grid, l.block, 0, s, a, c, w, l.hpb); break;
    case 256: launch_kernel(a.pdl, qkv_split_kernel<8, true>, l.grid, l.block, 0, s, a, c, w, l.hpb); break;
    default: launch_kernel(a.pdl, qkv_split_kernel<0, true>, l.grid, l.block, 0, s, a, c, w, l.hpb); break;
  }
}

}  // namespace kvgate::kernels::cuda
