// Page decoding for the generic paged-attention kernel (paged_attention.cu): one page (64 tokens) of
// one KV head, decoded through the codec functions (kv_codecs.h) by a block of 128 threads. The
// tensor-core prefill kernel (paged_attention_prefill.cu) shares the page size and
// elementwise_family; it decodes codec slots with its own warp-per-slot code. Device code only.
#pragma once
#include <cstdint>

#include <cuda_fp16.h>
#include <cuda_fp8.h>

#include "kernels/kv_codecs.h"
#include "kernels/kv_paged_cuda.h"

namespace kvgate::kernels::cuda::page_decode {

constexpr int kTile = 64, kThreads = 128;  // tokens per page; threads of the blocks that decode
static_assert(kTile == kEmuPage, "split_pages partitions pages of kEmuPage tokens");

template <KvFamily F>
constexpr bool elementwise_family() {
  return F == KvFamily::kF32 || F == KvFamily::kBf16 || F == KvFamily::kF16 || F == KvFamily::kFp8Tensor;
}

// Element j of a plain-format slot (aligned loads: the pools are little-endian like the device).
template <KvFamily F>
__device__ __forceinline__ float decode_element(const KvLayerCodec& c, const std::uint8_t* slot, int j, float scale) {
  if constexpr (F == KvFamily::kF32) return reinterpret_cast<const float*>(slot)[j];
  else if constexpr (F == KvFamily::kBf16) return bf16_to_f32(reinterpret_cast<const std::uint16_t*>(slot)[j]);
  else if constexpr (F == KvFamily::kF16) return f16_to_f32(reinterpret_cast<const std::uint16_t*>(slot)[j]);
  else return fp8_tensor_decode(slot[j], scale, c.fp8_kind);
}

// A whole slot through the codec (one thread), into out[head_dim] (shared memory).
template <KvFamily F>
__device__ void decode_slot(const KvLayerCodec& c, bool is_k, int head, const std::uint8_t* in, float* out) {
  const int d = c.head_dim;
  if constexpr (F == KvFamily::kFp8Pth) {
    fp8_pth_decode(in, d, load_f32_le(in + d), out);
  } else if constexpr (F == KvFamily::kInt8Pth) {
    int8_pth_decode(reinterpret_cast<const std::int8_t*>(in), d, load_f32_le(in + d), out);
  } else if constexpr (F == KvFamily::kInt4Pth) {
    int4_pth_decode(in, d, load_u32_le(in + d / 2), out);
    if (c.signs) rht_inverse_inplace(out, c.signs, d);
  } else if constexpr (F == KvFamily::kNvfp4) {
    nvfp4_decode_head(in, d, (is_k ? c.k_scales : c.v_scales)[head], out);
  } else if constexpr (F == KvFamily::kQ8_0 || F == KvFamily::kQ4_0) {
    constexpr bool q8 = F == KvFamily::kQ8_0;
    constexpr int bb = q8 ? kQ8_0Bytes : kQ4_0Bytes;
    for (int b = 0; b < d / kGgmlBlock; ++b) {
      if (q8) q8_0_decode_block(in + b * bb, out + b * kGgmlBlock);
      else q4_0_decode_block(in + b * bb, out + b * kGgmlBlock);
    }
    const int rot = is_k ? c.k_rot : c.v_rot;
    if (rot) hadamard_blocks_inplace(out, d, rot);
  } else if constexpr (F == KvFamily::kTqFp8Key || F == KvFamily::kTqMse) {
    if (!is_k) tq_value_decode(in, d, c.value_bits, out);
    else if (F == KvFamily::kTqFp8Key) tq_key_decode_fp8(in, d, out);
    else tq_key_decode_mse(in, d, c.key_bits, c.centroids, c.norm_correction, out);
  }
}

// Decodes the 64 tokens of a page into the K and V tiles [64][ld]; tokens >= valid become zeros.
// Plain formats: every thread, element-parallel, straight from the (page, head) regions in global
// memory (coalesced: consecutive threads read consecutive elements). Codec formats: the regions
// were staged to shared memory; threads 0-63 decode K slots, 64-127 V slots, one slot each.
template <KvFamily F>
__device__ void decode_page(const KvLayerCodec& c, int head, const std::uint8_t* k_src, const std::uint8_t* v_src, int valid,
                            float* k_tile, float* v_tile, int ld) {
  const int d = c.head_dim;
  if constexpr (elementwise_family<F>()) {
    const float ks = F == KvFamily::kFp8Tensor ? c.k_scales[head] : 1.0f;
    const float vs = F == KvFamily::kFp8Tensor ? c.v_scales[head] : 1.0f;
    const int cols = d < kThreads ? d : kThreads, rows_step = kThreads / cols;
    for (int j = threadIdx.x % cols; j < d; j += cols)
      for (int t = threadIdx.x / cols; t < kTile; t += rows_step) {
        const bool ok = t < valid;
        k_tile[t * ld + j] = ok ? decode_element<F>(c, k_src + t * c.k_bytes, j, ks) : 0.0f;
        v_tile[t * ld + j] = ok ? decode_element<F>(c, v_src + t * c.v_bytes, j, vs) : 0.0f;
      }
  } else {
    const bool is_k = threadIdx.x < kTile;
    const int t = threadIdx.x & (kTile - 1);
    float* row = (is_k ? k_tile : v_tile) + t * ld;
    if (t < valid) decode_slot<F>(c, is_k, head, is_k ? k_src + t * c.k_bytes : v_src + t * c.v_bytes, row);
    else
      for (int j = 0; j < d; ++j) row[j] = 0.0f;
  }
}

// Copies `bytes` (a multiple of 16, both pointers 16-byte aligned) with every thread.
__device__ __forceinline__ void stage(std::uint8_t* dst, const std::uint8_t* src, int bytes) {
  const uint4* s = reinterpret_cast<const uint4*>(src);
  uint4* o = reinterpret_cast<uint4*>(dst);
  for (int i = threadIdx.x; i < bytes / 16; i += kThreads) o[i] = __ldg(s + i);
}

}  // namespace kvgate::kernels::cuda::page_decode
