// prefill_attention (paged_attention_prefill.h): flash-attention tiles on tensor cores over the paged,
// quantized cache, for prefill chunks.
//
// A block (4 warps) takes 4 consecutive attention tiles (each <= 16 query vectors: rows x GQA group
// of one KV head) and one split of their pages; warp w owns tile w as the 16 rows of an
// mma.m16n8k16 fragment. Per page (64 tokens) the block decodes K and V once for its 4 tiles into
// shared memory as bf16 terms (see below): plain formats 16 bytes a thread at a time, all loads
// issued first; codec formats staged, then one slot per thread through the codec functions
// (paged_page_decode.cuh's decode_slot). Each warp computes S = Q K^T (16 x 64),
// masks it (causal, window), runs the online softmax in fp32 registers and accumulates O += P V
// (16 x head_dim, fp32). The partial (m, l, O) of each tile goes to the generic kernel's workspace
// and paged_attention() merges the splits with the same combine kernel.
//
// Exactness (docs/cuda-decoder.md, Numerics): an fp32 operand x is split into bf16 terms
// x0 = bf16(x), x1 = bf16(x - x0), x2 = bf16(x - x0 - x1) (each difference exact in fp32), so
// x0 + x1 + x2 equals x to 2^-24 relative; a product a.b is the sum of the term products ai.bj
// with i + j < terms, accumulated in fp32 by the tensor cores. Exact mode (the default) keeps 3
// terms for Q and P and i + j <= 2 (bf16x6): the dropped products are below 2^-24 of a.b, the fp32
// kernels' own rounding. Decoded K/V values need fewer terms where they are exact: bf16 elements
// and fp8 codes (the per-tensor scale multiplies the score and the output instead) are one bf16
// term, fp16 two; so the bf16 cache costs 3 MMAs per product, like bf16x3. The "bf16x3" switch keeps
// 2 terms and i + j <= 1 (hi.hi + hi.lo + lo.hi): 2^-16 per product, measured in docs. The softmax,
// its rescaling and the final normalization are fp32 as in the generic kernel.
#include <algorithm>
#include <cstdint>

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>

#include "cuda_check.cuh"
#include "paged_attention_prefill.h"
#include "paged_page_decode.cuh"

