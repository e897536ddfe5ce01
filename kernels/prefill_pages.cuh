// prefill_pages.cuh: a page of the paged cache into the prefill kernels' bf16 term tiles - the
// codec formats' rows decoded a warp per token slot, and the page copies into the ring.
// Part of paged_attention_prefill.cu, its only includer: the prefill kernels' definitions stay in one
// translation unit (internal linkage, so ptxas inlines and specializes them as one file).

#pragma once

#include <cstdint>

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>

#include "kernels/cp_async.cuh"
#include "kernels/prefill_terms.cuh"

namespace kvgate::kernels::cuda {

namespace {

// Two E4M3 codes (2-byte aligned) widened by the hardware: exact, as fp8_e4m3_to_f32.
__device__ __forceinline__ void e4m3_pair(const std::uint8_t* p, float& x0, float& x1) {
  const __half2_raw h = __nv_cvt_fp8x2_to_halfraw2(*reinterpret_cast<const __nv_fp8x2_storage_t*>(p), __NV_E4M3);
  const float2 f = __half22float2(__half2(h));
  x0 = f.x, x1 = f.y;
}

// q8_0 / q4_0: the codes of elements j, j + 1 of a slot (q4_0: code - 8; element i in the low nibble
// of qs[i], i + 16 in the high) and their block's scale d.
template <KvFamily F>
__device__ __forceinline__ float block_code_pair(const std::uint8_t* s, int j, float& x0, float& x1) {
  const int i = j % kGgmlBlock;
  if constexpr (F == KvFamily::kQ8_0) {
    const std::uint8_t* b = s + (j / kGgmlBlock) * kQ8_0Bytes;
    x0 = static_cast<float>(static_cast<std::int8_t>(b[2 + i])), x1 = static_cast<float>(static_cast<std::int8_t>(b[3 + i]));
    return f16_to_f32(load_u16_le(b));
  } else {
    const std::uint8_t* b = s + (j / kGgmlBlock) * kQ4_0Bytes;
    const int sh = i < kGgmlBlock / 2 ? 0 : 4, q = i % (kGgmlBlock / 2);
    x0 = static_cast<float>(((b[2 + q] >> sh) & 0xF) - 8), x1 = static_cast<float>(((b[3 + q] >> sh) & 0xF) - 8);
    return f16_to_f32(load_u16_le(b));
  }
}

// Lane `lane`'s elements of one staged slot (x[2k], x[2k + 1] = elements 64k + 2 lane, + 1), in the
// codec's arithmetic but before its rotation (rotations()); per-token-head formats give the codes
// (int4: code - zero point) and the token's scale. The same values as kv_codecs.h's decoders.
template <KvFamily F, int D>
__device__ __forceinline__ void codec_row(const KvLayerCodec& c, bool is_k, int kvh, const std::uint8_t* s, int lane,
                                          float (&x)[D / 32], float& scale) {
#pragma unroll
  for (int k = 0; k < D / 64; ++k) {
    const int j = 64 * k + 2 * lane;
    float& x0 = x[2 * k];
    float& x1 = x[2 * k + 1];
    if constexpr (F == KvFamily::kFp8Pth) {
      e4m3_pair(s + j, x0, x1);
    } else if constexpr (F == KvFamily::kInt8Pth) {
      x0 = static_cast<float>(static_cast<std::int8_t>(s[j])), x1 = static_cast<float>(static_cast<std::int8_t>(s[j + 1]));
    } else if constexpr (F == KvFamily::kInt4Pth) {
      const float zp = static_cast<float>(s[D / 2] & 0xFu);  // the scale word's low nibble
      x0 = static_cast<float>(s[j / 2] & 0xFu) - zp, x1 = static_cast<float>(s[j / 2] >> 4) - zp;
    } else if constexpr (F == KvFamily::kNvfp4) {  // e2m1 x the block's E4M3 scale: exact in bf16
      const float sb = fp8_e4m3_to_f32(s[D / 2 + j / kNvfp4Block]);
      x0 = e2m1_to_f32(s[j / 2] & 0xFu) * sb, x1 = e2m1_to_f32(s[j / 2] >> 4) * sb;
    } else if constexpr (block_scaled_k<F>()) {  // code x d: exact in fp32
      const float d = block_code_pair<F>(s, j, x0, x1);
      x0 *= d, x1 *= d;
    } else if (!is_k) {  // TurboQuant values: q * scale16 + min16
      const int nb = packed_bytes(D, c.value_bits);
      const float vs = f16_to_f32(load_u16_le(s + nb)), vz = f16_to_f32(load_u16_le(s + nb + 2));
      x0 = static_cast<float>(unpack_code_le(s, j, c.value_bits)) * vs + vz;
      x1 = static_cast<float>(unpack_code_le(s, j + 1, c.value_bits)) * vs + vz;
    } else if constexpr (F == KvFamily::kTqFp8Key) {
      e4m3_pair(s + j, x0, x1);
    } else {  // TurboQuant MSE keys: centroids, times the norm (corrected by the centroids' own norm)
      x0 = c.centroids[unpack_code_le(s, j, c.key_bits)], x1 = c.centroids[unpack_code_le(s, j + 1, c.key_bits)];
    }
  }
  if constexpr (F == KvFamily::kFp8Pth || F == KvFamily::kInt8Pth) scale = load_f32_le(s + D);
  else if constexpr (F == KvFamily::kInt4Pth) scale = bits_f32(load_u32_le(s + D / 2) & ~0xFu);
  else if constexpr (F == KvFamily::kTqMse) {
    if (is_k) {
      float ss = 0.0f;
#pragma unroll
      for (int e = 0; e < D / 32; ++e) ss += x[e] * x[e];
#pragma unroll
      for (int o = 16; o > 0; o >>= 1) ss += __shfl_xor_sync(0xffffffffu, ss, o);
      const float n = f16_to_f32(load_u16_le(s + packed_bytes(D, c.key_bits)));
      const float m = c.norm_correction ? n * (1.0f / sqrtf(ss + 1e-16f)) : n;
#pragma unroll
      for (int e = 0; e < D / 32; ++e) x[e] *= m;
    }
  }
}

// Codes 2e and 2e + 1 of eight fp8 codes (w0: the first four) widened by the hardware (exact).
__device__ __forceinline__ float2 fp8_pair_to_f32(std::uint32_t w0, std::uint32_t w1, int e, __nv_fp8_interpretation_t kind) {
  const __half2_raw h = __nv_cvt_fp8x2_to_halfraw2(static_cast<__nv_fp8x2_storage_t>(((e < 2 ? w0 : w1) >> (16 * (e % 2))) & 0xffffu), kind);
  return __half22float2(__half2(h));
}

// A page's raw bytes (the raw ring) -> bf16 term tiles kt, vt (term k at + k * tile): fp16 and fp8
// per tensor element by element (fp8 as codes: the scale is applied to scores and output); codec
// formats a warp per token slot through codec_row, with the per-token-head formats' scales in
// tok_scale [K 64][V 64] (q8_0/q4_0 K: codes, their block scales in tok_scale [D/32][64]). Tokens >=
// valid become zeros (scale 0). (bf16 pages need none of this.)
template <KvFamily F, int D, bool WG>
__device__ void page_to_terms(const KvLayerCodec& c, int kvh, const std::uint8_t* k_src, const std::uint8_t* v_src, int valid,
                              __nv_bfloat16* kt, __nv_bfloat16* vt, float* tok_scale) {
  constexpr int NB = kv_terms<F>(), W = warps_of<F, D>(), T = W * 32;
  using S = Smem<F, D, WG>;
  static_assert(block_scaled_k<F>() || k_terms<F>() == NB, "K and V terms differ only for block-scaled K");
  if constexpr (elementwise_family<F>()) {
    static_assert(F == KvFamily::kF16 || F == KvFamily::kFp8Tensor, "bf16 pages are copied as tiles");
    // Chunks of 8 elements (16 bytes of fp16, 8 of fp8): consecutive threads take consecutive chunks
    // of a row.
    constexpr int chunks = D / 8, per = kTile * chunks / T;
    static_assert(kTile * chunks % T == 0, "whole chunks per thread");
#pragma unroll
    for (int pass = 0; pass < 2; ++pass) {
      const std::uint8_t* src = pass == 0 ? k_src : v_src;
      const int row_bytes = pass == 0 ? c.k_bytes : c.v_bytes;
      __nv_bfloat16* dst = pass == 0 ? kt : vt;
#pragma unroll
      for (int u = 0; u < per; ++u) {
        const int i = threadIdx.x + u * T, t = i / chunks, ch = i % chunks;
        float x[8] = {};
        if (t < valid) {
          if constexpr (F == KvFamily::kF16) {
            const uint4 r = reinterpret_cast<const uint4*>(src + t * row_bytes)[ch];
            const std::uint32_t w[4] = {r.x, r.y, r.z, r.w};
#pragma unroll
            for (int e = 0; e < 4; ++e) {
              const float2 f = __half22float2(*reinterpret_cast<const __half2*>(&w[e]));
              x[2 * e] = f.x, x[2 * e + 1] = f.y;
            }
          } else {  // fp8 codes, widened by the hardware (exact)
            const uint2 r = reinterpret_cast<const uint2*>(src + t * row_bytes)[ch];
            const __nv_fp8_interpretation_t kind = c.fp8_kind == Fp8Kind::kE4M3 ? __NV_E4M3 : __NV_E5M2;
#pragma unroll
            for (int e = 0; e < 4; ++e) {
              const float2 f = fp8_pair_to_f32(r.x, r.y, e, kind);
              x[2 * e] = f.x, x[2 * e + 1] = f.y;
            }
          }
        }
        const int idx = tile_index<D, WG>(t, ch * 8);
#pragma unroll
        for (int e = 0; e < 4; ++e) store_terms<NB>(dst, S::tile, idx + 2 * e, x[2 * e], x[2 * e + 1]);
      }
    }
  } else {
    // A warp per token slot, K then V; lane l holds elements 2l, 2l + 1 (+ 64, 65 at d 128).
    const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
#pragma unroll
    for (int pass = 0; pass < 2; ++pass) {
      const bool is_k = pass == 0;
      const std::uint8_t* src = is_k ? k_src : v_src;
      const int bytes = is_k ? c.k_bytes : c.v_bytes;
      __nv_bfloat16* dst = is_k ? kt : vt;
      for (int t = warp; t < kTile; t += W) {  // warp-uniform
        float x[D / 32], scale = 0.0f;
#pragma unroll
        for (int e = 0; e < D / 32; ++e) x[e] = 0.0f;
        if (block_scaled_k<F>() && is_k) {
          // Codes, one term; the lanes holding a block's first pair write its d (0 past valid).
#pragma unroll
          for (int k = 0; k < D / 64; ++k) {
            const int j = 64 * k + 2 * lane;
            const float d = t < valid ? block_code_pair<F>(src + t * bytes, j, x[2 * k], x[2 * k + 1]) : 0.0f;
            if (j % kGgmlBlock == 0) tok_scale[j / kGgmlBlock * kTile + t] = d;
            store_terms<1>(dst, S::tile, tile_index<D, WG>(t, j), x[2 * k], x[2 * k + 1]);
          }
          continue;
        }
        if (t < valid) codec_row<F, D>(c, is_k, kvh, src + t * bytes, lane, x, scale);
#pragma unroll
        for (int k = 0; k < D / 64; ++k) store_terms<NB>(dst, S::tile, tile_index<D, WG>(t, 64 * k + 2 * lane), x[2 * k], x[2 * k + 1]);
        if constexpr (token_scales<F>())
          if (lane == 0) tok_scale[pass * kTile + t] = scale;
      }
    }
  }
}

// Eight fp8 codes widened into eight bf16 (exact: an fp8 value has at most 4 significant bits), as
// one 16-byte chunk of a tile row.
__device__ __forceinline__ uint4 widen_fp8x8(std::uint32_t w0, std::uint32_t w1, __nv_fp8_interpretation_t kind) {
  std::uint32_t o[4];
#pragma unroll
  for (int e = 0; e < 4; ++e) {
    const float2 f = fp8_pair_to_f32(w0, w1, e, kind);
    o[e] = bf2_bits(__floats2bfloat162_rn(f.x, f.y));
  }
  return make_uint4(o[0], o[1], o[2], o[3]);
}

// (decoded_ring) The raw chunks of an fp8 page that this thread copied (issue_page: 16 bytes at
// 16 (threadIdx.x + T u) of the K and V regions) widened into the page's K and V tiles kt, kt +
// tile; tokens >= valid become zeros. No other thread reads the chunks, so the thread needs only its
// own copies landed (cp.async.wait_group), not a block barrier.
template <KvFamily F, int D, int T>
__device__ __forceinline__ void own_fp8_chunks_to_tiles(const KvLayerCodec& c, const std::uint8_t* raw, int k_region, int valid,
                                                        __nv_bfloat16* kt) {
  static_assert(F == KvFamily::kFp8Tensor && D % 16 == 0, "fp8 per tensor rows of 16-byte chunks");
  const __nv_fp8_interpretation_t kind = c.fp8_kind == Fp8Kind::kE4M3 ? __NV_E4M3 : __NV_E5M2;
#pragma unroll
  for (int pass = 0; pass < 2; ++pass) {
    const std::uint8_t* src = raw + pass * k_region;  // rows of D bytes (kv_paged_cache.cpp)
    __nv_bfloat16* dst = kt + pass * Smem<F, D, true>::tile;
#pragma unroll
    for (int i = 16 * threadIdx.x; i < kTile * D; i += 16 * T) {
      const int t = i / D, col = i % D;
      uint4 lo = make_uint4(0, 0, 0, 0), hi = lo;
      if (t < valid) {
        const uint4 r = *reinterpret_cast<const uint4*>(src + i);
        lo = widen_fp8x8(r.x, r.y, kind), hi = widen_fp8x8(r.z, r.w, kind);
      }
      *reinterpret_cast<uint4*>(dst + tile_index<D, true>(t, col)) = lo;
      *reinterpret_cast<uint4*>(dst + tile_index<D, true>(t, col + 8)) = hi;
    }
  }
}

// p itself, hidden from the optimizer: address arithmetic on it is not reassociated into its parts.
__device__ __forceinline__ const std::uint8_t* opaque(const std::uint8_t* p) {
  asm("mov.b64 %0, %0;" : "+l"(p));
  return p;
}

// cp.async of a bf16 page's rows (k_src, v_src) into K and V tiles kt and vt (16-byte chunks,
// swizzled; tokens >= valid become zeros) by T threads, this one `tid` of them. K's panels hold KR
// rows (a paired slot's 128: kt is where this page's first row goes), V's a page's.
template <int D, int T, bool WG, int KR = kTile>
__device__ __forceinline__ void copy_bf16_page(const std::uint8_t* k_src, const std::uint8_t* v_src, int valid, __nv_bfloat16* kt,
                                               __nv_bfloat16* vt, int tid) {
  constexpr int chunks = D / 8, per = kTile * chunks / T, row_bytes = 2 * D;
  static_assert(kTile * chunks % T == 0, "whole chunks per thread");
  // Chunk i is bytes 16 i of the page (rows of row_bytes), a constant step from this thread's
  // first: one base a region and immediate offsets (opaque: else the compiler folds the page's
  // region * bytes into each chunk's address again). Rows past valid are in the page too (a region
  // holds all kTile rows), so their addresses are in bounds; none of them is read.
  static_assert(chunks * 16 == row_bytes, "chunk i starts at byte 16 i");
  const std::uint8_t* kb = opaque(k_src) + 16 * tid;
  const std::uint8_t* vb = opaque(v_src) + 16 * tid;
  // This thread's chunks are column ch of rows t0 + step u. A row's swizzle repeats every 8 rows
  // (tile_index(t + 8, col) = tile_index(t, col) + row8), so the first P rows' offsets, kept in
  // registers, give every chunk's as an immediate step: a warp of 32 copying alone (producer_warp)
  // keeps 4 offsets, not 32 that spill. K's offset differs from V's by its panel's extra rows.
  constexpr int step = T / chunks, P = step % 8 == 0 ? 1 : step % 4 == 0 ? 2 : step % 2 == 0 ? 4 : 8;
  constexpr int row8 = tile_index<D, WG>(8, 0) - tile_index<D, WG>(0, 0);
  static_assert(T % chunks == 0 && per % P == 0, "whole rows of chunks per pass");
  const int ch = tid % chunks, t0 = tid / chunks;
  kt += tile_index<D, WG, KR>(0, ch * 8) - tile_index<D, WG>(0, ch * 8);
  int first[P];
#pragma unroll
  for (int j = 0; j < P; ++j) first[j] = tile_index<D, WG>(t0 + step * j, ch * 8);
#pragma unroll
  for (int u = 0; u < per; ++u) {
    const int t = t0 + step * u, idx = first[u % P] + step * (u - u % P) / 8 * row8;
    cp_async16_or_zero(kt + idx, kb + 16 * T * u, t < valid);
    cp_async16_or_zero(vt + idx, vb + 16 * T * u, t < valid);
  }
}

// cp.async of page (k_src, v_src) into ring slot `slot` by T threads, this one `tid` of them: bf16
// rows into the slot's K and V term tiles (copy_bf16_page), other formats' whole K and V regions
// (rows past valid are never decoded) into the slot's raw bytes.
template <KvFamily F, int D, int T, bool WG>
__device__ __forceinline__ void issue_page(const std::uint8_t* k_src, const std::uint8_t* v_src, int valid, int k_region,
                                           int v_region, __nv_bfloat16* tiles, std::uint8_t* raw, int slot, int tid) {
  if constexpr (tiles_ring<F>()) {
    __nv_bfloat16* kt = tiles + slot * Smem<F, D, WG>::stage;
    copy_bf16_page<D, T, WG>(k_src, v_src, valid, kt, kt + Smem<F, D, WG>::tile, tid);
  } else {
    std::uint8_t* dst = raw + slot * (k_region + v_region);
    for (int i = 16 * tid; i < k_region; i += 16 * T) cp_async16(dst + i, k_src + i);
    for (int i = 16 * tid; i < v_region; i += 16 * T) cp_async16(dst + k_region + i, v_src + i);
  }
}

}  // namespace

}  // namespace kvgate::kernels::cuda
