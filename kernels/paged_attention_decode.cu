// decode_attention (paged_attention_decode.h): the decode fast path of the paged attention, built for
// bytes in flight. A block (4 warps) takes 4 query vectors of one tile and KV head (a one-row tile of
// GQA 5-16 takes several blocks, block_work) and one split of its pages; cp.async copies the raw K
// and V regions of the next pages into a 3-stage shared-memory ring while the warps compute the
// current page, so the loads never wait on the maths.
//
// Per page each warp owns 16 tokens; a half-warp takes 8 of them, and lane s (0..15) of the half
// owns 8 of the 128 dimensions of every K and V row (its 16-byte bf16 chunk, 8 bytes of fp8/int8,
// 4 bytes of 4-bit codes, ...), decoded in registers with packed conversions; Q (rotated and scaled
// once per block, see below) sits in registers for those 8 dimensions. Partial dots of 8 tokens x 4
// queries are reduce-scattered over the 16 lanes (30 shuffles), leaving each lane 2 scores; the warp
// keeps its own online softmax (fp32), writes P to shared memory, and accumulates P.V for its 8
// dimensions x 4 queries in fp32 registers. Warps merge at the end; a second kernel merges splits.
//
// Exactness: every element decodes to the codec's value (hardware fp8/fp16 widening, integer codes
// via exact float tricks); per-block/per-token multipliers are applied to the lane's partial dot and
// to P instead of to each element, and linear transforms are moved from K and V onto Q and the
// output: q.(H k) = (H q).k for the Hadamard-rotated formats (int4_per_token_head's randomized
// transform, llama.cpp's block rotation, TurboQuant keys), V's inverse rotation once on the
// accumulator. All of that reorders fp32 arithmetic only; nothing runs below fp32.
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string>

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>

#include "kernels/cp_async.cuh"
#include "kernels/cuda_check.cuh"
#include "kernels/decode_blocks.cuh"
#include "kernels/decode_formats.cuh"
#include "kernels/decode_tc_fragments.cuh"
#include "kernels/f16_range.cuh"
#include "kernels/fwht_rows.cuh"
#include "kernels/float_formats.h"
#include "kernels/kv_codecs.h"
#include "kernels/kv_rotations.cuh"
#include "kernels/paged_attention_decode.h"
#include "kernels/pdl.cuh"
#include "kernels/softmax_exp.cuh"

