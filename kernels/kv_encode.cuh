// kv_write's encoders (kv_write.cu, qkv_split.cu): one (row, KV head) vector of K or V into its
// cache slot with the same __host__ __device__ codec functions as the host stores. Include only in
// translation units built with -fmad=false (kernels/CMakeLists.txt): no multiply-add is contracted,
// so the bytes equal the host codec's.
//
// write_vector<E>: one warp a vector. At head_dim 64, 128 and 256 (E = head_dim / 32), lane l
// holds elements l*E .. l*E + E - 1; the element-wise formats and the per-token-head ones (a scale
// from the vector's absmax or min/max, a warp reduction, then per element) encode in parallel with
// the codec's per-vector and per-element functions (codec_per_token_head.h); int4_per_token_head's
// Hadamard transform runs the serial butterfly's stages across the lanes (each butterfly computes
// the same a + b and a - b). Other formats (block-wise, rotated by blocks, TurboQuant, NVFP4) and
// head sizes (E = 0) stage the vector in shared memory and lane 0 runs the serial codec. A decode
// step writes a handful of vectors, so the parallel path turns a 128-iteration serial loop per
// vector into a few round trips (one thread a vector took 20 us a layer at batch 1, as long as the
// layer's qkv GEMV).
#pragma once
#include "kernels/kv_codecs.h"
#include "kernels/kv_paged_cuda.h"

namespace kvgate::kernels::cuda::kv_encode {

__device__ inline void encode_slot(const KvLayerCodec& c, bool is_k, int head, float* x, float* scratch, std::uint8_t* out) {
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

// Whether the warp-parallel path takes this layer's format (E = head_dim / 32 elements a lane, 2, 4
// or 8): the slot sizes it writes, and for the 4-bit Hadamard transform E a power of two (it is).
__device__ inline bool parallel_family(const KvLayerCodec& c) {
  const int d = c.head_dim;
  switch (c.family) {
    case KvFamily::kF32: return c.k_bytes == 4 * d && c.v_bytes == 4 * d;
    case KvFamily::kBf16:
    case KvFamily::kF16: return c.k_bytes == 2 * d && c.v_bytes == 2 * d;
    case KvFamily::kFp8Tensor: return c.k_bytes == d && c.v_bytes == d;
    case KvFamily::kFp8Pth:
    case KvFamily::kInt8Pth: return c.k_bytes == d + 4 && c.v_bytes == d + 4;
    case KvFamily::kInt4Pth: return c.k_bytes == d / 2 + 4 && c.v_bytes == d / 2 + 4;
    default: return false;
  }
}

// x <- H x (fwht_inplace's stages in its order) over the warp's d = 32 * E elements.
template <int E>
__device__ void warp_fwht(float (&x)[E], int lane) {
#pragma unroll
  for (int h = 1; h < E; h <<= 1)
#pragma unroll
    for (int i = 0; i < E; i += 2 * h)
#pragma unroll
      for (int j = i; j < i + h; ++j) {
        const float a = x[j], b = x[j + h];
        x[j] = a + b;
        x[j + h] = a - b;
      }
#pragma unroll
  for (int m = 1; m < 32; m <<= 1) {  // stage h = m * E pairs lane l with lane l ^ m, element for element
    const bool upper = (lane & m) != 0;
#pragma unroll
    for (int j = 0; j < E; ++j) {
      const float other = __shfl_xor_sync(0xffffffffu, x[j], m);
      x[j] = upper ? other - x[j] : x[j] + other;
    }
  }
}

__device__ inline float warp_max(float v) {
  for (int o = 16; o > 0; o >>= 1) v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, o));
  return v;
}
__device__ inline float warp_min(float v) {
  for (int o = 16; o > 0; o >>= 1) v = fminf(v, __shfl_xor_sync(0xffffffffu, v, o));
  return v;
}