namespace kvgate::kernels::cuda {

namespace {

using page_decode::elementwise_family;
using page_decode::kThreads;
using page_decode::kTile;

constexpr int kWarps = kThreads / 32;
static_assert(kMaxTileQ == 16, "a tile is the 16 rows of one mma fragment");

constexpr int kTerms = 3;  // bf16 terms of Q and P (exact mode)

// bf16 terms of a decoded K/V element: bf16 elements and fp8 codes (scale applied outside) are exact
// in one, fp16 in two (11 significant bits), any other fp32 value needs three.
template <KvFamily F>
constexpr int kv_terms() {
  return F == KvFamily::kBf16 || F == KvFamily::kFp8Tensor ? 1 : F == KvFamily::kF16 ? 2 : 3;
}

// Shared memory: bf16 K and V term tiles [NB][64][D + 8] (the pad makes fragment loads
// conflict-free), Q fragments [warp][D/16][lane][3 terms] (uint4 each), then for codec formats one
// fp32 tile [64][D + 1] (K, then V) that decode_slot writes and the raw K and V bytes of the page.
template <int D, int NB>
struct Smem {
  static constexpr int ld = D + 8;
  static constexpr int tile = kTile * ld;  // bf16 elements
  static constexpr int q_uint4 = kWarps * (D / 16) * 32 * kTerms;
  static constexpr int fixed_bytes = 2 * NB * tile * 2 + q_uint4 * 16;
  static constexpr int f32_ld = D + 1;
  static int bytes(bool staged, int k_bytes, int v_bytes) {
    return fixed_bytes + (staged ? kTile * f32_ld * 4 + kTile * (k_bytes + v_bytes) + 16 : 0);
  }
};

__device__ __forceinline__ std::uint32_t bf2_bits(__nv_bfloat162 v) {
  return *reinterpret_cast<std::uint32_t*>(&v);
}

// (x0, x1) as N packed bf16 pair terms: t[0] = bf16(x), t[k] = bf16(x - t[0] - ... - t[k-1]).
template <int N>
__device__ __forceinline__ void split_terms(float x0, float x1, std::uint32_t (&t)[N]) {
#pragma unroll
  for (int k = 0; k < N; ++k) {
    const __nv_bfloat162 h = __floats2bfloat162_rn(x0, x1);
    t[k] = bf2_bits(h);
    if (k + 1 < N) {
      const float2 hf = __bfloat1622float2(h);
      x0 -= hf.x;  // exact: x0 and hf.x agree in their leading bits
      x1 -= hf.y;
    }
  }
}

// Stores the NB terms of (x0, x1) at element `idx` of term tiles spaced `tile` apart.
template <int NB>
__device__ __forceinline__ void store_terms(__nv_bfloat16* base, int tile, int idx, float x0, float x1) {
  std::uint32_t t[NB];
  split_terms<NB>(x0, x1, t);
#pragma unroll
  for (int k = 0; k < NB; ++k) *reinterpret_cast<std::uint32_t*>(base + k * tile + idx) = t[k];
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

// Copies `bytes` (a multiple of 16, at most 16 * 8 * kThreads) with every thread, all loads first.
__device__ __forceinline__ void stage_all(std::uint8_t* dst, const std::uint8_t* src, int bytes) {
  constexpr int kMax = 8;
  const uint4* s = reinterpret_cast<const uint4*>(src);
  uint4* o = reinterpret_cast<uint4*>(dst);
  const int n = bytes / 16;
  uint4 r[kMax];
#pragma unroll
  for (int u = 0; u < kMax; ++u)
    if (threadIdx.x + u * kThreads < n) r[u] = __ldg(s + threadIdx.x + u * kThreads);
#pragma unroll
  for (int u = 0; u < kMax; ++u)
    if (threadIdx.x + u * kThreads < n) o[threadIdx.x + u * kThreads] = r[u];
}

// Page -> bf16 term tiles (ks[k], vs[k] = base + k * tile). Plain formats element pairs straight from
// global memory (fp8 per tensor as codes: the scale is applied to scores and output); codec formats
// one slot per thread through the codec into the fp32 tile, K then V, then split. Tokens >= valid
// become zeros.
template <KvFamily F, int D>
__device__ void page_to_terms(const KvLayerCodec& c, int kvh, const std::uint8_t* k_src, const std::uint8_t* v_src, int valid,
                              __nv_bfloat16* kt, __nv_bfloat16* vt, float* f32) {
  using S = Smem<D, kv_terms<F>()>;
  constexpr int NB = kv_terms<F>(), ld = S::ld, pairs = D / 2;
  if constexpr (elementwise_family<F>()) {
    // Chunks of 8 elements (16 bytes of bf16/fp16, 8 of fp8): consecutive threads read consecutive
    // chunks of a row (coalesced), every load of a tensor issued before the first is used.
    constexpr bool two_byte = F != KvFamily::kFp8Tensor;
    constexpr int chunks = D / 8, per = kTile * chunks / kThreads;
    static_assert(kTile * chunks % kThreads == 0, "whole chunks per thread");
#pragma unroll
    for (int pass = 0; pass < 2; ++pass) {
      const std::uint8_t* src = pass == 0 ? k_src : v_src;
      const int row_bytes = pass == 0 ? c.k_bytes : c.v_bytes;
      __nv_bfloat16* dst = pass == 0 ? kt : vt;
      uint4 raw[per];
#pragma unroll
      for (int u = 0; u < per; ++u) {
        const int i = threadIdx.x + u * kThreads, t = i / chunks, ch = i % chunks;
        raw[u] = make_uint4(0u, 0u, 0u, 0u);
        if (t < valid) {
          if constexpr (two_byte) {
            raw[u] = __ldg(reinterpret_cast<const uint4*>(src + t * row_bytes) + ch);
          } else {
            const uint2 w = __ldg(reinterpret_cast<const uint2*>(src + t * row_bytes) + ch);
            raw[u].x = w.x, raw[u].y = w.y;
          }
        }
      }
#pragma unroll
      for (int u = 0; u < per; ++u) {
        const int i = threadIdx.x + u * kThreads, t = i / chunks, ch = i % chunks;
        const int idx = t * ld + ch * 8;
        if constexpr (F == KvFamily::kBf16) {
          *reinterpret_cast<uint4*>(dst + idx) = raw[u];  // bf16 elements are their own single term
        } else {
          float x[8];
          if constexpr (F == KvFamily::kF16) {
            const std::uint32_t w[4] = {raw[u].x, raw[u].y, raw[u].z, raw[u].w};
#pragma unroll
            for (int e = 0; e < 4; ++e) {
              const float2 f = __half22float2(*reinterpret_cast<const __half2*>(&w[e]));
              x[2 * e] = f.x, x[2 * e + 1] = f.y;
            }
          } else {  // fp8 codes, widened by the hardware (exact)
            const std::uint32_t w[2] = {raw[u].x, raw[u].y};
            const __nv_fp8_interpretation_t kind = c.fp8_kind == Fp8Kind::kE4M3 ? __NV_E4M3 : __NV_E5M2;
#pragma unroll
            for (int e = 0; e < 4; ++e) {
              const __half2_raw h = __nv_cvt_fp8x2_to_halfraw2(static_cast<__nv_fp8x2_storage_t>((w[e / 2] >> (16 * (e % 2))) & 0xffffu), kind);
              const float2 f = __half22float2(__half2(h));
              x[2 * e] = f.x, x[2 * e + 1] = f.y;
            }
          }
#pragma unroll
          for (int e = 0; e < 4; ++e) store_terms<NB>(dst, S::tile, idx + 2 * e, x[2 * e], x[2 * e + 1]);
        }
      }
    }
  } else {
    constexpr int fld = S::f32_ld;
    for (int pass = 0; pass < 2; ++pass) {
      const bool is_k = pass == 0;
      if (threadIdx.x < kTile) {
        const int t = threadIdx.x;
        float* row = f32 + t * fld;
        if (t < valid) page_decode::decode_slot<F>(c, is_k, kvh, is_k ? k_src + t * c.k_bytes : v_src + t * c.v_bytes, row);
        else
          for (int j = 0; j < D; ++j) row[j] = 0.0f;
      }
      __syncthreads();
      __nv_bfloat16* dst = is_k ? kt : vt;
      for (int i = threadIdx.x; i < kTile * pairs; i += kThreads) {
        const int t = i / pairs, j = 2 * (i % pairs);
        store_terms<NB>(dst, S::tile, t * ld + j, f32[t * fld + j], f32[t * fld + j + 1]);
      }
      __syncthreads();
    }
  }
}

template <KvFamily F, int D>
__global__ void __launch_bounds__(kThreads) prefill_kernel(KvLayerCodec c, PagedAttentionArgs a, int splits, int na) {
  constexpr int NB = kv_terms<F>();
  using S = Smem<D, NB>;
  constexpr int ld = S::ld, KS = D / 16, NT = D / 8;
  constexpr bool staged = !elementwise_family<F>();
  extern __shared__ uint4 smem4[];
  __nv_bfloat16* kt = reinterpret_cast<__nv_bfloat16*>(smem4);  // [NB][64][ld]
  __nv_bfloat16* vt = kt + NB * S::tile;
  uint4* qf = reinterpret_cast<uint4*>(vt + NB * S::tile);  // [warp][ks][lane][kTerms]
  float* f32 = reinterpret_cast<float*>(qf + S::q_uint4);
  std::uint8_t* raw_k = reinterpret_cast<std::uint8_t*>(f32 + kTile * S::f32_ld);
  raw_k += (16 - reinterpret_cast<std::uintptr_t>(raw_k) % 16) % 16;
  std::uint8_t* raw_v = raw_k + kTile * c.k_bytes;
  __shared__ int w_seq[kWarps], w_lo[kWarps], w_hi[kWarps];

  const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31, g = lane >> 2, cq = lane & 3;
  const int kvh = blockIdx.y, split = blockIdx.x;
  const int ti = blockIdx.z * kWarps + warp;
  const bool has_tile = ti < a.num_tiles;
  const int group = a.heads / a.kv_heads, qw = a.heads * D;
  const AttentionTile tl = has_tile ? a.tiles[ti] : AttentionTile{-1, 0, 0};
  const int nq = tl.rows * group;
  // fp8 per tensor: K/V tiles hold the codes; the scales multiply the scores and the output.
  const float k_mul = F == KvFamily::kFp8Tensor ? c.k_scales[kvh] : 1.0f;
  const float v_mul = F == KvFamily::kFp8Tensor ? c.v_scales[kvh] : 1.0f;

  // This thread's two fragment rows (query vectors g and g + 8): visible tokens [first, last].
  int first[2], last[2];
#pragma unroll
  for (int r = 0; r < 2; ++r) {
    const int qi = g + 8 * r;
    last[r] = qi < nq ? a.row_pos[tl.row0 + qi / group] : -1;
    first[r] = a.window > 0 ? max(0, last[r] - a.window + 1) : 0;
  }
  // Q fragments (3 terms) of this warp's tile, laid out per lane.
#pragma unroll
  for (int ks = 0; ks < KS; ++ks) {
    std::uint32_t t[4][kTerms];
#pragma unroll
    for (int e = 0; e < 4; ++e) {
      const int qi = g + 8 * (e & 1), col = ks * 16 + 2 * cq + 8 * (e >> 1);
      float2 x = make_float2(0.0f, 0.0f);
      if (qi < nq)
        x = *reinterpret_cast<const float2*>(a.q + static_cast<std::int64_t>(tl.row0 + qi / group) * qw +
                                             (kvh * group + qi % group) * D + col);
      split_terms<kTerms>(x.x, x.y, t[e]);
    }
#pragma unroll
    for (int k = 0; k < kTerms; ++k) qf[((warp * KS + ks) * 32 + lane) * kTerms + k] = make_uint4(t[0][k], t[1][k], t[2][k], t[3][k]);
  }
  if (lane == 0) {
    const int p0 = has_tile ? a.row_pos[tl.row0] : 0;
    w_seq[warp] = has_tile ? tl.seq : -1;
    w_lo[warp] = a.window > 0 ? max(0, p0 - a.window + 1) : 0;
    w_hi[warp] = has_tile ? a.row_pos[tl.row0 + tl.rows - 1] + 1 : 0;
  }
  __syncthreads();

  float m[2] = {-INFINITY, -INFINITY}, l[2] = {0.0f, 0.0f};
  float o[NT][4];
#pragma unroll
  for (int n = 0; n < NT; ++n) o[n][0] = o[n][1] = o[n][2] = o[n][3] = 0.0f;
  const std::int64_t k_region = static_cast<std::int64_t>(kTile) * c.k_bytes, v_region = static_cast<std::int64_t>(kTile) * c.v_bytes;

  // The block's tiles by sequence (prefill chunks may hold several): pages of one sequence are
  // decoded once for every warp whose tile belongs to it.
  for (int w0 = 0; w0 < kWarps; ++w0) {
    const int seq = w_seq[w0];
    bool seen = seq < 0;
    for (int w = 0; w < w0; ++w) seen = seen || w_seq[w] == seq;
    if (seen) continue;  // block-uniform: shared values only
    int lo_tok = w_lo[w0], hi_tok = w_hi[w0];
    for (int w = w0 + 1; w < kWarps; ++w)
      if (w_seq[w] == seq) lo_tok = min(lo_tok, w_lo[w]), hi_tok = max(hi_tok, w_hi[w]);
    int pb, pe;
    split_pages(lo_tok, hi_tok, split, splits, pb, pe);
    const bool mine = has_tile && tl.seq == seq;
    const int* table = a.block_table + static_cast<std::int64_t>(seq) * a.max_pages;
    for (int p = pb; p < pe; ++p) {
      const std::int64_t region = static_cast<std::int64_t>(table[p]) * a.kv_heads + kvh;
      const std::uint8_t* k_src = a.k_pool + region * k_region;
      const std::uint8_t* v_src = a.v_pool + region * v_region;
      if constexpr (staged) {
        stage_all(raw_k, k_src, static_cast<int>(k_region));
        stage_all(raw_v, v_src, static_cast<int>(v_region));
        __syncthreads();
        k_src = raw_k;
        v_src = raw_v;
      }
      page_to_terms<F, D>(c, kvh, k_src, v_src, min(kTile, hi_tok - p * kTile), kt, vt, f32);
      __syncthreads();
      const int t0 = p * kTile;
      if (mine && t0 < w_hi[warp] && t0 + kTile > w_lo[warp]) {
        // S = Q K^T: 16 x 64 in 8 n-tiles of 8 tokens; term products i + j < na, smallest first.
        float s[8][4];
#pragma unroll
        for (int n = 0; n < 8; ++n) s[n][0] = s[n][1] = s[n][2] = s[n][3] = 0.0f;
#pragma unroll
        for (int ks = 0; ks < KS; ++ks) {
          std::uint32_t q[kTerms][4];
#pragma unroll
          for (int k = 0; k < kTerms; ++k) {
            const uint4 u = qf[((warp * KS + ks) * 32 + lane) * kTerms + k];
            q[k][0] = u.x, q[k][1] = u.y, q[k][2] = u.z, q[k][3] = u.w;
          }
#pragma unroll
          for (int n = 0; n < 8; ++n) {
            const int off = (n * 8 + g) * ld + ks * 16 + 2 * cq;
            std::uint32_t b[NB][2];
#pragma unroll
            for (int j = 0; j < NB; ++j) {
              b[j][0] = *reinterpret_cast<const std::uint32_t*>(kt + j * S::tile + off);
              b[j][1] = *reinterpret_cast<const std::uint32_t*>(kt + j * S::tile + off + 8);
            }
#pragma unroll
            for (int sum = kTerms - 1; sum >= 0; --sum)
#pragma unroll
              for (int i = 0; i < kTerms; ++i) {
                const int j = sum - i;
                if (j >= 0 && j < NB && sum < na) mma(s[n], q[i], b[j][0], b[j][1]);
              }
          }
        }
        // Mask, scale, online softmax (rows g and g + 8; a row's 64 scores live in one quad).
        float mx[2] = {-INFINITY, -INFINITY};
#pragma unroll
        for (int n = 0; n < 8; ++n)
#pragma unroll
          for (int e = 0; e < 4; ++e) {
            const int r = e >> 1, tok = t0 + n * 8 + 2 * cq + (e & 1);
            float x = s[n][e];
            if constexpr (F == KvFamily::kFp8Tensor) x *= k_mul;
            s[n][e] = tok >= first[r] && tok <= last[r] ? x * a.scale : -INFINITY;
            mx[r] = fmaxf(mx[r], s[n][e]);
          }
        float alpha[2], sum[2] = {0.0f, 0.0f};
#pragma unroll
        for (int r = 0; r < 2; ++r) {
          mx[r] = fmaxf(mx[r], __shfl_xor_sync(0xffffffffu, mx[r], 1));
          mx[r] = fmaxf(mx[r], __shfl_xor_sync(0xffffffffu, mx[r], 2));
          const float m_new = fmaxf(m[r], mx[r]);
          alpha[r] = m_new == -INFINITY ? 1.0f : expf(m[r] - m_new);
          mx[r] = m_new;
          m[r] = m_new;
        }
#pragma unroll
        for (int n = 0; n < 8; ++n)
#pragma unroll
          for (int e = 0; e < 4; ++e) {
            const int r = e >> 1;
            s[n][e] = mx[r] == -INFINITY ? 0.0f : expf(s[n][e] - mx[r]);
            sum[r] += s[n][e];
          }
#pragma unroll
        for (int r = 0; r < 2; ++r) l[r] = l[r] * alpha[r] + sum[r];
#pragma unroll
        for (int n = 0; n < NT; ++n) {
          o[n][0] *= alpha[0], o[n][1] *= alpha[0];
          o[n][2] *= alpha[1], o[n][3] *= alpha[1];
        }
        // O += P V: P's accumulator layout is the A fragment of the next mma (4 k-steps of 16 tokens).
#pragma unroll
        for (int kk = 0; kk < 4; ++kk) {
          std::uint32_t pt[4][kTerms], P[kTerms][4];
          split_terms<kTerms>(s[2 * kk][0], s[2 * kk][1], pt[0]);
          split_terms<kTerms>(s[2 * kk][2], s[2 * kk][3], pt[1]);
          split_terms<kTerms>(s[2 * kk + 1][0], s[2 * kk + 1][1], pt[2]);
          split_terms<kTerms>(s[2 * kk + 1][2], s[2 * kk + 1][3], pt[3]);
#pragma unroll
          for (int k = 0; k < kTerms; ++k) P[k][0] = pt[0][k], P[k][1] = pt[1][k], P[k][2] = pt[2][k], P[k][3] = pt[3][k];
          const int mt = lane >> 3;  // the 8x8 matrix this lane addresses
          const int row = kk * 16 + (mt & 1) * 8 + (lane & 7);
#pragma unroll
          for (int n2 = 0; n2 < D / 16; ++n2) {
            const int off = row * ld + n2 * 16 + (mt >> 1) * 8;
            std::uint32_t b[NB][4];
#pragma unroll
            for (int j = 0; j < NB; ++j) ldmatrix_x4_trans(vt + j * S::tile + off, b[j][0], b[j][1], b[j][2], b[j][3]);
#pragma unroll
            for (int sum = kTerms - 1; sum >= 0; --sum)
#pragma unroll
              for (int i = 0; i < kTerms; ++i) {
                const int j = sum - i;
                if (j >= 0 && j < NB && sum < na) {
                  mma(o[2 * n2], P[i], b[j][0], b[j][1]);
                  mma(o[2 * n2 + 1], P[i], b[j][2], b[j][3]);
                }
              }
          }
        }
      }
      __syncthreads();
    }
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
    if (qi >= nq) continue;
    if (cq == 0) {
      a.workspace[2 * (base + qi)] = m[r];
      a.workspace[2 * (base + qi) + 1] = l[r];
    }
#pragma unroll
    for (int n = 0; n < NT; ++n)
      *reinterpret_cast<float2*>(wacc + (base + qi) * D + n * 8 + 2 * cq) = make_float2(o[n][2 * r] * v_mul, o[n][2 * r + 1] * v_mul);
  }
}

template <KvFamily F, int D>
void launch(const KvLayerCodec& c, const PagedAttentionArgs& a, int splits, cudaStream_t s) {
  const int smem = Smem<D, kv_terms<F>()>::bytes(!elementwise_family<F>(), c.k_bytes, c.v_bytes);
  static int configured = 0;  // the largest dynamic size this instantiation was opened for
  if (smem > 48 * 1024 && smem > configured) {
    KV_CUDA_CHECK(cudaFuncSetAttribute(prefill_kernel<F, D>, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
    configured = smem;
  }
  const dim3 grid(splits, a.kv_heads, (a.num_tiles + kWarps - 1) / kWarps);
  prefill_kernel<F, D><<<grid, kThreads, smem, s>>>(c, a, splits, a.prefill == PrefillKernel::kBf16x3 ? 2 : kTerms);
  KV_CUDA_CHECK_LAUNCH();
}

template <KvFamily F>
void launch_family(const KvLayerCodec& c, const PagedAttentionArgs& a, int splits, cudaStream_t s) {
  if (c.head_dim == 128) launch<F, 128>(c, a, splits, s);
  else launch<F, 64>(c, a, splits, s);
}

bool device_has_mma() {
  static const int major = [] {
    int dev = 0, v = 0;
    if (cudaGetDevice(&dev) != cudaSuccess || cudaDeviceGetAttribute(&v, cudaDevAttrComputeCapabilityMajor, dev) != cudaSuccess)
      return 0;
    return v;
  }();
  return major >= 8;
}

}  // namespace

bool prefill_attention_supported(const KvLayerCodec& c, const PagedAttentionArgs& a) {
  if (a.prefill == PrefillKernel::kGeneric || a.emulation.active() || a.max_tile_rows < 2) return false;
  if (c.head_dim != 64 && c.head_dim != 128) return false;
  if (c.family == KvFamily::kF32 || c.family == KvFamily::kCount) return false;
  return device_has_mma();
}

int prefill_attention_splits(const PagedAttentionArgs& a, int splits) {
  if (a.splits > 0) return std::min(a.splits, splits);
  const int blocks = (a.num_tiles + kWarps - 1) / kWarps * a.kv_heads;
  const int pages = (a.max_ctx + kTile - 1) / kTile;
  // About two waves of 132 multiprocessors, each split at least 4 pages.
  const int want = std::min((2 * 132 + blocks - 1) / blocks, std::max(1, pages / 4));
  return std::max(1, std::min(want, splits));
}

void prefill_attention(const KvLayerCodec& c, const PagedAttentionArgs& a, int splits, cudaStream_t s) {
  switch (c.family) {
    case KvFamily::kBf16: launch_family<KvFamily::kBf16>(c, a, splits, s); break;
    case KvFamily::kF16: launch_family<KvFamily::kF16>(c, a, splits, s); break;
    case KvFamily::kFp8Tensor: launch_family<KvFamily::kFp8Tensor>(c, a, splits, s); break;
    case KvFamily::kFp8Pth: launch_family<KvFamily::kFp8Pth>(c, a, splits, s); break;
    case KvFamily::kInt8Pth: launch_family<KvFamily::kInt8Pth>(c, a, splits, s); break;
    case KvFamily::kInt4Pth: launch_family<KvFamily::kInt4Pth>(c, a, splits, s); break;
    case KvFamily::kNvfp4: launch_family<KvFamily::kNvfp4>(c, a, splits, s); break;
    case KvFamily::kQ8_0: launch_family<KvFamily::kQ8_0>(c, a, splits, s); break;
    case KvFamily::kQ4_0: launch_family<KvFamily::kQ4_0>(c, a, splits, s); break;
    case KvFamily::kTqFp8Key: launch_family<KvFamily::kTqFp8Key>(c, a, splits, s); break;
    case KvFamily::kTqMse: launch_family<KvFamily::kTqMse>(c, a, splits, s); break;
    default: throw Error("prefill_attention: unsupported KV family", kExitInternal);
  }
}

}  // namespace kvgate::kernels::cuda
