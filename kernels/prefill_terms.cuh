// prefill_terms.cuh: the prefill kernels' formats and fragments - bf16 terms per format (K, V; Q and
// P: kTerms), the warps and shared-memory layout of a block, the swizzled term tiles, the term split,
// and the mma.sync / ldmatrix fragments.
// Part of paged_attention_prefill.cu, its only includer: the prefill kernels' definitions stay in one
// translation unit (internal linkage, so ptxas inlines and specializes them as one file).

#pragma once

#include <cstdint>

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>

#include "kernels/kv_rotations.cuh"
#include "kernels/paged_attention_prefill.h"
#include "kernels/paged_page_decode.cuh"
#include "kernels/wgmma.cuh"

namespace kvgate::kernels::cuda {

namespace {

using page_decode::elementwise_family;
using page_decode::kTile;

static_assert(kMaxTileQ == 16, "a tile is the 16 rows of one mma fragment");

// bf16 terms of Q and P: three in exact mode (fp32 precision), one in engine mode (Q and P rounded
// to bf16, as FlashAttention computes in a bf16 model). The kernels take it as the template QT.
constexpr int kTerms = 3;
template <AttentionNumerics N>
constexpr int q_terms() {
  return N == AttentionNumerics::kEngine ? 1 : kTerms;
}

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

// (WG) Q's one term (engine mode) stays in registers as the A operand of S = Q K^T (32 a thread)
// instead of a shared-memory tile, halving S's shared-memory reads (at n = 64 A is as large as B):
// 2-3% (docs/bench-notes/prefill-fp8-ring-2026-12-06.md). Exact mode's three terms would take 96.
template <bool WG, int QT>
constexpr bool q_in_registers() {
  return WG && QT == 1;
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
// The wgmma kernel in engine mode decodes the one-term formats' pages into a ring of tiles too, so
// that they take the pipelined loop: fp8 per tensor, each thread widening the raw chunks it copied
// itself (no barrier at all: own_fp8_chunks_to_tiles), the per-token-head formats and nvfp4 a warp
// per token slot once the raw ring's mbarrier says every thread's copies of the page landed
// (shared_raw_ring). Either arrives on the tile slot's mbarrier. Exact mode's three Q terms (96 KB)
// leave no room for four stages of tiles beside the raw ring.
template <KvFamily F, bool WG, int QT>
constexpr bool decoded_ring() {
  return WG && QT == 1 &&
         (F == KvFamily::kFp8Tensor || F == KvFamily::kFp8Pth || F == KvFamily::kInt8Pth || F == KvFamily::kInt4Pth ||
          F == KvFamily::kNvfp4);
}
// The fp16 cache in engine numerics on the wgmma kernel (template flag H) runs the bf16 kernel's
// instantiation: its pages are copied into the tiles as bf16 pages are, and the products take fp16
// operands, K and V as they are and Q's and P's bf16 values scaled by powers of two, all exact in
// fp16; so each product is the one the two-term bf16 tiles gave, at one MMA instead of two.
template <KvFamily F, bool WG, int QT>
constexpr bool f16_operands() {
  return F == KvFamily::kBf16 && WG && QT == 1;
}
// (H) P's power of two: a weight (<= 1, unnormalized) enters as 2^15 p, exact in fp16 from 2^-32 up.
constexpr float kPf16Mul = 32768.0f;
template <KvFamily F, bool WG, int QT>
constexpr bool shared_raw_ring() {
  return decoded_ring<F, WG, QT>() && F != KvFamily::kFp8Tensor;
}
// The kernels whose page loop is prefill_kernel's pipelined one (mbarriers, no block barrier a page).
template <KvFamily F, bool WG, int QT>
constexpr bool pipelined() {
  return WG && (tiles_ring<F>() || decoded_ring<F, WG, QT>());
}
// A producer warpgroup (the block's last, past the W warps of tiles) whose first warp copies the
// pipelined loop's pages into the ring while the tile warps only compute: the bf16 ring's cp.async
// and the tile pool's bulk copies (PL), in engine mode. The page loop is bound by each tile warp's own
// instructions, and a page's copy would be a quarter of them (bench-notes/prefill-producer-2026-12-07.md).
// A whole warpgroup, as FlashAttention-3's, because registers move between warpgroups (setmaxnreg):
// a scheduler's 16384 registers hold one producer warp at kProducerRegs and two tile warps at
// kTileRegs. Formats that decode in the ring keep their copies on the tile warps, which decode them;
// so do those that rotate Q (int4_per_token_head), whose Q staging's block barriers the producer
// would have to match one for one.
template <KvFamily F, bool WG, int QT, bool PL>
constexpr bool producer_warp() {
  return pipelined<F, WG, QT>() && QT == 1 && (tiles_ring<F>() || PL) && !may_rotate<F>();
}
// The bf16 ring's producer (bf16; fp16 and the fp16 images through the fp16-operand kernel) copies
// whole pages by TMA where the launch gives it tensor maps of the pools (page_tensor_maps.h), as
// FlashAttention-3 loads K and V: a few instructions from one lane, where 32 lanes' cp.async took 64
// a lane a page.
template <KvFamily F, bool WG, int QT, bool PL>
constexpr bool page_maps() {
  return tiles_ring<F>() && producer_warp<F, WG, QT, PL>() && !PL;
}
template <KvFamily F, int D, bool WG, int QT, bool PL>
constexpr int block_threads() {
  return (warps_of<F, D>() + (producer_warp<F, WG, QT, PL>() ? 4 : 0)) * 32;
}
// The bf16 ring in engine numerics holds pages in pairs (paired_ring): 128 keys a step, as
// FlashAttention-3's tiles at head_dim 128, so that a step's fixed part (the ring's waits, the turn
// on the tensor cores, the descriptors, the rescale test) is paid once for 128 keys, and S is one
// 64 x 128 x 16 product a k-step. A pair slot is [K: two pages' rows interleaved into 128-row panels]
// [V of the first page][V of the second], so Q is read once per k-step for 128 keys. Q's one term
// stays in its shared-memory tiles (an SS product): 128 keys of scores leave no registers for it.
// The fp16-operand kernel (H) shares the layout (six page slots, the Q tiles unused) and keeps a
// page a step with Q in registers, where its values are rescaled into fp16's range. The tile pool's
// formats without token scales (PL: fp8 per tensor, nvfp4) take pairs too, their pool images' K
// panels bulk-copied into the interleaved layout; the per-token-head formats' scales a stage would
// not fit beside six slots.
template <KvFamily F, bool WG, int QT, bool PL = false>
constexpr bool paired_ring() {
  return WG && QT == 1 && (tiles_ring<F>() || (PL && decoded_ring<F, WG, QT>() && !token_scales<F>()));
}
template <KvFamily F, bool WG, int QT, bool PL, bool H>
constexpr bool paired_steps() {
  return paired_ring<F, WG, QT, PL>() && producer_warp<F, WG, QT, PL>() && !H;
}
constexpr int kProducerRegs = 56, kTileRegs = 224;
static_assert(kProducerRegs * 32 + 2 * kTileRegs * 32 <= 16384, "a scheduler's registers: one producer warp, two tile warps");

// Stages of the ring. The pipelined loop keeps four: page p - 1's V (its P V runs during page p's
// softmax), page p, and pages p + 1 and p + 2 landing, so a copy has two pages' time: 4 x 32 KB of
// tiles and 96 KB of Q terms, 225 KB with the alignment (engine mode: Q in registers, the raw ring
// beside the tiles). The paired ring six page slots, three pairs: the step before's (its P V), this
// step's, the next step's landing (6 x 32 KB and 32 KB of Q tiles).
template <KvFamily F, bool WG, int QT, bool PL = false>
constexpr int ring_stages() {
  return paired_ring<F, WG, QT, PL>() ? 6 : pipelined<F, WG, QT>() ? 4 : 2;
}
// The raw ring's pages: one decoded while the next one lands; the shared raw ring a third, so that
// a page's copy waits for the page before it to leave its slot (every thread decoded it a page ago).
template <KvFamily F, bool WG, int QT>
constexpr int raw_stages() {
  return shared_raw_ring<F, WG, QT>() ? 3 : 2;
}

// Shared memory: bf16 K and V term tiles [stage][K terms, V terms][64][D] (one stage unless
// tiles_ring or decoded_ring), Q fragments [warp][D/16][lane][QT terms] (uint4 each), the per-token-head formats'
// token scales [K, V][64] or q8_0/q4_0's K block scales [D/32][64], then (other formats than bf16)
// the raw ring [raw_stages][K region, V region]. The term tiles double
// as fp32 scratch [16 W][D] for the rotated queries and outputs. Tile rows are swizzled (tile_index)
// instead of padded: q8_0's three terms with its raw ring fit a block (226 KB). PL: the tile pool's
// kernel (no raw ring), whose ring may hold pairs.
template <KvFamily F, int D, bool WG, int QT = kTerms, bool PL = false>
struct Smem {
  static constexpr int NBK = k_terms<F>(), NBV = kv_terms<F>(), W = warps_of<F, D>();
  static constexpr int tile = kTile * D;  // bf16 elements
  static constexpr int stage = (NBK + NBV) * tile;
  static constexpr int q_uint4 = q_in_registers<WG, QT>() && !paired_ring<F, WG, QT, PL>() ? 0 : W * (D / 16) * 32 * QT;
  // The term tiles, or the scratch where that is larger (8 warps, one term).
  static constexpr int ring = tiles_ring<F>() || decoded_ring<F, WG, QT>() ? ring_stages<F, WG, QT, PL>() : 1;  // stages of tiles
  static constexpr int tiles_bytes = std::max(ring * stage * 2, W * 16 * D * 4);
  // Token scales: one set, or one a stage of the ring (decoded_ring).
  static constexpr int scales_bytes = token_scales<F>() ? ring * 2 * kTile * 4 : block_scaled_k<F>() ? D / 32 * kTile * 4 : 0;
  static constexpr int raw_offset = tiles_bytes + q_uint4 * 16 + scales_bytes;  // a multiple of 16
  static int raw_stage(const KvLayerCodec& c) { return tiles_ring<F>() ? 0 : kTile * (c.k_bytes + c.v_bytes); }
  // wgmma's swizzled operands need a 1024-byte aligned base (the kernel aligns the dynamic region).
  static int bytes(const KvLayerCodec& c) { return raw_offset + raw_stages<F, WG, QT>() * raw_stage(c) + (WG ? 1024 : 0); }
};

// Element (t, col) of a term tile: the 16-byte chunk col / 8 of row t XORed with t % 8, so that the
// 8 rows an mma fragment or ldmatrix reads at one column land in 8 different bank groups. The wgmma
// kernel (WG) stores a tile as panels of 64 columns, [col / 64][t][64]: wgmma's 128-byte swizzle
// (wgmma.cuh); at head_dim 64 the two layouts are the same.
// A paired K tile has panels of 128 rows (R).
template <int D, bool WG, int R = kTile>
__device__ __forceinline__ constexpr int tile_index(int t, int col) {
  if constexpr (WG) return ((col >> 6) * R + t) * 64 + ((((col >> 3) ^ t) & 7) << 3) + (col & 7);
  else return t * D + ((((col >> 3) ^ t) & 7 | (col >> 3) & ~7) << 3) + (col & 7);
}

// Fragment addresses in the swizzled tiles: tile_index(8 m + r, 8 c + i) = 8 m D + ((r D + 8 r + i)
// XOR 8 c) for r < 8, so each lane keeps one offset and each unrolled chunk c is an immediate XOR.
// K (B of S = Q K^T): rows n * 8 + g, columns ks * 16 + 2 cq (+ 8). V (ldmatrix.trans of P V): lane
// addresses row kk * 16 + (mt % 2) * 8 + r of matrix mt, column (n0 + u) * 16 + (mt / 2) * 8.
template <int D>
__device__ __forceinline__ int k_lane_offset(int lane) {
  const int g = lane >> 2, cq = lane & 3;
  return g * D + 8 * g + 2 * cq;
}
template <int D>
__device__ __forceinline__ int v_lane_offset(int lane) {
  return ((lane >> 3 & 1) * 8 + (lane & 7)) * D + 8 * ((lane >> 4) ^ (lane & 7));
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

// (H: the fp16 cache in engine numerics, f16_operands) A pair of bf16 values times the power of two
// mul, as fp16: exact where each result is 0 or of magnitude in [2^-17, 65504] (8 significant bits
// in fp16's range), so the fp16 products are the bf16 kernel's products of the same values.
__device__ __forceinline__ std::uint32_t bf2_as_h2(std::uint32_t b, float mul) {
  const float2 f = __bfloat1622float2(*reinterpret_cast<const __nv_bfloat162*>(&b));
  const __half2 h = __floats2half2_rn(f.x * mul, f.y * mul);
  return *reinterpret_cast<const std::uint32_t*>(&h);
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
// The whole block's barrier where its warps reach it from different code (prefill_block's copies for
// the tile warps and the producer warpgroup): barrier.sync without .aligned, which __syncthreads is.
__device__ __forceinline__ void block_sync() { asm volatile("barrier.sync 0;\n" ::: "memory"); }

// fn(i, j) for each product of term i of Q or P (QT of them) and term j of K or V (NB) with
// i + j < n, the smallest (largest i + j) first: exact mode n = kTerms, bf16x3 n = 2; engine mode
// (QT = 1) n = kTerms: Q's or P's one term against every term of K or V.
template <int QT, int NB, class Fn>
__device__ __forceinline__ void term_products(int n, Fn&& fn) {
#pragma unroll
  for (int sum = QT + NB - 2; sum >= 0; --sum)
#pragma unroll
    for (int i = 0; i < QT; ++i) {
      const int j = sum - i;
      if (j >= 0 && j < NB && sum < n) fn(i, j);
    }
}

// P's QT A fragments for tokens 16 kk .. 16 kk + 15: the S accumulator's n-tiles 2 kk and 2 kk + 1
// are the A fragment's layout (rows g and g + 8, token pairs 2 cq and 2 cq + 8). kTrunc: truncated
// terms (split_terms), where every term product is kept: exact mode against one-term V (bf16x3 drops
// P's third term). QT = 1 (engine mode): P rounded to bf16.
template <int QT, bool kTrunc, int N>
__device__ __forceinline__ void p_fragments(const float (&s)[N][4], int kk, std::uint32_t (&P)[QT][4]) {
  std::uint32_t pt[4][QT];
  split_terms<QT, kTrunc>(s[2 * kk][0], s[2 * kk][1], pt[0]);
  split_terms<QT, kTrunc>(s[2 * kk][2], s[2 * kk][3], pt[1]);
  split_terms<QT, kTrunc>(s[2 * kk + 1][0], s[2 * kk + 1][1], pt[2]);
  split_terms<QT, kTrunc>(s[2 * kk + 1][2], s[2 * kk + 1][3], pt[3]);
#pragma unroll
  for (int k = 0; k < QT; ++k) P[k][0] = pt[0][k], P[k][1] = pt[1][k], P[k][2] = pt[2][k], P[k][3] = pt[3][k];
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

}  // namespace

}  // namespace kvgate::kernels::cuda
