// paged_attention (kv_paged_cuda.h): split-K flash-decoding over the paged, quantized cache.
//
// A block (128 threads) takes one tile of query vectors (GQA group x rows of one sequence), one KV
// head and one split of the pages the tile needs. Per page (64 tokens): the raw K and V bytes of
// the (page, head) regions are copied to shared memory with coalesced 16-byte loads; K is decoded
// into an fp32 tile (element-parallel for plain formats, one thread per token through the codec
// functions otherwise), scores are fp32 dots; an online softmax (fp32) rescales the running sums;
// V is decoded into the same tile and P.V accumulates in fp32 registers (thread = dimension). A
// second kernel merges the splits. Exact by default: no reduced-precision step anywhere. With
// engine emulation (attention_emulation.h, --kernel-switches) the generic kernel's EMU
// instantiation rounds Q and P through fp8 and accumulates P.V per 32-token k-step in FP22 or two
// levels, each query vector over its own split of its own pages (attention_emulated_ref.cpp is its
// twin, step for step).
#include <algorithm>
#include <climits>
#include <string>

#include <cuda_fp16.h>
#include <cuda_fp8.h>

#include "kernels/cuda_check.cuh"
#include "kernels/float_formats.h"
#include "kernels/kv_codecs.h"
#include "kernels/kv_paged_cuda.h"
#include "kernels/paged_attention_decode.h"
#include "kernels/paged_attention_prefill.h"
#include "kernels/paged_page_decode.cuh"

namespace kvgate::kernels::cuda {

namespace {

using page_decode::kTile;
using page_decode::kThreads;
using page_decode::elementwise_family;
using page_decode::decode_page;
using page_decode::stage;

__device__ __forceinline__ float warp_max(float v) {
  for (int o = 16; o > 0; o >>= 1) v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, o));
  return v;
}
__device__ __forceinline__ float warp_sum(float v) {
  for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
  return v;
}

// The emulated P.V of one page for output dimension `v_col` (v_col[t * ld] = V[t][j]): rescale
// by alpha, then per 32-token k-step holding tokens of vector qi ([first[qi], last[qi]]), the
// step's exact double sum into emu_accumulate, promoting every pv_promote_every tokens.
template <int NQ>
__device__ __forceinline__ void emulated_pv(const AttentionEmulation& e, int page, int nq, const int* first, const int* last,
                                            const float* alpha, const float* S, const float* v_col, int ld, float acc[NQ],
                                            float mma[NQ]) {
  const int promote_steps = e.pv_promote_every / kEmuStep;
#pragma unroll
  for (int qi = 0; qi < NQ; ++qi)
    if (qi < nq) {
      acc[qi] *= alpha[qi];
      mma[qi] *= alpha[qi];
      // Not unrolled: the double sum is one dependent chain anyway, and unrolled copies for every
      // family x query vector multiplied this file's compile time by ten.
#pragma unroll 1
      for (int h = 0; h < kTile / kEmuStep; ++h) {
        const int ks = page * kTile + h * kEmuStep;
        if (ks > last[qi] || ks + kEmuStep <= first[qi]) continue;  // no token of this vector in the step
        double chunk = 0.0;
#pragma unroll 1
        for (int t = h * kEmuStep; t < (h + 1) * kEmuStep; ++t)
          chunk += static_cast<double>(S[qi * kTile + t]) * static_cast<double>(v_col[t * ld]);
        emu_accumulate(e.pv_accum, chunk, acc[qi], mma[qi]);
        if (e.pv_accum == PvAccum::kTwoLevel && (ks / kEmuStep - first[qi] / kEmuStep + 1) % promote_steps == 0) {
          acc[qi] += mma[qi];
          mma[qi] = 0.0f;
        }
      }
    }
}

// Shared memory: K and V tiles [64][d+1], Q [NQ][d], S [NQ][64], m/l/alpha/qpos/qfirst [NQ]; then,
// for codec formats only, the raw K and V bytes of the page.
struct SmemLayout {
  int ld, tile, q, s, nq, raw_k, raw_v;
  __host__ __device__ SmemLayout(int d, int nq_, int k_bytes, int v_bytes, bool staged)
      : ld(d + 1), tile(kTile * (d + 1)), q(nq_ * d), s(nq_ * kTile), nq(nq_), raw_k(staged ? kTile * k_bytes : 0),
        raw_v(staged ? kTile * v_bytes : 0) {}
  __host__ __device__ int float_count() const { return 2 * tile + q + s + 5 * nq; }
  __host__ __device__ int raw_offset() const { return ((float_count() + 3) / 4) * 16; }
  __host__ __device__ int bytes() const { return raw_offset() + raw_k + raw_v; }
};

