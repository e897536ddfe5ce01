#include "kernels/page_tensor_maps.h"

#include <cuda_runtime.h>
#include <cudaTypedefs.h>  // PFN_cuTensorMapEncodeTiled

#include <climits>
#include <cstdint>

namespace kvgate::kernels::cuda {

namespace {

// The driver's encoder through the runtime (no link against libcuda), looked up once; null where the
// driver lacks it (before CUDA 12).
PFN_cuTensorMapEncodeTiled_v12000 encoder() {
  static const PFN_cuTensorMapEncodeTiled_v12000 fn = [] {
    void* f = nullptr;
    cudaDriverEntryPointQueryResult q{};
    if (cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &f, 12000, cudaEnableDefault, &q) != cudaSuccess ||
        q != cudaDriverEntryPointSuccess) {
      cudaGetLastError();
      return static_cast<PFN_cuTensorMapEncodeTiled_v12000>(nullptr);
    }
    return reinterpret_cast<PFN_cuTensorMapEncodeTiled_v12000>(f);
  }();
  return fn;
}

bool encode(CUtensorMap& m, const void* pool, long long rows, PFN_cuTensorMapEncodeTiled_v12000 fn) {
  if (reinterpret_cast<std::uintptr_t>(pool) % 16 != 0) return false;
  const cuuint64_t dim[2] = {128, static_cast<cuuint64_t>(rows)};
  const cuuint64_t stride[1] = {128 * 2};  // bytes from one row to the next
  const cuuint32_t box[2] = {64, 64}, elem_stride[2] = {1, 1};
  // 16-bit elements are copied, never converted: one type serves bf16 and fp16. L2 promotion of
  // 256 bytes: a box reads 64 rows of 128 contiguous bytes at a 256-byte stride.
  return fn(&m, CU_TENSOR_MAP_DATA_TYPE_UINT16, 2, const_cast<void*>(pool), dim, stride, box, elem_stride,
            CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B, CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
            CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE) == CUDA_SUCCESS;
}

}  // namespace

PageTensorMaps page_tensor_maps(const void* k_pool, const void* v_pool, long long regions) {
  PageTensorMaps m{};
  const PFN_cuTensorMapEncodeTiled_v12000 fn = encoder();
  // The kernel's row coordinate (region x 64 + row) is an int.
  if (!fn || regions <= 0 || regions > INT_MAX / 64) return m;
  m.on = encode(m.k, k_pool, regions * 64, fn) && encode(m.v, v_pool, regions * 64, fn);
  return m;
}

}  // namespace kvgate::kernels::cuda