namespace kvgate::kernels::cuda {

namespace {

// ---- the CUDA-core kernel ---------------------------------------------------------------------------
// A page's steps for one warp (its 16 tokens): the lane's scores, the online softmax, P.V; the state
// (m, l, acc) lives in the kernel's registers, these take it by reference and are inlined.

// Scores: partial dots of 8 tokens x 4 queries, reduce-scattered over the half-warp. The lane ends
// with one token (its slot of the warp's 16) and queries q0, q0 + 1: sc0, sc1 (-inf where not visible).
template <Fmt F>
__device__ __forceinline__ void cc_scores(const KvLayerCodec& c, const std::uint8_t* kst, const float (&qreg)[kNQ][8], const float* lut,
                                          int warp, int half, int s, int tok_base, int hi, int q0, int nq, const int* qfirst_s,
                                          const int* qpos_s, float scale, int& slot, float& sc0, float& sc1) {
  using T = Traits<F>;
  float v[8 * kNQ], ssq[8];
#pragma unroll
  for (int t = 0; t < 8; ++t) {
    const std::uint8_t* row = kst + (warp * 16 + 2 * t + half) * T::kKBytes;
    float x[8];
    const float mul = T::k8(row, s, x, lut, ssq[t]);
#pragma unroll
    for (int qi = 0; qi < kNQ; ++qi) {
      float d0 = 0.0f;
#pragma unroll
      for (int e = 0; e < 8; ++e) d0 = fmaf(qreg[qi][e], x[e], d0);
      v[t * kNQ + qi] = d0 * mul;
    }
  }
  rs_step<8, 32>(v, s);
  rs_step<4, 16>(v, s);
  rs_step<2, 8>(v, s);
  rs_step<1, 4>(v, s);
  // This lane now holds token t = s >> 1 (slot 2t + half), queries q0 and q0 + 1.
  slot = 2 * (s >> 1) + half;
  const int tok = tok_base + slot;
  float post = scale;
  if constexpr (T::kTqMse) {
    rs_step<8, 8>(ssq, s);
    rs_step<4, 4>(ssq, s);
    rs_step<2, 2>(ssq, s);
    const float ss = ssq[0] + __shfl_xor_sync(0xffffffffu, ssq[0], 1);
    const float norm = half_at(kst + (warp * 16 + slot) * T::kKBytes + (T::kKeyBits * kD) / 8);
    post *= c.norm_correction ? norm * (1.0f / sqrtf(ss + 1e-16f)) : norm;
  }
  const bool in = tok < hi;
  const bool ok0 = in && q0 < nq && tok >= qfirst_s[q0] && tok <= qpos_s[q0];
  const bool ok1 = in && q0 + 1 < nq && tok >= qfirst_s[q0 + 1] && tok <= qpos_s[q0 + 1];
  sc0 = ok0 ? v[0] * post : -INFINITY;
  sc1 = ok1 ? v[1] * post : -INFINITY;
}

// Online softmax of the warp: page maxima per query (lanes of one parity hold q0, q0 + 1); m, the
// lane's shares l0, l1 and acc move on; p0, p1: the lane's P of queries q0, q0 + 1.
__device__ __forceinline__ void cc_softmax(float sc0, float sc1, int s, float (&m)[kNQ], float& l0, float& l1, float (&acc)[kNQ][8],
                                           float (&accoff)[kNQ], float& p0, float& p1) {
  float mx0 = sc0, mx1 = sc1;
#pragma unroll
  for (int o = 2; o <= 16; o <<= 1) {
    mx0 = fmaxf(mx0, __shfl_xor_sync(0xffffffffu, mx0, o));
    mx1 = fmaxf(mx1, __shfl_xor_sync(0xffffffffu, mx1, o));
  }
  const float ox0 = __shfl_xor_sync(0xffffffffu, mx0, 1), ox1 = __shfl_xor_sync(0xffffffffu, mx1, 1);
  const bool odd = (s & 1) != 0;
  const float pm[kNQ] = {odd ? ox0 : mx0, odd ? ox1 : mx1, odd ? mx0 : ox0, odd ? mx1 : ox1};
  // The maxima are the same in every lane: the rescale (and its exp) runs only when one grew.
  float alpha[kNQ];
  bool grew = false;
#pragma unroll
  for (int qi = 0; qi < kNQ; ++qi) {
    const float mn = fmaxf(m[qi], pm[qi]);
    alpha[qi] = 1.0f;
    if (mn != m[qi]) {
      alpha[qi] = expf(m[qi] - mn);  // 0 when m was -inf
      grew = true;
    }
    m[qi] = mn;
  }
  const float my0 = odd ? m[2] : m[0], my1 = odd ? m[3] : m[1];
  p0 = sc0 == -INFINITY ? 0.0f : softmax_exp(sc0 - my0);
  p1 = sc1 == -INFINITY ? 0.0f : softmax_exp(sc1 - my1);
  l0 = l0 * (odd ? alpha[2] : alpha[0]) + p0;
  l1 = l1 * (odd ? alpha[3] : alpha[1]) + p1;
  if (grew) {
#pragma unroll
    for (int qi = 0; qi < kNQ; ++qi) {
      accoff[qi] *= alpha[qi];
#pragma unroll
      for (int e = 0; e < 8; ++e) acc[qi][e] *= alpha[qi];
    }
  }
}

// P.V over this half's 8 tokens (P of the warp's 16 from p_s); rows past the sequence end may hold
// any bytes: zeroed.
template <Fmt F>
__device__ __forceinline__ void cc_pv(const std::uint8_t* vst, const float (*p_s)[16][kNQ], int warp, int half, int s, int tok_base, int hi,
                                      float (&acc)[kNQ][8], float (&accoff)[kNQ]) {
  using T = Traits<F>;
#pragma unroll
  for (int t = 0; t < 8; ++t) {
    const int sl = 2 * t + half;
    const std::uint8_t* row = vst + (warp * 16 + sl) * T::kVBytes;
    float x[8], off;
    float mul = T::v8(row, s, x, off);
    if (tok_base + sl >= hi) {
      mul = 0.0f;
      off = 0.0f;
#pragma unroll
      for (int e = 0; e < 8; ++e) x[e] = 0.0f;
    }
    const float4 pp = *reinterpret_cast<const float4*>(&p_s[warp][sl][0]);
    const float pq[kNQ] = {pp.x, pp.y, pp.z, pp.w};
#pragma unroll
    for (int qi = 0; qi < kNQ; ++qi) {
      const float pw = pq[qi] * mul;
#pragma unroll
      for (int e = 0; e < 8; ++e) acc[qi][e] = fmaf(pw, x[e], acc[qi][e]);
      if constexpr (T::kTq) accoff[qi] = fmaf(pq[qi], off, accoff[qi]);
    }
  }
}

// After the pages: the two halves merged (same dimensions, other tokens) and the lanes' shares of l,
// then the warp's partial into the (now idle) ring: wacc [warps][4][128], wm, wl [warps][4].
template <Fmt F>
__device__ __forceinline__ void cc_warp_partial(float (&acc)[kNQ][8], const float (&accoff)[kNQ], float l0, float l1, const float (&m)[kNQ],
                                                float* wacc, int warp, int lane, int half, int s) {
  using T = Traits<F>;
#pragma unroll
  for (int qi = 0; qi < kNQ; ++qi)
#pragma unroll
    for (int e = 0; e < 8; ++e) {
      float x = acc[qi][e];
      if constexpr (T::kTq) x += accoff[qi];
      acc[qi][e] = x + __shfl_xor_sync(0xffffffffu, x, 16);
    }
#pragma unroll
  for (int o = 2; o <= 16; o <<= 1) {
    l0 += __shfl_xor_sync(0xffffffffu, l0, o);
    l1 += __shfl_xor_sync(0xffffffffu, l1, o);
  }
  float* wm = wacc + kWarps * kNQ * kD;
  float* wl = wm + kWarps * kNQ;
  if (half == 0) {
#pragma unroll
    for (int qi = 0; qi < kNQ; ++qi)
#pragma unroll
      for (int e = 0; e < 8; ++e) wacc[(warp * kNQ + qi) * kD + T::dim(s, e)] = acc[qi][e];
  }
  if (lane < 2) {
    wl[warp * kNQ + 2 * lane] = l0;
    wl[warp * kNQ + 2 * lane + 1] = l1;
  }
  if (lane == 0)
#pragma unroll
    for (int qi = 0; qi < kNQ; ++qi) wm[warp * kNQ + qi] = m[qi];
}

template <Fmt F>
__global__ void __launch_bounds__(kThreads, min_blocks<F, false>()) decode_kernel(KvLayerCodec c, PagedAttentionArgs a) {
  using T = Traits<F>;
  constexpr int kStages = stages<F, false>();
  constexpr int kRegionK = kPage * T::kKBytes, kStage = stage_bytes<F>();
  extern __shared__ float4 ring4[];
  std::uint8_t* ring = reinterpret_cast<std::uint8_t*>(ring4);
  __shared__ float q_raw[kNQ][kD];
  __shared__ __align__(16) float p_s[kWarps][16][kNQ];
  __shared__ float lut[16];
  __shared__ int qpos_s[kNQ], qfirst_s[kNQ];
  const bool engine = a.emulation.numerics == AttentionNumerics::kEngine;

  pdl_launch_dependents();
  pdl_wait();  // Q, the tiles and this step's K/V come from earlier kernels
  const BlockWork w = block_work(a);
  if (w.nq <= 0) return;
  const int kvh = w.kvh, nq = w.nq, pb = w.pb, pe = w.pe, hi = w.hi;
  const int tid = threadIdx.x, warp = tid >> 5, lane = tid & 31, half = lane >> 4, s = lane & 15;
  // Prologue: the first pages are in flight while Q is prepared.
#pragma unroll
  for (int st = 0; st < kStages - 1; ++st) {
    if (pb + st < pe) issue_page<F>(a, kvh, w.table[pb + st], ring + st * kStage);
    cp_async_commit();
  }
  if constexpr (T::kTqMse) {
    if (tid < (1 << T::kKeyBits)) lut[tid] = c.centroids[tid];
  }
  stage_q<F>(c, a, w, q_raw, qpos_s, qfirst_s);
  const float qmul = q_multiplier<F>(c, kvh);
  float qreg[kNQ][8];
#pragma unroll
  for (int qi = 0; qi < kNQ; ++qi)
#pragma unroll
    for (int e = 0; e < 8; ++e) qreg[qi][e] = q_raw[qi][T::dim(s, e)] * qmul;

  float m[kNQ], acc[kNQ][8], accoff[kNQ];
  float l0 = 0.0f, l1 = 0.0f;  // this lane's share of l for queries q0, q0 + 1
  const int q0 = 2 * (s & 1);
#pragma unroll
  for (int qi = 0; qi < kNQ; ++qi) {
    m[qi] = -INFINITY;
    accoff[qi] = 0.0f;
#pragma unroll
    for (int e = 0; e < 8; ++e) acc[qi][e] = 0.0f;
  }
  const float scale = a.scale;
  int next_id = pb + kStages - 1 < pe ? w.table[pb + kStages - 1] : 0;

  for (int p = pb, it = 0; p < pe; ++p, ++it) {
    // Page p's group is complete once at most kStages - 2 younger ones are pending; after the
    // barrier every warp is done with the page before, whose stage then takes page p + kStages - 1.
    cp_async_wait<kStages - 2>();
    __syncthreads();
    if (p + kStages - 1 < pe) issue_page<F>(a, kvh, next_id, ring + ((it + kStages - 1) % kStages) * kStage);
    cp_async_commit();
    next_id = p + kStages < pe ? w.table[p + kStages] : 0;
    const std::uint8_t* kst = ring + (it % kStages) * kStage;
    const std::uint8_t* vst = kst + kRegionK;
    // Token slot (0..15) of the warp's 16 tokens for local token t of this half: interleaved halves
    // (rows an odd number of words apart hit other banks).
    const int tok_base = p * kPage + warp * 16;

    int slot;
    float sc0, sc1, p0, p1;
    cc_scores<F>(c, kst, qreg, lut, warp, half, s, tok_base, hi, q0, nq, qfirst_s, qpos_s, scale, slot, sc0, sc1);
    cc_softmax(sc0, sc1, s, m, l0, l1, acc, accoff, p0, p1);
    if (engine) p0 = engine_round(p0), p1 = engine_round(p1);  // P.V's operand; l kept the unrounded p
    *reinterpret_cast<float2*>(&p_s[warp][slot][q0]) = make_float2(p0, p1);
    __syncwarp();

    cc_pv<F>(vst, p_s, warp, half, s, tok_base, hi, acc, accoff);
  }
  cp_async_wait<0>();
  __syncthreads();

  float* wacc = reinterpret_cast<float*>(ring);
  cc_warp_partial<F>(acc, accoff, l0, l1, m, wacc, warp, lane, half, s);
  __syncthreads();
  finish_block<F>(c, a, w, wacc);
}

// ---- the tensor-core kernel (its design: decode_tc_fragments.cuh) ---------------------------------
// A page's steps for one warp of decode_tc_kernel (its 16 tokens): Q's fragments once, then per page
// S, the softmax with P's V scales, and P V; inlined into the kernel, whose registers hold the state.

// Warp v: query vector v's power-of-two scale (fp16: its largest |q| below 2^14).
template <bool kBf>
__device__ __forceinline__ void tc_q_scale(const float (*q_raw)[kD], float qmul, int warp, int lane, float* qscale_s) {
  float mx = 0.0f;
  for (int j = lane; j < kD; j += 32) mx = fmaxf(mx, fabsf(q_raw[warp][j] * qmul));
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, o));
  const int k = kBf ? 0 : f16_range_exponent(mx);
  if (lane == 0) qscale_s[warp] = kBf ? 1.0f : ldexpf(1.0f, k);
}