// The pages this block reads: its split of the tile's visible pages, or (EMU) the union of each
// query vector's own split ranges, since the emulation splits per vector as the engines do.
template <bool EMU>
__device__ __forceinline__ void block_pages(const PagedAttentionArgs& a, const AttentionTile& tl, int nq, int group, int hi,
                                            int split, int splits, int& pb, int& pe) {
  if constexpr (EMU) {
    pb = INT_MAX, pe = INT_MIN;
    for (int qi = 0; qi < nq; ++qi) {
      const int pos = a.row_pos[tl.row0 + qi / group];
      int b, e;
      split_pages(a.window > 0 ? max(0, pos - a.window + 1) : 0, pos + 1, split, splits, b, e);
      if (b < e) pb = min(pb, b), pe = max(pe, e);
    }
    if (pb > pe) pb = pe = 0;
  } else {
    const int p_first = a.row_pos[tl.row0];
    split_pages(a.window > 0 ? max(0, p_first - a.window + 1) : 0, hi, split, splits, pb, pe);
  }
}

// Partial results of this split for the combine kernel: (m, l) and the unnormalized accumulator
// (EMU two_level: the FP22 partial folded in first).
template <int NQ, bool EMU>
__device__ __forceinline__ void store_partial(const PagedAttentionArgs& a, const AttentionEmulation& emu, int kvh, int split,
                                              int splits, int nq, int d, const float* m_s, const float* l_s,
                                              float (&acc)[2][NQ], float (&mma)[EMU ? 2 : 1][NQ]) {
  const std::int64_t entries = static_cast<std::int64_t>(gridDim.z) * gridDim.y * splits * kMaxTileQ;
  const std::int64_t base = ((static_cast<std::int64_t>(blockIdx.z) * gridDim.y + kvh) * splits + split) * kMaxTileQ;
  if (threadIdx.x < nq) {
    a.workspace[2 * (base + threadIdx.x)] = m_s[threadIdx.x];
    a.workspace[2 * (base + threadIdx.x) + 1] = l_s[threadIdx.x];
  }
  float* wacc = a.workspace + 2 * entries;
#pragma unroll
  for (int jj = 0; jj < 2; ++jj) {
    const int j = threadIdx.x + jj * kThreads;
    if (j < d) {
#pragma unroll
      for (int qi = 0; qi < NQ; ++qi)
        if (qi < nq) {
          if constexpr (EMU) {
            if (emu.pv_accum == PvAccum::kTwoLevel) acc[jj][qi] += mma[jj][qi];
          }
          wacc[(base + qi) * d + j] = acc[jj][qi];
        }
    }
  }
}

