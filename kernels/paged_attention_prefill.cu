// prefill_attention (paged_attention_prefill.h): flash-attention tiles on tensor cores over the paged,
// quantized cache, for prefill chunks.
//
// A block of W warps (4 or 8, warps_of below) takes W consecutive attention tiles (each <= 16 query
// vectors: rows x GQA group of one KV head) and one split of their pages; warp w owns tile w as the
// 16 rows of an mma.m16n8k16 fragment. Pages (64 tokens) go through a two-stage cp.async ring, the
// next one loading while the warps compute this one; the block decodes each page's K and V once for
// its tiles into shared memory as bf16 terms (see below): bf16 rows are copied as they are, fp16 and
// fp8 element by element, codec formats a warp per token slot, each lane two element pairs
// (codec_row below). Each warp computes S = Q K^T (16 x 64), masks it (causal, window) where the page
// reaches past a row's visible tokens, runs the online softmax in fp32 registers and accumulates
// O += P V (16 x head_dim, fp32). The partial (m, l, O) of each tile goes to the generic kernel's workspace
// and paged_attention() merges the splits with the same combine kernel.
//
// Two kernels: mma.sync (sm_80+; above) and, at head_dim 128 on compute capability 9.0, wgmma
// (template flag WG; wgmma.cuh): each 4 warps are a warpgroup whose 4 tiles (64 query vectors) are
// the rows of one asynchronous 64 x 64 x 16 (S, Q's terms and K from shared memory) or 64 x 128 x 16
// (O, P's terms from registers, V from shared memory read transposed) product. The fragments are the
// same, so the mask, softmax and output code is shared. The term tiles are then panels of 64 columns
// in wgmma's 128-byte swizzle (tile_index), Q's terms are tiles too, and the two warpgroups of a
// block take turns issuing S (named barriers) so that one's softmax overlaps the other's product;
// a page's P V is awaited at the next page's barrier, or (bf16: kPipelined) runs during the next
// page's softmax, the pages coming through a ring on mbarriers instead of block barriers. Exact mode only ("bf16x3" and "mma_sync" run the mma.sync kernel); q8_0/q4_0
// (per-block K sums) keep mma.sync.
//
// Exactness (docs/cuda-decoder.md, Numerics): an fp32 operand x is split into bf16 terms
// x0 = bf16(x), x1 = bf16(x - x0), x2 = bf16(x - x0 - x1) (each difference exact in fp32), so
// x0 + x1 + x2 equals x to 2^-24 relative (the wgmma kernel truncates P's first two terms where V
// has one term: split_terms); a product a.b is the sum of the term products ai.bj
// with i + j < terms, accumulated in fp32 by the tensor cores. Exact mode (the default) keeps 3
// terms for Q and P and i + j <= 2 (bf16x6): the dropped products are below 2^-24 of a.b, the fp32
// kernels' own rounding. Decoded K/V values need fewer terms where they are exact: bf16 elements,
// fp8 codes (the per-tensor scale multiplies the score and the output instead), the per-token-head
// formats' codes (int4: code - zero point; the token's K scale multiplies its score, its V scale its
// p before the split) and nvfp4's e2m1 x block scale (6 significant bits; the tensor scale as fp8's)
// are one bf16 term, fp16 and q4_0's (code - 8) x d two, any other fp32 value three (q8_0's and q4_0's
// K tiles hold the codes, one term: block_scaled_k); so the bf16 cache
// costs 3 MMAs per product, like bf16x3. The "bf16x3" switch keeps 2 terms and i + j <= 1 (hi.hi +
// hi.lo + lo.hi): 2^-16 per product, measured in docs. The softmax, its rescaling and the final
// normalization are fp32 as in the generic kernel.
//
// Rotations (int4_per_token_head's randomized Hadamard transform, q8_0/q4_0's block rotations,
// TurboQuant's MSE keys) move off the tokens as in the decode kernel, by the same rule
// (kv_rotations.cuh): K's onto Q, V's onto the accumulator before it is written, once per tile.
#include <algorithm>
#include <cstdint>
#include <type_traits>

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>

#include "kernels/cp_async.cuh"
#include "kernels/cuda_check.cuh"
#include "kernels/fwht_rows.cuh"
#include "kernels/kv_rotations.cuh"
#include "kernels/paged_attention_prefill.h"
#include "kernels/paged_page_decode.cuh"
#include "kernels/softmax_exp.cuh"
#include "kernels/wgmma.cuh"

