// The CPU twin of the emulating attention (attention_emulation.h): the same steps as the CUDA
// generic kernel's emulating instantiation (paged_attention.cu), one query vector at a time.
// Scores are sequential fused multiply-adds (the kernel's `dot += q * k` contracts to FFMA), exps
// are double exps rounded to fp32 on both sides, k-step sums are exact in double, so the two agree
// bit for bit up to the softmax denominator's summation order and the split merge's expf.
#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "kernels/attention_emulation.h"
#include "kernels/ops_ref.h"

namespace kvgate::kernels {

namespace {

struct SplitResult {
  float m = -std::numeric_limits<float>::infinity(), l = 0.0f;
  std::vector<float> acc;
};

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
__attribute__((target_clones("arch=haswell", "default")))
#endif
// Tokens [lo, hi) of one query vector `q` over K/V rows (row t at k + (t - first) * d).
void emulated_split(const AttentionEmulation& e, const float* q, const float* k, const float* v, int first, int lo, int hi,
                    int d, float scale, SplitResult& r) {
  constexpr float kNegInf = -std::numeric_limits<float>::infinity();
  r.acc.assign(d, 0.0f);
  std::vector<float> mma(d, 0.0f);
  float s[kEmuPage], p[kEmuPage];
  const int promote_steps = e.pv_promote_every / kEmuStep;
  for (int p0 = lo / kEmuPage * kEmuPage; p0 < hi; p0 += kEmuPage) {
    const int t0 = std::max(lo, p0), t1 = std::min(hi, p0 + kEmuPage);
    float mx = kNegInf;
    for (int t = t0; t < t1; ++t) {
      const float* kr = k + static_cast<std::size_t>(t - first) * d;
      float dot = 0.0f;
      for (int j = 0; j < d; ++j) dot = std::fma(q[j], kr[j], dot);
      s[t - p0] = dot * scale;
      mx = std::max(mx, s[t - p0]);
    }
    const float m_new = std::max(r.m, mx);
    float alpha = 1.0f, sum = 0.0f;
    for (int t = t0; t < t1; ++t) {
      const float pt = m_new == kNegInf ? 0.0f : static_cast<float>(std::exp(static_cast<double>(s[t - p0] - m_new)));
      sum += pt;
      // Engine numerics without pv_fp8: P is the bf16 operand of FlashAttention's P.V.
      p[t - p0] = e.pv_fp8 ? emu_round_p(pt) : e.numerics == AttentionNumerics::kEngine ? engine_round(pt) : pt;
    }
    if (m_new != kNegInf) alpha = static_cast<float>(std::exp(static_cast<double>(r.m - m_new)));
    r.l = std::fma(r.l, alpha, sum);
    r.m = m_new;
    for (int j = 0; j < d; ++j) {
      r.acc[j] *= alpha;
      mma[j] *= alpha;
    }
    for (int ks = p0; ks < p0 + kEmuPage; ks += kEmuStep) {
      const int a0 = std::max(t0, ks), a1 = std::min(t1, ks + kEmuStep);
      if (a0 >= a1) continue;  // no token of this row in the k-step: the kernel skips it too
      const bool promote = e.pv_accum == PvAccum::kTwoLevel && (ks / kEmuStep - lo / kEmuStep + 1) % promote_steps == 0;
      for (int j = 0; j < d; ++j) {
        double chunk = 0.0;
        for (int t = a0; t < a1; ++t) chunk += static_cast<double>(p[t - p0]) * v[static_cast<std::size_t>(t - first) * d + j];
        emu_accumulate(e.pv_accum, chunk, r.acc[j], mma[j]);
        if (promote) {
          r.acc[j] += mma[j];
          mma[j] = 0.0f;
        }
      }
    }
  }
  if (e.pv_accum == PvAccum::kTwoLevel)
    for (int j = 0; j < d; ++j) r.acc[j] += mma[j];
}

// One query vector over [begin, end): the splits, then their fp32 merge (the combine kernel's).
void emulated_vector(const AttentionEmulation& e, const float* q, const float* k, const float* v, int first, int begin, int end,
                     int d, float scale, float* out, std::vector<SplitResult>& parts) {
  parts.resize(e.splits);
  float m = -std::numeric_limits<float>::infinity();
  for (int s = 0; s < e.splits; ++s) {
    int pb, pe;
    split_pages(begin, end, s, e.splits, pb, pe);
    parts[s] = SplitResult{};
    if (pb >= pe) continue;
    emulated_split(e, q, k, v, first, std::max(begin, pb * kEmuPage), std::min(end, pe * kEmuPage), d, scale, parts[s]);
    m = std::max(m, parts[s].m);
  }
  for (int j = 0; j < d; ++j) {
    float num = 0.0f, den = 0.0f;
    for (const SplitResult& r : parts) {
      if (r.m == -std::numeric_limits<float>::infinity()) continue;
      const float w = std::exp(r.m - m);
      den = std::fma(r.l, w, den);
      num = std::fma(r.acc[j], w, num);
    }
    out[j] = den > 0.0f ? num / den : 0.0f;
  }
}

}  // namespace

void attention_rows_emulated_ref(const AttentionArgs& a, const AttentionEmulation& e) {
  const int d = a.head_dim;
  // Q as the kernel sees it (emu_q_row), one head row at a time.
  std::vector<float> qr(static_cast<std::size_t>(a.rows) * a.group * d);
  for (int r = 0; r < a.rows; ++r)
    for (int h = 0; h < a.group; ++h)
      emu_q_row(e, a.q + static_cast<std::size_t>(r) * a.q_stride + a.q_offset + static_cast<std::size_t>(h) * d,
                qr.data() + (static_cast<std::size_t>(r) * a.group + h) * d, d);
  if (!e.online()) {  // Q rounding only: the exact attention over the rounded Q
    AttentionArgs b = a;
    b.q = qr.data();
    b.q_stride = a.group * d;
    b.q_offset = 0;
    b.out = a.out + a.q_offset;  // the output keeps its own stride and head offset
    b.out_stride = a.out_stride;
    b.bf16_q = false;  // Q is the emulation's operand, rounded above
    b.bf16_p = e.numerics == AttentionNumerics::kEngine;
    // attention_rows_ref adds q_offset to both q and out; the offset now lives in `out`.
    attention_rows_ref(b);
    return;
  }
  std::vector<SplitResult> parts;
  for (int r = 0; r < a.rows; ++r) {
    const int pos = a.q_pos[r];
    const int begin = std::max(a.first, a.window > 0 ? pos - a.window + 1 : 0), end = pos + 1;
    for (int h = 0; h < a.group; ++h)
      emulated_vector(e, qr.data() + (static_cast<std::size_t>(r) * a.group + h) * d, a.k, a.v, a.first, begin, end, d, a.scale,
                      a.out + static_cast<std::size_t>(r) * a.out_stride + a.q_offset + static_cast<std::size_t>(h) * d, parts);
  }
}

}  // namespace kvgate::kernels