// NQ: the query vectors a block holds (4 for GQA-4 decode, 16 otherwise); loops over NQ unroll.
// EMU: engine emulation (a.emulation): per query vector split ranges, rounded Q, fp8 P, double exps,
// P.V per 32-token k-step through emu_accumulate.
template <KvFamily F, int NQ, bool EMU>
__global__ void __launch_bounds__(kThreads) paged_attention_kernel(KvLayerCodec c, PagedAttentionArgs a) {
  extern __shared__ float4 smem4[];
  float* smem = reinterpret_cast<float*>(smem4);
  constexpr bool staged = !elementwise_family<F>();
  const int d = c.head_dim;
  const SmemLayout L(d, NQ, c.k_bytes, c.v_bytes, staged);
  float* k_tile = smem;
  float* v_tile = k_tile + L.tile;
  float* Qs = v_tile + L.tile;
  float* S = Qs + L.q;
  float* m_s = S + L.s;
  float* l_s = m_s + NQ;
  float* alpha_s = l_s + NQ;
  int* qpos = reinterpret_cast<int*>(alpha_s + NQ);
  int* qfirst = qpos + NQ;
  std::uint8_t* raw_k = reinterpret_cast<std::uint8_t*>(smem4) + L.raw_offset();
  std::uint8_t* raw_v = raw_k + L.raw_k;

  const AttentionTile tl = a.tiles[blockIdx.z];
  const int kvh = blockIdx.y, split = blockIdx.x, splits = gridDim.x;
  const int group = a.heads / a.kv_heads, nq = tl.rows * group, qw = a.heads * d;
  const AttentionEmulation emu = a.emulation;
  for (int i = threadIdx.x; i < nq * d; i += kThreads) {
    const int qi = i / d, j = i % d;
    const float x = a.q[static_cast<std::int64_t>(tl.row0 + qi / group) * qw + (kvh * group + qi % group) * d + j];
    Qs[i] = !EMU && emu.numerics == AttentionNumerics::kEngine ? engine_round(x) : x;
  }
  if constexpr (EMU) {  // Q rounded as the CPU twin rounds it (emu_q_row), one span (emu_q_span) a thread
    __syncthreads();
    const int span = emu_q_span(emu), spans = (d + span - 1) / span;
    for (int b = threadIdx.x; b < nq * spans; b += kThreads) {
      float* row = Qs + (b / spans) * d + (b % spans) * span;
      emu_q_row(emu, row, row, min(span, d - (b % spans) * span));
    }
  }
  if (threadIdx.x < NQ) {
    const int qi = threadIdx.x;
    const int pos = qi < nq ? a.row_pos[tl.row0 + qi / group] : -1;
    qpos[qi] = pos;
    qfirst[qi] = a.window > 0 ? max(0, pos - a.window + 1) : 0;
    if constexpr (EMU) {  // this split of the vector's own pages: tokens [qfirst, qpos] within it
      int b = 0, e = 0;
      if (pos >= 0) split_pages(qfirst[qi], pos + 1, split, splits, b, e);
      qfirst[qi] = b < e ? max(qfirst[qi], b * kTile) : 0;
      qpos[qi] = b < e ? min(pos, e * kTile - 1) : -1;
    }
    m_s[qi] = -INFINITY;
    l_s[qi] = 0.0f;
    alpha_s[qi] = 1.0f;
  }
  const int hi = a.row_pos[tl.row0 + tl.rows - 1] + 1;
  int pb, pe;
  block_pages<EMU>(a, tl, nq, group, hi, split, splits, pb, pe);
  const int* table = a.block_table + static_cast<std::int64_t>(tl.seq) * a.max_pages;
  const std::int64_t k_region = static_cast<std::int64_t>(kTile) * c.k_bytes, v_region = static_cast<std::int64_t>(kTile) * c.v_bytes;

  float acc[2][NQ], mma[EMU ? 2 : 1][NQ];  // mma: the emulated FP22 partial (two_level)
#pragma unroll
  for (int jj = 0; jj < 2; ++jj)
#pragma unroll
    for (int qi = 0; qi < NQ; ++qi) acc[jj][qi] = mma[EMU ? jj : 0][qi] = 0.0f;
  __syncthreads();

  const int t = threadIdx.x & (kTile - 1);
  const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
  for (int p = pb; p < pe; ++p) {
    const std::int64_t region = static_cast<std::int64_t>(table[p]) * a.kv_heads + kvh;
    const std::uint8_t* k_src = a.k_pool + region * k_region;
    const std::uint8_t* v_src = a.v_pool + region * v_region;
    if constexpr (staged) {
      stage(raw_k, k_src, static_cast<int>(k_region));
      stage(raw_v, v_src, static_cast<int>(v_region));
      __syncthreads();
      k_src = raw_k;
      v_src = raw_v;
    }
    const int valid = min(kTile, hi - p * kTile);
    decode_page<F>(c, kvh, k_src, v_src, valid, k_tile, v_tile, L.ld);
    __syncthreads();
    const int tok = p * kTile + t;
    for (int qi = threadIdx.x / kTile; qi < nq; qi += kThreads / kTile) {
      const float* qv = Qs + qi * d;
      const float* kr = k_tile + t * L.ld;
      float dot = 0.0f;
      for (int j = 0; j < d; ++j) dot += qv[j] * kr[j];
      S[qi * kTile + t] = tok >= qfirst[qi] && tok <= qpos[qi] ? dot * a.scale : -INFINITY;
    }
    __syncthreads();
    for (int qi = warp; qi < nq; qi += kThreads / 32) {
      const float s0 = S[qi * kTile + lane], s1 = S[qi * kTile + lane + 32];
      const float m_old = m_s[qi], m_new = fmaxf(m_old, warp_max(fmaxf(s0, s1)));
      float p0 = 0.0f, p1 = 0.0f, alpha = 1.0f;
      if (m_new != -INFINITY) {
        if constexpr (EMU) {  // double exps rounded to fp32: the CPU twin computes the same values
          p0 = static_cast<float>(exp(static_cast<double>(s0 - m_new)));
          p1 = static_cast<float>(exp(static_cast<double>(s1 - m_new)));
          alpha = static_cast<float>(exp(static_cast<double>(m_old - m_new)));
        } else {
          p0 = expf(s0 - m_new);
          p1 = expf(s1 - m_new);
          alpha = expf(m_old - m_new);
        }
      }
      const float sum = warp_sum(p0 + p1);
      // l from the unrounded weights (FA3's row_sum); P.V from fp8 ones, or bf16 ones (engine numerics)
      if (EMU && emu.pv_fp8) p0 = emu_round_p(p0), p1 = emu_round_p(p1);
      else if (emu.numerics == AttentionNumerics::kEngine) p0 = engine_round(p0), p1 = engine_round(p1);
      S[qi * kTile + lane] = p0;
      S[qi * kTile + lane + 32] = p1;
      __syncwarp();
      if (lane == 0) {
        m_s[qi] = m_new;
        l_s[qi] = l_s[qi] * alpha + sum;
        alpha_s[qi] = alpha;
      }
    }
    __syncthreads();
#pragma unroll
    for (int jj = 0; jj < 2; ++jj) {
      const int j = threadIdx.x + jj * kThreads;
      if constexpr (EMU) {
        if (j < d) emulated_pv<NQ>(emu, p, nq, qfirst, qpos, alpha_s, S, v_tile + j, L.ld, acc[jj], mma[jj]);
        continue;
      }
      if (j < d) {
#pragma unroll
        for (int qi = 0; qi < NQ; ++qi)
          if (qi < nq) acc[jj][qi] *= alpha_s[qi];
        for (int tt = 0; tt < kTile; ++tt) {
          const float v = v_tile[tt * L.ld + j];
#pragma unroll
          for (int qi = 0; qi < NQ; ++qi)
            if (qi < nq) acc[jj][qi] += S[qi * kTile + tt] * v;
        }
      }
    }
    __syncthreads();
  }
  store_partial<NQ, EMU>(a, emu, kvh, split, splits, nq, d, m_s, l_s, acc, mma);
}