namespace kvgate::kernels::cuda {

namespace {

using page_decode::elementwise_family;
using page_decode::kTile;

static_assert(kMaxTileQ == 16, "a tile is the 16 rows of one mma fragment");

constexpr int kTerms = 3;  // bf16 terms of Q and P (exact mode)

// bf16 terms of a decoded K/V element (header: Exactness).
template <KvFamily F>
constexpr int kv_terms() {
  switch (F) {
    case KvFamily::kBf16: case KvFamily::kFp8Tensor: case KvFamily::kFp8Pth: case KvFamily::kInt8Pth:
    case KvFamily::kInt4Pth: case KvFamily::kNvfp4: return 1;
    case KvFamily::kF16: case KvFamily::kQ4_0: return 2;
    default: return 3;
  }
}
// q8_0 and q4_0 K: the tiles hold the codes (q4_0: code - 8), one term, and each token's 32-element
// block scales d go to a table; a score sums its products block by block (two k-steps) and d
// multiplies each block's sum. (Their V keeps code x d: P cannot take a scale per block.)
template <KvFamily F>
constexpr bool block_scaled_k() {
  return F == KvFamily::kQ8_0 || F == KvFamily::kQ4_0;
}
template <KvFamily F>
constexpr int k_terms() {
  return block_scaled_k<F>() ? 1 : kv_terms<F>();
}
// The tiles hold codes; each token's K scale multiplies its score, its V scale its p.
template <KvFamily F>
constexpr bool token_scales() {
  return F == KvFamily::kFp8Pth || F == KvFamily::kInt8Pth || F == KvFamily::kInt4Pth;
}
// A per-tensor scale per KV head outside the tiles: multiplies the scores (K) and the output (V).
template <KvFamily F>
constexpr bool tensor_scales() {
  return F == KvFamily::kFp8Tensor || F == KvFamily::kNvfp4;
}
// Warps per block (each one tile): 8 at head_dim 128, one block a multiprocessor. Each page's copy
// and decoding is shared by twice the query vectors of a 4-warp block; with one block of 4 warps
// (two or three terms per K/V element do not fit two) one warp per scheduler was left to hide every
// latency. Measured at 32K against 4 warps: fp16, q8_0, q4_0, TurboQuant 2.0-2.6x; fp8/int4 per
// token head, nvfp4 1.1-1.3x; bf16 1.03x and fp8 per tensor 1.07x once pages came
// through the cp.async ring (two blocks of 4 warps before it: no gain).
template <KvFamily F, int D>
constexpr int warps_of() {
  return D == 128 ? 8 : 4;
}
// Families and head sizes with a wgmma kernel (sm_90a): head_dim 128 (two warpgroups a block), K
// without per-block scales (q8_0/q4_0's block sums need an accumulator per block: mma.sync kernel).
template <KvFamily F, int D>
constexpr bool wgmma_kernel() {
  return D == 128 && !block_scaled_k<F>();
}

// The output's multiplier of element j: V's rotation (kv_rotations.cuh) and per-tensor scale.
template <KvFamily F>
__device__ __forceinline__ float out_multiplier(const KvLayerCodec& c, const KvRotations& rot, int kvh, int j) {
  if constexpr (tensor_scales<F>()) return c.v_scales[kvh];
  else return rot.out_multiplier(j);
}

// Pages are copied by cp.async into a two-stage ring, the next page's copy in flight while the warps
// compute this one: bf16 pages straight into their term tiles (two stages of tiles), the other
// formats' raw K and V bytes into a raw ring, decoded from there into one stage of tiles.
template <KvFamily F>
constexpr bool tiles_ring() {
  return F == KvFamily::kBf16;
}
// Stages of the ring. The wgmma kernel on bf16 keeps four (prefill_kernel's pipelined loop): page
// p - 1's V (its P V runs during page p's softmax), page p, and pages p + 1 and p + 2 landing, so a
// copy has two pages' time: 4 x 32 KB of tiles and 96 KB of Q terms, 225 KB with the alignment.
template <KvFamily F, bool WG>
constexpr int ring_stages() {
  return WG && tiles_ring<F>() ? 4 : 2;
}

// Shared memory: bf16 K and V term tiles [stage][K terms, V terms][64][D] (one stage unless
// tiles_ring), Q fragments [warp][D/16][lane][3 terms] (uint4 each), the per-token-head formats'
// token scales [K, V][64] or q8_0/q4_0's K block scales [D/32][64], then (other formats than bf16)
// the raw ring [2][K region, V region]. The term tiles double
// as fp32 scratch [16 W][D] for the rotated queries and outputs. Tile rows are swizzled (tile_index)
// instead of padded: q8_0's three terms with its raw ring fit a block (226 KB).
template <KvFamily F, int D, bool WG>
struct Smem {
  static constexpr int NBK = k_terms<F>(), NBV = kv_terms<F>(), W = warps_of<F, D>();
  static constexpr int tile = kTile * D;  // bf16 elements
  static constexpr int stage = (NBK + NBV) * tile;
  static constexpr int q_uint4 = W * (D / 16) * 32 * kTerms;
  // The term tiles, or the scratch where that is larger (8 warps, one term).
  static constexpr int tiles_bytes = std::max((tiles_ring<F>() ? ring_stages<F, WG>() : 1) * stage * 2, W * 16 * D * 4);
  static constexpr int scales_bytes = token_scales<F>() ? 2 * kTile * 4 : block_scaled_k<F>() ? D / 32 * kTile * 4 : 0;
  static constexpr int raw_offset = tiles_bytes + q_uint4 * 16 + scales_bytes;  // a multiple of 16
  static int raw_stage(const KvLayerCodec& c) { return tiles_ring<F>() ? 0 : kTile * (c.k_bytes + c.v_bytes); }
  // wgmma's swizzled operands need a 1024-byte aligned base (the kernel aligns the dynamic region).
  static int bytes(const KvLayerCodec& c) { return raw_offset + 2 * raw_stage(c) + (WG ? 1024 : 0); }
};

// Element (t, col) of a term tile: the 16-byte chunk col / 8 of row t XORed with t % 8, so that the
// 8 rows an mma fragment or ldmatrix reads at one column land in 8 different bank groups. The wgmma
// kernel (WG) stores a tile as panels of 64 columns, [col / 64][t][64]: wgmma's 128-byte swizzle
// (wgmma.cuh); at head_dim 64 the two layouts are the same.
template <int D, bool WG>
__device__ __forceinline__ int tile_index(int t, int col) {
  if constexpr (WG) return ((col >> 6) * kTile + t) * 64 + ((((col >> 3) ^ t) & 7) << 3) + (col & 7);
  else return t * D + ((((col >> 3) ^ t) & 7 | (col >> 3) & ~7) << 3) + (col & 7);
}

__device__ __forceinline__ std::uint32_t bf2_bits(__nv_bfloat162 v) {
  return *reinterpret_cast<std::uint32_t*>(&v);
}

// (x0, x1) as N packed bf16 pair terms: t[0] = bf16(x), t[k] = bf16(x - t[0] - ... - t[k-1]),
// rounded to nearest (each difference exact in fp32). TRUNC: every term but the last truncated
// instead (its high 16 bits: one byte permute for the pair, and a mask and a subtraction an element
// for the difference, where rounding took a conversion and two unpacking instructions more a term):
// three terms still sum to x exactly (8 + 8 bits, the last <= 8), but a truncated term's remainder
// is up to 2^-7 of x, not 2^-8, so only products that keep every term pair may use it (a partner of
// one term: P against bf16, fp8 and per-token-head V).
template <int N, bool TRUNC = false>
__device__ __forceinline__ void split_terms(float x0, float x1, std::uint32_t (&t)[N]) {
#pragma unroll
  for (int k = 0; k + 1 < N; ++k) {
    if constexpr (TRUNC) {
      const std::uint32_t u0 = __float_as_uint(x0), u1 = __float_as_uint(x1);
      t[k] = __byte_perm(u0, u1, 0x7632);  // low half: x0's high half, high half: x1's
      x0 -= __uint_as_float(u0 & 0xffff0000u);
      x1 -= __uint_as_float(u1 & 0xffff0000u);
    } else {
      const __nv_bfloat162 h = __floats2bfloat162_rn(x0, x1);
      t[k] = bf2_bits(h);
      const float2 hf = __bfloat1622float2(h);
      x0 -= hf.x;  // exact: x0 and hf.x agree in their leading bits
      x1 -= hf.y;
    }
  }
  t[N - 1] = bf2_bits(__floats2bfloat162_rn(x0, x1));
}

// Stores the NB terms of (x0, x1) at element `idx` of term tiles spaced `tile` apart.
template <int NB>
__device__ __forceinline__ void store_terms(__nv_bfloat16* base, int tile, int idx, float x0, float x1) {
  std::uint32_t t[NB];
  split_terms<NB>(x0, x1, t);
#pragma unroll
  for (int k = 0; k < NB; ++k) *reinterpret_cast<std::uint32_t*>(base + k * tile + idx) = t[k];
}

// Named barrier `id` (1-15; 0 is __syncthreads) of `n` threads: sync waits for all n, arrive counts
// this warp without waiting.
__device__ __forceinline__ void named_barrier_sync(int id, int n) { asm volatile("bar.sync %0, %1;\n" ::"r"(id), "r"(n) : "memory"); }
__device__ __forceinline__ void named_barrier_arrive(int id, int n) { asm volatile("bar.arrive %0, %1;\n" ::"r"(id), "r"(n) : "memory"); }

// fn(i, j) for each product of term i of Q or P (kTerms of them) and term j of K or V (NB) with
// i + j < n, the smallest (largest i + j) first: exact mode n = kTerms, bf16x3 n = 2.
template <int NB, class Fn>
__device__ __forceinline__ void term_products(int n, Fn&& fn) {
#pragma unroll
  for (int sum = kTerms - 1; sum >= 0; --sum)
#pragma unroll
    for (int i = 0; i < kTerms; ++i) {
      const int j = sum - i;
      if (j >= 0 && j < NB && sum < n) fn(i, j);
    }
}

// P's kTerms A fragments for tokens 16 kk .. 16 kk + 15: the S accumulator's n-tiles 2 kk and 2 kk + 1
// are the A fragment's layout (rows g and g + 8, token pairs 2 cq and 2 cq + 8). kTrunc: truncated
// terms (split_terms), where every term product is kept: exact mode against one-term V (bf16x3 drops
// P's third term).
template <bool kTrunc>
__device__ __forceinline__ void p_fragments(const float (&s)[8][4], int kk, std::uint32_t (&P)[kTerms][4]) {
  std::uint32_t pt[4][kTerms];
  split_terms<kTerms, kTrunc>(s[2 * kk][0], s[2 * kk][1], pt[0]);
  split_terms<kTerms, kTrunc>(s[2 * kk][2], s[2 * kk][3], pt[1]);
  split_terms<kTerms, kTrunc>(s[2 * kk + 1][0], s[2 * kk + 1][1], pt[2]);
  split_terms<kTerms, kTrunc>(s[2 * kk + 1][2], s[2 * kk + 1][3], pt[3]);
#pragma unroll
  for (int k = 0; k < kTerms; ++k) P[k][0] = pt[0][k], P[k][1] = pt[1][k], P[k][2] = pt[2][k], P[k][3] = pt[3][k];
}

__device__ __forceinline__ void mma(float (&d)[4], const std::uint32_t (&a)[4], std::uint32_t b0, std::uint32_t b1) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
               : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
               : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
#else
  __trap();  // prefill_attention_supported() refuses devices below sm_80
#endif
}

// Four 8x8 bf16 matrices, transposed (the B fragments of P.V from V stored [token][dim]).
__device__ __forceinline__ void ldmatrix_x4_trans(const void* p, std::uint32_t& r0, std::uint32_t& r1, std::uint32_t& r2,
                                                  std::uint32_t& r3) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  const unsigned a = static_cast<unsigned>(__cvta_generic_to_shared(p));
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0,%1,%2,%3}, [%4];\n"
               : "=r"(r0), "=r"(r1), "=r"(r2), "=r"(r3)
               : "r"(a));