// Q's A fragments of the 8 k-steps: query q's terms in rows 0-3 (x0), 8-11 (x1) and 4-7 (upper: x2).
template <Fmt F>
__device__ __forceinline__ void tc_q_fragments(const float* qrow, float qmul, float qs, int c4, bool upper, std::uint32_t (&qa)[8][4]) {
  constexpr bool kBf = F == Fmt::kBf16;
#pragma unroll
  for (int ks = 0; ks < 8; ++ks) {
    const float* x = qrow + k_dim<F>(c4, ks);
    std::uint32_t t01[3], t23[3];
    terms3<kBf>((x[k_pair_offset<F>(0)] * qmul) * qs, (x[k_pair_offset<F>(1)] * qmul) * qs, t01);
    terms3<kBf>((x[k_pair_offset<F>(2)] * qmul) * qs, (x[k_pair_offset<F>(3)] * qmul) * qs, t23);
    qa[ks][0] = upper ? t01[2] : t01[0];
    qa[ks][1] = upper ? 0u : t01[1];
    qa[ks][2] = upper ? t23[2] : t23[0];
    qa[ks][3] = upper ? 0u : t23[1];
  }
}

// S for the warp's 16 tokens: lane (g, c) ends with query q's scores of tokens 8n + 2c + (0, 1),
// -inf where not visible (q_ok: q is one of the block's query vectors).
template <Fmt F>
__device__ __forceinline__ void tc_scores(const std::uint8_t* krows, const std::uint32_t (&qa)[8][4], int warp, int g, int c4, int tok0,
                                          int hi, bool q_ok, int qfirst, int qpos, float post, float (&sc)[2][2]) {
  using T = Traits<F>;
  constexpr bool kBf = F == Fmt::kBf16, kPth = pth_format(F), kGgml = ggml_format(F);
  constexpr int kChains = kGgml ? 4 : 2;
#pragma unroll
  for (int n = 0; n < 2; ++n) {
    std::uint32_t kb[8][2];
    k_fragments<F>(krows, warp * 16 + 8 * n + g, c4, kb);
    // Two chains of dependent mmas (even and odd k-steps), not one of 8; q8_0/q4_0: one per block.
    float d[kChains][4] = {};
#pragma unroll
    for (int ks = 0; ks < 8; ++ks) mma16816<kBf>(d[kGgml ? ks >> 1 : ks & 1], qa[ks], kb[ks][0], kb[ks][1]);
#pragma unroll
    for (int e = 0; e < 2; ++e) {
      // x0 + x1 terms (rows g, g + 8), or x2 (row g; row g + 8 is zero)
      const std::uint8_t* krow = krows + (warp * 16 + 8 * n + 2 * c4 + e) * T::kKBytes;
      float x;
      if constexpr (kGgml) {
        x = ggml_scale<F>(krow, 0) * (d[0][e] + d[0][e + 2]);
#pragma unroll
        for (int b = 1; b < 4; ++b) x = fmaf(ggml_scale<F>(krow, b), d[b][e] + d[b][e + 2], x);
      } else {
        x = (d[0][e] + d[1][e]) + (d[0][e + 2] + d[1][e + 2]);
      }
      x += __shfl_xor_sync(0xffffffffu, x, 16);
      if constexpr (kPth) x *= row_scale<F>(krow);
      const int tok = tok0 + 8 * n + 2 * c4 + e;
      const bool ok = q_ok && tok < hi && tok >= qfirst && tok <= qpos;
      sc[n][e] = ok ? x * post : -INFINITY;
    }
  }
}

