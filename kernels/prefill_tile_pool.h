// PrefillTilePool: the device memory and the plan of the prefill path's tile pool
// (PagedAttentionArgs::tile_pool). In engine numerics the wgmma prefill kernel of fp8 per tensor, the
// per-token-head formats and nvfp4 would decode every page it reads into bf16 term tiles, on the
// warps that then multiply them; with a pool, one pass first decodes each page of the call once per KV
// head into the pool (the ring slot's image: tiles and token scales), and the kernel copies those as
// it copies bf16 pages: the values are the same; the decode leaves the tensor cores' critical path,
// as llama.cpp converts quantized K/V to f16 before its FlashAttention kernel and vLLM's MLA
// backends gather and dequantize the cache before a chunked prefill's attention
// (docs/cuda-decoder.md, "The tile pool"). q8_0, q4_0 and TurboQuant pages become fp16 images there
// instead (values rounded to fp16, as llama.cpp's conversion rounds them), which the fp16 cache's
// kernel reads as its cache (prefill_f16_images_takes). Only in a CUDA build (KVGATE_HAVE_CUDA).
#pragma once
#if defined(KVGATE_HAVE_CUDA)
#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <vector>

#include "kernels/kv_paged_cuda.h"

namespace kvgate::kernels::cuda {

class PrefillTilePool {
 public:
  PrefillTilePool() = default;
  ~PrefillTilePool();
  PrefillTilePool(const PrefillTilePool&) = delete;
  PrefillTilePool& operator=(const PrefillTilePool&) = delete;

  // Sets a's pool fields for a call whose tiles are host `tiles` [num_tiles] over rows at host
  // positions row_pos (a's other fields as the call has them; fp16 images, prefill_f16_images_takes,
  // also size a block table by a.max_pages): the plan (each sequence of the tiles,
  // once, with its last position + 1) copied to the device on stream s, and the pool grown to the
  // plan's pages (cudaFree/cudaMalloc: never while s is being captured). Clears them and returns false
  // when the call takes no pool (prefill_tile_pool_takes) or the device has no memory for it (the
  // kernel then decodes its pages itself: the same values).
  bool prepare(const KvLayerCodec& codec, PagedAttentionArgs& a, const AttentionTile* tiles, int num_tiles, const int* row_pos,
               cudaStream_t s);
  // The pool's device bytes (0 before a call took it).
  std::size_t bytes() const { return pool_bytes_; }

 private:
  std::uint8_t* pool_ = nullptr;
  std::size_t pool_bytes_ = 0;
  int* plan_ = nullptr;
  std::size_t plan_ints_ = 0;
  std::vector<int> host_plan_;
};

}  // namespace kvgate::kernels::cuda
#endif
