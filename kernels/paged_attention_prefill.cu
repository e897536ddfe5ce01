// prefill_attention (paged_attention_prefill.h): flash-attention tiles on tensor cores over the paged,
// quantized cache, for prefill chunks.
//
// A block of W warps (4 or 8, warps_of in prefill_terms.cuh) takes W consecutive attention tiles (each <= 16 query
// vectors: rows x GQA group of one KV head) and one split of their pages; warp w owns tile w as the
// 16 rows of an mma.m16n8k16 fragment. Pages (64 tokens) go through a two-stage cp.async ring, the
// next one loading while the warps compute this one; the block decodes each page's K and V once for
// its tiles into shared memory as bf16 terms (see below): bf16 rows are copied as they are, fp16 and
// fp8 element by element, codec formats a warp per token slot, each lane two element pairs
// (codec_row, prefill_pages.cuh). Each warp computes S = Q K^T (16 x 64), masks it (causal, window) where the page
// reaches past a row's visible tokens, runs the online softmax in fp32 registers and accumulates
// O += P V (16 x head_dim, fp32). The partial (m, l, O) of each tile goes to the generic kernel's workspace
// and paged_attention() merges the splits with the same combine kernel.
//
// Two kernels: mma.sync (sm_80+; above) and, at head_dim 128 on compute capability 9.0, wgmma
// (template flag WG; wgmma.cuh): each 4 warps are a warpgroup whose 4 tiles (64 query vectors) are
// the rows of one asynchronous 64 x 64 x 16 (S, Q's terms and K from shared memory) or 64 x 128 x 16
// (O, P's terms from registers, V from shared memory read transposed) product. The fragments are the
// same, so the mask, softmax and output code is shared. The term tiles are then panels of 64 columns
// in wgmma's 128-byte swizzle (tile_index), Q's terms are tiles too (engine mode's one term: registers,
// q_in_registers), and the two warpgroups of a
// block take turns issuing S (named barriers) so that one's softmax overlaps the other's product;
// a page's P V is awaited at the next page's barrier, or (bf16, and in engine mode fp8, the
// per-token-head formats and nvfp4: kPipelined) runs during the next page's softmax, the pages coming
// through a ring on mbarriers instead of block barriers (the decoded formats: decoded_ring), filled
// (bf16 pages and the tile pool's, producer_warp) by a third, producer warpgroup: the bf16 ring's whole
// pages (bf16, fp16, fp16 images) by TMA tensor copies from its first lane where the caller gave the
// cache's size (page_maps, page_tensor_maps.h), else by its 32 lanes' cp.async.
// ("bf16x3" and "mma_sync" run the mma.sync kernel); q8_0/q4_0 (per-block K sums) keep mma.sync.
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
// hi.lo + lo.hi): 2^-16 per product, measured in docs. Engine mode (AttentionNumerics::kEngine,
// template QT = 1) keeps Q's and P's first term only: Q and P rounded to bf16 (round to nearest), as
// FlashAttention feeds them to its bf16 MMAs, against every term of K and V; a third of exact mode's
// products. The softmax, its rescaling and the final normalization are fp32 as in the generic kernel.
//
// The tile pool (engine mode, the decoded_ring formats; prefill_tile_pool.h): a pass first decodes
// every page the call reads, once per KV head, into a ring slot's image in global memory
// (predecode_kernel, page_to_terms as the kernel's own decoding), and the kernel (PL) bulk-copies
// those images into its ring as bf16 pages come, so no warp decodes between its products.
//
// Rotations (int4_per_token_head's randomized Hadamard transform, q8_0/q4_0's block rotations,
// TurboQuant's MSE keys) move off the tokens as in the decode kernel, by the same rule
// (kv_rotations.cuh): K's onto Q, V's onto the accumulator before it is written, once per tile.
#include <algorithm>
#include <cfloat>
#include <climits>
#include <cstdint>
#include <type_traits>

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>

#include "kernels/cp_async.cuh"
#include "kernels/cuda_check.cuh"
#include "kernels/f16_range.cuh"
#include "kernels/fwht_rows.cuh"
#include "kernels/kv_rotations.cuh"
#include "kernels/page_tensor_maps.h"
#include "kernels/paged_attention_decode.h"
#include "kernels/paged_attention_prefill.h"
#include "kernels/paged_page_decode.cuh"
#include "kernels/prefill_pages.cuh"
#include "kernels/prefill_terms.cuh"
#include "kernels/softmax_exp.cuh"
#include "kernels/wgmma.cuh"