// The V scales of the lane's tokens that ride on P (kScaledV formats): vmul = vs / sref (q8_0/q4_0:
// per block), sref raised to a power of two >= them (alpha takes the rescale); turboquant_k8v4's
// vmin = min + 8 x scale (the codes enter as code - 8). Rows past the sequence end may hold any
// scale: 0.
template <Fmt F>
__device__ __forceinline__ void tc_v_scales(const std::uint8_t* vrows, int warp, int c4, int tok0, int hi, float& sref, float& alpha,
                                            float (&vmul)[p_blocks<F>()][2][2], float (&vmin)[2][2]) {
  using T = Traits<F>;
  constexpr bool kGgml = ggml_format(F), kTq = F == Fmt::kTqK8V4;
  constexpr int kPB = p_blocks<F>();
  float smax = 0.0f;
#pragma unroll
  for (int n = 0; n < 2; ++n)
#pragma unroll
    for (int e = 0; e < 2; ++e) {
      const int r = 8 * n + 2 * c4 + e;
      const std::uint8_t* vrow = vrows + (warp * 16 + r) * T::kVBytes;
#pragma unroll
      for (int b = 0; b < kPB; ++b) {
        if constexpr (kGgml) vmul[b][n][e] = tok0 + r < hi ? ggml_scale<F>(vrow, b) : 0.0f;
        else vmul[b][n][e] = tok0 + r < hi ? row_scale<F>(vrow) : 0.0f;
        smax = fmaxf(smax, fabsf(vmul[b][n][e]));
      }
      if constexpr (kTq)  // min + 8 x scale (the min: the fp16 after the scale)
        vmin[n][e] = tok0 + r < hi ? fmaf(8.0f, vmul[0][n][e], half_at(vrow + kD / 2 + 2)) : 0.0f;
    }
  smax = fmaxf(smax, __shfl_xor_sync(0xffffffffu, smax, 1));
  smax = fmaxf(smax, __shfl_xor_sync(0xffffffffu, smax, 2));
  const float sp = __uint_as_float((__float_as_uint(smax) + 0x007fffffu) & 0xff800000u);  // a power of two >= smax
  if (sp > sref) {
    alpha *= sref / sp;  // exact (0 for the first scale)
    sref = sp;
  }
  const float inv = sref > 0.0f ? 1.0f / sref : 0.0f;
#pragma unroll
  for (int b = 0; b < kPB; ++b)
#pragma unroll
    for (int n = 0; n < 2; ++n) vmul[b][n][0] *= inv, vmul[b][n][1] *= inv;
}

// Online softmax of query q over the warp's tokens (the 4 lanes of a row group share it): m, l and
// lmin move on, acc is rescaled (a new maximum, or sref raised by the page's V scales), and P's A
// fragments pa (P x the tokens' V scales / sref, in 3 terms) are made. engine: P rounded to bf16
// first (engine numerics; l keeps the unrounded p).
template <Fmt F>
__device__ __forceinline__ void tc_softmax(const std::uint8_t* vrows, const float (&sc)[2][2], int warp, int c4, int tok0, int hi, bool upper, bool engine,
                                           float& m, float& l, float& lmin, float& sref, float (&acc)[16][4],
                                           std::uint32_t (&pa)[p_blocks<F>()][4]) {
  constexpr bool kBf = F == Fmt::kBf16, kPth = pth_format(F), kGgml = ggml_format(F), kTq = F == Fmt::kTqK8V4;
  constexpr bool kScaledV = kPth || kGgml || kTq;
  constexpr float kPScale = kBf ? 1.0f : 4096.0f;  // P's fp16 terms: P * 2^12
  constexpr int kPB = p_blocks<F>();
  // Online softmax of query q over the warp's tokens (the 4 lanes of a row group share it).
  float pm = fmaxf(fmaxf(sc[0][0], sc[0][1]), fmaxf(sc[1][0], sc[1][1]));
  pm = fmaxf(pm, __shfl_xor_sync(0xffffffffu, pm, 1));
  pm = fmaxf(pm, __shfl_xor_sync(0xffffffffu, pm, 2));
  const float mn = fmaxf(m, pm);
  float alpha = 1.0f;
  if (mn != m) {
    alpha = expf(m - mn);  // 0 when m was -inf
    l *= alpha;
    if constexpr (kTq) lmin *= alpha;
    m = mn;
  }
  float vmul[kPB][2][2];  // vs / sref of the lane's tokens (q8_0/q4_0: per block)
  float vmin[2][2];       // turboquant_k8v4: the tokens' min + 8 x scale (the codes enter as code - 8)
#pragma unroll
  for (int b = 0; b < kPB; ++b) vmul[b][0][0] = vmul[b][0][1] = vmul[b][1][0] = vmul[b][1][1] = 1.0f;
  if constexpr (kScaledV) tc_v_scales<F>(vrows, warp, c4, tok0, hi, sref, alpha, vmul, vmin);
  if (alpha != 1.0f) {
#pragma unroll
    for (int j = 0; j < 16; ++j) acc[j][0] *= alpha, acc[j][1] *= alpha, acc[j][2] *= alpha, acc[j][3] *= alpha;
  }
  float pr[2][2];
#pragma unroll
  for (int n = 0; n < 2; ++n)
#pragma unroll
    for (int e = 0; e < 2; ++e) {
      pr[n][e] = sc[n][e] == -INFINITY ? 0.0f : softmax_exp(sc[n][e] - m);
      l += pr[n][e];
      if (engine) pr[n][e] = engine_round(pr[n][e]);
      if constexpr (kTq) lmin = fmaf(pr[n][e], vmin[n][e], lmin);
    }
#pragma unroll
  for (int b = 0; b < kPB; ++b) {
    std::uint32_t t0[3], t1[3];
    terms3<kBf>(pr[0][0] * vmul[b][0][0] * kPScale, pr[0][1] * vmul[b][0][1] * kPScale, t0);
    terms3<kBf>(pr[1][0] * vmul[b][1][0] * kPScale, pr[1][1] * vmul[b][1][1] * kPScale, t1);
    pa[b][0] = upper ? t0[2] : t0[0];
    pa[b][1] = upper ? 0u : t0[1];
    pa[b][2] = upper ? t1[2] : t1[0];
    pa[b][3] = upper ? 0u : t1[1];
  }
}