// The parallel encoders: the lane's x[0 .. E) are elements i0 .. i0 + E - 1 of the vector.
template <int E>
__device__ void encode_parallel(const KvLayerCodec& c, bool is_k, int head, float (&x)[E], int lane, std::uint8_t* out) {
  const int d = c.head_dim, i0 = lane * E;
  switch (c.family) {
    case KvFamily::kF32:
#pragma unroll
      for (int j = 0; j < E; ++j) store_f32_le(out + 4 * (i0 + j), x[j]);
      break;
    case KvFamily::kBf16:
#pragma unroll
      for (int j = 0; j < E; ++j) store_u16_le(out + 2 * (i0 + j), f32_to_bf16(x[j]));
      break;
    case KvFamily::kF16:
#pragma unroll
      for (int j = 0; j < E; ++j) store_u16_le(out + 2 * (i0 + j), f32_to_f16(x[j]));
      break;
    case KvFamily::kFp8Tensor: {
      const float scale = (is_k ? c.k_scales : c.v_scales)[head];
#pragma unroll
      for (int j = 0; j < E; ++j) out[i0 + j] = fp8_tensor_encode(x[j], scale, c.fp8_kind);
      break;
    }
    case KvFamily::kFp8Pth:
    case KvFamily::kInt8Pth: {
      float amax = 0.0f;
#pragma unroll
      for (int j = 0; j < E; ++j) amax = fmaxf(amax, fabsf(x[j]));
      const bool fp8 = c.family == KvFamily::kFp8Pth;
      const float scale = pth_scale(warp_max(amax), fp8 ? kFp8E4M3Max : 127.0f), inv = 1.0f / scale;
#pragma unroll
      for (int j = 0; j < E; ++j)
        out[i0 + j] = fp8 ? fp8_pth_code(x[j], inv) : static_cast<std::uint8_t>(int8_pth_code(x[j], inv, c.rounding));
      if (lane == 0) store_f32_le(out + d, scale);
      break;
    }
    case KvFamily::kInt4Pth: {
      if (c.signs) {
#pragma unroll
        for (int j = 0; j < E; ++j) x[j] *= c.signs[i0 + j];
        warp_fwht<E>(x, lane);
        if (c.round_bf16)
#pragma unroll
          for (int j = 0; j < E; ++j) x[j] = bf16_to_f32(f32_to_bf16(x[j]));
      }
      float mn = x[0], mx = x[0];
#pragma unroll
      for (int j = 1; j < E; ++j) {
        mn = fminf(mn, x[j]);
        mx = fmaxf(mx, x[j]);
      }
      const Int4PthParams p = int4_pth_params(warp_min(mn), warp_max(mx));
#pragma unroll
      for (int j = 0; j < E; j += 2) out[(i0 + j) / 2] = int4_pth_byte(x[j], x[j + 1], p);
      if (lane == 0) store_u32_le(out + d / 2, int4_pth_word(p));
      break;
    }
    default:
      break;
  }
}

// Warp-wide: encodes vector src (head_dim floats, as the forward wrote them) of row r, KV head
// `head`, K (is_k) or V, into its slot, and folds its absmax into a.absmax. Every lane calls it.
template <int E>
__device__ void write_vector(const KvLayerCodec& c, const KvWriteArgs& a, bool is_k, int head, int r, const float* src, int lane,
                             float* xs) {
  const int d = c.head_dim;
  const bool round = c.round_bf16 || c.family == KvFamily::kBf16;
  const int pos = a.row_pos[r], seq = a.row_seq[r];
  const int page = a.block_table[static_cast<std::int64_t>(seq) * a.max_pages + pos / a.page_tokens];
  const int bytes = is_k ? c.k_bytes : c.v_bytes;
  std::uint8_t* out = (is_k ? a.k_pool : a.v_pool) +
                      ((static_cast<std::int64_t>(page) * a.kv_heads + head) * a.page_tokens + pos % a.page_tokens) * bytes;
  float amax = 0.0f;
  bool done = false;
  if constexpr (E > 0) {
    if (parallel_family(c)) {
      float x[E];
#pragma unroll
      for (int j = 0; j < E; ++j) {
        const float v = src[lane * E + j];
        x[j] = round ? bf16_to_f32(f32_to_bf16(v)) : v;
        amax = fmaxf(amax, fabsf(x[j]));
      }
      encode_parallel<E>(c, is_k, head, x, lane, out);
      done = true;
    }
  }
  if (!done) {  // the serial codec on the vector staged in shared memory (xs: head_dim floats)
    for (int i = lane; i < d; i += 32) {
      xs[i] = round ? bf16_to_f32(f32_to_bf16(src[i])) : src[i];
      amax = fmaxf(amax, fabsf(xs[i]));
    }
    for (int i = lane; i < bytes; i += 32) out[i] = 0;  // the codecs OR packed codes into zeroed bytes
    __syncwarp();
    if (lane == 0) {
      float scratch[kMaxHeadDim];
      encode_slot(c, is_k, head, xs, scratch, out);
    }
  }
  amax = warp_max(amax);
  if (a.absmax && lane == 0) atomicMax(reinterpret_cast<int*>(a.absmax + head * 2 + (is_k ? 0 : 1)), __float_as_int(amax));
}

}  // namespace kvgate::kernels::cuda::kv_encode