// Fast path for the element-wise formats (since v5 fp32 only: the others run decode_attention)
// with head_dim 128 and at most 4 query vectors per tile (decode with GQA <= 4): no shared-memory
// tiles. Each warp takes whole pages; per 32 tokens, lane t reads token t's K row (vector loads)
// and computes its scores for every query vector (Q from shared memory, broadcast), the warp
// updates its online softmax, then for each token the warp reads the V row coalesced (lane = 4
// dimensions) and accumulates P.V. Warps merge through shared memory at the end and write the
// split's partial result like the generic kernel. Element decodes equal the codec's exactly
// (hardware fp8/fp16 widening is exact).
constexpr int kFastD = 128, kFastQ = 4;

// Since v5 only fp32 takes this kernel: the other element-wise formats run decode_attention
// (paged_attention_decode.cu), which paged_attention() tries first.
template <KvFamily F>
constexpr bool fast_family() {
  return F == KvFamily::kF32;
}

__device__ __forceinline__ float fp8_hw(std::uint32_t byte, Fp8Kind kind) {
  const __half_raw h = __nv_cvt_fp8_to_halfraw(static_cast<__nv_fp8_storage_t>(byte & 0xffu),
                                               kind == Fp8Kind::kE4M3 ? __NV_E4M3 : __NV_E5M2);
  return __half2float(__half(h));
}

// Element i (0..3) of a 32-bit word holding 2-byte or 1-byte elements.
template <KvFamily F>
__device__ __forceinline__ float word_element(std::uint32_t w, int i, Fp8Kind kind) {
  if constexpr (F == KvFamily::kBf16) return __uint_as_float((i ? w >> 16 : w & 0xffffu) << 16);
  else if constexpr (F == KvFamily::kF16) return __half2float(__ushort_as_half(static_cast<unsigned short>(i ? w >> 16 : w & 0xffffu)));
  else if constexpr (F == KvFamily::kInt8Pth) return static_cast<float>(static_cast<std::int8_t>((w >> (8 * i)) & 0xffu));
  else return fp8_hw(w >> (8 * i), F == KvFamily::kFp8Pth ? Fp8Kind::kE4M3 : kind);
}

// The multiplier of a slot's elements: per head (fp8 per tensor), per slot (per token-head), or 1.
template <KvFamily F>
__device__ __forceinline__ float fast_scale(const KvLayerCodec& c, const std::uint8_t* slot, int head, bool is_k) {
  if constexpr (F == KvFamily::kFp8Tensor) return (is_k ? c.k_scales : c.v_scales)[head];
  else if constexpr (F == KvFamily::kFp8Pth || F == KvFamily::kInt8Pth) return *reinterpret_cast<const float*>(slot + kFastD);
  else return 1.0f;
}
template <KvFamily F>
__device__ __forceinline__ float scaled(float x, float scale) {
  if constexpr (F == KvFamily::kFp8Tensor || F == KvFamily::kFp8Pth || F == KvFamily::kInt8Pth) return x * scale;
  else return x;
}

