// PageTensorMaps: TMA tensor maps over a 16-bit cache's K and V pools (bf16, fp16), so that the
// prefill kernel's producer lane copies a page's rows into wgmma's 128-byte-swizzled tiles with a few
// tensor copies (cp.async.bulk.tensor), as FlashAttention-3 loads its K and V, where 32 lanes would
// issue 16-byte cp.async copies. Only in a CUDA build (KVGATE_HAVE_CUDA).
#pragma once
#if defined(KVGATE_HAVE_CUDA)
#include <cuda.h>  // CUtensorMap (a header type: the driver's encoder is found at run time)

namespace kvgate::kernels::cuda {

// A pool of `regions` (pages x KV heads) regions, each 64 rows of 128 16-bit elements (256 bytes a
// row), as the tensor [regions x 64 rows][128 columns]: its box is 64 rows x 64 columns (one
// 128-byte-wide panel of a tile), written to shared memory in the 128-byte swizzle.
struct PageTensorMaps {
  CUtensorMap k, v;
  bool on = false;  // false: no maps (the kernel copies pages with cp.async)
};

// The maps of pools k_pool and v_pool of `regions` regions each; on is false where they cannot be
// made (the driver has no tensor-map encoder, a pool is not 16-byte aligned, or rows outside int
// coordinates), and the caller then copies pages without them.
PageTensorMaps page_tensor_maps(const void* k_pool, const void* v_pool, long long regions);

}  // namespace kvgate::kernels::cuda
#endif