// O += P V of the warp's 16 tokens (P's A fragments pa). V rows past the sequence end may hold any
// bytes (NaN codes): their P is 0 but 0 * NaN is not, so a page that ends the sequence masks them to
// zero codes first.
template <Fmt F>
__device__ __forceinline__ void tc_pv(const std::uint8_t* vrows, const std::uint32_t (&pa)[p_blocks<F>()][4], int warp, int g, int c4,
                                      int tok0, int hi, float (&acc)[16][4]) {
  constexpr bool kBf = F == Fmt::kBf16, kGgml = ggml_format(F);
  const bool tail = tok0 + 16 > hi;
#pragma unroll
  for (int h = 0; h < 2; ++h) {
    std::uint32_t vb[8][2];
    v_fragments<F>(vrows, warp * 16, g, c4, h, vb);
    if (tail) {
      const bool z0 = tok0 + 2 * c4 >= hi, z1 = tok0 + 2 * c4 + 1 >= hi;
      const bool z2 = tok0 + 2 * c4 + 8 >= hi, z3 = tok0 + 2 * c4 + 9 >= hi;
      const std::uint32_t m0 = (z0 ? 0u : 0xffffu) | (z1 ? 0u : 0xffff0000u);
      const std::uint32_t m1 = (z2 ? 0u : 0xffffu) | (z3 ? 0u : 0xffff0000u);
#pragma unroll
      for (int j = 0; j < 8; ++j) vb[j][0] &= m0, vb[j][1] &= m1;
    }
#pragma unroll
    for (int j = 0; j < 8; ++j) mma16816<kBf>(acc[8 * h + j], pa[kGgml ? 2 * h + j / 4 : 0], vb[j][0], vb[j][1]);
  }
}

// The warp's partial into the (idle) ring: terms added (lanes l, l ^ 16), P's scale undone; wacc
// [warp][q][dim], then wm, wl [warp][q].
template <Fmt F>
__device__ __forceinline__ void tc_warp_partial(const float (&acc)[16][4], float l, float lmin, float m, float sref, float* wacc, int warp,
                                                int q, int c4, bool upper) {
  constexpr bool kBf = F == Fmt::kBf16, kTq = F == Fmt::kTqK8V4;
  constexpr float kPScale = kBf ? 1.0f : 4096.0f;
  float* wm = wacc + kWarps * kNQ * kD;
  float* wl = wm + kWarps * kNQ;
#pragma unroll
  for (int j = 0; j < 16; ++j)
#pragma unroll
    for (int e = 0; e < 2; ++e) {
      float x = acc[j][e] + acc[j][e + 2];
      x += __shfl_xor_sync(0xffffffffu, x, 16);
      if (!upper) wacc[(warp * kNQ + q) * kD + out_dim<F>(j, 2 * c4 + e)] = x * (sref / kPScale);
    }
  l += __shfl_xor_sync(0xffffffffu, l, 1);
  l += __shfl_xor_sync(0xffffffffu, l, 2);
  if constexpr (kTq) {  // the lanes of a row group hold all 128 dimensions of query q between them
    lmin += __shfl_xor_sync(0xffffffffu, lmin, 1);
    lmin += __shfl_xor_sync(0xffffffffu, lmin, 2);
#pragma unroll
    for (int j = 0; j < 16; ++j)
#pragma unroll
      for (int e = 0; e < 2; ++e)
        if (!upper) wacc[(warp * kNQ + q) * kD + out_dim<F>(j, 2 * c4 + e)] += lmin;
  }
  if (!upper && c4 == 0) {
    wl[warp * kNQ + q] = l;
    wm[warp * kNQ + q] = m;
  }
}