// Elements 8ch .. 8ch+7 of a slot.
template <KvFamily F>
__device__ __forceinline__ void fast_chunk8(const std::uint8_t* slot, int ch, Fp8Kind kind, float scale, float out[8]) {
  if constexpr (F == KvFamily::kF32) {
    const float4 a = __ldg(reinterpret_cast<const float4*>(slot) + 2 * ch), b = __ldg(reinterpret_cast<const float4*>(slot) + 2 * ch + 1);
    out[0] = a.x, out[1] = a.y, out[2] = a.z, out[3] = a.w, out[4] = b.x, out[5] = b.y, out[6] = b.z, out[7] = b.w;
  } else if constexpr (F == KvFamily::kBf16 || F == KvFamily::kF16) {
    const uint4 w = __ldg(reinterpret_cast<const uint4*>(slot) + ch);
    const std::uint32_t u[4] = {w.x, w.y, w.z, w.w};
#pragma unroll
    for (int e = 0; e < 4; ++e) {
      out[2 * e] = word_element<F>(u[e], 0, kind);
      out[2 * e + 1] = word_element<F>(u[e], 1, kind);
    }
  } else {  // one-byte elements; per token-head slots are only 4-byte aligned
    const std::uint32_t* p = reinterpret_cast<const std::uint32_t*>(slot) + 2 * ch;
    const std::uint32_t u[2] = {__ldg(p), __ldg(p + 1)};
#pragma unroll
    for (int e = 0; e < 8; ++e) out[e] = scaled<F>(word_element<F>(u[e / 4], e % 4, kind), scale);
  }
}

// Elements 4*lane .. 4*lane+3 of a slot.
template <KvFamily F>
__device__ __forceinline__ void fast_lane4(const std::uint8_t* slot, int lane, Fp8Kind kind, float scale, float out[4]) {
  if constexpr (F == KvFamily::kF32) {
    const float4 a = __ldg(reinterpret_cast<const float4*>(slot) + lane);
    out[0] = a.x, out[1] = a.y, out[2] = a.z, out[3] = a.w;
  } else if constexpr (F == KvFamily::kBf16 || F == KvFamily::kF16) {
    const uint2 w = __ldg(reinterpret_cast<const uint2*>(slot) + lane);
    out[0] = word_element<F>(w.x, 0, kind);
    out[1] = word_element<F>(w.x, 1, kind);
    out[2] = word_element<F>(w.y, 0, kind);
    out[3] = word_element<F>(w.y, 1, kind);
  } else {
    const std::uint32_t w = __ldg(reinterpret_cast<const std::uint32_t*>(slot) + lane);
#pragma unroll
    for (int e = 0; e < 4; ++e) out[e] = scaled<F>(word_element<F>(w, e, kind), scale);
  }
}

