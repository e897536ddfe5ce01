// The tensor-core prefill path of paged_attention (kv_paged_cuda.h): tiles of several query rows
// (prefill chunks) with head_dim 64 or 128, every slot format but fp32 (and kivi2, stored as fp32), in
// exact or engine numerics (attention_emulation.h; of the emulation switches only FlashAttention-3's fp8 Q
// and P under engine numerics, fp8_operands_fast), on sm_80 or newer (head_dim 128 on compute capability 9.0: the
// wgmma kernel, unless "prefill": "mma_sync"). paged_attention() dispatches here when
// prefill_attention_supported() says so (and the "prefill": "generic" switch is off); the rest runs
// the generic shared-memory kernel. Only in a CUDA build (KVGATE_HAVE_CUDA).
#pragma once
#if defined(KVGATE_HAVE_CUDA)
#include <cuda_runtime.h>

#include <cstddef>

#include "kernels/kv_paged_cuda.h"

namespace kvgate::kernels::cuda {

// True when prefill_attention() takes this call (codec, shape, tile rows, device).
bool prefill_attention_supported(const KvLayerCodec& codec, const PagedAttentionArgs& a);

// The split count prefill_attention() uses when paged_attention() would use `splits` (never more,
// so the workspace sized for `splits` suffices): a.splits when fixed, else enough blocks for about
// one wave (the blocks per multiprocessor depend on the codec).
int prefill_attention_splits(const KvLayerCodec& codec, const PagedAttentionArgs& a, int splits);

// Writes each tile's partial results per split into a.workspace in the generic kernel's layout
// ((m, l) and the unnormalized accumulator per query vector); paged_attention() merges them.
void prefill_attention(const KvLayerCodec& codec, const PagedAttentionArgs& a, int splits, cudaStream_t s);

// A tile-pool page (one page of one KV head, prefill_tile_pool.h): the ring slot's image, K's and V's
// bf16 term tiles (64 tokens x head_dim 128, wgmma's swizzle), then K's and V's 64 token scales.
inline constexpr std::size_t kTilePoolPageBytes = 2 * 64 * 128 * 2 + 2 * 64 * 4;

// True when prefill_attention() would take this call's pages from a tile pool given one: engine
// numerics on the wgmma kernel (head_dim 128, compute capability 9.0) for the formats it decodes into
// one-term tiles (fp8 per tensor, fp8/int8/int4 per token head, nvfp4) or into fp16 images
// (prefill_f16_images_takes), no window (a windowed layer reads a few pages of a long sequence: the
// kernel decodes them itself).
bool prefill_tile_pool_takes(const KvLayerCodec& codec, const PagedAttentionArgs& a);

// True when a tile pool makes prefill_attention() take 128 keys a step where the kernel decoding its
// own pages takes 64 (fp8 per tensor, nvfp4): the same products, but each softmax weight is rounded
// to bf16 against another running maximum, so the two agree to bf16 rounding, not bit for bit.
bool prefill_pool_pairs_takes(const KvLayerCodec& codec, const PagedAttentionArgs& a);

// True when prefill_attention() copies this call's whole pages by TMA (page_tensor_maps.h): engine
// numerics on the wgmma kernel's bf16 ring (bf16, fp16, and the fp16 images of q8_0, q4_0 and
// TurboQuant), a.cache_pages given, and a driver that encodes tensor maps; partial pages still go by
// cp.async. The same tiles either way, so the same output bits as with a.cache_pages 0.
bool prefill_page_maps_takes(const KvLayerCodec& codec, const PagedAttentionArgs& a);

// True when prefill_attention() computes this call with fp16 operands: an fp16 cache in engine
// numerics on the wgmma kernel (head_dim 128, compute capability 9.0), a.prefill_f16 set, without
// FlashAttention-3's fp8 Q and P. Q's and P's bf16 values and the fp16 elements are exact in fp16, so
// one MMA gives each product the two-term bf16 tiles give in two.
bool prefill_f16_operands_takes(const KvLayerCodec& codec, const PagedAttentionArgs& a);

// True when prefill_attention() would, given a tile pool, first decode the call's pages of a q8_0,
// q4_0 or TurboQuant cache into fp16 images in the model's basis (values rounded to fp16, as
// llama.cpp's FlashAttention converts a quantized cache to f16 for its tensor-core kernels) and then
// run the fp16 cache's kernel on them: engine numerics on the wgmma kernel (head_dim 128, compute
// capability 9.0), a.prefill_f16 set, no window, without FlashAttention-3's fp8 Q and P. With
// a.tile_pool null it reports what a pool would allow (prefill_tile_pool_takes then holds too).
bool prefill_f16_images_takes(const KvLayerCodec& codec, const PagedAttentionArgs& a);
// The bytes of the pool's block table for fp16 images (PagedAttentionArgs::pool_table): sequences up
// to max_seq, max_pages entries each.
inline std::size_t f16_image_table_bytes(int max_seq, int max_pages) {
  return static_cast<std::size_t>(max_seq + 1) * static_cast<std::size_t>(max_pages) * sizeof(int);
}

}  // namespace kvgate::kernels::cuda
#endif
