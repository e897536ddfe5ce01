// kv_write (kv_paged_cuda.h): one warp encodes one (row, KV head) vector of K or V into its slot
// (kv_encode.cuh); kivi2 layers then quantize in place (kivi_quantize_kernel). Built with
// -fmad=false (kernels/CMakeLists.txt) so no multiply-add is contracted: the bytes equal the host
// codec's.
#include <string>

#include "harness/core/error.h"
#include "kernels/cuda_check.cuh"
#include "kernels/kv_encode.cuh"
#include "kernels/pdl.cuh"

namespace kvgate::kernels::cuda {

namespace {

constexpr int kWriteWarps = 4;

// One warp per (row, KV head, K or V) vector. E: head_dim / 32 for the parallel path (2, 4, 8);
// 0 for other head sizes, which take the serial path (kv_encode.cuh).
template <int E>
__global__ void __launch_bounds__(32 * kWriteWarps) kv_write_kernel(KvLayerCodec c, KvWriteArgs a) {
  pdl_launch_dependents();
  pdl_wait();
  __shared__ float xs[kWriteWarps][kMaxHeadDim];
  const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
  const int idx = blockIdx.x * kWriteWarps + warp;
  if (idx >= a.rows * a.kv_heads * 2) return;
  const bool is_k = (idx & 1) == 0;
  const int head = (idx >> 1) % a.kv_heads, r = (idx >> 1) / a.kv_heads;
  const float* src = (is_k ? a.k : a.v) + (static_cast<std::int64_t>(r) * a.kv_heads + head) * c.head_dim;
  kv_encode::write_vector<E>(c, a, is_k, head, r, src, lane, xs[warp]);
}

// kivi2 (materialized, kv_paged_cuda.h): KiviKvStore::append's rule for the count n = pos + 1 each
// row reaches, after every row's inputs are in their slots. One thread per (row, KV head, unit):
// units 0 .. d-1 are key channels (when n % R == 0: the R/G groups of tokens n-R .. n-1, G tokens
// each), units d .. d + d/G - 1 value channel groups (when n > R: token n-R-1). Each slot element
// is read and written by one thread only, and each unit is quantized once (a position is appended
// once), so the slots are encoded from the inputs, as the store encodes them.
__global__ void kivi_quantize_kernel(KvLayerCodec c, KvWriteArgs a) {
  const int d = c.head_dim, g = c.kivi_group, r = c.kivi_residual, units = d + d / g;
  const std::int64_t idx = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (idx >= static_cast<std::int64_t>(a.rows) * a.kv_heads * units) return;
  const int unit = static_cast<int>(idx % units), head = static_cast<int>(idx / units % a.kv_heads);
  const int row = static_cast<int>(idx / units / a.kv_heads);
  const int n = a.row_pos[row] + 1, seq = a.row_seq[row];
  const bool key = unit < d;
  if (key ? n % r != 0 : n <= r) return;
  auto slot = [&](std::uint8_t* pool, int t) {
    const int page = a.block_table[static_cast<std::int64_t>(seq) * a.max_pages + t / a.page_tokens];
    const std::int64_t at = (static_cast<std::int64_t>(page) * a.kv_heads + head) * a.page_tokens + t % a.page_tokens;
    return reinterpret_cast<float*>(pool) + at * d;
  };
  float x[kMaxHeadDim];                 // g <= head_dim (kv_format.cpp)
  std::uint8_t codes[kMaxHeadDim / 4];  // packed_bytes(g, 2)
  auto requantize = [&] {
    for (int i = 0; i < packed_bytes(g, c.kivi_bits); ++i) codes[i] = 0;
    std::uint16_t scale, mn;
    kivi_encode_group(x, 1, g, c.kivi_bits, codes, &scale, &mn);
    kivi_decode_group(codes, g, c.kivi_bits, scale, mn, x, 1);
  };
  if (key) {
    for (int t0 = n - r; t0 < n; t0 += g) {
      for (int i = 0; i < g; ++i) x[i] = slot(a.k_pool, t0 + i)[unit];
      requantize();
      for (int i = 0; i < g; ++i) slot(a.k_pool, t0 + i)[unit] = x[i];
    }
  } else {
    float* v = slot(a.v_pool, n - r - 1) + (unit - d) * g;
    for (int i = 0; i < g; ++i) x[i] = v[i];
    requantize();
    for (int i = 0; i < g; ++i) v[i] = x[i];
  }
}

}  // namespace

void kv_write(const KvLayerCodec& codec, const KvWriteArgs& a, cudaStream_t s) {
  if (a.rows <= 0) return;
  if (codec.head_dim > kMaxHeadDim) throw Error("kv_write: head_dim above " + std::to_string(kMaxHeadDim), kExitInternal);
  const int vectors = a.rows * a.kv_heads * 2;
  const dim3 grid((vectors + kWriteWarps - 1) / kWriteWarps), block(32 * kWriteWarps);
  switch (codec.head_dim) {
    case 64: launch_kernel(a.pdl, kv_write_kernel<2>, grid, block, 0, s, codec, a); break;
    case 128: launch_kernel(a.pdl, kv_write_kernel<4>, grid, block, 0, s, codec, a); break;
    case 256: launch_kernel(a.pdl, kv_write_kernel<8>, grid, block, 0, s, codec, a); break;
    default: launch_kernel(a.pdl, kv_write_kernel<0>, grid, block, 0, s, codec, a); break;
  }
  if (codec.kivi_residual > 0) {  // an ordinary launch: it waits for kv_write to complete
    const int d = codec.head_dim, g = codec.kivi_group;
    if (codec.family != KvFamily::kF32 || codec.kivi_bits != 2 || g <= 0 || d % g != 0 || codec.kivi_residual % g != 0)
      throw Error("kv_write: invalid kivi2 layer codec", kExitInternal);
    const std::int64_t units = static_cast<std::int64_t>(a.rows) * a.kv_heads * (d + d / g);
    const int qthreads = 128;
    kivi_quantize_kernel<<<static_cast<unsigned>((units + qthreads - 1) / qthreads), qthreads, 0, s>>>(codec, a);
    KV_CUDA_CHECK_LAUNCH();
  }
}

}  // namespace kvgate::kernels::cuda