template <KvFamily F>
__global__ void __launch_bounds__(kThreads) paged_attention_fast_kernel(KvLayerCodec c, PagedAttentionArgs a) {
  constexpr int d = kFastD, warps = kThreads / 32;
  __shared__ float Qs[kFastQ][d];
  __shared__ float wm[warps][kFastQ], wl[warps][kFastQ];
  __shared__ float wacc[warps][kFastQ][d];
  __shared__ int qpos[kFastQ], qfirst[kFastQ];
  const AttentionTile tl = a.tiles[blockIdx.z];
  const int kvh = blockIdx.y, split = blockIdx.x, splits = gridDim.x;
  const int group = a.heads / a.kv_heads, nq = tl.rows * group, qw = a.heads * d;
  for (int i = threadIdx.x; i < kFastQ * d; i += kThreads) {
    const int qi = i / d, j = i % d;
    const float x = qi < nq ? a.q[static_cast<std::int64_t>(tl.row0 + qi / group) * qw + (kvh * group + qi % group) * d + j] : 0.0f;
    Qs[qi][j] = a.emulation.numerics == AttentionNumerics::kEngine ? engine_round(x) : x;
  }
  if (threadIdx.x < kFastQ) {
    const int pos = threadIdx.x < nq ? a.row_pos[tl.row0 + threadIdx.x / group] : -1;
    qpos[threadIdx.x] = pos;
    qfirst[threadIdx.x] = a.window > 0 ? max(0, pos - a.window + 1) : 0;
  }
  __syncthreads();
  const int p_first = a.row_pos[tl.row0], hi = a.row_pos[tl.row0 + tl.rows - 1] + 1;
  int pb, pe;
  split_pages(a.window > 0 ? max(0, p_first - a.window + 1) : 0, hi, split, splits, pb, pe);
  const int* table = a.block_table + static_cast<std::int64_t>(tl.seq) * a.max_pages;
  const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
  const int k_bytes = c.k_bytes, v_bytes = c.v_bytes;
  const Fp8Kind kind = c.fp8_kind;
  float m[kFastQ], l[kFastQ], acc[kFastQ][4];
#pragma unroll
  for (int qi = 0; qi < kFastQ; ++qi) {
    m[qi] = -INFINITY;
    l[qi] = 0.0f;
#pragma unroll
    for (int e = 0; e < 4; ++e) acc[qi][e] = 0.0f;
  }
  for (int p = pb + warp; p < pe; p += warps) {
    const std::int64_t region = (static_cast<std::int64_t>(table[p]) * a.kv_heads + kvh) * kTile;
    const std::uint8_t* kp = a.k_pool + region * k_bytes;
    const std::uint8_t* vp = a.v_pool + region * v_bytes;
    for (int t0 = 0; t0 < kTile; t0 += 32) {
      const int tok = p * kTile + t0 + lane;
      // Scores of token `tok` (lane) for every query vector.
      float s[kFastQ];
#pragma unroll
      for (int qi = 0; qi < kFastQ; ++qi) s[qi] = 0.0f;
      const bool in_range = tok < hi;
      if (in_range) {
        const std::uint8_t* krow = kp + (t0 + lane) * k_bytes;
        const float ks = fast_scale<F>(c, krow, kvh, true);
#pragma unroll 4
        for (int ch = 0; ch < d / 8; ++ch) {
          float kv8[8];
          fast_chunk8<F>(krow, ch, kind, ks, kv8);
#pragma unroll
          for (int e = 0; e < 8; ++e)
#pragma unroll
            for (int qi = 0; qi < kFastQ; ++qi) s[qi] += Qs[qi][ch * 8 + e] * kv8[e];
        }
      }
      float pr[kFastQ], alpha[kFastQ];
#pragma unroll
      for (int qi = 0; qi < kFastQ; ++qi) {
        const bool ok = in_range && qi < nq && tok >= qfirst[qi] && tok <= qpos[qi];
        const float sc = ok ? s[qi] * a.scale : -INFINITY;
        const float m_new = fmaxf(m[qi], warp_max(sc));
        pr[qi] = m_new == -INFINITY ? 0.0f : expf(sc - m_new);
        alpha[qi] = m_new == -INFINITY ? 1.0f : expf(m[qi] - m_new);
        l[qi] = l[qi] * alpha[qi] + warp_sum(pr[qi]);
        if (a.emulation.numerics == AttentionNumerics::kEngine) pr[qi] = engine_round(pr[qi]);  // P.V's operand
        m[qi] = m_new;
#pragma unroll
        for (int e = 0; e < 4; ++e) acc[qi][e] *= alpha[qi];
      }
      // P.V: lane owns dimensions 4*lane .. 4*lane+3.
      const int tmax = min(32, hi - (p * kTile + t0));
      for (int tt = 0; tt < tmax; ++tt) {
        const std::uint8_t* vrow = vp + (t0 + tt) * v_bytes;
        float vv[4];
        fast_lane4<F>(vrow, lane, kind, fast_scale<F>(c, vrow, kvh, false), vv);
        const float v0 = vv[0], v1 = vv[1], v2 = vv[2], v3 = vv[3];
#pragma unroll
        for (int qi = 0; qi < kFastQ; ++qi) {
          const float pt = __shfl_sync(0xffffffffu, pr[qi], tt);
          acc[qi][0] += pt * v0;
          acc[qi][1] += pt * v1;
          acc[qi][2] += pt * v2;
          acc[qi][3] += pt * v3;
        }
      }
    }
  }
  // Merge the warps.
#pragma unroll
  for (int qi = 0; qi < kFastQ; ++qi) {
    if (lane == 0) {
      wm[warp][qi] = m[qi];
      wl[warp][qi] = l[qi];
    }
#pragma unroll
    for (int e = 0; e < 4; ++e) wacc[warp][qi][4 * lane + e] = acc[qi][e];
  }
  __syncthreads();
  const std::int64_t entries = static_cast<std::int64_t>(gridDim.z) * gridDim.y * splits * kMaxTileQ;
  const std::int64_t base = ((static_cast<std::int64_t>(blockIdx.z) * gridDim.y + kvh) * splits + split) * kMaxTileQ;
  float* out_acc = a.workspace + 2 * entries;
  for (int i = threadIdx.x; i < nq * d; i += kThreads) {
    const int qi = i / d, j = i % d;
    float mm = -INFINITY;
    for (int w = 0; w < warps; ++w) mm = fmaxf(mm, wm[w][qi]);
    float ll = 0.0f, aa = 0.0f;
    if (mm != -INFINITY)
      for (int w = 0; w < warps; ++w) {
        if (wm[w][qi] == -INFINITY) continue;
        const float f = expf(wm[w][qi] - mm);
        ll += wl[w][qi] * f;
        aa += wacc[w][qi][j] * f;
      }
    out_acc[(base + qi) * d + j] = aa;
    if (j == 0) {
      a.workspace[2 * (base + qi)] = mm;
      a.workspace[2 * (base + qi) + 1] = ll;
    }
  }
}