namespace kvgate::kernels::cuda {

namespace {

// ---- the steps of prefill_kernel ---------------------------------------------------------------------
// Inlined into the kernel, whose registers hold a warp's state (m, l, o): Q's terms once, then per
// page S, the softmax and P V, and the partial result at the end.

// The block's first tile. Blocks start in the order of their index, and a chunk's later tiles see
// more keys: the longest tiles go first, so that the last wave is of the shortest ones.
__device__ __forceinline__ int block_tile0(int W) { return (gridDim.z - 1 - blockIdx.z) * W; }

// Q's terms of the block's warps. K's rotation moved onto Q: the block's 16 W query vectors through
// the scratch, signs first, then the butterflies (block-uniform: the codec's). Then this warp's tile's
// fragments (QT terms), per lane in qf, or (WG) in the warpgroup's Q tiles, or (WG, one term:
// q_in_registers, QR) in qr, the A operand of the warpgroup's S products.
template <KvFamily F, int D, bool WG, int QT, bool QR = q_in_registers<WG, QT>()>
__device__ __forceinline__ void stage_q_terms(const PagedAttentionArgs& a, const KvRotations& rot, const AttentionTile& tl, int nq, int kvh,
                                              int group, int qw, float* scratch, uint4* qf, std::uint32_t (&qr)[D / 16][4]) {
  constexpr int W = warps_of<F, D>(), T = W * 32, KS = D / 16;
  const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31, g = lane >> 2, cq = lane & 3;
  const bool q_rotated = may_rotate<F>() && rot.q_block > 1;
  if (q_rotated) {
    for (int i = threadIdx.x; i < W * 16 * D; i += T) {
      const int w = i / (16 * D), qi = i / D % 16, j = i % D, t = block_tile0(W) + w;
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
#pragma unroll
  for (int ks = 0; ks < KS; ++ks) {
    std::uint32_t t[4][QT];
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
      // FlashAttention-3's fp8 Q (fp8_operands_fast): emu_round_q's fp8 value unscaled, exact in bf16;
      // page_softmax multiplies q_scale into the scores, as FlashAttention-3 applies its descale.
      if (QT == 1 && a.emulation.q_fp8)
        x.x = fp8_e4m3_to_f32(f32_to_fp8_e4m3(x.x / a.emulation.q_scale)),
        x.y = fp8_e4m3_to_f32(f32_to_fp8_e4m3(x.y / a.emulation.q_scale));
      split_terms<QT>(x.x, x.y, t[e]);
      if constexpr (QR) {
        qr[ks][e] = t[e][0];
      } else if constexpr (WG) {
        // Row 16 (warp % 4) + qi of the warpgroup's tiles: the rows of this warp's accumulators.
        __nv_bfloat16* qt = reinterpret_cast<__nv_bfloat16*>(qf) + warp / 4 * QT * kTile * D;
#pragma unroll
        for (int k = 0; k < QT; ++k)
          *reinterpret_cast<std::uint32_t*>(qt + k * kTile * D + tile_index<D, true>(warp % 4 * 16 + qi, col)) = t[e][k];
      }
    }
    if constexpr (!WG)
#pragma unroll
      for (int k = 0; k < QT; ++k) qf[((warp * KS + ks) * 32 + lane) * QT + k] = make_uint4(t[0][k], t[1][k], t[2][k], t[3][k]);
  }
}

// The two warpgroups' turns on the tensor cores (wg_qk_issue): wait until the other warpgroup
// issued its products, and say that this one's are issued.
__device__ __forceinline__ void tensor_turn_wait() { named_barrier_sync(threadIdx.x >> 5 >= 4 ? 1 : 2, 256); }
__device__ __forceinline__ void tensor_turn_done() { named_barrier_arrive(threadIdx.x >> 5 >= 4 ? 2 : 1, 256); }

// (WG) S = Q K^T of a page (K's term tiles kt) for the warpgroup's 64 query vectors, issued and
// committed as one group if run (its 4 warps issue wgmmas together). A 64 x 64 x 16 wgmma per term
// product and k-step (i + j <= 2, smallest first), Q's term i and K's term j from shared memory
// (k-step ks: panel ks / 4, 32 bytes per k-step inside the 128-byte rows); the first overwrites s.
// The two warpgroups take turns on the tensor cores, so that one's softmax runs while the other's
// product does: each waits for the other's last issue (named barrier 1: warpgroup 0 issued, 2:
// warpgroup 1 issued; warpgroup 1 arrived at 2 once before the first page), so the turns strictly
// alternate even where no block barrier holds the warpgroups together (the pipelined loop): neither
// can arrive twice before the other waited. Every thread passes both barriers once a call. (An empty
// commit for a skipped page made ptxas serialize every wgmma of the kernel: C7520.)
template <KvFamily F, int D, bool WG, int QT, bool H>
__device__ __forceinline__ void wg_qk_issue(bool run, const __nv_bfloat16* kt, std::uint64_t qd, const std::uint32_t (&qr)[D / 16][4],
                                            float (&s)[8][4]) {
  constexpr int NBK = k_terms<F>(), W = warps_of<F, D>(), KS = D / 16;
  using S = Smem<F, D, WG, QT>;
  if (W == 8) tensor_turn_wait();
  if (run) {
    const std::uint64_t kd = wgmma_desc(smem_u32(kt), 16, 1024);
    int accumulate = 0;
    wgmma_fence();
    term_products<QT, NBK>(kTerms, [&](int i, int j) {
#pragma unroll
      for (int ks = 0; ks < KS; ++ks) {
        const int off = ks / 4 * kTile * 128 + ks % 4 * 32;
        if constexpr (q_in_registers<WG, QT>()) wgmma_m64n64k16_rs<H>(s, qr[ks], wgmma_desc_at(kd, j * S::tile * 2 + off), accumulate);
        else wgmma_m64n64k16_ss(s, wgmma_desc_at(qd, i * S::tile * 2 + off), wgmma_desc_at(kd, j * S::tile * 2 + off), accumulate);
        accumulate = 1;
      }
    });
    wgmma_commit();
  }
  if (W == 8) tensor_turn_done();
}

// S = Q K^T on mma.sync: 16 x 64 in 8 n-tiles of 8 tokens (K's term tiles kt); term products
// i + j < na, smallest first.
template <KvFamily F, int D, bool WG, int QT>
__device__ __forceinline__ void mma_qk(const uint4* qf, const __nv_bfloat16* kt, const float* tok_scale, int k_lane, int na, float (&s)[8][4]) {
  constexpr int NBK = k_terms<F>(), KS = D / 16;
  using S = Smem<F, D, WG, QT>;
  const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31, cq = lane & 3;
#pragma unroll
  for (int n = 0; n < 8; ++n) s[n][0] = s[n][1] = s[n][2] = s[n][3] = 0.0f;
  // The k-step ks's products into acc: the 8 n-tiles' fragments first, then each term product
  // across them, so consecutive mmas write different accumulators.
  const auto qk_step = [&](int ks, float(&acc)[8][4]) {
    std::uint32_t q[QT][4];
#pragma unroll
    for (int k = 0; k < QT; ++k) {
      const uint4 u = qf[((warp * KS + ks) * 32 + lane) * QT + k];
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
    term_products<QT, NBK>(na, [&](int i, int j) {
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

// A row's 2 N values in this thread (r = 0: row g, 1: row g + 8) reduced by op as a tree: depth 4
// (N = 8) where a chain is 16 dependent instructions; with two warps a scheduler, fixed-latency dependencies
// are the kernel's largest stall reason (docs/bench-notes/prefill-elementwise-2026-12-07.md).
// t[n] = op(t[n], t[n + W]) for n < W, then the same at W / 2 ..: each level's count a constant, so
// t stays in registers (a loop over the level width left 16 values in local memory).
template <int W, int N, class Op>
__device__ __forceinline__ void fold_tree(float (&t)[N], Op op) {
  if constexpr (W > 0) {
#pragma unroll
    for (int n = 0; n < W; ++n) t[n] = op(t[n], t[n + W]);
    fold_tree<W / 2>(t, op);
  }
}
template <int N, class Op>
__device__ __forceinline__ float row_tree(const float (&s)[N][4], int r, Op op) {
  float t[N];
#pragma unroll
  for (int n = 0; n < N; ++n) t[n] = op(s[n][2 * r], s[n][2 * r + 1]);
  fold_tree<N / 2>(t, op);
  return t[0];
}

// Mask, scale and online softmax of the scores s of tokens t0 .. t0 + 8 N - 1, a page's (N = 8) or
// a paired step's two pages' (N = 16), of this warp's 16 rows: s becomes p (times the tokens' V
// scales), l and m move on, alpha is what o must be multiplied by (1: nothing). (WG) A warp whose
// tile does not see the page (!act) adds nothing: all its scores are masked, so p = 0, and m, l and
// alpha stay as they were.
//
// Straight-line code on purpose: a select per score around expf (s == -inf ? 0 : expf) compiled to
// a branch around each score's 10-instruction exp chain, which serialized the 32 chains (the
// softmax took 56% of the warps' stall samples, docs/bench-notes/prefill-softmax-h200-2026-12-02.txt); exp(-inf - m) is already 0, so only m
// = -inf (a row that saw nothing yet) needs a finite stand-in.
//
// kFused (engine numerics): the scores stay unscaled, the maximum is scaled once a row, and a weight
// is one FFMA and an ex2, 2^(x c - m log2 e) with c = scale log2 e (the per-tensor K scale folded
// in): FlashAttention-2/3's exp2f(x * scale_log2 - max_scaled). Exact mode scales every score first
// and takes the exp of the difference (two more instructions a score).
//
// kLean (bf16 and fp8 per tensor, the pipelined formats whose pages need no decode a warp at a time):
// the mask test compares against the warp's common visible tokens (warp_vis) instead of a vote, the
// rescale factor is an ex2 too, and the caller passes act from the warp's page bounds in registers
// (own_needs). That is faster for those two; nvfp4 measured slower with it, so the formats decoded a
// warp at a time keep the vote and expf (docs/bench-notes/prefill-lean-softmax-2026-12-06.md).
template <KvFamily F, bool kFused, bool kLean, int N = 8>
__device__ __forceinline__ void page_softmax(const PagedAttentionArgs& a, bool act, int t0, int nq, const int (&first)[2], const int (&last)[2],
                                             const int (&warp_vis)[2],
                                             float k_mul, const float (&row_mul)[2], const float* tok_scale, float (&s)[N][4],
                                             float (&alpha)[2], float (&m)[2], float (&l)[2]) {
  static_assert(N == 8 || !token_scales<F>(), "token scales: a page's 64 tokens");
  const int lane = threadIdx.x & 31, g = lane >> 2, cq = lane & 3;
  // Mask, scale, online softmax (rows g and g + 8; a row's 8 N scores live in one quad). A page
  // inside every row's visible tokens (most pages of a long prefill) needs no mask.
  float mx[2] = {-INFINITY, -INFINITY};
  const float scale = a.emulation.q_fp8 ? a.scale * a.emulation.q_scale : a.scale;  // fp8 Q staged unscaled
  // (kFused) What multiplies a score after the masks: never 0, so that a masked -inf stays -inf
  // (a per-tensor scale of 0 leaves every score 0 either way); times the row's own factor row_mul
  // (an fp16 Q's power of two, f16_operands; else 1).
  [[maybe_unused]] const float mul = kFused ? fmaxf(tensor_scales<F>() ? scale * k_mul : scale, FLT_MIN) : scale;
  [[maybe_unused]] const float row_muls[2] = {mul * row_mul[0], mul * row_mul[1]};
  const auto scale_scores = [&](auto masked) {
#pragma unroll
    for (int n = 0; n < N; ++n)
#pragma unroll
      for (int e = 0; e < 4; ++e) {
        const int r = e >> 1, tok = t0 + n * 8 + 2 * cq + (e & 1);
        float x = s[n][e];
        if constexpr (tensor_scales<F>() && !kFused) x *= k_mul;
        if constexpr (token_scales<F>()) x *= tok_scale[n * 8 + 2 * cq + (e & 1)];
        if constexpr (!kFused) x *= scale;
        if constexpr (decltype(masked)::value) s[n][e] = act && tok >= first[r] && tok <= last[r] ? x : -INFINITY;
        else s[n][e] = x;
      }
  };
  bool inside = act;
  if constexpr (kLean) {
    inside = inside && t0 >= warp_vis[0] && t0 + N * 8 - 1 <= warp_vis[1];  // warp-uniform
  } else {
#pragma unroll
    for (int r = 0; r < 2; ++r)
      if (g + 8 * r < nq) inside = inside && t0 >= first[r] && t0 + N * 8 - 1 <= last[r];
    inside = __all_sync(0xffffffffu, inside);
  }
  if (inside) scale_scores(std::false_type{});
  else scale_scores(std::true_type{});
#pragma unroll
  for (int r = 0; r < 2; ++r) mx[r] = fmaxf(mx[r], row_tree(s, r, [](float x, float y) { return fmaxf(x, y); }));
  float sum[2] = {0.0f, 0.0f};
#pragma unroll
  for (int r = 0; r < 2; ++r) {
    mx[r] = fmaxf(mx[r], __shfl_xor_sync(0xffffffffu, mx[r], 1));
    mx[r] = fmaxf(mx[r], __shfl_xor_sync(0xffffffffu, mx[r], 2));
    if constexpr (kFused) mx[r] *= row_muls[r];  // the row's scaled maximum (-inf stays -inf)
    const float m_new = fmaxf(m[r], mx[r]);
    // (kFused, kLean) The rescale factor by ex2 too, as FlashAttention's: o and l take the same factor, so
    // its error cancels in o / l.
    alpha[r] = m_new == -INFINITY ? 1.0f : kFused && kLean ? exp2_approx((m[r] - m_new) * 1.44269504088896341f) : expf(m[r] - m_new);
    mx[r] = m_new == -INFINITY ? 0.0f : m_new;  // the exps' reference (every score is -inf where it is 0)
    m[r] = m_new;
  }
  [[maybe_unused]] const float c[2] = {row_muls[0] * 1.44269504088896341f, row_muls[1] * 1.44269504088896341f};
  [[maybe_unused]] const float ml2[2] = {mx[0] * 1.44269504088896341f, mx[1] * 1.44269504088896341f};
#pragma unroll
  for (int n = 0; n < N; ++n)
#pragma unroll
    for (int e = 0; e < 4; ++e) {
      const int r = e >> 1;
      s[n][e] = kFused ? exp2_approx(fmaf(s[n][e], c[r], -ml2[r])) : softmax_exp(s[n][e] - mx[r]);
      if constexpr (!kFused) sum[r] += s[n][e];  // exact mode keeps its order (its twin's test is tighter)
    }
  // (kFused) The row sums as trees too: the order of an fp32 sum of 16 weights, within engine numerics.
  if constexpr (kFused)
#pragma unroll
    for (int r = 0; r < 2; ++r) sum[r] = row_tree(s, r, [](float x, float y) { return x + y; });
#pragma unroll
  for (int r = 0; r < 2; ++r) l[r] = l[r] * alpha[r] + sum[r];
  // FlashAttention-3's fp8 P, l from the unrounded weights (fp8_operands_fast): emu_round_p by the
  // hardware's conversions, two weights an instruction (the same RNE and saturation: fp8_formats.h).
  if (a.emulation.pv_fp8)
#pragma unroll
    for (int n = 0; n < N; ++n)
#pragma unroll
      for (int e = 0; e < 4; e += 2) {
        const __nv_fp8x2_storage_t q = __nv_cvt_float2_to_fp8x2(make_float2(s[n][e], s[n][e + 1]), __NV_SATFINITE, __NV_E4M3);
        const float2 f = __half22float2(__half2(__nv_cvt_fp8x2_to_halfraw2(q, __NV_E4M3)));
        s[n][e] = f.x, s[n][e + 1] = f.y;
      }
  // Per-token V scales go onto p (fp32, before the split; l keeps the unscaled sum).
  if constexpr (token_scales<F>()) {
#pragma unroll
    for (int n = 0; n < N; ++n) {
      const float2 vs = *reinterpret_cast<const float2*>(tok_scale + kTile + n * 8 + 2 * cq);
      s[n][0] *= vs.x, s[n][1] *= vs.y, s[n][2] *= vs.x, s[n][3] *= vs.y;
    }
  }
}

// (WG) O += P V of a page (V's term tiles vt), issued and committed: P's terms from registers, V's
// [token][dim] tile read transposed, a 64 x 128 x 16 wgmma per term product and 16 tokens.
template <KvFamily F, int D, bool WG, int QT, bool H, int NT>
__device__ __forceinline__ void wg_pv_issue(const __nv_bfloat16* vt, const std::uint32_t (&P)[4][QT][4], float (&o)[NT][4]) {
  constexpr int NBV = kv_terms<F>();
  using S = Smem<F, D, WG, QT>;
  const std::uint64_t vd = wgmma_desc(smem_u32(vt), kTile * 128, 1024);
  wgmma_fence();
  term_products<QT, NBV>(kTerms, [&](int i, int j) {
#pragma unroll
    for (int kk = 0; kk < 4; ++kk)  // tokens 16 kk..: 2 row groups of 8 (SBO), 2 panels of 64 dims (LBO)
      wgmma_m64n128k16_rs_tn<H>(o, P[kk][i], wgmma_desc_at(vd, j * S::tile * 2 + kk * 16 * 128));
  });
  wgmma_commit();  // awaited by the caller: at the next page's barrier, or during the next page (pipelined)
}

// (paired_steps) S = Q K^T of a pair slot's 128 keys (kt: its K panels of 128 rows), issued and
// committed: one 64 x 128 x 16 wgmma a k-step, Q's one term from the warpgroup's shared-memory tiles
// (qd). The caller holds the turn on the tensor cores (pipelined_pages). Always issued: a skipped
// wgmma or a non-wgmma write of its accumulator makes ptxas serialize every wgmma of the kernel (C7515).
template <KvFamily F, int D>
__device__ __forceinline__ void wg_qk_pair_issue(const __nv_bfloat16* kt, std::uint64_t qd, float (&s)[16][4]) {
  constexpr int KS = D / 16;
  const std::uint64_t kd = wgmma_desc(smem_u32(kt), 16, 1024);
  wgmma_fence();
#pragma unroll
  for (int ks = 0; ks < KS; ++ks)  // panel ks / 4 (Q's of 64 rows, K's of 128), 32 bytes a k-step in a row
    wgmma_m64n128k16_ss(s, wgmma_desc_at(qd, ks / 4 * kTile * 128 + ks % 4 * 32), wgmma_desc_at(kd, ks / 4 * 2 * kTile * 128 + ks % 4 * 32),
                        ks > 0);
  wgmma_commit();
}

// (paired_steps) O += P V of a pair slot (its two pages' V tiles vt, vt + tile), committed: P's
// k-steps 0-3 against the first page's tokens, 4-7 against the second's.
template <KvFamily F, int D, int NT>
__device__ __forceinline__ void wg_pv_pair_issue(const __nv_bfloat16* vt, const std::uint32_t (&P)[8][1][4], float (&o)[NT][4]) {
  using S = Smem<F, D, true, 1>;
  const std::uint64_t vd = wgmma_desc(smem_u32(vt), kTile * 128, 1024);
  wgmma_fence();
#pragma unroll
  for (int kk = 0; kk < 8; ++kk) wgmma_m64n128k16_rs_tn(o, P[kk][0], wgmma_desc_at(vd, kk / 4 * S::tile * 2 + kk % 4 * 16 * 128));
  wgmma_commit();
}

// O += P V of a page (V's term tiles vt) on mma.sync.
template <KvFamily F, int D, bool WG, int QT, int NT>
__device__ __forceinline__ void mma_pv(const __nv_bfloat16* vt, const float (&s)[8][4], int v_lane, int na, float (&o)[NT][4]) {
  constexpr int NBV = kv_terms<F>();
  using S = Smem<F, D, WG, QT>;
  // O += P V: P's accumulator layout is the A fragment of the next mma (4 k-steps of 16 tokens).
#pragma unroll
  for (int kk = 0; kk < 4; ++kk) {
    std::uint32_t P[QT][4];
    p_fragments<QT, false>(s, kk, P);
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
      term_products<QT, NBV>(na, [&](int i, int j) {
#pragma unroll
        for (int u = 0; u < G; ++u) {
          mma(o[2 * (n0 + u)], P[i], b[u][j][0], b[u][j][1]);
          mma(o[2 * (n0 + u) + 1], P[i], b[u][j][2], b[u][j][3]);
        }
      });
    }
  }
}

// This split's partial result of the warp's tile (query vectors 0 .. nq - 1): (m, l) and the
// unnormalized accumulator, in the generic kernel's workspace.
template <KvFamily F, int D, int NT>
__device__ __forceinline__ void write_partial(const KvLayerCodec& c, const PagedAttentionArgs& a, const KvRotations& rot, int ti, int kvh,
                                              int split, int splits, int nq, float* scratch, const float (&m)[2], float (&l)[2],
                                              const float (&o)[NT][4]) {
  const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31, g = lane >> 2, cq = lane & 3;
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

// Once the rows' maxima settle (most pages of a long prefill) alpha is 1: the warp skips the
// multiplications of o, which would change nothing.
template <int NT>
__device__ __forceinline__ void rescale_o(const float (&alpha)[2], float (&o)[NT][4]) {
  if (__any_sync(0xffffffffu, alpha[0] != 1.0f || alpha[1] != 1.0f))
#pragma unroll
    for (int n = 0; n < NT; ++n) {
      o[n][0] *= alpha[0], o[n][1] *= alpha[0];
      o[n][2] *= alpha[1], o[n][3] *= alpha[1];
    }
}

// The page loop of the bf16 wgmma kernel (kPipelined): page p - 1's P V runs while the warps take
// page p's softmax (FlashAttention-3's overlap within a warpgroup), and no block barrier: each ring
// slot has two mbarriers, so a warpgroup waits only for the page it reads (full) and a thread only for
// the slot it copies into (empty), and the warpgroups drift half a page apart as their turns on the
// tensor cores (wg_qk) want. Per page: S(p) and P V(p - 1) issued, S(p) awaited, the softmax, P V(p -
// 1) awaited and page p - 1 released, page p + 2 copied into page p - 2's slot (both warpgroups
// released it a page ago, so this seldom waits; fill: the caller's, which arrives on the slot's full
// mbarrier), then o rescaled and P's terms made. Every page of the
// range runs both products (a warp whose tile does not see a page adds p = 0). A step is KS pages
// (paired_steps: 2, one slot of the paired ring), p its first. ring(p): the step's index in the
// block's ring, its slot and its mbarriers' phases follow from that. kTurn (paired_steps): the loop
// holds the turn on the tensor cores across both issues of a step, S(p) and P V(p - KS), as
// FlashAttention-3's scheduler barrier does, so that the other warpgroup's products do not come
// between them (wg_qk_issue takes its turn itself, around S alone).
template <int kStages, int QT, int KS, int NT, class Ring, class Fill, class QK, class Softmax, class Rescale, class MakeP, class PV>
__device__ __forceinline__ void pipelined_pages(int pb, int pe, std::uint64_t* ring_full, std::uint64_t* ring_empty, const Ring& ring,
                                                const Fill& fill, const QK& wg_qk, const Softmax& softmax, const Rescale& rescale,
                                                const MakeP& wg_p, const PV& wg_pv, float (&o)[NT][4]) {
  const auto slot = [&](int p) { return ring(p) % kStages; };
  const auto landed = [&](int p) {
    mbar_wait(&ring_full[slot(p)], (ring(p) / kStages) & 1);
    fence_proxy_async();  // the copies (generic proxy) before wgmma reads them
  };
  const auto release = [&](int p) { mbar_arrive(&ring_empty[slot(p)]); };
  constexpr bool kTurn = KS == 2;
  const auto turn_wait = [] { if constexpr (kTurn) tensor_turn_wait(); };
  const auto turn_done = [] { if constexpr (kTurn) tensor_turn_done(); };
  float s[8 * KS][4], alpha[2];
  std::uint32_t P[4 * KS][QT][4];
  fill(pb);
  fill(pb + KS);
  landed(pb);
  turn_wait();
  wg_qk(pb, s, true);
  turn_done();
  wgmma_wait<0>();
  wgmma_fence_operand(s);
  softmax(pb, s, alpha);
  fill(pb + 2 * KS);
  rescale(alpha);
  wg_p(s, P);
  int p = pb + KS;
  for (; p < pe; p += KS) {
    landed(p);
    turn_wait();
    wg_qk(p, s, true);
    wg_pv(p - KS, P);
    turn_done();
    wgmma_wait<1>();  // S(p)
    wgmma_fence_operand(s);
    softmax(p, s, alpha);
    wgmma_wait<0>();  // P V(p - KS)
    wgmma_fence_operand(o);
    release(p - KS);
    fill(p + 2 * KS);
    rescale(alpha);
    wg_p(s, P);
  }
  wg_pv(p - KS, P);
  wgmma_wait<0>();
  wgmma_fence_operand(o);
  release(p - KS);
}

// The page loop on block barriers (every kernel but kPipelined): page p + 1 copied while the warps
// take page p (codec formats: decoded into the term tiles first); a warp whose tile does not see the
// page skips it (WG: a warpgroup none of whose warps does).
template <KvFamily F, int D, bool WG, int QT, int NT, class Issue, class KTile, class Needs, class QK, class SoftmaxPV>
__device__ __forceinline__ void staged_pages(const KvLayerCodec& c, int kvh, int pb, int pe, int hi_tok, int k_region, int v_region,
                                             const std::uint8_t* raw, float* tok_scale, const uint4* qf, int k_lane, int na, const Issue& issue,
                                             const KTile& k_tile, const Needs& needs, const QK& wg_qk, const SoftmaxPV& softmax_pv,
                                             float (&o)[NT][4]) {
  constexpr int NBK = k_terms<F>(), kStages = ring_stages<F, WG, QT>();
  using S = Smem<F, D, WG, QT>;
  const int warp = threadIdx.x >> 5;
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
      mma_qk<F, D, WG, QT>(qf, kt, tok_scale, k_lane, na, s);
    }
    softmax_pv(p, s);
  }
}

// WG: the wgmma kernel (sm_90a; wgmma_kernel in prefill_terms.cuh): each 4 warps are one warpgroup
// that multiplies its 64 query vectors (4 tiles) by a page as one asynchronous 64 x 64 (S) and
// 64 x 128 (O) product; Q's terms sit in shared memory as wgmma operands instead of per-lane fragments.
// PL (decoded_ring formats): the pages come decoded from the call's tile pool (predecode_kernel), each
// a ring slot's image that thread 0 copies in two bulk copies, so no warp decodes and the pages flow
// as bf16 pages do (the lean softmax too).
// H (f16_operands: the fp16 cache, F = kBf16): the pages are copied as bf16 pages are, and the
// products take fp16 operands, Q's and P's bf16 values scaled by powers of two into fp16's range.
//
// The block's shared bookkeeping: its warps' tiles (sequence, first and last token + 1) and the
// ring's mbarriers. (kPipelined) full[s] completes when every thread's copies of slot s's page have
// landed (or every thread decoded its part; PL: one thread's bulk copies; producer_warp: the producer
// warp's copies), empty[s] when every tile thread is done with it (its P V awaited). (kSharedRaw)
// The raw ring's: raw_full[r] when every thread's copies of the page landed, raw_empty[r] when every
// thread decoded it.
template <int W, int kStages, int kRawStages>
struct BlockShared {
  std::uint64_t ring_full[kStages], ring_empty[kStages], raw_full[kRawStages], raw_empty[kRawStages];
  int w_seq[W], w_lo[W], w_hi[W];
};
template <KvFamily F, int D, bool WG, int QT, bool PL>
using BlockSharedOf = BlockShared<warps_of<F, D>(), ring_stages<F, WG, QT, PL>(), raw_stages<F, WG, QT>()>;

// The kernel's body for the tile warps (PR false) or (producer_warp) the producer warpgroup (PR
// true): two copies of the code, so that the producer's needs few registers (setmaxnreg).
template <KvFamily F, int D, bool WG, int QT, bool PL, bool H, bool PR>
__device__ __forceinline__ void prefill_block(const KvLayerCodec& c, const PagedAttentionArgs& a, int splits, int na,
                                              const PageTensorMaps& maps, BlockSharedOf<F, D, WG, QT, PL>& sh) {
  constexpr int NBK = k_terms<F>(), NBV = kv_terms<F>(), W = warps_of<F, D>(), T = W * 32;
  // (producer_warp) Warp W copies the pages (warps W + 1 to W + 3 only pass the block's barriers); the
  // W warps of tiles (threads [0, T)) compute.
  constexpr bool kProducer = producer_warp<F, WG, QT, PL>();
  static_assert(!PR || kProducer, "a producer warpgroup only where producer_warp");
  using S = Smem<F, D, WG, QT, PL>;
  constexpr int NT = D / 8;
  static_assert(!WG || (D == 128 && W % 4 == 0 && !block_scaled_k<F>()), "wgmma_kernel<F, D>");
  constexpr int kStages = ring_stages<F, WG, QT, PL>();
  static_assert(!PL || decoded_ring<F, WG, QT>(), "the tile pool holds one-term tiles of the wgmma kernel's ring");
  static_assert(!H || f16_operands<F, WG, QT>(), "fp16 operands: the bf16 kernel's ring in engine numerics");
  constexpr bool kPipelined = pipelined<F, WG, QT>(), kDecodedRing = decoded_ring<F, WG, QT>() && !PL;
  constexpr bool kSharedRaw = shared_raw_ring<F, WG, QT>() && !PL;
  constexpr bool kLean = kPipelined && !kSharedRaw;  // page_softmax
  constexpr int kRawStages = raw_stages<F, WG, QT>();
  // (paired_steps) Two pages a step: KS pages a ring slot, kSlots slots of the ring's pairs.
  constexpr bool kPaired = paired_steps<F, WG, QT, PL, H>();
  constexpr int KS = kPaired ? 2 : 1, kSlots = kStages / KS;
  // (page_maps) Whole pages by TMA where the launch made the pools' tensor maps (maps.on); kPanel:
  // the elements of a page's 64-column panel.
  constexpr bool kMaps = page_maps<F, WG, QT, PL>();
  constexpr int kPanel = kTile * 64;
  static_assert(!kPaired || (kProducer && kStages % 2 == 0), "the paired ring: a producer fills pairs of page slots");
  extern __shared__ uint4 smem_raw[];
  // wgmma's 128-byte swizzle is of address bits: its operands start 1024-byte aligned.
  uint4* const smem4 = WG ? smem_raw + ((1024 - (smem_u32(smem_raw) & 1023)) & 1023) / 16 : smem_raw;
  __nv_bfloat16* const tiles = reinterpret_cast<__nv_bfloat16*>(smem4);  // [stage][K terms, V terms][64][D]
  // Q's terms: [warp][ks][lane][QT] fragments, or (WG) [warpgroup][QT][64 rows][D] tiles.
  uint4* qf = reinterpret_cast<uint4*>(smem4) + S::tiles_bytes / 16;
  // [K 64][V 64] (per-token-head formats; a set a ring stage: decoded_ring) or K's block scales
  // [D/32][64] (q8_0, q4_0)
  float* tok_scale = reinterpret_cast<float*>(qf + S::q_uint4);
  float* scratch = reinterpret_cast<float*>(tiles);                // fp32 [16 W][D] outside the page loop
  std::uint8_t* raw = reinterpret_cast<std::uint8_t*>(smem4) + S::raw_offset;  // [kRawStages][K region, V region]
  int *const w_seq = sh.w_seq, *const w_lo = sh.w_lo, *const w_hi = sh.w_hi;
  std::uint64_t *const ring_full = sh.ring_full, *const ring_empty = sh.ring_empty;
  std::uint64_t *const raw_full = sh.raw_full, *const raw_empty = sh.raw_empty;

  const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31, g = lane >> 2;
  const int kvh = blockIdx.y, split = blockIdx.x;
  const int ti = block_tile0(W) + warp;
  const bool has_tile = !PR && ti < a.num_tiles;
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
  // The tokens every row of the warp sees, [warp_vis[0], warp_vis[1]]: a page inside them needs no
  // mask (page_softmax), decided by two comparisons a page instead of a vote.
  int warp_vis[2] = {0, INT_MAX};
  if constexpr (kLean) {
#pragma unroll
    for (int r = 0; r < 2; ++r)
      if (g + 8 * r < nq) warp_vis[0] = max(warp_vis[0], first[r]), warp_vis[1] = min(warp_vis[1], last[r]);
    warp_vis[0] = __reduce_max_sync(0xffffffffu, warp_vis[0]);
    warp_vis[1] = __reduce_min_sync(0xffffffffu, warp_vis[1]);
  }
  // (q_in_registers) Q's fragments, this warp's 16 rows of the warpgroup's A operand.
  std::uint32_t qr[D / 16][4];
  if constexpr (!PR) stage_q_terms<F, D, WG, QT, q_in_registers<WG, QT>() && !kPaired>(a, rot, tl, nq, kvh, group, qw, scratch, qf, qr);
  // (H) Each row's bf16 Q as fp16, times the power of two f16_range_exponent gives (rows g: fragment
  // elements 0 and 2, g + 8: 1 and 3; a row's values are its quad's); row_mul undoes it on the row's
  // scores.
  float row_mul[2] = {1.0f, 1.0f};
  if constexpr (H && !PR) {
    float mx[2] = {0.0f, 0.0f};
#pragma unroll
    for (int ks = 0; ks < D / 16; ++ks)
#pragma unroll
      for (int e = 0; e < 4; ++e) {
        const float2 f = __bfloat1622float2(*reinterpret_cast<const __nv_bfloat162*>(&qr[ks][e]));
        mx[e & 1] = fmaxf(mx[e & 1], fmaxf(fabsf(f.x), fabsf(f.y)));
      }
    float qs[2];
#pragma unroll
    for (int r = 0; r < 2; ++r) {
      mx[r] = fmaxf(mx[r], __shfl_xor_sync(0xffffffffu, mx[r], 1));
      mx[r] = fmaxf(mx[r], __shfl_xor_sync(0xffffffffu, mx[r], 2));
      const int k = f16_range_exponent(mx[r]);
      qs[r] = ldexpf(1.0f, k);
      row_mul[r] = ldexpf(1.0f, -k);
    }
#pragma unroll
    for (int ks = 0; ks < D / 16; ++ks)
#pragma unroll
      for (int e = 0; e < 4; ++e) qr[ks][e] = bf2_as_h2(qr[ks][e], qs[e & 1]);
  }
  if (lane == 0 && !PR) {
    const int p0 = has_tile ? a.row_pos[tl.row0] : 0;
    w_seq[warp] = has_tile ? tl.seq : -1;
    w_lo[warp] = a.window > 0 ? max(0, p0 - a.window + 1) : 0;
    w_hi[warp] = has_tile ? a.row_pos[tl.row0 + tl.rows - 1] + 1 : 0;
  }
  if constexpr (kPipelined) {
    if (threadIdx.x == 0) {
      for (int st = 0; st < kStages; ++st) mbar_init(&ring_full[st], PL ? 1 : kProducer ? 32 : T), mbar_init(&ring_empty[st], T);
      if constexpr (kSharedRaw)
        for (int st = 0; st < kRawStages; ++st) mbar_init(&raw_full[st], T), mbar_init(&raw_empty[st], T);
    }
  }
  // The warpgroups' turns on the tensor cores (wg_qk): warpgroup 0 goes first.
  if (WG && W == 8 && warp >= 4 && !PR) named_barrier_arrive(2, 256);
  if constexpr (WG) fence_proxy_async();  // Q's tiles, for wgmma
  block_sync();

  float m[2] = {-INFINITY, -INFINITY}, l[2] = {0.0f, 0.0f};
  float o[NT][4];
#pragma unroll
  for (int n = 0; n < NT; ++n) o[n][0] = o[n][1] = o[n][2] = o[n][3] = 0.0f;
  const int k_lane = k_lane_offset<D>(lane), v_lane = v_lane_offset<D>(lane);
  const int k_region = kTile * c.k_bytes, v_region = kTile * c.v_bytes;  // bytes of a page's K or V rows
  // (WG) The descriptor of this warpgroup's Q tiles; the operands' descriptors are offsets from a base.
  // Values the compiler can prove warp-uniform (a broadcast from lane 0, as CUTLASS's warp index)
  // stay in uniform registers, where the wgmma descriptors are built: otherwise each descriptor is
  // computed in ordinary registers and moved over one R2UR at a time.
  const auto uniform = [](int x) { return __shfl_sync(0xffffffffu, x, 0); };
  [[maybe_unused]] const std::uint64_t qd = wgmma_desc(smem_u32(qf) + uniform(warp / 4) * QT * kTile * D * 2, 16, 1024);

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
    pb = uniform(pb), pe = uniform(pe);  // block-uniform: the ring's slots and phases follow from them
    const int* table = a.block_table + static_cast<std::int64_t>(seq) * a.max_pages;
    // (PL) The sequence's first page in the tile pool: the pages of the plan's sequences before it.
    [[maybe_unused]] int pool_base = 0;
    if constexpr (PL)
      for (int e = 0; e < a.pool_seqs && a.pool_plan[2 * e] != seq; ++e) pool_base += (a.pool_plan[2 * e + 1] + kTile - 1) / kTile;
    // Page p's step's index in the block's ring (kPipelined: counted across sequences,
    // pipelined_pages) and its slot.
    const auto ring = [&](int p) { return (kPipelined ? ring_i0 : 0) + (p - pb) / KS; };
    const auto slot = [&](int p) { return ring(p) % kSlots; };
    // Page p's valid tokens; its raw ring slot (formats decoded from raw bytes) and bytes there.
    const auto valid = [&](int p) { return min(kTile, hi_tok - p * kTile); };
    const auto raw_slot = [&](int p) { return ring(p) % kRawStages; };
    const auto raw_of = [&](int p) { return raw + raw_slot(p) * (k_region + v_region); };
    // Pages are issued in order, so the block table's next entry is loaded one copy ahead: its
    // latency is not paid again before each copy.
    int next_p = pb, next_page = pb < pe ? table[pb] : 0;
    const auto page_at = [&](int p) {
      const int page = p == next_p ? next_page : table[p];
      next_p = p + 1;
      next_page = p + 1 < pe ? table[p + 1] : 0;
      return page;
    };
    const auto issue = [&](int p) {
      const std::int64_t region = static_cast<std::int64_t>(page_at(p)) * a.kv_heads + kvh;
      issue_page<F, D, kProducer ? 32 : T, WG>(a.k_pool + region * k_region, a.v_pool + region * v_region, valid(p), k_region,
                                               v_region, tiles, raw, tiles_ring<F>() ? slot(p) : raw_slot(p),
                                               kProducer ? lane : static_cast<int>(threadIdx.x));
    };
    // The term tiles of page p: its ring slot, or the one stage page_to_terms fills; its token scales.
    const auto k_tile = [&](int p) { return tiles + (S::ring > 1 ? slot(p) * KS * S::stage : 0); };
    const auto scales_of = [&](int p) { return tok_scale + (token_scales<F>() && S::ring > 1 ? slot(p) * 2 * kTile : 0); };
    // (kSharedRaw) Page p's raw bytes into its raw slot, once every thread decoded the page before
    // it there (page p - kRawStages: a page ago, so this seldom waits); raw_full completes when every
    // thread's copies landed.
    const auto issue_shared_raw = [&](int p) {
      if (p >= pe) return;
      const int i = ring(p);
      if (i >= kRawStages) mbar_wait(&raw_empty[raw_slot(p)], (i / kRawStages - 1) & 1);
      issue(p);
      cp_async_arrive_noinc(&raw_full[raw_slot(p)]);
    };
    // (kPipelined) Page p's tiles into its ring slot once page p - kStages left it, completing the
    // slot's full mbarrier: bf16 rows copied straight into the tiles; fp8 per tensor (kDecodedRing):
    // this thread's raw chunks of page p (copied two pages ago; one cp.async group a page, p + 1's
    // still in flight) widened into them, then page p + 2's raw chunks copied into the raw slot page p
    // leaves; kSharedRaw: page p decoded a warp per token slot once its raw bytes landed, then page p +
    // 2's copy issued; PL: the slot's image in the tile pool, K's and V's tiles and their token
    // scales, bulk-copied by thread 0 (the others go on).
    // (kMaps) The K and V rows of pool region `region` by TMA from this lane, completing on `full`: K's
    // two 64-column panels (64 rows each) to kt and kt + k_panels (a paired slot's panels hold 128
    // rows), V's to vt and vt + kPanel. The producer's other lanes arrive plainly, so the full
    // barrier's count stays the warp's.
    [[maybe_unused]] const auto tma_page = [&](std::int64_t region, __nv_bfloat16* kt, int k_panels, __nv_bfloat16* vt,
                                               std::uint64_t* full) {
      const int row = static_cast<int>(region) * kTile;
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        tma_load_2d(kt + h * k_panels, &maps.k, 64 * h, row, full);
        tma_load_2d(vt + h * kPanel, &maps.v, 64 * h, row, full);
      }
    };
    [[maybe_unused]] const auto fill = [&](int p) {
      if (p >= pe) return;
      const int i = ring(p);
      if constexpr (PL) {
        if (threadIdx.x == (kProducer ? T : 0)) {
          if (i >= kSlots) mbar_wait(&ring_empty[slot(p)], (i / kSlots - 1) & 1);
          constexpr unsigned tiles_b = S::stage * 2, scales_b = token_scales<F>() ? 2 * kTile * 4 : 0;
          static_assert(tiles_b + 2 * kTile * 4 == kTilePoolPageBytes, "a pool page is a ring slot's image");
          const auto image = [&](int q) {
            return a.tile_pool + (static_cast<std::int64_t>(pool_base + q) * a.kv_heads + kvh) * kTilePoolPageBytes;
          };
          std::uint64_t* const full = &ring_full[slot(p)];
          if constexpr (kPaired) {
            // Pages p and p + 1 (past the range: page p again, whose finite values the softmax masks)
            // into the pair slot: each K tile's two 64-column panels (8 KB, 64 rows) to rows 0-63 and
            // 64-127 of the slot's 128-row panels (the 128-byte swizzle repeats every 8 rows), then
            // the two V tiles.
            constexpr unsigned panel = kTile * 64 * 2;
            const std::uint8_t *s0 = image(p), *s1 = image(p + 1 < pe ? p + 1 : p);
            std::uint8_t* const dst = reinterpret_cast<std::uint8_t*>(k_tile(p));
            mbar_arrive_expect_tx(full, 2 * tiles_b);
            bulk_copy_g2s(dst, s0, panel, full);
            bulk_copy_g2s(dst + panel, s1, panel, full);
            bulk_copy_g2s(dst + 2 * panel, s0 + panel, panel, full);
            bulk_copy_g2s(dst + 3 * panel, s1 + panel, panel, full);
            bulk_copy_g2s(dst + 4 * panel, s0 + 2 * panel, 2 * panel, full);
            bulk_copy_g2s(dst + 6 * panel, s1 + 2 * panel, 2 * panel, full);
          } else {
            mbar_arrive_expect_tx(full, tiles_b + scales_b);
            bulk_copy_g2s(k_tile(p), image(p), tiles_b, full);
            if constexpr (scales_b > 0) bulk_copy_g2s(scales_of(p), image(p) + tiles_b, scales_b, full);
          }
        }
      } else if constexpr (kPaired) {
        // The producer warp: pages p and p + 1 into the pair slot (K's rows 0-63 and 64-127 of each
        // panel; V's two tiles), p + 1 as zeros past the range, whose scores the softmax masks.
        if (i >= kSlots) mbar_wait(&ring_empty[slot(p)], (i / kSlots - 1) & 1);
        __nv_bfloat16 *kt = k_tile(p), *vt = kt + 2 * S::tile;
        const auto region = [&](int q) { return static_cast<std::int64_t>(page_at(q)) * a.kv_heads + kvh; };
        const std::int64_t r0 = region(p), r1 = p + 1 < pe ? region(p + 1) : r0;
        std::uint64_t* const full = &ring_full[slot(p)];
        if (maps.on && valid(p) == kTile && (p + 1 >= pe || valid(p + 1) == kTile)) {
          // Whole pages (no row to zero) by TMA; past the range page p again (finite, its scores
          // masked).
          if (lane == 0) {
            mbar_arrive_expect_tx(full, 2 * 4 * kPanel * 2);
            tma_page(r0, kt, 2 * kPanel, vt, full);
            tma_page(r1, kt + kPanel, 2 * kPanel, vt + S::tile, full);
          } else {
            mbar_arrive(full);
          }
        } else {
          copy_bf16_page<D, 32, true, 2 * kTile>(a.k_pool + r0 * k_region, a.v_pool + r0 * v_region, valid(p), kt, vt, lane);
          copy_bf16_page<D, 32, true, 2 * kTile>(a.k_pool + r1 * k_region, a.v_pool + r1 * v_region, p + 1 < pe ? valid(p + 1) : 0,
                                                 kt + kTile * 64, vt + S::tile, lane);
          cp_async_arrive_noinc(full);
        }
      } else {
        if (i >= kStages) mbar_wait(&ring_empty[slot(p)], (i / kStages - 1) & 1);
        if constexpr (kSharedRaw) {
          mbar_wait(&raw_full[raw_slot(p)], (i / kRawStages) & 1);
          page_to_terms<F, D, WG>(c, kvh, raw_of(p), raw_of(p) + k_region, valid(p), k_tile(p), k_tile(p) + NBK * S::tile, scales_of(p));
          fence_proxy_async();
          mbar_arrive(&ring_full[slot(p)]);
          mbar_arrive(&raw_empty[raw_slot(p)]);
          issue_shared_raw(p + 2);
        } else if constexpr (kDecodedRing) {
          cp_async_wait<kRawStages - 1>();
          own_fp8_chunks_to_tiles<F, D, T>(c, raw_of(p), k_region, valid(p), k_tile(p));
          fence_proxy_async();
          mbar_arrive(&ring_full[slot(p)]);
          if (p + kRawStages < pe) issue(p + kRawStages);
          cp_async_commit();  // empty past the range: the count of groups stays one a page
        } else if (kMaps && maps.on && valid(p) == kTile) {  // (kMaps) a whole page by TMA
          if (lane == 0) {
            std::uint64_t* const full = &ring_full[slot(p)];
            mbar_arrive_expect_tx(full, 4 * kPanel * 2);
            tma_page(static_cast<std::int64_t>(page_at(p)) * a.kv_heads + kvh, k_tile(p), kPanel, k_tile(p) + S::tile, full);
          } else {
            page_at(p);  // every lane keeps the table's lookahead
            mbar_arrive(&ring_full[slot(p)]);
          }
        } else {
          issue(p);
          cp_async_arrive_noinc(&ring_full[slot(p)]);
        }
      }
    };
    // Warp w's tile sees tokens of page p.
    const auto needs = [&](int w, int p) { return w_seq[w] == seq && p * kTile < w_hi[w] && (p + 1) * kTile > w_lo[w]; };
    // This warp's own needs(warp, p), its bounds read once: the page loop's mbarrier waits and
    // wgmma fences are memory clobbers, so the compiler would reload them from shared memory a page.
    const bool own_seq = !PR && w_seq[warp] == seq;
    const int own_lo = w_lo[warp], own_hi = w_hi[warp];
    const auto own_needs = [&](int p) { return own_seq && p * kTile < own_hi && (p + 1) * kTile > own_lo; };
    // (WG) S = Q K^T of page p (wg_qk_issue), unless none of the warpgroup's warps needs the page and
    // !always; returns whether it ran.
    [[maybe_unused]] const auto wg_qk = [&](int p, float(&s)[8][4], bool always) {
      const int w0 = warp & ~3;
      const bool run = always || needs(w0, p) || needs(w0 + 1, p) || needs(w0 + 2, p) || needs(w0 + 3, p);
      wg_qk_issue<F, D, WG, QT, H>(run, k_tile(p), qd, qr, s);
      return run;
    };
    const auto softmax = [&](int p, float(&s)[8][4], float(&alpha)[2]) {
      page_softmax<F, QT == 1, kLean>(a, !WG || (kLean ? own_needs(p) : needs(warp, p)), p * kTile, nq, first, last, warp_vis, k_mul,
                                      row_mul, scales_of(p), s, alpha, m, l);
    };
    const auto rescale = [&](const float(&alpha)[2]) { rescale_o(alpha, o); };
    // (WG) P's terms for the 4 k-steps of a page (wgmma's A fragment is mma.sync's); (H) as fp16,
    // times kPf16Mul (an unnormalized weight is <= 1: every bf16 weight from 2^-32 up stays exact),
    // undone on the output.
    [[maybe_unused]] const auto wg_p = [&](const auto& s, auto& P) {  // a page's 4 k-steps, or (paired) a step's 8
      constexpr int kSteps = sizeof(P) / sizeof(P[0]);
#pragma unroll
      for (int kk = 0; kk < kSteps; ++kk) {
        p_fragments<QT, NBV == 1>(s, kk, P[kk]);  // every term product kept
        if constexpr (H)
#pragma unroll
          for (int i = 0; i < 4; ++i) P[kk][0][i] = bf2_as_h2(P[kk][0][i], kPf16Mul);
      }
    };
    [[maybe_unused]] const auto wg_pv = [&](int p, const std::uint32_t(&P)[4][QT][4]) {
      if constexpr (WG) wg_pv_issue<F, D, WG, QT, H>(k_tile(p) + NBK * S::tile, P, o);
    };
    // (paired_steps) The same for the step of pages p and p + 1. The softmax's masks end at the
    // range's last token: past it (a split's end, or p + 1 absent) the slot's keys are zeros whose
    // tokens a row may still see.
    [[maybe_unused]] const auto wg_qk2 = [&](int p, float(&s)[16][4], bool) {
      if constexpr (kPaired) wg_qk_pair_issue<F, D>(k_tile(p), qd, s);
    };
    [[maybe_unused]] const auto softmax2 = [&](int p, float(&s)[16][4], float(&alpha)[2]) {
      if constexpr (kPaired) {
        const int end = min(pe, p + 2) * kTile - 1;
        const int last2[2] = {min(last[0], end), min(last[1], end)}, vis2[2] = {warp_vis[0], min(warp_vis[1], end)};
        page_softmax<F, true, kLean, 16>(a, own_needs(p) || own_needs(p + 1), p * kTile, nq, first, last2, vis2, k_mul, row_mul,
                                         scales_of(p), s, alpha, m, l);
      }
    };
    [[maybe_unused]] const auto wg_pv2 = [&](int p, const std::uint32_t(&P)[8][QT][4]) {
      if constexpr (kPaired) wg_pv_pair_issue<F, D>(k_tile(p) + 2 * S::tile, P, o);
    };
    const auto softmax_pv = [&](int p, float(&s)[8][4]) {
      float alpha[2];
      softmax(p, s, alpha);
      rescale(alpha);
      if constexpr (WG) {
        std::uint32_t P[4][QT][4];
        wg_p(s, P);
        wg_pv(p, P);
      } else {
        mma_pv<F, D, WG, QT>(k_tile(p) + NBK * S::tile, s, v_lane, na, o);
      }
    };
    if constexpr (kPipelined) {
      if (pb < pe) {
        if constexpr (kSharedRaw) {  // the raw ring's first pages
          issue_shared_raw(pb);
          issue_shared_raw(pb + 1);
        } else if constexpr (kDecodedRing) {  // the raw ring's first pages, one group each
          for (int p = pb; p < pb + kRawStages; ++p) {
            if (p < pe) issue(p);
            cp_async_commit();
          }
        }
        if constexpr (PR) {
          // Every step of the range, each once the tile warps left its slot (fill waits).
          if (warp == W)
            for (int p = pb; p < pe; p += KS) {
              fill(p);
              __syncwarp();
            }
        } else if constexpr (kPaired) {
          pipelined_pages<kSlots, QT, KS>(pb, pe, ring_full, ring_empty, ring, [](int) {}, wg_qk2, softmax2, rescale, wg_p, wg_pv2, o);
        } else if constexpr (kProducer) {
          pipelined_pages<kStages, QT, KS>(pb, pe, ring_full, ring_empty, ring, [](int) {}, wg_qk, softmax, rescale, wg_p, wg_pv, o);
        } else {
          pipelined_pages<kStages, QT, KS>(pb, pe, ring_full, ring_empty, ring, fill, wg_qk, softmax, rescale, wg_p, wg_pv, o);
        }
        ring_i0 += (pe - pb + KS - 1) / KS;
      }
    } else {
      staged_pages<F, D, WG, QT>(c, kvh, pb, pe, hi_tok, k_region, v_region, raw, tok_scale, qf, k_lane, na, issue, k_tile, needs, wg_qk,
                             softmax_pv, o);
    }
    if constexpr (WG) {
      wgmma_wait<0>();
      wgmma_fence_operand(o);
    }
    block_sync();  // the last page's slot is free before the next sequence's first copy
  }
  if (!has_tile) return;
  if constexpr (H)
#pragma unroll
    for (int n = 0; n < NT; ++n)
#pragma unroll
      for (int e = 0; e < 4; ++e) o[n][e] *= 1.0f / kPf16Mul;  // exact: a power of two
  write_partial<F, D>(c, a, rot, ti, kvh, split, splits, nq, scratch, m, l, o);
}

template <KvFamily F, int D, bool WG, int QT, bool PL, bool H>
__global__ void __launch_bounds__(block_threads<F, D, WG, QT, PL>())
    prefill_kernel(KvLayerCodec c, PagedAttentionArgs a, int splits, int na, const __grid_constant__ PageTensorMaps maps) {
  __shared__ BlockSharedOf<F, D, WG, QT, PL> sh;
  if constexpr (producer_warp<F, WG, QT, PL>()) {
    if (threadIdx.x >= warps_of<F, D>() * 32) {
      setmaxnreg_dec<kProducerRegs>();
      prefill_block<F, D, WG, QT, PL, H, true>(c, a, splits, na, maps, sh);
      return;
    }
    setmaxnreg_inc<kTileRegs>();
  }
  prefill_block<F, D, WG, QT, PL, H, false>(c, a, splits, na, maps, sh);
}

// Pool page i's sequence, its page there and the sequence's tokens (the plan's sequences take
// consecutive runs of pool pages, in order); false past the plan's pages.
__device__ __forceinline__ bool pool_page_of(const PagedAttentionArgs& a, int i, int& seq, int& page, int& tokens) {
  for (int e = 0; e < a.pool_seqs; ++e) {
    const int pages = (a.pool_plan[2 * e + 1] + kTile - 1) / kTile;
    if (i < pages) {
      seq = a.pool_plan[2 * e], page = i, tokens = a.pool_plan[2 * e + 1];
      return true;
    }
    i -= pages;
  }
  return false;
}

// The tile pool's page blockIdx.x of KV head blockIdx.y: the plan's sequence and page (the plan's
// sequences take consecutive runs of pool pages, in order), decoded by page_to_terms into the pool
// as the attention kernel's ring slot holds it: K's and V's tiles, then their token scales. The
// same decoding as the kernel's own (kSharedRaw, own_fp8_chunks_to_tiles: the same values),
// moved out of its page loop; tokens past the sequence's end become zeros.
template <KvFamily F>
__global__ void __launch_bounds__(warps_of<F, 128>() * 32) predecode_kernel(KvLayerCodec c, PagedAttentionArgs a) {
  constexpr int D = 128;
  using S = Smem<F, D, true, 1>;
  int seq, p, tokens;
  if (!pool_page_of(a, blockIdx.x, seq, p, tokens)) return;
  const int kvh = blockIdx.y;
  const std::int64_t region = static_cast<std::int64_t>(a.block_table[static_cast<std::int64_t>(seq) * a.max_pages + p]) * a.kv_heads + kvh;
  std::uint8_t* dst = a.tile_pool + (static_cast<std::int64_t>(blockIdx.x) * a.kv_heads + kvh) * kTilePoolPageBytes;
  __nv_bfloat16* kt = reinterpret_cast<__nv_bfloat16*>(dst);
  page_to_terms<F, D, true>(c, kvh, a.k_pool + region * kTile * c.k_bytes, a.v_pool + region * kTile * c.v_bytes,
                            min(kTile, tokens - p * kTile), kt, kt + S::tile, reinterpret_cast<float*>(dst + S::stage * 2));
}

// The formats whose engine-numerics prefill on the wgmma kernel goes through fp16 images
// (prefill_f16_images_takes): their values need two or three bf16 terms (a q8_0 value is an 8-bit
// code times an fp16 scale; TurboQuant's are fp32 products), and no engine multiplies them exactly.
template <KvFamily F>
constexpr bool f16_image_family() {
  return F == KvFamily::kQ8_0 || F == KvFamily::kQ4_0 || F == KvFamily::kTqFp8Key || F == KvFamily::kTqMse;
}

// The fp16 images' shared memory: K's and V's fp32 tiles [64][D + 1] (one word of padding: a thread
// decodes a token's row, so rows of 128 words would put every thread on one bank), then the page's
// raw K and V bytes.
int f16_image_smem(const KvLayerCodec& c) {
  return 2 * kTile * (c.head_dim + 1) * 4 + kTile * (c.k_bytes + c.v_bytes);
}

// Pool page blockIdx.x of KV head blockIdx.y (pool_page_of): its 64 tokens' K and V decoded through
// the codec in the model's basis (decode_page: the generic kernel's decoding, rotations undone),
// rounded to fp16 (RNE) into the images, laid out as an fp16 cache's pages: K's [pool pages][KV
// heads][64][D], then V's. Tokens past the sequence's end become zeros. KV head 0's block enters the
// page in the pool's block table.
template <KvFamily F>
__global__ void __launch_bounds__(page_decode::kThreads) f16_image_kernel(KvLayerCodec c, PagedAttentionArgs a) {
  constexpr int D = 128, ld = D + 1;
  extern __shared__ float image_smem[];
  int seq, p, tokens;
  if (!pool_page_of(a, blockIdx.x, seq, p, tokens)) return;
  const int kvh = blockIdx.y;
  if (kvh == 0 && threadIdx.x == 0) a.pool_table[static_cast<std::int64_t>(seq) * a.max_pages + p] = blockIdx.x;
  const std::int64_t region = static_cast<std::int64_t>(a.block_table[static_cast<std::int64_t>(seq) * a.max_pages + p]) * a.kv_heads + kvh;
  float* const kt = image_smem;
  float* const vt = kt + kTile * ld;
  std::uint8_t* const k_raw = reinterpret_cast<std::uint8_t*>(vt + kTile * ld);
  std::uint8_t* const v_raw = k_raw + kTile * c.k_bytes;
  page_decode::stage(k_raw, a.k_pool + region * kTile * c.k_bytes, kTile * c.k_bytes);
  page_decode::stage(v_raw, a.v_pool + region * kTile * c.v_bytes, kTile * c.v_bytes);
  __syncthreads();
  page_decode::decode_page<F>(c, kvh, k_raw, v_raw, min(kTile, tokens - p * kTile), kt, vt, ld);
  __syncthreads();
  const std::int64_t page_halves = static_cast<std::int64_t>(kTile) * D;
  __half2* const k_img = reinterpret_cast<__half2*>(a.tile_pool + (static_cast<std::int64_t>(blockIdx.x) * a.kv_heads + kvh) * page_halves * 2);
  __half2* const v_img = k_img + static_cast<std::int64_t>(a.pool_pages) * a.kv_heads * page_halves / 2;
  for (int i = threadIdx.x; i < kTile * D / 2; i += page_decode::kThreads) {
    const int t = i / (D / 2), j = 2 * (i % (D / 2));
    k_img[i] = __floats2half2_rn(kt[t * ld + j], kt[t * ld + j + 1]);
    v_img[i] = __floats2half2_rn(vt[t * ld + j], vt[t * ld + j + 1]);
  }
}

// PL: the call's pages decoded into the tile pool first (predecode_kernel), then the kernel that
// copies them; its shared memory needs no raw ring. H: fp16 operands (f16_operands).
// The tensor maps a launch of this instance makes: the bf16 ring's producer copies whole pages by
// TMA given the cache's size (the maps bound the pools); none (on false) elsewhere.
template <KvFamily F, bool WG, int QT, bool PL>
PageTensorMaps launch_maps(const PagedAttentionArgs& a) {
  if constexpr (page_maps<F, WG, QT, PL>())
    if (a.cache_pages > 0) return page_tensor_maps(a.k_pool, a.v_pool, static_cast<long long>(a.cache_pages) * a.kv_heads);
  return PageTensorMaps{};
}

template <KvFamily F, int D, bool WG, int QT, bool PL, bool H>
void launch(const KvLayerCodec& c, const PagedAttentionArgs& a, int splits, cudaStream_t s) {
  constexpr int W = warps_of<F, D>();
  using S = Smem<F, D, WG, QT, PL>;
  const int smem = PL ? S::raw_offset + 1024 : S::bytes(c);
  static int configured = 0;  // the largest dynamic size this instantiation was opened for
  if (smem > 48 * 1024 && smem > configured) {
    KV_CUDA_CHECK(cudaFuncSetAttribute(prefill_kernel<F, D, WG, QT, PL, H>, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
    // All of the unified L1 as shared memory (q8_0 at head_dim 128 takes 226 KB a block).
    KV_CUDA_CHECK(cudaFuncSetAttribute(prefill_kernel<F, D, WG, QT, PL, H>, cudaFuncAttributePreferredSharedMemoryCarveout,
                                       cudaSharedmemCarveoutMaxShared));
    configured = smem;
  }
  if constexpr (PL) {
    predecode_kernel<F><<<dim3(a.pool_pages, a.kv_heads), W * 32, 0, s>>>(c, a);
    KV_CUDA_CHECK_LAUNCH();
  }
  const dim3 grid(splits, a.kv_heads, (a.num_tiles + W - 1) / W);
  // Term products i + j < na: bf16x3 keeps 2; exact mode 3; engine mode (QT = 1) 3: P's and Q's
  // one term against every term of K and V.
  const int na = QT == kTerms && a.prefill == PrefillKernel::kBf16x3 ? 2 : kTerms;
  const PageTensorMaps maps = launch_maps<F, WG, QT, PL>(a);
  prefill_kernel<F, D, WG, QT, PL, H><<<grid, block_threads<F, D, WG, QT, PL>(), smem, s>>>(c, a, splits, na, maps);
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

// fn(family F, head_dim D, WG, QT, H) of the kernel that runs this call: the wgmma kernel where it
// exists for (F, D), on a compute capability 9.0 device (sm_90a code runs there only); the mma.sync
// kernel for {"prefill": "mma_sync"} and "bf16x3" (the wgmma kernel keeps every term: its products
// are not the cost). QT: Q's and P's terms, 3 in exact mode, 1 in engine mode. H: the fp16 cache in
// engine numerics on the wgmma kernel runs the bf16 kernel with fp16 operands (f16_operands;
// FlashAttention-3's fp8 Q and P keep the fp16 kernel, which rounds them; so does !a.prefill_f16).
// images: (f16_image_family formats) the kernel that multiplies their fp16 images, the fp16 cache's,
// where the images are allowed (no window); false: the kernel that decodes their pages itself.
template <class Fn>
void visit_kernel(const KvLayerCodec& c, const PagedAttentionArgs& a, bool images, Fn&& fn) {
  using D64 = std::integral_constant<int, 64>;
  using D128 = std::integral_constant<int, 128>;
  const bool engine = a.emulation.numerics == AttentionNumerics::kEngine;
  const auto with_terms = [&](auto f, auto d, auto wg) {
    if (engine) fn(f, d, wg, std::integral_constant<int, 1>{}, std::false_type{});
    else fn(f, d, wg, std::integral_constant<int, kTerms>{}, std::false_type{});
  };
  visit_family(c.family, [&](auto f) {
    constexpr KvFamily F = decltype(f)::value;
    if (c.head_dim == 64) return with_terms(f, D64{}, std::false_type{});
    if constexpr (kWgmmaBuilt && (wgmma_kernel<F, 128>() || f16_image_family<F>())) {
      const DeviceLimits& d = device_limits();
      if (a.prefill == PrefillKernel::kTensorCore && d.major == 9 && d.minor == 0) {
        if constexpr (F == KvFamily::kF16 || f16_image_family<F>())
          if (engine && a.prefill_f16 && !a.emulation.q_fp8 && !a.emulation.pv_fp8 && (F == KvFamily::kF16 || (images && a.window == 0)))
            return fn(std::integral_constant<KvFamily, KvFamily::kBf16>{}, D128{}, std::true_type{}, std::integral_constant<int, 1>{},
                      std::true_type{});
        if constexpr (wgmma_kernel<F, 128>()) return with_terms(f, D128{}, std::true_type{});
      }
    }
    with_terms(f, D128{}, std::false_type{});
  });
}

// This call's kernel is the fp16 cache's, on fp16 images of a q8_0, q4_0 or TurboQuant cache (when the
// call has a pool holding them).
bool f16_images_allowed(const KvLayerCodec& c, const PagedAttentionArgs& a) {
  bool f16_image = false, h = false;
  visit_family(c.family, [&](auto f) { f16_image = f16_image_family<f.value>(); });
  if (f16_image) visit_kernel(c, a, true, [&](auto, auto, auto, auto, auto hv) { h = hv.value; });
  return h;
}

// prefill_attention() runs this call on fp16 images: a pool that holds them, for a format that takes them.
bool runs_f16_images(const KvLayerCodec& c, const PagedAttentionArgs& a) {
  return a.tile_pool && a.pool_plan && a.pool_pages > 0 && a.window == 0 && a.pool_table && f16_images_allowed(c, a);
}

// The fp16 cache the images make, and the call on it: the images as its K and V pools (pool pages x
// KV heads regions, as a cache's), the pool's block table as its block table.
KvLayerCodec f16_image_codec(const KvLayerCodec& c) {
  KvLayerCodec f16;
  f16.family = KvFamily::kF16;
  f16.head_dim = c.head_dim;
  f16.k_bytes = f16.v_bytes = 2 * c.head_dim;
  return f16;
}
PagedAttentionArgs f16_image_args(const KvLayerCodec& c, const PagedAttentionArgs& a) {
  PagedAttentionArgs b = a;
  b.k_pool = a.tile_pool;
  b.v_pool = a.tile_pool + static_cast<std::int64_t>(a.pool_pages) * a.kv_heads * kTile * f16_image_codec(c).k_bytes;
  b.block_table = a.pool_table;
  b.cache_pages = a.cache_pages > 0 ? a.pool_pages : 0;
  b.tile_pool = nullptr, b.pool_plan = nullptr, b.pool_table = nullptr, b.pool_seqs = b.pool_pages = 0;
  return b;
}

// The fp16 images of the call's pages (f16_image_kernel) into the pool, then the fp16 cache's kernel
// on them (f16_image_args).
void launch_f16_images(const KvLayerCodec& c, const PagedAttentionArgs& a, int splits, cudaStream_t s) {
  visit_family(c.family, [&](auto f) {
    if constexpr (f16_image_family<f.value>()) {
      const int smem = f16_image_smem(c);
      static int configured = 0;
      if (smem > 48 * 1024 && smem > configured) {
        KV_CUDA_CHECK(cudaFuncSetAttribute(f16_image_kernel<f.value>, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
        configured = smem;
      }
      f16_image_kernel<f.value><<<dim3(a.pool_pages, a.kv_heads), page_decode::kThreads, smem, s>>>(c, a);
      KV_CUDA_CHECK_LAUNCH();
    }
  });
  launch<KvFamily::kBf16, 128, true, 1, false, true>(f16_image_codec(c), f16_image_args(c, a), splits, s);
}

}  // namespace

bool prefill_attention_supported(const KvLayerCodec& c, const PagedAttentionArgs& a) {
  // One-row tiles (decode) have their own kernels, except under FlashAttention-3's fp8 Q and P,
  // which only this kernel and the generic emulating one compute: here at the tensor cores' rate.
  if (a.prefill == PrefillKernel::kGeneric || ((a.emulation.active() || a.max_tile_rows < 2) && !a.emulation.fp8_operands_fast()))
    return false;
  if (c.head_dim != 64 && c.head_dim != 128) return false;
  if (c.family == KvFamily::kF32 || c.family == KvFamily::kCount) return false;
  // fp8 Q is rounded before a K rotation moves onto it (emu_q_row); this kernel would round it after.
  bool rotates = false;
  visit_family(c.family, [&](auto f) { rotates = may_rotate<f.value>(); });
  if (a.emulation.q_fp8 && rotates) return false;
  // On sm_90 every codec fits (q8_0 at head_dim 128 is the largest: 226 KB); smaller parts take the
  // generic kernel for what does not.
  int smem = 0;
  visit_kernel(c, a, false, [&](auto f, auto d, auto wg, auto qt, auto) { smem = Smem<f.value, d.value, wg.value, qt.value>::bytes(c); });
  const DeviceLimits& d = device_limits();
  return d.major >= 8 && smem + 1024 <= d.smem_optin;
}

int prefill_attention_splits(const KvLayerCodec& c, const PagedAttentionArgs& a, int splits) {
  if (a.splits > 0) return std::min(a.splits, splits);
  int w = 4;
  visit_family(c.family, [&](auto f) { w = c.head_dim == 128 ? warps_of<f.value, 128>() : warps_of<f.value, 64>(); });
  if (f16_images_allowed(c, a)) w = warps_of<KvFamily::kBf16, 128>();  // the fp16 cache's kernel, given a pool
  const int blocks = (a.num_tiles + w - 1) / w * a.kv_heads, slots = 132 * (8 / w);  // 8 warps a multiprocessor
  const int pages = (a.max_ctx + kTile - 1) / kTile;
  // About one wave of every multiprocessor's blocks, each split at least 4 pages.
  const int want = std::min((slots + blocks - 1) / blocks, std::max(1, pages / 4));
  return std::max(1, std::min(want, splits));
}

namespace {
// paged_attention() runs prefill_attention() for this call: it takes it, and the decode path (tiles of
// at most 4 query vectors, first in line) does not.
bool prefill_attention_runs(const KvLayerCodec& c, const PagedAttentionArgs& a) {
  return prefill_attention_supported(c, a) && (a.emulation.active() || a.decode == DecodeKernel::kGeneric ||
                                               !decode_attention_supported(c, a.max_tile_rows, a.heads / a.kv_heads));
}
}  // namespace

bool prefill_tile_pool_takes(const KvLayerCodec& c, const PagedAttentionArgs& a) {
  if (a.window > 0 || !prefill_attention_runs(c, a)) return false;
  bool takes = false;
  visit_kernel(c, a, false, [&](auto f, auto, auto wg, auto qt, auto) { takes = decoded_ring<f.value, wg.value, qt.value>(); });
  return takes || f16_images_allowed(c, a);
}

bool prefill_pool_pairs_takes(const KvLayerCodec& c, const PagedAttentionArgs& a) {
  if (!prefill_tile_pool_takes(c, a)) return false;
  bool takes = false;
  visit_kernel(c, a, false, [&](auto f, auto, auto wg, auto qt, auto h) {
    if constexpr (decoded_ring<f.value, wg.value, qt.value>()) takes = paired_steps<f.value, wg.value, qt.value, true, h.value>();
  });
  return takes;
}

bool prefill_page_maps_takes(const KvLayerCodec& c, const PagedAttentionArgs& a) {
  if (!prefill_attention_runs(c, a)) return false;
  // The fp16 images run the fp16 cache's kernel on the images' pools.
  if (runs_f16_images(c, a)) return launch_maps<KvFamily::kBf16, true, 1, false>(f16_image_args(c, a)).on;
  bool takes = false;
  visit_kernel(c, a, false, [&](auto f, auto, auto wg, auto qt, auto) { takes = launch_maps<f.value, wg.value, qt.value, false>(a).on; });
  return takes;
}

bool prefill_f16_operands_takes(const KvLayerCodec& c, const PagedAttentionArgs& a) {
  if (!prefill_attention_runs(c, a)) return false;
  bool takes = false;
  visit_kernel(c, a, false, [&](auto, auto, auto, auto, auto h) { takes = h.value; });
  return takes;
}

bool prefill_f16_images_takes(const KvLayerCodec& c, const PagedAttentionArgs& a) {
  return prefill_attention_runs(c, a) && f16_images_allowed(c, a) && (!a.tile_pool || a.pool_table);
}

void prefill_attention(const KvLayerCodec& c, const PagedAttentionArgs& a, int splits, cudaStream_t s) {
  if (runs_f16_images(c, a)) return launch_f16_images(c, a, splits, s);
  const bool pool = a.tile_pool && a.pool_plan && a.pool_pages > 0 && a.window == 0;
  visit_kernel(c, a, false, [&](auto f, auto d, auto wg, auto qt, auto h) {
    if constexpr (decoded_ring<f.value, wg.value, qt.value>())
      if (pool) return launch<f.value, d.value, wg.value, qt.value, true, false>(c, a, splits, s);
    launch<f.value, d.value, wg.value, qt.value, false, h.value>(c, a, splits, s);
  });
}

}  // namespace kvgate::kernels::cuda