template <Fmt F>
__global__ void __launch_bounds__(kThreads, tc_min_blocks<F>()) decode_tc_kernel(KvLayerCodec c, PagedAttentionArgs a) {
  using T = Traits<F>;
  constexpr bool kBf = F == Fmt::kBf16, kPth = pth_format(F), kGgml = ggml_format(F), kTq = F == Fmt::kTqK8V4;
  constexpr bool kScaledV = kPth || kGgml || kTq;
  constexpr int kStages = stages<F, true>(), kPB = p_blocks<F>();
  constexpr int kRegionK = kPage * T::kKBytes, kStage = stage_bytes<F>();
  extern __shared__ float4 ring4[];
  std::uint8_t* ring = reinterpret_cast<std::uint8_t*>(ring4);
  __shared__ float q_raw[kNQ][kD];
  __shared__ float qscale_s[kNQ];
  __shared__ std::uint64_t ring_full[kStages], ring_empty[kStages];
  __shared__ int qpos_s[kNQ], qfirst_s[kNQ];
  const bool engine = a.emulation.numerics == AttentionNumerics::kEngine;

  pdl_launch_dependents();
  pdl_wait();  // Q, the tiles and this step's K/V come from earlier kernels
  const BlockWork w = block_work(a);
  if (w.nq <= 0) return;
  const int pb = w.pb, pe = w.pe;
  const int tid = threadIdx.x, warp = tid >> 5, lane = tid & 31, g = lane >> 2, c4 = lane & 3, q = g & 3;
  const bool upper = g >= 4;  // rows 4-7: the x2 terms; rows 0-3 and 8-11: x0 and x1
  // The ring on mbarriers: page i (of the block's pages) lands in slot i % kStages, whose "empty"
  // barrier completes when every thread has read it. No block barrier per page: a warp may run a page
  // ahead of the slowest, and the slot of page i - 1 is refilled after page i. On compute capability
  // 9.0 thread 0 refills it with two bulk copies (the copy engine; a page's K and V regions are each
  // contiguous in the pool) completing their bytes on the slot's "full" barrier: up to 1.11x (fp8_e4m3)
  // the cp.async of every thread (8 a thread for 16 KB, with their addresses), although
  // the rows can no longer be swizzled against bank conflicts.
  // Before 9.0 every thread copies its chunks and arrives once they landed (arrive.noinc).
  // kElect (9.0, pages of 16 KB or more: the 8-bit formats, and bf16/fp16): page i's slot is refilled
  // right after page i, by the last warp done with it (an atomicAdd on the slot's count elects it), so
  // the ring holds a page more and no thread waits for the slowest warp. Smaller pages (turboquant's
  // 12.3 KB, the 4-bit formats') lose by it and keep thread 0's refill
  // (docs/bench-notes/decode-tc-nvfp4-h200-2026-12-03.txt).
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  constexpr bool kBulk = true;
#else
  constexpr bool kBulk = false;
#endif
  constexpr bool kElect = kBulk && stage_bytes<F>() >= 16 * 1024;
  __shared__ int ring_done[kStages];  // kElect: warps done with each slot, all uses
  if (tid == 0) {
#pragma unroll
    for (int st = 0; st < kStages; ++st) {
      mbar_init(&ring_full[st], kBulk ? 1 : kThreads), mbar_init(&ring_empty[st], kThreads);
      ring_done[st] = 0;
    }
  }
  __syncthreads();
  const int n_pages = pe - pb;
  const auto fill = [&](int i, int page_id) {  // page i into its slot, once page i - kStages released it
    if (kBulk && !kElect && tid != 0) return;  // kElect: the caller is the one thread
    if (i >= kStages) mbar_wait(&ring_empty[i % kStages], (i / kStages - 1) & 1);
    std::uint8_t* slot = ring + (i % kStages) * kStage;
    if constexpr (kBulk) {
      using R = PageRegions<F>;
      const R src(a, w.kvh, page_id);
      mbar_arrive_expect_tx(&ring_full[i % kStages], kStage);
      bulk_copy_g2s(slot, src.k(), R::kRegionK, &ring_full[i % kStages]);
      bulk_copy_g2s(slot + R::kRegionK, src.v(), R::kRegionV, &ring_full[i % kStages]);
    } else {
      issue_page<F>(a, w.kvh, page_id, slot);
      cp_async_arrive_noinc(&ring_full[i % kStages]);
    }
  };
  // Page 0 first: the ring's other pages are asked for once Q is staged, so a block's first page does
  // not queue behind every block's whole ring (25 MB at 128K tokens): the first page lands sooner
  // (docs/bench-notes/decode-timeline-merge-h200-2026-12-03.txt).
  if (n_pages > 0 && (!kElect || tid == 0)) fill(0, w.table[pb]);
  stage_q<F>(c, a, w, q_raw, qpos_s, qfirst_s);
  const float qmul = q_multiplier<F>(c, w.kvh);
  tc_q_scale<kBf>(q_raw, qmul, warp, lane, qscale_s);
  __syncthreads();
#pragma unroll
  for (int st = 1; st < (kElect ? kStages : kStages - 1); ++st)
    if (st < n_pages && (!kElect || tid == 0)) fill(st, w.table[pb + st]);
  const float qs = qscale_s[q];
  std::uint32_t qa[8][4];
  tc_q_fragments<F>(q_raw[q], qmul, qs, c4, upper, qa);
  const float post = a.scale / qs;  // exact: qs is a power of two
  const bool q_ok = q < w.nq;
  const int qfirst = qfirst_s[q], qpos = qpos_s[q];

  float acc[16][4];
#pragma unroll
  for (int j = 0; j < 16; ++j) acc[j][0] = acc[j][1] = acc[j][2] = acc[j][3] = 0.0f;
  float m = -INFINITY, l = 0.0f;  // query q's running maximum and this lane's share of its sum
  // Per-token-head (and q8_0/q4_0's per-block) V scales ride on P: P's terms hold p * vs / sref, where sref
  // (the same in the warp) is a power of two >= every scale of the warp's tokens so far, so they stay
  // in fp16 range; when a page raises it, acc is rescaled exactly, as m's rise rescales it. Other
  // formats: 1.
  float sref = kScaledV ? 0.0f : 1.0f;
  // turboquant_k8v4's values are code x scale + min per token: the codes go through the mma as code - 8,
  // the scale rides on P, and min + 8 x scale adds sum(p x (min + 8 x scale)) to every dimension: lmin,
  // this lane's share, kept as l. Centring the codes keeps the two sums small: with codes 0..15 they
  // nearly cancel (a positive sum and a negative min), and the mma's fp32 accumulation error, relative
  // to them, reached NMSE 1.5e-10 against the twin at 1,500 tokens (the CUDA-core kernel: 4e-12).
  float lmin = 0.0f;
  int next_id = pb + kStages - 1 < pe ? w.table[pb + kStages - 1] : 0;

  for (int p = pb, it = 0; p < pe; ++p, ++it) {
    const int id_ahead = kElect && it + kStages < n_pages ? w.table[pb + it + kStages] : 0;  // kElect's refill
    mbar_wait(&ring_full[it % kStages], (it / kStages) & 1);
    const std::uint8_t* krows = ring + (it % kStages) * kStage;
    const std::uint8_t* vrows = krows + kRegionK;
    const int tok0 = p * kPage + warp * 16;

    float sc[2][2];
    tc_scores<F>(krows, qa, warp, g, c4, tok0, w.hi, q_ok, qfirst, qpos, post, sc);
    std::uint32_t pa[kPB][4];
    tc_softmax<F>(vrows, sc, warp, c4, tok0, w.hi, upper, engine, m, l, lmin, sref, acc, pa);
    tc_pv<F>(vrows, pa, warp, g, c4, tok0, w.hi, acc);
    mbar_arrive(&ring_empty[it % kStages]);
    if constexpr (kElect) {
      if (it + kStages < n_pages) {
        __syncwarp();  // the warp's arrivals before its count
        if (lane == 0 && atomicAdd(&ring_done[it % kStages], 1) % kWarps == kWarps - 1) fill(it + kStages, id_ahead);
      }
    } else if (it + kStages - 1 < n_pages) {
      fill(it + kStages - 1, next_id);
      next_id = it + kStages < n_pages ? w.table[pb + it + kStages] : 0;
    }
  }
  __syncthreads();  // every warp is done with the ring (no copy is in flight: each page was awaited)

  float* wacc = reinterpret_cast<float*>(ring);
  tc_warp_partial<F>(acc, l, lmin, m, sref, wacc, warp, q, c4, upper);
  __syncthreads();
  finish_block<F>(c, a, w, wacc);
}

