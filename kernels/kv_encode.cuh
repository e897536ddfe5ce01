// kv_write's encoders (kv_write.cu, qkv_split.cu): one (row, KV head) vector of K or V into its
// cache slot with the same __host__ __device__ codec functions as the host stores. Include only in
// translation units built with -fmad=false (kernels/CMakeLists.txt): no multiply-add is contracted,
// so the bytes equal the host codec's.
//
// write_vector<E>: one warp a vector. At head_dim 64, 128 and 256 (E = head_dim / 32), lane l
// holds elements l*E .. l*E + E - 1 and every format encodes in parallel with the codec's own
// per-vector and per-element arithmetic: the element-wise formats; the per-token-head ones (a scale
// from the vector's absmax or min/max, a warp reduction, then per element;
// codec_per_token_head.h); q8_0/q4_0 and NVFP4 (a block's scale reduced over its lanes, q4_0's
// "first of the largest magnitude" by index); TurboQuant (values' min/max, keys' codebook search
// per element). Hadamard transforms (int4_per_token_head's, llama.cpp's block rotations, TurboQuant
// keys') run the serial butterfly's stages across the lanes (each butterfly computes the same a + b
// and a - b). Sums whose fp32 order the host fixes (TurboQuant's key norm) run on one lane; packed
// codes are staged in shared memory and each byte written once. Other head sizes (E = 0) stage the
// vector in shared memory and lane 0 runs the serial codec. A prefill chunk writes tens of
// thousands of vectors, which on one lane each cost a codec format up to a third of its prefill's
// kernel time (docs/bench-notes/prefill-encoders-2026-12-07.md); a decode step writes a handful, and
// the parallel path turns each one's 128-iteration serial loop into a few round trips (one thread a
// vector took 20 us a layer at batch 1, as long as the layer's qkv GEMV).
#pragma once
#include <climits>

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
    case KvFamily::kQ8_0:
    case KvFamily::kQ4_0: {
      const int bb = (c.family == KvFamily::kQ8_0 ? kQ8_0Bytes : kQ4_0Bytes) * (d / kGgmlBlock);
      const auto rot_ok = [&](int n) { return n == 0 || (is_power_of_two(n) && n >= d / 32 && d % n == 0); };
      return c.k_bytes == bb && c.v_bytes == bb && rot_ok(c.k_rot) && rot_ok(c.v_rot);
    }
    case KvFamily::kNvfp4: return c.k_bytes == d / 2 + d / kNvfp4Block && c.v_bytes == d / 2 + d / kNvfp4Block;
    case KvFamily::kTqFp8Key:
    case KvFamily::kTqMse:
      return c.k_bytes == (c.family == KvFamily::kTqFp8Key ? d : packed_bytes(d, c.key_bits) + 2) &&
             c.v_bytes >= packed_bytes(d, c.value_bits) + 4 && (c.family == KvFamily::kTqFp8Key || c.midpoints != nullptr);
    default: return false;
  }
}

// x <- H_n x on each block of n elements (fwht_inplace's stages in its order; n a power of two from E
// to the warp's d = 32 * E elements): stages h < E within a lane, h = m * E across lanes l and l ^ m.
template <int E>
__device__ void warp_fwht(float (&x)[E], int lane, int n = 32 * E) {
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
  for (int m = 1; m < 32 && m * E < n; m <<= 1) {  // stage h = m * E pairs lane l with lane l ^ m, element for element
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

// The maximum over each aligned group of `lanes` lanes (a power of two).
__device__ inline float group_max(float v, int lanes) {
  for (int o = lanes / 2; o > 0; o >>= 1) v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, o));
  return v;
}

// codes[0 .. n) (one byte an element, staged in shared memory) packed as pack_code_le packs them
// (element i at bit i * bits, little-endian), each byte built by one lane and written once: the
// serial codec ORs codes into zeroed bytes, a read back from the cache per code.
__device__ inline void warp_pack_codes(const std::uint8_t* codes, int n, int bits, std::uint8_t* out, int lane) {
  const unsigned mask = (1u << bits) - 1u;
  for (int b = lane; b < packed_bytes(n, bits); b += 32) {
    unsigned v = 0;
    const int last = min(n - 1, (8 * b + 7) / bits);
    for (int i = 8 * b / bits; i <= last; ++i) {
      const int shift = i * bits - 8 * b;  // negative: the code's high bits, begun in the byte before
      const unsigned code = codes[i] & mask;
      v |= shift >= 0 ? code << shift : code >> -shift;
    }
    out[b] = static_cast<std::uint8_t>(v);
  }
}