// W consecutive dimensions j0.. of query vector qi: the splits' partials weighted by exp(m_s - m),
// over the weighted sum of their l.
template <int W>
__device__ void combine_dims(const PagedAttentionArgs& a, int d, int splits, int qi, int j0, std::int64_t out) {
  const std::int64_t entries = static_cast<std::int64_t>(gridDim.x) * gridDim.y * splits * kMaxTileQ;
  const float* wacc = a.workspace + 2 * entries;
  const std::int64_t e0 = (static_cast<std::int64_t>(blockIdx.x) * gridDim.y + blockIdx.y) * splits * kMaxTileQ + qi;
  float m = -INFINITY;
  for (int s = 0; s < splits; ++s) m = fmaxf(m, a.workspace[2 * (e0 + s * kMaxTileQ)]);
  float num[W] = {}, den = 0.0f;
  for (int s = 0; s < splits; ++s) {
    const std::int64_t e = e0 + s * kMaxTileQ;
    const float ms = a.workspace[2 * e];
    if (ms == -INFINITY) continue;
    const float w = expf(ms - m);
    den += a.workspace[2 * e + 1] * w;
    float x[W];
    if constexpr (W == 4) {
      const float4 v = *reinterpret_cast<const float4*>(wacc + e * d + j0);
      x[0] = v.x, x[1] = v.y, x[2] = v.z, x[3] = v.w;
    } else {
      x[0] = wacc[e * d + j0];
    }
#pragma unroll
    for (int k = 0; k < W; ++k) num[k] += x[k] * w;
  }
#pragma unroll
  for (int k = 0; k < W; ++k) {
    const float v = den > 0.0f ? num[k] / den : 0.0f;
    if (a.out_bf16) a.out_bf16[out + j0 + k] = f32_to_bf16(v);
    else a.out[out + j0 + k] = v;
  }
}

// One block per (tile, KV head): merges the splits of every query vector of the tile, a thread per
// (query vector, W dimensions), so that all of the tile's loads are in flight together, where a loop
// over the query vectors kept one load a thread in flight (docs/bench-notes/prefill-elementwise-2026-12-07.md).
__global__ void combine_kernel(PagedAttentionArgs a, int d, int splits) {
  const AttentionTile tl = a.tiles[blockIdx.x];
  const int group = a.heads / a.kv_heads, nq = tl.rows * group, qw = a.heads * d;
  const bool wide = d % 4 == 0;
  const int cols = wide ? d / 4 : d;
  for (int i = threadIdx.x; i < nq * cols; i += blockDim.x) {
    const int qi = i / cols, j0 = i % cols * (wide ? 4 : 1);
    const std::int64_t out = static_cast<std::int64_t>(tl.row0 + qi / group) * qw + (blockIdx.y * group + qi % group) * d;
    if (wide) combine_dims<4>(a, d, splits, qi, j0, out);
    else combine_dims<1>(a, d, splits, qi, j0, out);
  }
}

void launch_combine(const PagedAttentionArgs& a, int d, int splits, cudaStream_t s) {
  const int per_tile = kMaxTileQ * (d % 4 == 0 ? d / 4 : d);
  const int threads = std::min(1024, (per_tile + 31) / 32 * 32);
  combine_kernel<<<dim3(a.num_tiles, a.kv_heads), threads, 0, s>>>(a, d, splits);
  KV_CUDA_CHECK_LAUNCH();
}