// One block per (tile, KV head, part): the splits of its query vectors merged into the output.
__global__ void __launch_bounds__(kMergeThreads) decode_combine_kernel(PagedAttentionArgs a, int splits) {
  pdl_launch_dependents();
  pdl_wait();
  const int parts = gridDim.y / a.kv_heads, q0 = kNQ * (blockIdx.y % parts);
  const int nq = min(kNQ, a.tiles[blockIdx.x].rows * (a.heads / a.kv_heads) - q0);
  if (nq <= 0) return;
  merge_splits(a, blockIdx.x, blockIdx.y / parts, q0, nq, splits);
}

// ---- dispatch -----------------------------------------------------------------------------------

bool fmt_of(const KvLayerCodec& c, Fmt& f) {
  switch (c.family) {
    case KvFamily::kBf16: f = Fmt::kBf16; return true;
    case KvFamily::kF16: f = Fmt::kF16; return true;
    case KvFamily::kFp8Tensor: f = c.fp8_kind == Fp8Kind::kE4M3 ? Fmt::kE4M3 : Fmt::kE5M2; return true;
    case KvFamily::kFp8Pth: f = Fmt::kFp8Pth; return true;
    case KvFamily::kInt8Pth: f = Fmt::kInt8Pth; return true;
    case KvFamily::kInt4Pth: f = Fmt::kInt4Pth; return true;
    case KvFamily::kNvfp4: f = Fmt::kNvfp4; return true;
    case KvFamily::kQ8_0: f = Fmt::kQ8_0; return true;
    case KvFamily::kQ4_0: f = Fmt::kQ4_0; return true;
    case KvFamily::kTqFp8Key: f = Fmt::kTqK8V4; return c.value_bits == 4;
    case KvFamily::kTqMse:
      if (c.key_bits == 4 && c.value_bits == 4) f = Fmt::kTqK4V4;
      else if (c.key_bits == 3 && c.value_bits == 4) f = Fmt::kTqK3V4;
      else if (c.key_bits == 3 && c.value_bits == 3) f = Fmt::kTqK3V3;
      else return false;
      return true;
    default: return false;
  }
}

template <Fmt F>
bool bytes_match(const KvLayerCodec& c) {
  return c.k_bytes == Traits<F>::kKBytes && c.v_bytes == Traits<F>::kVBytes;
}

template <Fmt F, bool TC>
constexpr auto kernel_of() {
  if constexpr (TC) return decode_tc_kernel<F>;
  else return decode_kernel<F>;
}

// Blocks of the kernel resident on the whole device at once.
template <Fmt F, bool TC>
int resident_blocks() {
  constexpr int smem = dynamic_smem<F, TC>();
  static const int blocks = [] {
    constexpr auto kernel = kernel_of<F, TC>();
    if constexpr (smem > 48 * 1024)
      KV_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
    int dev = 0, sms = 0, per_sm = 0;
    KV_CUDA_CHECK(cudaGetDevice(&dev));
    KV_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
    KV_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, kThreads, smem));
    return std::max(1, sms * per_sm);
  }();
  return blocks;
}

// The split count actually used: at most the caller's (its workspace holds that many), chosen to
// minimise waves x pages per split, so the last wave is not a small fraction of the device (the
// result is the same for any split count up to fp32 summation order). In practice one wave: split
// counts for 2-6 waves of shorter splits were 1.1-1.4x slower, as every block, in every
// wave, waits 8-10 us for its first page behind the loaded memory system.
int fit_splits(int splits, int base_blocks, int max_ctx, int resident) {
  const int pages = std::max(1, (max_ctx + kPage - 1) / kPage);
  int best = splits;
  long long best_cost = -1;
  for (int sp = 1; sp <= splits; ++sp) {
    const long long waves = (static_cast<long long>(base_blocks) * sp + resident - 1) / resident;
    const long long cost = waves * ((pages + sp - 1) / sp);
    if (best_cost < 0 || cost < best_cost) {
      best_cost = cost;
      best = sp;
    }
  }
  return best;
}

