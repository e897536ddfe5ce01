// kv_write (kv_paged_cuda.h): one thread encodes one (row, KV head) vector of K or V into its slot
// with the same __host__ __device__ codec functions as the host stores; kivi2 layers then quantize
// in place (kivi_quantize_kernel). Built with -fmad=false (kernels/CMakeLists.txt) so no
// multiply-add is contracted: the bytes equal the host codec's.
#include <string>

#include "core/error.h"
#include "cuda_check.cuh"
#include "pdl.cuh"
#include "kv_codecs.h"
#include "kv_paged_cuda.h"

namespace kvgate::kernels::cuda {

namespace {

__device__ void encode_slot(const KvLayerCodec& c, bool is_k, int head, float* x, float* scratch, std::uint8_t* out) {
  const int d = c.head_dim;
  switch (c.family) {
    case KvFamily::kF32:
      for (int i = 0; i < d; ++i) store_f32_le(out + 4 * i, x[i]);
      break;
    case KvFamily::kBf16:
      for (int i = 0; i < d; ++i) store_u16_le(out + 2 * i, f32_to_bf16(x[i]));
      break;
    case KvFamily::kF16:
      for (int i = 0; i < d; ++i) store_u16_le(out + 2 * i, f32_to_f16(x[i]));
      break;
    case KvFamily::kFp8Tensor:
      fp8_tensor_encode_row(x, d, (is_k ? c.k_scales : c.v_scales)[head], c.fp8_kind, out);
      break;
    case KvFamily::kFp8Pth:
      store_f32_le(out + d, fp8_pth_encode(x, d, out));
      break;
    case KvFamily::kInt8Pth:
      store_f32_le(out + d, int8_pth_encode(x, d, c.rounding, reinterpret_cast<std::int8_t*>(out)));
      break;
    case KvFamily::kInt4Pth:
      if (c.signs) {
        rht_forward_inplace(x, c.signs, d);
        if (c.round_bf16)
          for (int i = 0; i < d; ++i) x[i] = bf16_to_f32(f32_to_bf16(x[i]));
      }
      store_u32_le(out + d / 2, int4_pth_encode(x, d, out));
      break;
    case KvFamily::kNvfp4:
      nvfp4_encode_head(x, d, (is_k ? c.k_scales : c.v_scales)[head], out);
      break;
    case KvFamily::kQ8_0:
    case KvFamily::kQ4_0: {
      const int rot = is_k ? c.k_rot : c.v_rot;
      if (rot) hadamard_blocks_inplace(x, d, rot);
      const bool q8 = c.family == KvFamily::kQ8_0;
      const int bb = q8 ? kQ8_0Bytes : kQ4_0Bytes;
      for (int b = 0; b < d / kGgmlBlock; ++b) {
        if (q8) q8_0_encode_block(x + b * kGgmlBlock, out + b * bb);
        else q4_0_encode_block(x + b * kGgmlBlock, out + b * bb);
      }
      break;
    }
    case KvFamily::kTqFp8Key:
    case KvFamily::kTqMse:
      if (!is_k) tq_value_encode(x, d, c.value_bits, out);
      else if (c.family == KvFamily::kTqFp8Key) tq_key_encode_fp8(x, d, out);
      else tq_key_encode_mse(x, d, c.key_bits, c.midpoints, scratch, out);
      break;
    default:
      break;
  }
}

__global__ void kv_write_kernel(KvLayerCodec c, KvWriteArgs a) {
  pdl_launch_dependents();
  pdl_wait();
  const int idx = blockIdx.x * blockDim.x + threadIdx.x;
  if (idx >= a.rows * a.kv_heads * 2) return;
  const bool is_k = (idx & 1) == 0;
  const int head = (idx >> 1) % a.kv_heads, r = (idx >> 1) / a.kv_heads;
  const int d = c.head_dim;
  float x[kMaxHeadDim], scratch[kMaxHeadDim];
  const float* src = (is_k ? a.k : a.v) + (static_cast<std::int64_t>(r) * a.kv_heads + head) * d;
  float amax = 0.0f;
  for (int i = 0; i < d; ++i) {
    x[i] = c.round_bf16 || c.family == KvFamily::kBf16 ? bf16_to_f32(f32_to_bf16(src[i])) : src[i];
    amax = fmaxf(amax, fabsf(x[i]));
  }
  const int pos = a.row_pos[r], seq = a.row_seq[r];
  const int page = a.block_table[static_cast<std::int64_t>(seq) * a.max_pages + pos / a.page_tokens];
  const int bytes = is_k ? c.k_bytes : c.v_bytes;
  std::uint8_t* out = (is_k ? a.k_pool : a.v_pool) +
                      ((static_cast<std::int64_t>(page) * a.kv_heads + head) * a.page_tokens + pos % a.page_tokens) * bytes;
  for (int i = 0; i < bytes; ++i) out[i] = 0;
  encode_slot(c, is_k, head, x, scratch, out);
  if (a.absmax) atomicMax(reinterpret_cast<int*>(a.absmax + head * 2 + (is_k ? 0 : 1)), __float_as_int(amax));
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
  const int n = a.rows * a.kv_heads * 2, threads = 64;
  launch_kernel(a.pdl, kv_write_kernel, dim3((n + threads - 1) / threads), dim3(threads), 0, s, codec, a);
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
