// The decode fast path of paged_attention (kv_paged_cuda.h): head_dim 128, tiles of at most 4 query
// vectors, or of one row with GQA up to 16 (decode steps; a block takes 4 of a tile's vectors), every
// slot format but fp32 (and kivi2, stored as fp32). paged_attention() dispatches here when
// decode_attention_supported() says so; the rest runs the prefill or the generic kernel.
// Only in a CUDA build (KVGATE_HAVE_CUDA).
#pragma once
#if defined(KVGATE_HAVE_CUDA)
#include <cuda_runtime.h>

#include "kernels/kv_paged_cuda.h"

namespace kvgate::kernels::cuda {

// True when decode_attention() takes a call of this codec with tiles of at most max_tile_rows rows
// of `group` query vectors each (heads / kv_heads).
bool decode_attention_supported(const KvLayerCodec& codec, int max_tile_rows, int group);

// True when the tensor-core kernel takes this codec (bf16, fp16, fp8 with per-tensor scales, fp8,
// int8 and int4 per token head, q8_0, q4_0, nvfp4, turboquant_k8v4); the others (TurboQuant's
// Lloyd-Max keys) run the CUDA-core kernel (PagedAttentionArgs::decode).
bool decode_tensor_core_takes(const KvLayerCodec& codec);

// The split-K attention and its merge into a.out, for `splits` splits (workspace sized by
// attention_workspace_floats for that count).
void decode_attention(const KvLayerCodec& codec, const PagedAttentionArgs& a, int splits, cudaStream_t s);

}  // namespace kvgate::kernels::cuda
#endif