template <Fmt F, bool TC>
int launch_as(const KvLayerCodec& c, const PagedAttentionArgs& a, int splits, int parts, cudaStream_t s) {
  constexpr int smem = dynamic_smem<F, TC>();
  static_assert(smem >= (2 * kWarps * kNQ + (kWarps + 1) * kNQ * kD) * 4, "the warp merge reuses the ring");
  splits = fit_splits(splits, a.num_tiles * a.kv_heads * parts, a.max_ctx, resident_blocks<F, TC>());
  launch_kernel(a.pdl, kernel_of<F, TC>(), dim3(splits, a.kv_heads * parts, a.num_tiles), dim3(kThreads), smem, s, c, a);
  return splits;
}

// kAuto: the kernel measured faster for the format (docs/bench-notes/cuda-decoder-measurements.md):
// the tensor-core one for fp8 (57% of copy bandwidth against 48%), the per-token-head formats
// (1.17-1.27x), q8_0 and q4_0
// (1.46x, 1.34x), nvfp4 and turboquant_k8v4 (1.81x, 1.30-1.37x), the CUDA-core one
// for bf16/fp16 (85% against 69%).
template <Fmt F>
int launch(const KvLayerCodec& c, const PagedAttentionArgs& a, int splits, int parts, cudaStream_t s) {
  if constexpr (tc_format(F)) {
    const bool tc = a.decode == DecodeKernel::kTensorCore ||
                    (a.decode == DecodeKernel::kAuto && F != Fmt::kBf16 && F != Fmt::kF16);
    if (tc) return launch_as<F, true>(c, a, splits, parts, s);
  }
  return launch_as<F, false>(c, a, splits, parts, s);
}

template <Fmt F>
bool supported_fmt(const KvLayerCodec& c) {
  return bytes_match<F>(c);
}

}  // namespace

bool decode_attention_supported(const KvLayerCodec& c, int max_tile_rows, int group) {
  Fmt f;
  const int max_tile_q = max_tile_rows * group;
  if (c.head_dim != kD || !(max_tile_q <= kNQ || (max_tile_rows == 1 && max_tile_q <= kMaxTileQ)) || !fmt_of(c, f)) return false;
  if ((f == Fmt::kQ8_0 || f == Fmt::kQ4_0) && ((c.k_rot & (c.k_rot - 1)) != 0 || (c.v_rot & (c.v_rot - 1)) != 0 ||
                                              c.k_rot > kD || c.v_rot > kD))
    return false;
  switch (f) {
    case Fmt::kBf16: return supported_fmt<Fmt::kBf16>(c);
    case Fmt::kF16: return supported_fmt<Fmt::kF16>(c);
    case Fmt::kE4M3: return supported_fmt<Fmt::kE4M3>(c);
    case Fmt::kE5M2: return supported_fmt<Fmt::kE5M2>(c);
    case Fmt::kFp8Pth: return supported_fmt<Fmt::kFp8Pth>(c);
    case Fmt::kInt8Pth: return supported_fmt<Fmt::kInt8Pth>(c);
    case Fmt::kInt4Pth: return supported_fmt<Fmt::kInt4Pth>(c);
    case Fmt::kNvfp4: return supported_fmt<Fmt::kNvfp4>(c);
    case Fmt::kQ8_0: return supported_fmt<Fmt::kQ8_0>(c);
    case Fmt::kQ4_0: return supported_fmt<Fmt::kQ4_0>(c);
    case Fmt::kTqK8V4: return supported_fmt<Fmt::kTqK8V4>(c);
    case Fmt::kTqK4V4: return supported_fmt<Fmt::kTqK4V4>(c);
    case Fmt::kTqK3V4: return supported_fmt<Fmt::kTqK3V4>(c);
    case Fmt::kTqK3V3: return supported_fmt<Fmt::kTqK3V3>(c);
  }
  return false;
}

bool decode_tensor_core_takes(const KvLayerCodec& c) {
  Fmt f;
  if (!decode_attention_supported(c, 1, kNQ) || !fmt_of(c, f)) return false;
  return tc_format(f);
}

void decode_attention(const KvLayerCodec& c, const PagedAttentionArgs& a, int splits, cudaStream_t s) {
  Fmt f;
  if (!fmt_of(c, f)) throw Error("decode_attention: unsupported KV family", kExitInternal);
  const int max_tile_q = a.max_tile_rows * (a.heads / a.kv_heads), parts = (max_tile_q + kNQ - 1) / kNQ;
  switch (f) {
    case Fmt::kBf16: splits = launch<Fmt::kBf16>(c, a, splits, parts, s); break;
    case Fmt::kF16: splits = launch<Fmt::kF16>(c, a, splits, parts, s); break;
    case Fmt::kE4M3: splits = launch<Fmt::kE4M3>(c, a, splits, parts, s); break;
    case Fmt::kE5M2: splits = launch<Fmt::kE5M2>(c, a, splits, parts, s); break;
    case Fmt::kFp8Pth: splits = launch<Fmt::kFp8Pth>(c, a, splits, parts, s); break;
    case Fmt::kInt8Pth: splits = launch<Fmt::kInt8Pth>(c, a, splits, parts, s); break;
    case Fmt::kInt4Pth: splits = launch<Fmt::kInt4Pth>(c, a, splits, parts, s); break;
    case Fmt::kNvfp4: splits = launch<Fmt::kNvfp4>(c, a, splits, parts, s); break;
    case Fmt::kQ8_0: splits = launch<Fmt::kQ8_0>(c, a, splits, parts, s); break;
    case Fmt::kQ4_0: splits = launch<Fmt::kQ4_0>(c, a, splits, parts, s); break;
    case Fmt::kTqK8V4: splits = launch<Fmt::kTqK8V4>(c, a, splits, parts, s); break;
    case Fmt::kTqK4V4: splits = launch<Fmt::kTqK4V4>(c, a, splits, parts, s); break;
    case Fmt::kTqK3V4: splits = launch<Fmt::kTqK3V4>(c, a, splits, parts, s); break;
    case Fmt::kTqK3V3: splits = launch<Fmt::kTqK3V3>(c, a, splits, parts, s); break;
  }
  launch_kernel(a.pdl, decode_combine_kernel, dim3(a.num_tiles, a.kv_heads * parts), dim3(kMergeThreads), 0, s, a, splits);
}

}  // namespace kvgate::kernels::cuda