// q8_0 / q4_0 (codec_ggml.h) on the warp: the block rotation, then each 32-element block's scale
// from its 32 / E lanes. stage: head_dim shared bytes.
template <int E>
__device__ void encode_ggml(const KvLayerCodec& c, bool is_k, float (&x)[E], int lane, std::uint8_t* stage, std::uint8_t* out) {
  const int rot = is_k ? c.k_rot : c.v_rot;
  if (rot) {  // hadamard_blocks_inplace
    warp_fwht<E>(x, lane, rot);
    const float s = 1.0f / sqrtf(static_cast<float>(rot));
#pragma unroll
    for (int j = 0; j < E; ++j) x[j] *= s;
  }
  constexpr int L = kGgmlBlock / E;  // lanes a block
  const int i0 = lane * E, k0 = i0 % kGgmlBlock;
  const bool q8 = c.family == KvFamily::kQ8_0;
  std::uint8_t* o = out + i0 / kGgmlBlock * (q8 ? kQ8_0Bytes : kQ4_0Bytes);
  if (q8) {  // q8_0_encode_block
    float amax = 0.0f;
#pragma unroll
    for (int j = 0; j < E; ++j) amax = fmaxf(amax, fabsf(x[j]));
    const float d = group_max(amax, L) / 127.0f;
    const float id = d != 0.0f ? 1.0f / d : 0.0f;
    if (k0 == 0) store_u16_le(o, f32_to_f16(d));
#pragma unroll
    for (int j = 0; j < E; ++j) o[2 + k0 + j] = static_cast<std::uint8_t>(static_cast<std::int8_t>(roundf(x[j] * id)));
    return;
  }
  // q4_0_encode_block: the signed value of largest magnitude, the first on ties (its strict <): each
  // lane's first, then the lowest index among the lanes' equal magnitudes.
  float amax = 0.0f, mx = 0.0f;
  int at = INT_MAX;
#pragma unroll
  for (int j = 0; j < E; ++j)
    if (amax < fabsf(x[j])) amax = fabsf(x[j]), mx = x[j], at = i0 + j;
  for (int sh = L / 2; sh > 0; sh >>= 1) {
    const float a2 = __shfl_xor_sync(0xffffffffu, amax, sh), m2 = __shfl_xor_sync(0xffffffffu, mx, sh);
    const int t2 = __shfl_xor_sync(0xffffffffu, at, sh);
    if (a2 > amax || (a2 == amax && t2 < at)) amax = a2, mx = m2, at = t2;
  }
  const float d = mx / -8.0f;
  const float id = d != 0.0f ? 1.0f / d : 0.0f;
  if (k0 == 0) store_u16_le(o, f32_to_f16(d));
  // Element k's nibble shares a byte with element k + 16's, in another lane: staged.
  auto* q = reinterpret_cast<std::int8_t*>(stage);
#pragma unroll
  for (int j = 0; j < E; ++j) {
    const int v = static_cast<int>(static_cast<std::int8_t>(x[j] * id + 8.5f));
    q[i0 + j] = static_cast<std::int8_t>(v < 15 ? v : 15);
  }
  __syncwarp();
  if (k0 < kGgmlBlock / 2)
#pragma unroll
    for (int j = 0; j < E; ++j) o[2 + k0 + j] = static_cast<std::uint8_t>(q[i0 + j] | (q[i0 + j + kGgmlBlock / 2] << 4));
}

