// qkv_split and qkv_split_write (decoder_cuda.h): after the fused QKV projection, one block per
// (head, row) adds the bias, applies the q/k norm and RoPE, and splits q, k and v;
// qkv_split_write also encodes each row's K and V into the paged cache (kv_encode.cuh), so a decode
// step runs one kernel where it ran qkv_split then kv_write (3.4 us a layer at batch 1).
// Built with -fmad=false, as kv_write.cu, for the cache's bytes. The split's own numbers barely
// depend on it: RoPE is written in _rn intrinsics and the norm's products are not followed by an
// add; only the norm's fp64 sum of squares is no longer contracted into a DFMA (as the CPU twin).
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

// rope_kernel's rotation of one pair (cos/sin of the fp32 angle in fp64, no FMA contraction).
__device__ void rope_pair(float& x1, float& x2, float inv_freq, float pos, float attention_scaling) {
  const float angle = __fmul_rn(inv_freq, pos);
  const float c = __fmul_rn(static_cast<float>(cos(static_cast<double>(angle))), attention_scaling);
  const float sn = __fmul_rn(static_cast<float>(sin(static_cast<double>(angle))), attention_scaling);
  const float a = x1, b = x2;
  x1 = __fsub_rn(__fmul_rn(a, c), __fmul_rn(b, sn));
  x2 = __fadd_rn(__fmul_rn(b, c), __fmul_rn(a, sn));
}

// Head hid of row r of the fused QKV output: bias, q/k norm, RoPE; V heads are copied (+ bias).
// Returns the vector written (in a.q, a.k or a.v). norm_threads(head_dim) threads, as
// rmsnorm_kernel on one head, so the reduction order is its; buf: head_dim shared floats.
__device__ float* split_head(const QkvSplitArgs& a, int hid, int r, float* buf) {
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
  } else {  // V: bias only (block-uniform branch)
    out = a.v + (static_cast<std::int64_t>(r) * a.kv_heads + (hid - a.q_heads - a.kv_heads)) * d;
    for (int i = threadIdx.x; i < d; i += blockDim.x) out[i] = bias ? src[i] + bias[i] : src[i];
    return out;
  }
  double ss = 0.0;
  for (int i = threadIdx.x; i < d; i += blockDim.x) {
    const float x = bias ? src[i] + bias[i] : src[i];
    buf[i] = x;
    ss += static_cast<double>(x) * x;
  }
  if (norm) {
    const float inv = block_inv_rms(ss, d, a.eps);  // synchronizes the block
    for (int i = threadIdx.x; i < d; i += blockDim.x) buf[i] = norm[i] * (buf[i] * inv);
  }
  __syncthreads();
  const int half = d / 2;
  const float pos = static_cast<float>(a.positions[r]);
  for (int i = threadIdx.x; i < half; i += blockDim.x) {
    float x1 = buf[i], x2 = buf[i + half];
    rope_pair(x1, x2, a.inv_freq[i], pos, a.attention_scaling);
    out[i] = x1;
    out[i + half] = x2;
  }
  return out;
}

// Block (head, row). With kWrite, the K and V blocks then encode their vector into the cache: warp
// 0 reads back what the block wrote (visible after the barrier), E as kv_write_kernel's.
template <int E, bool kWrite>
__global__ void qkv_split_kernel(QkvSplitArgs a, KvLayerCodec c, KvWriteArgs w) {
  pdl_launch_dependents();
  pdl_wait();
  __shared__ float buf[kMaxQkvHeadDim];
  const int hid = blockIdx.x, r = blockIdx.y;
  const float* out = split_head(a, hid, r, buf);
  if constexpr (kWrite) {
    if (hid < a.q_heads) return;  // block-uniform
    __syncthreads();              // out is written and buf free
    if (threadIdx.x >= 32) return;
    const bool is_k = hid < a.q_heads + a.kv_heads;
    kv_encode::write_vector<E>(c, w, is_k, hid - a.q_heads - (is_k ? 0 : a.kv_heads), r, out, threadIdx.x, buf);
  }
}

void check_split(const QkvSplitArgs& a) {
  if (a.head_dim <= 0 || a.head_dim > kMaxQkvHeadDim || a.head_dim % 2 != 0 || (a.q_norm == nullptr) != (a.k_norm == nullptr))
    throw Error("qkv_split: head_dim must be even and at most 256, q_norm and k_norm both set or both null", kExitInternal);
}

}  // namespace

void qkv_split(const QkvSplitArgs& a, cudaStream_t s) {
  if (a.rows <= 0) return;
  check_split(a);
  launch_kernel(a.pdl, qkv_split_kernel<0, false>, dim3(a.q_heads + 2 * a.kv_heads, a.rows), dim3(norm_threads(a.head_dim)), 0, s, a,
                KvLayerCodec{}, KvWriteArgs{});
}

void qkv_split_write(const QkvSplitArgs& a, const KvLayerCodec& c, const KvWriteArgs& w, cudaStream_t s) {
  if (a.rows <= 0) return;
  check_split(a);
  if (c.kivi_residual > 0 || c.head_dim != a.head_dim || w.kv_heads != a.kv_heads || w.rows != a.rows || w.row_pos == nullptr ||
      w.row_seq == nullptr)
    throw Error("qkv_split_write: the cache write must match the split (rows, KV heads, head_dim), and kivi2 layers take "
                "qkv_split then kv_write",
                kExitInternal);
  const dim3 grid(a.q_heads + 2 * a.kv_heads, a.rows), block(norm_threads(a.head_dim));
  switch (a.head_dim) {
    case 64: launch_kernel(a.pdl, qkv_split_kernel<2, true>, grid, block, 0, s, a, c, w); break;
    case 128: launch_kernel(a.pdl, qkv_split_kernel<4, true>, grid, block, 0, s, a, c, w); break;
    case 256: launch_kernel(a.pdl, qkv_split_kernel<8, true>, grid, block, 0, s, a, c, w); break;
    default: launch_kernel(a.pdl, qkv_split_kernel<0, true>, grid, block, 0, s, a, c, w); break;
  }
}

}  // namespace kvgate::kernels::cuda