#else
  (void)p;
  r0 = r1 = r2 = r3 = 0;
  __trap();
#endif
}

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
            const std::uint32_t w[2] = {r.x, r.y};
            const __nv_fp8_interpretation_t kind = c.fp8_kind == Fp8Kind::kE4M3 ? __NV_E4M3 : __NV_E5M2;
#pragma unroll
            for (int e = 0; e < 4; ++e) {
              const __half2_raw h = __nv_cvt_fp8x2_to_halfraw2(static_cast<__nv_fp8x2_storage_t>((w[e / 2] >> (16 * (e % 2))) & 0xffffu), kind);
              const float2 f = __half22float2(__half2(h));
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

// cp.async of page (k_src, v_src) into ring slot `slot`: bf16 rows into the slot's K and V term tiles
// (16-byte chunks, swizzled; tokens >= valid become zeros), other formats' whole K and V regions
// (rows past valid are never decoded) into the slot's raw bytes.
template <KvFamily F, int D, int T, bool WG>
__device__ __forceinline__ void issue_page(const std::uint8_t* k_src, const std::uint8_t* v_src, int valid, int k_region,
                                           int v_region, __nv_bfloat16* tiles, std::uint8_t* raw, int slot) {
  if constexpr (tiles_ring<F>()) {
    constexpr int chunks = D / 8, per = kTile * chunks / T, row_bytes = 2 * D;
    static_assert(kTile * chunks % T == 0, "whole chunks per thread");
    __nv_bfloat16* kt = tiles + slot * Smem<F, D, WG>::stage;
    __nv_bfloat16* vt = kt + Smem<F, D, WG>::tile;
#pragma unroll
    for (int u = 0; u < per; ++u) {
      const int i = threadIdx.x + u * T, t = i / chunks, ch = i % chunks, idx = tile_index<D, WG>(t, ch * 8);
      const int off = t < valid ? t * row_bytes + ch * 16 : 0;
      cp_async16_or_zero(kt + idx, k_src + off, t < valid);
      cp_async16_or_zero(vt + idx, v_src + off, t < valid);
    }
  } else {
    std::uint8_t* dst = raw + slot * (k_region + v_region);
    for (int i = 16 * threadIdx.x; i < k_region; i += 16 * T) cp_async16(dst + i, k_src + i);
    for (int i = 16 * threadIdx.x; i < v_region; i += 16 * T) cp_async16(dst + k_region + i, v_src + i);
  }
}

// WG: the wgmma kernel (sm_90a; wgmma_kernel below): each 4 warps are one warpgroup that multiplies
// its 64 query vectors (4 tiles) by a page as one asynchronous 64 x 64 (S) and 64 x 128 (O) product;
// Q's terms sit in shared memory as wgmma operands instead of per-lane fragments.
template <KvFamily F, int D, bool WG>
__global__ void __launch_bounds__(warps_of<F, D>() * 32) prefill_kernel(KvLayerCodec c, PagedAttentionArgs a, int splits, int na) {
  constexpr int NBK = k_terms<F>(), NBV = kv_terms<F>(), W = warps_of<F, D>(), T = W * 32;
  using S = Smem<F, D, WG>;
  constexpr int KS = D / 16, NT = D / 8;
  static_assert(!WG || (D == 128 && W % 4 == 0 && !block_scaled_k<F>()), "wgmma_kernel<F, D>");
  constexpr int kStages = ring_stages<F, WG>();
  constexpr bool kPipelined = WG && tiles_ring<F>();
  extern __shared__ uint4 smem_raw[];
  // wgmma's 128-byte swizzle is of address bits: its operands start 1024-byte aligned.
  uint4* const smem4 = WG ? smem_raw + ((1024 - (smem_u32(smem_raw) & 1023)) & 1023) / 16 : smem_raw;
  __nv_bfloat16* const tiles = reinterpret_cast<__nv_bfloat16*>(smem4);  // [stage][K terms, V terms][64][D]
  // Q's terms: [warp][ks][lane][kTerms] fragments, or (WG) [warpgroup][kTerms][64 rows][D] tiles.
  uint4* qf = reinterpret_cast<uint4*>(smem4) + S::tiles_bytes / 16;
  // [K 64][V 64] (per-token-head formats) or K's block scales [D/32][64] (q8_0, q4_0)
  float* tok_scale = reinterpret_cast<float*>(qf + S::q_uint4);
  float* scratch = reinterpret_cast<float*>(tiles);                // fp32 [16 W][D] outside the page loop
  std::uint8_t* raw = reinterpret_cast<std::uint8_t*>(smem4) + S::raw_offset;  // [2][K region, V region]
  __shared__ int w_seq[W], w_lo[W], w_hi[W];
  // (kPipelined) The ring's mbarriers: full[s] completes when every thread's copies of slot s's page
  // have landed, empty[s] when every thread is done with it (its P V awaited).
  __shared__ std::uint64_t ring_full[kStages], ring_empty[kStages];

  const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31, g = lane >> 2, cq = lane & 3;
  const int kvh = blockIdx.y, split = blockIdx.x;
  const int ti = blockIdx.z * W + warp;
  const bool has_tile = ti < a.num_tiles;
  const int group = a.heads / a.kv_heads, qw = a.heads * D;
  const AttentionTile tl = has_tile ? a.tiles[ti] : AttentionTile{-1, 0, 0};
  const int nq = tl.rows * group;
  // fp8 per tensor, nvfp4: the K/V tiles leave out the per-tensor scales; they multiply the scores
  // and the output.
  const float k_mul = tensor_scales<F>() ? c.k_scales[kvh] : 1.0f;
  const KvRotations rot = kv_rotations<F, D>(c);

  // This thread's two fragment rows (query vectors g and g + 8): visible tokens [first, last].
  int first[2], last[2];
#pragma unroll
  for (int r = 0; r < 2; ++r) {
    const int qi = g + 8 * r;
    last[r] = qi < nq ? a.row_pos[tl.row0 + qi / group] : -1;
    first[r] = a.window > 0 ? max(0, last[r] - a.window + 1) : 0;
  }
  // K's rotation moved onto Q: the block's 16 W query vectors through the scratch, signs first, then
  // the butterflies (block-uniform: the codec's).
  const bool q_rotated = may_rotate<F>() && rot.q_block > 1;
  if (q_rotated) {
    for (int i = threadIdx.x; i < W * 16 * D; i += T) {
      const int w = i / (16 * D), qi = i / D % 16, j = i % D, t = blockIdx.z * W + w;
      float x = 0.0f;
      if (t < a.num_tiles) {
        const AttentionTile o = a.tiles[t];
        if (qi < o.rows * group)
          x = a.q[static_cast<std::int64_t>(o.row0 + qi / group) * qw + (kvh * group + qi % group) * D + j] * rot.q_sign(j);
      }
      scratch[i] = x;
    }
    __syncthreads();
    fwht_rows<D>(scratch, W * 16, rot.q_block, threadIdx.x, T, [] { __syncthreads(); });
  }
  // Q fragments (3 terms) of this warp's tile, laid out per lane.
#pragma unroll
  for (int ks = 0; ks < KS; ++ks) {
    std::uint32_t t[4][kTerms];
#pragma unroll
    for (int e = 0; e < 4; ++e) {
      const int qi = g + 8 * (e & 1), col = ks * 16 + 2 * cq + 8 * (e >> 1);
      float2 x = make_float2(0.0f, 0.0f);
      if (q_rotated) {
        x = *reinterpret_cast<const float2*>(scratch + (warp * 16 + qi) * D + col);
        x.x *= rot.q_mul, x.y *= rot.q_mul;
      } else if (qi < nq) {
        x = *reinterpret_cast<const float2*>(a.q + static_cast<std::int64_t>(tl.row0 + qi / group) * qw +
                                             (kvh * group + qi % group) * D + col);
      }
      split_terms<kTerms>(x.x, x.y, t[e]);
      if constexpr (WG) {
        // Row 16 (warp % 4) + qi of the warpgroup's tiles: the rows of this warp's accumulators.
        __nv_bfloat16* qt = reinterpret_cast<__nv_bfloat16*>(qf) + warp / 4 * kTerms * kTile * D;
#pragma unroll
        for (int k = 0; k < kTerms; ++k)
          *reinterpret_cast<std::uint32_t*>(qt + k * kTile * D + tile_index<D, true>(warp % 4 * 16 + qi, col)) = t[e][k];
      }
    }
    if constexpr (!WG)
#pragma unroll
      for (int k = 0; k < kTerms; ++k) qf[((warp * KS + ks) * 32 + lane) * kTerms + k] = make_uint4(t[0][k], t[1][k], t[2][k], t[3][k]);
  }
  if (lane == 0) {
    const int p0 = has_tile ? a.row_pos[tl.row0] : 0;
    w_seq[warp] = has_tile ? tl.seq : -1;
    w_lo[warp] = a.window > 0 ? max(0, p0 - a.window + 1) : 0;
    w_hi[warp] = has_tile ? a.row_pos[tl.row0 + tl.rows - 1] + 1 : 0;
  }
  if constexpr (kPipelined) {
    if (threadIdx.x == 0)
      for (int st = 0; st < kStages; ++st) mbar_init(&ring_full[st], T), mbar_init(&ring_empty[st], T);
  }
  // The warpgroups' turns on the tensor cores (wg_qk): warpgroup 0 goes first.
  if (WG && W == 8 && warp >= 4) named_barrier_arrive(2, 256);
  if constexpr (WG) fence_proxy_async();  // Q's tiles, for wgmma
  __syncthreads();

  float m[2] = {-INFINITY, -INFINITY}, l[2] = {0.0f, 0.0f};
  float o[NT][4];
#pragma unroll
  for (int n = 0; n < NT; ++n) o[n][0] = o[n][1] = o[n][2] = o[n][3] = 0.0f;
  // Fragment addresses in the swizzled tiles: tile_index(8 m + r, 8 c + i) = 8 m D + ((r D + 8 r + i)
  // XOR 8 c) for r < 8, so each lane keeps one offset and each unrolled chunk c is an immediate XOR.
  // K (B of S = Q K^T): rows n * 8 + g, columns ks * 16 + 2 cq (+ 8). V (ldmatrix.trans of P V): lane
  // addresses row kk * 16 + (mt % 2) * 8 + r of matrix mt, column (n0 + u) * 16 + (mt / 2) * 8.
  const int k_lane = g * D + 8 * g + 2 * cq;
  const int v_lane = ((lane >> 3 & 1) * 8 + (lane & 7)) * D + 8 * ((lane >> 4) ^ (lane & 7));
  const int k_region = kTile * c.k_bytes, v_region = kTile * c.v_bytes;  // bytes of a page's K or V rows
  // (WG) The descriptor of this warpgroup's Q tiles; the operands' descriptors are offsets from a base.
  [[maybe_unused]] const std::uint64_t qd = wgmma_desc(smem_u32(qf) + warp / 4 * kTerms * kTile * D * 2, 16, 1024);

  // The block's tiles by sequence (prefill chunks may hold several): pages of one sequence are
  // decoded once for every warp whose tile belongs to it. (kPipelined) ring_i0: pages the block's
  // ring took before this sequence; page p is the ring's page ring_i0 + p - pb, its slot and its
  // mbarriers' phases follow from that.
  int ring_i0 = 0;
  for (int w0 = 0; w0 < W; ++w0) {
    const int seq = w_seq[w0];
    bool seen = seq < 0;
    for (int w = 0; w < w0; ++w) seen = seen || w_seq[w] == seq;
    if (seen) continue;  // block-uniform: shared values only
    int lo_tok = w_lo[w0], hi_tok = w_hi[w0];
    for (int w = w0 + 1; w < W; ++w)
      if (w_seq[w] == seq) lo_tok = min(lo_tok, w_lo[w]), hi_tok = max(hi_tok, w_hi[w]);
    int pb, pe;
    split_pages(lo_tok, hi_tok, split, splits, pb, pe);
    const int* table = a.block_table + static_cast<std::int64_t>(seq) * a.max_pages;
    // Page p's index in the block's ring (kPipelined: counted across sequences) and its slot.
    const auto ring = [&](int p) { return (kPipelined ? ring_i0 : 0) + p - pb; };
    const auto slot = [&](int p) { return ring(p) % kStages; };
    const auto issue = [&](int p) {
      const std::int64_t region = static_cast<std::int64_t>(table[p]) * a.kv_heads + kvh;
      issue_page<F, D, T, WG>(a.k_pool + region * k_region, a.v_pool + region * v_region, min(kTile, hi_tok - p * kTile), k_region,
                          v_region, tiles, raw, slot(p));
    };
    // The term tiles of page p: its ring slot, or the one stage page_to_terms fills.
    const auto k_tile = [&](int p) { return tiles + (tiles_ring<F>() ? slot(p) * S::stage : 0); };
    // Warp w's tile sees tokens of page p.
    const auto needs = [&](int w, int p) { return w_seq[w] == seq && p * kTile < w_hi[w] && (p + 1) * kTile > w_lo[w]; };
    // (WG) S = Q K^T of page p for the warpgroup's 64 query vectors, issued and committed as one group
    // unless none of its warps needs the page (its 4 warps issue wgmmas together) and !always; returns
    // whether it ran. A 64 x 64 x 16 wgmma per term product and k-step (i + j <= 2, smallest first),
    // Q's term i and K's term j from shared memory (k-step ks: panel ks / 4, 32 bytes per k-step inside
    // the 128-byte rows); the first overwrites s. The two warpgroups take turns on the tensor cores,
    // so that one's softmax runs while the other's product does: each waits for the other's last
    // issue (named barrier 1: warpgroup 0 issued, 2: warpgroup 1 issued; warpgroup 1 arrived at 2 once
    // before the first page), so the turns strictly alternate even where no block barrier holds the
    // warpgroups together (the pipelined loop): neither can arrive twice before the other waited.
    // Every thread passes both barriers once a call. (An empty commit for a skipped page made ptxas
    // serialize every wgmma of the kernel: C7520.)
    [[maybe_unused]] const auto wg_qk = [&](int p, float(&s)[8][4], bool always) {
      const int w0 = warp & ~3;
      const bool run = always || needs(w0, p) || needs(w0 + 1, p) || needs(w0 + 2, p) || needs(w0 + 3, p);
      if (W == 8) named_barrier_sync(warp >= 4 ? 1 : 2, 256);
      if (run) {
        const std::uint64_t kd = wgmma_desc(smem_u32(k_tile(p)), 16, 1024);
        int accumulate = 0;
        wgmma_fence();
        term_products<NBK>(kTerms, [&](int i, int j) {
#pragma unroll
          for (int ks = 0; ks < KS; ++ks) {
            const int off = ks / 4 * kTile * 128 + ks % 4 * 32;
            wgmma_m64n64k16_ss(s, wgmma_desc_at(qd, i * S::tile * 2 + off), wgmma_desc_at(kd, j * S::tile * 2 + off), accumulate);
            accumulate = 1;
          }
        });
        wgmma_commit();
      }
      if (W == 8) named_barrier_arrive(warp >= 4 ? 2 : 1, 256);
      return run;
    };
    // Mask, scale and online softmax of page p's scores s (this warp's 16 rows): s becomes p (times
    // the tokens' V scales), l and m move on, alpha is what o must be multiplied by (1: nothing). (WG)
    // A warp whose tile does not see the page adds nothing: all its scores are masked, so p = 0, and
    // m, l and alpha stay as they were.
    //
    // Straight-line code on purpose: a select per score around expf (s == -inf ? 0 : expf) compiled to
    // a branch around each score's 10-instruction exp chain, which serialized the 32 chains (the
    // softmax took 56% of the warps' stall samples, docs/bench-notes/prefill-softmax-h200-2026-12-02.txt); exp(-inf - m) is already 0, so only m
    // = -inf (a row that saw nothing yet) needs a finite stand-in.
    const auto softmax = [&](int p, float(&s)[8][4], float(&alpha)[2]) {
      const int t0 = p * kTile;
      const bool act = !WG || needs(warp, p);
      // Mask, scale, online softmax (rows g and g + 8; a row's 64 scores live in one quad). A page
      // inside every row's visible tokens (most pages of a long prefill) needs no mask.
      float mx[2] = {-INFINITY, -INFINITY};
      const auto scale_scores = [&](auto masked) {
#pragma unroll
        for (int n = 0; n < 8; ++n)
#pragma unroll
          for (int e = 0; e < 4; ++e) {
            const int r = e >> 1, tok = t0 + n * 8 + 2 * cq + (e & 1);
            float x = s[n][e];
            if constexpr (tensor_scales<F>()) x *= k_mul;
            if constexpr (token_scales<F>()) x *= tok_scale[n * 8 + 2 * cq + (e & 1)];
            if constexpr (decltype(masked)::value) s[n][e] = act && tok >= first[r] && tok <= last[r] ? x * a.scale : -INFINITY;
            else s[n][e] = x * a.scale;
            mx[r] = fmaxf(mx[r], s[n][e]);
          }
      };
      bool inside = act;
#pragma unroll
      for (int r = 0; r < 2; ++r)
        if (g + 8 * r < nq) inside = inside && t0 >= first[r] && t0 + kTile - 1 <= last[r];
      if (__all_sync(0xffffffffu, inside)) scale_scores(std::false_type{});
      else scale_scores(std::true_type{});
      float sum[2] = {0.0f, 0.0f};
#pragma unroll
      for (int r = 0; r < 2; ++r) {
        mx[r] = fmaxf(mx[r], __shfl_xor_sync(0xffffffffu, mx[r], 1));
        mx[r] = fmaxf(mx[r], __shfl_xor_sync(0xffffffffu, mx[r], 2));
        const float m_new = fmaxf(m[r], mx[r]);
        alpha[r] = m_new == -INFINITY ? 1.0f : expf(m[r] - m_new);
        mx[r] = m_new == -INFINITY ? 0.0f : m_new;  // the exps' reference (every score is -inf where it is 0)
        m[r] = m_new;
      }
#pragma unroll
      for (int n = 0; n < 8; ++n)
#pragma unroll
        for (int e = 0; e < 4; ++e) {
          const int r = e >> 1;
          s[n][e] = softmax_exp(s[n][e] - mx[r]);
          sum[r] += s[n][e];
        }
#pragma unroll
      for (int r = 0; r < 2; ++r) l[r] = l[r] * alpha[r] + sum[r];
      // Per-token V scales go onto p (fp32, before the split; l keeps the unscaled sum).
      if constexpr (token_scales<F>()) {
#pragma unroll
        for (int n = 0; n < 8; ++n) {
          const float2 vs = *reinterpret_cast<const float2*>(tok_scale + kTile + n * 8 + 2 * cq);
          s[n][0] *= vs.x, s[n][1] *= vs.y, s[n][2] *= vs.x, s[n][3] *= vs.y;
        }
      }
    };
    const auto rescale = [&](const float(&alpha)[2]) {
      // Once the rows' maxima settle (most pages of a long prefill) alpha is 1: the warp skips the
      // multiplications, which would change nothing.
      if (__any_sync(0xffffffffu, alpha[0] != 1.0f || alpha[1] != 1.0f))
#pragma unroll
        for (int n = 0; n < NT; ++n) {
          o[n][0] *= alpha[0], o[n][1] *= alpha[0];
          o[n][2] *= alpha[1], o[n][3] *= alpha[1];
        }
    };
    // (WG) P's terms for the 4 k-steps of a page (wgmma's A fragment is mma.sync's).
    [[maybe_unused]] const auto wg_p = [&](const float(&s)[8][4], std::uint32_t(&P)[4][kTerms][4]) {
#pragma unroll
      for (int kk = 0; kk < 4; ++kk) p_fragments<NBV == 1>(s, kk, P[kk]);  // exact mode only
    };
    // (WG) O += P V of page p, issued and committed: P's terms from registers, V's [token][dim] tile
    // read transposed, a 64 x 128 x 16 wgmma per term product and 16 tokens.
    [[maybe_unused]] const auto wg_pv = [&](int p, const std::uint32_t(&P)[4][kTerms][4]) {
      if constexpr (WG) {
        __nv_bfloat16* const vt = k_tile(p) + NBK * S::tile;
        const std::uint64_t vd = wgmma_desc(smem_u32(vt), kTile * 128, 1024);
        wgmma_fence();
        term_products<NBV>(kTerms, [&](int i, int j) {
#pragma unroll
          for (int kk = 0; kk < 4; ++kk)  // tokens 16 kk..: 2 row groups of 8 (SBO), 2 panels of 64 dims (LBO)
            wgmma_m64n128k16_rs_tn(o, P[kk][i], wgmma_desc_at(vd, j * S::tile * 2 + kk * 16 * 128));
        });
        wgmma_commit();  // awaited by the caller: at the next page's barrier, or during the next page (pipelined)
      }
    };
    // O += P V of page p on mma.sync.
    [[maybe_unused]] const auto mma_pv = [&](int p, const float(&s)[8][4]) {
      __nv_bfloat16* const vt = k_tile(p) + NBK * S::tile;
      // O += P V: P's accumulator layout is the A fragment of the next mma (4 k-steps of 16 tokens).
#pragma unroll
      for (int kk = 0; kk < 4; ++kk) {
        std::uint32_t P[kTerms][4];
        p_fragments<false>(s, kk, P);
        // Groups of G n2 (2 G accumulators), fragments first, as for S.
        constexpr int G = NBV == 1 && D >= 128 ? 8 : 4;
#pragma unroll
        for (int n0 = 0; n0 < D / 16; n0 += G) {
          std::uint32_t b[G][NBV][4];
#pragma unroll
          for (int u = 0; u < G; ++u)
#pragma unroll
            for (int j = 0; j < NBV; ++j)
              ldmatrix_x4_trans(vt + j * S::tile + kk * 16 * D + (v_lane ^ (n0 + u) << 4), b[u][j][0], b[u][j][1], b[u][j][2],
                                b[u][j][3]);
          term_products<NBV>(na, [&](int i, int j) {
#pragma unroll
            for (int u = 0; u < G; ++u) {
              mma(o[2 * (n0 + u)], P[i], b[u][j][0], b[u][j][1]);
              mma(o[2 * (n0 + u) + 1], P[i], b[u][j][2], b[u][j][3]);
            }
          });
        }
      }
    };
    const auto softmax_pv = [&](int p, float(&s)[8][4]) {
      float alpha[2];
      softmax(p, s, alpha);
      rescale(alpha);
      if constexpr (WG) {
        std::uint32_t P[4][kTerms][4];
        wg_p(s, P);
        wg_pv(p, P);
      } else {
        mma_pv(p, s);
      }
    };
    if constexpr (kPipelined) {
      // bf16 on wgmma: page p - 1's P V runs while the warps take page p's softmax (FlashAttention-3's
      // overlap within a warpgroup), and no block barrier: each ring slot has two mbarriers, so a
      // warpgroup waits only for the page it reads (full) and a thread only for the slot it copies
      // into (empty), and the warpgroups drift half a page apart as their turns on the tensor cores
      // (wg_qk) want. Per page: S(p) and P V(p - 1) issued, S(p) awaited, the softmax, P V(p - 1)
      // awaited and page p - 1 released, page p + 2 copied into page p - 2's slot (both warpgroups
      // released it a page ago, so this seldom waits), then o rescaled and P's terms made. Every page
      // of the range runs both products (a warp whose tile does not see a page adds p = 0).
      if (pb < pe) {
        const auto fill = [&](int p) {
          if (p >= pe) return;
          const int i = ring(p);
          if (i >= kStages) mbar_wait(&ring_empty[slot(p)], (i / kStages - 1) & 1);
          issue(p);
          cp_async_arrive_noinc(&ring_full[slot(p)]);
        };
        const auto landed = [&](int p) {
          mbar_wait(&ring_full[slot(p)], (ring(p) / kStages) & 1);
          fence_proxy_async();  // the copies (generic proxy) before wgmma reads them
        };
        const auto release = [&](int p) { mbar_arrive(&ring_empty[slot(p)]); };
        float s[8][4], alpha[2];
        std::uint32_t P[4][kTerms][4];
        fill(pb);
        fill(pb + 1);
        landed(pb);
        wg_qk(pb, s, true);
        wgmma_wait<0>();
        wgmma_fence_operand(s);
        softmax(pb, s, alpha);
        fill(pb + 2);
        rescale(alpha);
        wg_p(s, P);
        for (int p = pb + 1; p < pe; ++p) {
          landed(p);
          wg_qk(p, s, true);
          wg_pv(p - 1, P);
          wgmma_wait<1>();  // S(p)
          wgmma_fence_operand(s);
          softmax(p, s, alpha);
          wgmma_wait<0>();  // P V(p - 1)
          wgmma_fence_operand(o);
          release(p - 1);
          fill(p + 2);
          rescale(alpha);
          wg_p(s, P);
        }
        wg_pv(pe - 1, P);
        wgmma_wait<0>();
        wgmma_fence_operand(o);
        release(pe - 1);
        ring_i0 += pe - pb;
      }
    } else {
      if (pb < pe) issue(pb);
      cp_async_commit();
      for (int p = pb; p < pe; ++p) {
        // Page p has landed and every warp is done with page p - 1, whose slot takes page p + 1.
        cp_async_wait<0>();
        if constexpr (WG) {
          fence_proxy_async();
          wgmma_wait<0>();  // the last page's P V is done with its slot and with o
          wgmma_fence_operand(o);
        }
        __syncthreads();
        if (p + 1 < pe) issue(p + 1);
        cp_async_commit();
        __nv_bfloat16* const kt = k_tile(p);
        if constexpr (!tiles_ring<F>()) {
          const std::uint8_t* k_raw = raw + (p - pb) % kStages * (k_region + v_region);
          page_to_terms<F, D, WG>(c, kvh, k_raw, k_raw + k_region, min(kTile, hi_tok - p * kTile), kt, kt + NBK * S::tile, tok_scale);
          if constexpr (WG) fence_proxy_async();
          __syncthreads();
        }
        float s[8][4];
        if constexpr (WG) {
          if (!wg_qk(p, s, false)) continue;
          wgmma_wait<0>();
          wgmma_fence_operand(s);
        } else {
          if (!needs(warp, p)) continue;
#pragma unroll
          for (int n = 0; n < 8; ++n) s[n][0] = s[n][1] = s[n][2] = s[n][3] = 0.0f;
          // S = Q K^T: 16 x 64 in 8 n-tiles of 8 tokens; term products i + j < na, smallest first.
          // The k-step ks's products into acc: the 8 n-tiles' fragments first, then each term product
          // across them, so consecutive mmas write different accumulators.
          const auto qk_step = [&](int ks, float(&acc)[8][4]) {
            std::uint32_t q[kTerms][4];
#pragma unroll
            for (int k = 0; k < kTerms; ++k) {
              const uint4 u = qf[((warp * KS + ks) * 32 + lane) * kTerms + k];
              q[k][0] = u.x, q[k][1] = u.y, q[k][2] = u.z, q[k][3] = u.w;
            }
            std::uint32_t b[8][NBK][2];
#pragma unroll
            for (int n = 0; n < 8; ++n)
#pragma unroll
              for (int j = 0; j < NBK; ++j) {
                const __nv_bfloat16* kr = kt + j * S::tile + n * 8 * D;
                b[n][j][0] = *reinterpret_cast<const std::uint32_t*>(kr + (k_lane ^ ks << 4));
                b[n][j][1] = *reinterpret_cast<const std::uint32_t*>(kr + (k_lane ^ (2 * ks + 1) << 3));
              }
            term_products<NBK>(na, [&](int i, int j) {
#pragma unroll
              for (int n = 0; n < 8; ++n) mma(acc[n], q[i], b[n][j][0], b[n][j][1]);
            });
          };
          if constexpr (block_scaled_k<F>()) {
            // A block of 32 dimensions (two k-steps) at a time; its sum times each token's d.
#pragma unroll
            for (int blk = 0; blk < D / kGgmlBlock; ++blk) {
              float t[8][4];
#pragma unroll
              for (int n = 0; n < 8; ++n) t[n][0] = t[n][1] = t[n][2] = t[n][3] = 0.0f;
              qk_step(2 * blk, t);
              qk_step(2 * blk + 1, t);
#pragma unroll
              for (int n = 0; n < 8; ++n) {
                const float2 d = *reinterpret_cast<const float2*>(tok_scale + blk * kTile + n * 8 + 2 * cq);
                s[n][0] += t[n][0] * d.x, s[n][1] += t[n][1] * d.y, s[n][2] += t[n][2] * d.x, s[n][3] += t[n][3] * d.y;
              }
            }
          } else if constexpr (NBK == 1) {
            // Even and odd k-steps accumulate apart (16 mma chains instead of 8), added at the end.
            float s2[8][4];
#pragma unroll
            for (int n = 0; n < 8; ++n) s2[n][0] = s2[n][1] = s2[n][2] = s2[n][3] = 0.0f;
#pragma unroll
            for (int ks = 0; ks < KS; ks += 2) {
              qk_step(ks, s);
              qk_step(ks + 1, s2);
            }
#pragma unroll
            for (int n = 0; n < 8; ++n)
#pragma unroll
              for (int e = 0; e < 4; ++e) s[n][e] += s2[n][e];
          } else {
#pragma unroll
            for (int ks = 0; ks < KS; ++ks) qk_step(ks, s);
          }
        }
        softmax_pv(p, s);
      }
    }
    if constexpr (WG) {
      wgmma_wait<0>();
      wgmma_fence_operand(o);
    }
    __syncthreads();  // the last page's slot is free before the next sequence's first copy
  }
  if (!has_tile) return;
  // This split's partial result per query vector: (m, l) and the unnormalized accumulator.
#pragma unroll
  for (int r = 0; r < 2; ++r) {
    l[r] += __shfl_xor_sync(0xffffffffu, l[r], 1);
    l[r] += __shfl_xor_sync(0xffffffffu, l[r], 2);
  }
  const std::int64_t entries = static_cast<std::int64_t>(a.num_tiles) * a.kv_heads * splits * kMaxTileQ;
  const std::int64_t base = ((static_cast<std::int64_t>(ti) * a.kv_heads + kvh) * splits + split) * kMaxTileQ;
  float* wacc = a.workspace + 2 * entries;
#pragma unroll
  for (int r = 0; r < 2; ++r) {
    const int qi = g + 8 * r;
    if (qi < nq && cq == 0) {
      a.workspace[2 * (base + qi)] = m[r];
      a.workspace[2 * (base + qi) + 1] = l[r];
    }
  }
  if (may_rotate<F>() && rot.o_block > 1) {
    // V's rotation on the accumulator: the warp's 16 rows through its part of the scratch (free
    // since the page loop's last barrier), butterflies, then the multiplier of each element.
    float* so = scratch + warp * 16 * D;
#pragma unroll
    for (int r = 0; r < 2; ++r)
#pragma unroll
      for (int n = 0; n < NT; ++n)
        *reinterpret_cast<float2*>(so + (g + 8 * r) * D + n * 8 + 2 * cq) = make_float2(o[n][2 * r], o[n][2 * r + 1]);
    __syncwarp();
    fwht_rows<D>(so, 16, rot.o_block, lane, 32, [] { __syncwarp(); });
    for (int i = lane; i < nq * D; i += 32) wacc[base * D + i] = so[i] * out_multiplier<F>(c, rot, kvh, i % D);
    return;
  }
#pragma unroll
  for (int r = 0; r < 2; ++r) {
    const int qi = g + 8 * r;
    if (qi >= nq) continue;
#pragma unroll
    for (int n = 0; n < NT; ++n) {
      const int j = n * 8 + 2 * cq;
      *reinterpret_cast<float2*>(wacc + (base + qi) * D + j) =
          make_float2(o[n][2 * r] * out_multiplier<F>(c, rot, kvh, j), o[n][2 * r + 1] * out_multiplier<F>(c, rot, kvh, j + 1));
    }
  }
}

template <KvFamily F, int D, bool WG>
void launch(const KvLayerCodec& c, const PagedAttentionArgs& a, int splits, cudaStream_t s) {
  constexpr int W = warps_of<F, D>();
  const int smem = Smem<F, D, WG>::bytes(c);
  static int configured = 0;  // the largest dynamic size this instantiation was opened for
  if (smem > 48 * 1024 && smem > configured) {
    KV_CUDA_CHECK(cudaFuncSetAttribute(prefill_kernel<F, D, WG>, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
    // All of the unified L1 as shared memory (q8_0 at head_dim 128 takes 226 KB a block).
    KV_CUDA_CHECK(cudaFuncSetAttribute(prefill_kernel<F, D, WG>, cudaFuncAttributePreferredSharedMemoryCarveout, cudaSharedmemCarveoutMaxShared));
    configured = smem;
  }
  const dim3 grid(splits, a.kv_heads, (a.num_tiles + W - 1) / W);
  prefill_kernel<F, D, WG><<<grid, W * 32, smem, s>>>(c, a, splits, a.prefill == PrefillKernel::kBf16x3 ? 2 : kTerms);
  KV_CUDA_CHECK_LAUNCH();
}

// fn(std::integral_constant<KvFamily, F>) for the codec's family (every family the kernel takes).
template <class Fn>
void visit_family(KvFamily f, Fn&& fn) {
  using K = KvFamily;
  switch (f) {
    case K::kBf16: fn(std::integral_constant<K, K::kBf16>{}); break;
    case K::kF16: fn(std::integral_constant<K, K::kF16>{}); break;
    case K::kFp8Tensor: fn(std::integral_constant<K, K::kFp8Tensor>{}); break;
    case K::kFp8Pth: fn(std::integral_constant<K, K::kFp8Pth>{}); break;
    case K::kInt8Pth: fn(std::integral_constant<K, K::kInt8Pth>{}); break;
    case K::kInt4Pth: fn(std::integral_constant<K, K::kInt4Pth>{}); break;
    case K::kNvfp4: fn(std::integral_constant<K, K::kNvfp4>{}); break;
    case K::kQ8_0: fn(std::integral_constant<K, K::kQ8_0>{}); break;
    case K::kQ4_0: fn(std::integral_constant<K, K::kQ4_0>{}); break;
    case K::kTqFp8Key: fn(std::integral_constant<K, K::kTqFp8Key>{}); break;
    case K::kTqMse: fn(std::integral_constant<K, K::kTqMse>{}); break;
    default: throw Error("prefill_attention: unsupported KV family", kExitInternal);
  }
}

// The device's compute capability and opt-in shared memory per block (227 KB on sm_90, 163 KB on
// sm_80, 99 KB on sm_86/89), read once.
struct DeviceLimits {
  int major = 0, minor = 0, smem_optin = 0;
};
const DeviceLimits& device_limits() {
  static const DeviceLimits d = [] {
    DeviceLimits r;
    int dev = 0;
    if (cudaGetDevice(&dev) != cudaSuccess || cudaDeviceGetAttribute(&r.major, cudaDevAttrComputeCapabilityMajor, dev) != cudaSuccess ||
        cudaDeviceGetAttribute(&r.minor, cudaDevAttrComputeCapabilityMinor, dev) != cudaSuccess ||
        cudaDeviceGetAttribute(&r.smem_optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, dev) != cudaSuccess)
      return DeviceLimits{};
    return r;
  }();
  return d;
}

// The build made sm_90a code for this file (kernels/CMakeLists.txt): the wgmma kernels exist.
#ifdef KVGATE_PREFILL_WGMMA
constexpr bool kWgmmaBuilt = true;
#else
constexpr bool kWgmmaBuilt = false;
#endif

// fn(family F, head_dim D, WG) of the kernel that runs this call: in exact mode the wgmma kernel where
// it exists for (F, D), on a compute capability 9.0 device (sm_90a code runs there only); the
// mma.sync kernel for {"prefill": "mma_sync"} and "bf16x3" (the wgmma kernel keeps every term: its
// products are not the cost).
template <class Fn>
void visit_kernel(const KvLayerCodec& c, const PagedAttentionArgs& a, Fn&& fn) {
  using D64 = std::integral_constant<int, 64>;
  using D128 = std::integral_constant<int, 128>;
  visit_family(c.family, [&](auto f) {
    if (c.head_dim == 64) return fn(f, D64{}, std::false_type{});
    if constexpr (kWgmmaBuilt && wgmma_kernel<decltype(f)::value, 128>()) {
      const DeviceLimits& d = device_limits();
      if (a.prefill == PrefillKernel::kTensorCore && d.major == 9 && d.minor == 0) return fn(f, D128{}, std::true_type{});
    }
    fn(f, D128{}, std::false_type{});
  });
}

}  // namespace

bool prefill_attention_supported(const KvLayerCodec& c, const PagedAttentionArgs& a) {
  if (a.prefill == PrefillKernel::kGeneric || a.emulation.active() || a.max_tile_rows < 2) return false;
  if (c.head_dim != 64 && c.head_dim != 128) return false;
  if (c.family == KvFamily::kF32 || c.family == KvFamily::kCount) return false;
  // On sm_90 every codec fits (q8_0 at head_dim 128 is the largest: 226 KB); smaller parts take the
  // generic kernel for what does not.
  int smem = 0;
  visit_kernel(c, a, [&](auto f, auto d, auto wg) { smem = Smem<f.value, d.value, wg.value>::bytes(c); });
  const DeviceLimits& d = device_limits();
  return d.major >= 8 && smem + 1024 <= d.smem_optin;
}

int prefill_attention_splits(const KvLayerCodec& c, const PagedAttentionArgs& a, int splits) {
  if (a.splits > 0) return std::min(a.splits, splits);
  int w = 4;
  visit_family(c.family, [&](auto f) { w = c.head_dim == 128 ? warps_of<f.value, 128>() : warps_of<f.value, 64>(); });
  const int blocks = (a.num_tiles + w - 1) / w * a.kv_heads, slots = 132 * (8 / w);  // 8 warps a multiprocessor
  const int pages = (a.max_ctx + kTile - 1) / kTile;
  // About one wave of every multiprocessor's blocks, each split at least 4 pages.
  const int want = std::min((slots + blocks - 1) / blocks, std::max(1, pages / 4));
  return std::max(1, std::min(want, splits));
}

void prefill_attention(const KvLayerCodec& c, const PagedAttentionArgs& a, int splits, cudaStream_t s) {
  visit_kernel(c, a, [&](auto f, auto d, auto wg) { launch<f.value, d.value, wg.value>(c, a, splits, s); });
}

}  // namespace kvgate::kernels::cuda