// TurboQuant (codec_turboquant.h) on the warp: E4M3 keys element by element; MSE keys (the norm's
// fp32 sum in the host's order on lane 0, the rotation across the lanes, the codebook search per
// element); values (min/max reduced, then per element). bytes: the slot's K or V bytes (an even
// slot's padding is zeroed, as the serial path leaves it). stage: head_dim shared floats.
template <int E>
__device__ void encode_turboquant(const KvLayerCodec& c, bool is_k, float (&x)[E], int lane, float* stage, int bytes,
                                  std::uint8_t* out) {
  const int d = c.head_dim, i0 = lane * E;
  auto* codes = reinterpret_cast<std::uint8_t*>(stage);
  int end = 0;
  if (is_k && c.family == KvFamily::kTqFp8Key) {  // tq_key_encode_fp8
#pragma unroll
    for (int j = 0; j < E; ++j) out[i0 + j] = f32_to_fp8_e4m3(x[j]);
    end = d;
  } else if (is_k) {  // tq_key_encode_mse
#pragma unroll
    for (int j = 0; j < E; ++j) stage[i0 + j] = x[j];
    __syncwarp();
    float ss = 0.0f;
    if (lane == 0)
      for (int i = 0; i < d; ++i) ss += stage[i] * stage[i];
    const float norm = sqrtf(__shfl_sync(0xffffffffu, ss, 0));
    const float denom = norm + 1e-8f;
#pragma unroll
    for (int j = 0; j < E; ++j) x[j] = x[j] / denom;
    warp_fwht<E>(x, lane);  // hadamard_orthonormal_inplace
    const float s = 1.0f / sqrtf(static_cast<float>(d));
    const int n_mid = (1 << c.key_bits) - 1;
    __syncwarp();  // lane 0's sum has read the stage
#pragma unroll
    for (int j = 0; j < E; ++j) {
      const float y = x[j] * s;
      int idx = 0;
      while (idx < n_mid && y >= c.midpoints[idx]) ++idx;
      codes[i0 + j] = static_cast<std::uint8_t>(idx);
    }
    __syncwarp();
    warp_pack_codes(codes, d, c.key_bits, out, lane);
    end = packed_bytes(d, c.key_bits);
    if (lane == 0) store_u16_le(out + end, f32_to_f16(norm));
    end += 2;
  } else {  // tq_value_encode
    float mn = x[0], mx = x[0];
#pragma unroll
    for (int j = 1; j < E; ++j) mn = fminf(mn, x[j]), mx = fmaxf(mx, x[j]);
    mn = warp_min(mn);
    mx = warp_max(mx);
    const int qmax = (1 << c.value_bits) - 1;
    float scale = (mx - mn) / static_cast<float>(qmax);
    scale = scale > 1e-8f ? scale : 1e-8f;
#pragma unroll
    for (int j = 0; j < E; ++j) {
      const int q = static_cast<int>((x[j] - mn) / scale + 0.5f);
      codes[i0 + j] = static_cast<std::uint8_t>(q < 0 ? 0 : (q > qmax ? qmax : q));
    }
    __syncwarp();
    warp_pack_codes(codes, d, c.value_bits, out, lane);
    end = packed_bytes(d, c.value_bits);
    if (lane == 0) {
      store_u16_le(out + end, f32_to_f16(scale));
      store_u16_le(out + end + 2, f32_to_f16(mn));
    }
    end += 4;
  }
  for (int i = end + lane; i < bytes; i += 32) out[i] = 0;
}

// The parallel encoders: the lane's x[0 .. E) are elements i0 .. i0 + E - 1 of the vector.
// stage: head_dim shared floats of this warp, free.
template <int E>
__device__ void encode_parallel(const KvLayerCodec& c, bool is_k, int head, float (&x)[E], int lane, float* stage, std::uint8_t* out) {
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
    case KvFamily::kNvfp4: {  // nvfp4_encode_head: a 16-element block's scale from its 16 / E lanes
      const float inv = 1.0f / (is_k ? c.k_scales : c.v_scales)[head];
      float amax = 0.0f;
#pragma unroll
      for (int j = 0; j < E; ++j) amax = fmaxf(amax, fabsf(x[j]));
      amax = group_max(amax, kNvfp4Block / E);
      const std::uint8_t sb = f32_to_fp8_e4m3(inv * (amax * (1.0f / kE2M1Max)));
      const float sbf = fp8_e4m3_to_f32(sb);
      const float out_scale = sbf != 0.0f ? 1.0f / (sbf * (1.0f / inv)) : 0.0f;
#pragma unroll
      for (int j = 0; j < E; j += 2)
        out[(i0 + j) / 2] = static_cast<std::uint8_t>(f32_to_e2m1(x[j] * out_scale) | (f32_to_e2m1(x[j + 1] * out_scale) << 4));
      if (i0 % kNvfp4Block == 0) out[d / 2 + i0 / kNvfp4Block] = sb;
      break;
    }
    case KvFamily::kQ8_0:
    case KvFamily::kQ4_0:
      encode_ggml<E>(c, is_k, x, lane, reinterpret_cast<std::uint8_t*>(stage), out);
      break;
    case KvFamily::kTqFp8Key:
    case KvFamily::kTqMse:
      encode_turboquant<E>(c, is_k, x, lane, stage, is_k ? c.k_bytes : c.v_bytes, out);
      break;
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
      encode_parallel<E>(c, is_k, head, x, lane, xs, out);
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