template <KvFamily F, int NQ, bool EMU = false>
void launch_nq(const KvLayerCodec& c, const PagedAttentionArgs& a, int splits, cudaStream_t s) {
  const SmemLayout L(c.head_dim, NQ, c.k_bytes, c.v_bytes, !elementwise_family<F>());
  const int smem = L.bytes();
  static int configured = 0;  // the largest dynamic size this instantiation was opened for
  if (smem > 48 * 1024 && smem > configured) {
    KV_CUDA_CHECK(cudaFuncSetAttribute(paged_attention_kernel<F, NQ, EMU>, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
    configured = smem;
  }
  const dim3 grid(splits, a.kv_heads, a.num_tiles);
  paged_attention_kernel<F, NQ, EMU><<<grid, kThreads, smem, s>>>(c, a);
  KV_CUDA_CHECK_LAUNCH();
}

// Tiles of at most 4 query vectors (decode with GQA <= 4) take the small instantiation; the
// element-wise formats with head_dim 128 the register fast path.
template <KvFamily F>
void launch(const KvLayerCodec& c, const PagedAttentionArgs& a, int max_tile_q, int splits, cudaStream_t s) {
  if (a.emulation.active()) {  // engine emulation: the generic kernel only, one instantiation per family
    launch_nq<F, kMaxTileQ, true>(c, a, splits, s);
    return;
  }
  if constexpr (fast_family<F>()) {
    if (max_tile_q <= kFastQ && c.head_dim == kFastD) {
      paged_attention_fast_kernel<F><<<dim3(splits, a.kv_heads, a.num_tiles), kThreads, 0, s>>>(c, a);
      KV_CUDA_CHECK_LAUNCH();
      return;
    }
  }
  if (max_tile_q <= 4) launch_nq<F, 4>(c, a, splits, s);
  else launch_nq<F, kMaxTileQ>(c, a, splits, s);
}

}  // namespace

int attention_splits(int num_tiles, int kv_heads, int max_ctx, int page_tokens) {
  const int blocks = num_tiles * kv_heads;
  const int pages = (max_ctx + page_tokens - 1) / page_tokens;
  // Enough blocks for about four waves of 132 multiprocessors, each split at least 2 pages.
  int splits = (4 * 132 + blocks - 1) / blocks;
  splits = std::min(splits, std::max(1, pages / 2));
  return std::max(1, std::min(splits, 128));
}

std::size_t attention_workspace_floats(int num_tiles, int kv_heads, int splits, int head_dim) {
  return static_cast<std::size_t>(num_tiles) * kv_heads * splits * kMaxTileQ * (head_dim + 2);
}

void paged_attention(const KvLayerCodec& c, const PagedAttentionArgs& a0, cudaStream_t s) {
  if (a0.num_tiles <= 0) return;
  if (a0.heads % a0.kv_heads != 0 || a0.heads / a0.kv_heads > kMaxTileQ)
    throw Error("paged_attention: GQA group " + std::to_string(a0.heads / a0.kv_heads) + " above " +
                std::to_string(kMaxTileQ) + " is not supported");
  PagedAttentionArgs a = a0;
  const int max_tile_q = a.max_tile_rows * (a.heads / a.kv_heads);
  if (a.max_tile_rows <= 0 || max_tile_q > kMaxTileQ)
    throw Error("paged_attention: max_tile_rows must be 1.." + std::to_string(kMaxTileQ / (a.heads / a.kv_heads)), kExitInternal);
  if (a.emulation.active() && (a.emulation.splits < 1 || a.emulation.pv_promote_every < kEmuStep ||
                               a.emulation.pv_promote_every % kEmuStep != 0 || !(a.emulation.q_scale > 0.0f)))
    throw Error("paged_attention: invalid emulation settings", kExitInternal);
  const int splits = a.emulation.active() ? a.emulation.splits
                     : a.splits > 0       ? a.splits
                                          : attention_splits(a.num_tiles, a.kv_heads, a.max_ctx, a.page_tokens);
  // The decode path (head_dim 128, <= 4 query vectors a tile or one row of GQA <= 16), in exact or
  // engine numerics: emulation runs the generic kernel.
  if (!a.emulation.active() && a.decode != DecodeKernel::kGeneric &&
      decode_attention_supported(c, a.max_tile_rows, a.heads / a.kv_heads)) {
    decode_attention(c, a, splits, s);
    return;
  }
  // Prefill tiles (two or more rows) on tensor cores, exact or engine numerics; then the generic merge.
  if (prefill_attention_supported(c, a)) {
    const int sp = prefill_attention_splits(c, a, splits);
    prefill_attention(c, a, sp, s);
    launch_combine(a, c.head_dim, sp, s);
    return;
  }
  switch (c.family) {
    case KvFamily::kF32: launch<KvFamily::kF32>(c, a, max_tile_q, splits, s); break;
    case KvFamily::kBf16: launch<KvFamily::kBf16>(c, a, max_tile_q, splits, s); break;
    case KvFamily::kF16: launch<KvFamily::kF16>(c, a, max_tile_q, splits, s); break;
    case KvFamily::kFp8Tensor: launch<KvFamily::kFp8Tensor>(c, a, max_tile_q, splits, s); break;
    case KvFamily::kFp8Pth: launch<KvFamily::kFp8Pth>(c, a, max_tile_q, splits, s); break;
    case KvFamily::kInt8Pth: launch<KvFamily::kInt8Pth>(c, a, max_tile_q, splits, s); break;
    case KvFamily::kInt4Pth: launch<KvFamily::kInt4Pth>(c, a, max_tile_q, splits, s); break;
    case KvFamily::kNvfp4: launch<KvFamily::kNvfp4>(c, a, max_tile_q, splits, s); break;
    case KvFamily::kQ8_0: launch<KvFamily::kQ8_0>(c, a, max_tile_q, splits, s); break;
    case KvFamily::kQ4_0: launch<KvFamily::kQ4_0>(c, a, max_tile_q, splits, s); break;
    case KvFamily::kTqFp8Key: launch<KvFamily::kTqFp8Key>(c, a, max_tile_q, splits, s); break;
    case KvFamily::kTqMse: launch<KvFamily::kTqMse>(c, a, max_tile_q, splits, s); break;
    default: throw Error("paged_attention: unknown KV family", kExitInternal);
  }
  launch_combine(a, c.head_dim, splits, s);
}

}  // namespace kvgate::kernels::cuda
