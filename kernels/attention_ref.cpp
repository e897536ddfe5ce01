// Causal (optionally sliding-window) attention of query rows over the KV cache, the twin of the
// CUDA decode-attention kernels. Every query reads K and V as the store returns them (dequantized),
// its own token included: that is what an engine's decode step does, and why a quantized cache's
// error shows in every position (seed 001: prefill-only perplexity never reads the cache).
// Engine numerics (bf16_q, bf16_p) round the two operands FlashAttention-2/3 and FlashInfer feed
// their bf16 tensor cores: Q, and the softmax weights p = exp(s - max) before P.V; the row sum comes
// from the unrounded p (FlashAttention's row_sum) and every sum stays fp32.
#include <algorithm>
#include <cmath>

#include "kernels/cpu_lanes.h"
#include "kernels/kv_store.h"
#include "kernels/ops_ref.h"

namespace kvgate::kernels {

namespace {

using namespace cpu;

// out[:d] += sum_j p[j] * v[j][:d] for j < n, each element's sum continuing in order j = 0, 1, ...
// from the value already in out (so blocks of keys chain exactly like one long sum). Up to 64
// outputs per pass: eight independent accumulators hide the add latency.
KV_ALWAYS_INLINE void accumulate_pv(const float* p, const float* v, int n, int d, float* out) {
  constexpr int kBlock = 8 * kLanes;
  int i = 0;
  for (; i + kBlock <= d; i += kBlock) {
    Lanes acc[8];
    for (int b = 0; b < 8; ++b) acc[b] = load_lanes(out + i + b * kLanes);
    for (int j = 0; j < n; ++j) {
      const Lanes pj = splat(p[j]);
      const float* vj = v + static_cast<std::size_t>(j) * d + i;
      for (int b = 0; b < 8; ++b) acc[b] += pj * load_lanes(vj + b * kLanes);
    }
    for (int b = 0; b < 8; ++b) store_lanes(out + i + b * kLanes, acc[b]);
  }
  for (; i + kLanes <= d; i += kLanes) {
    Lanes acc = load_lanes(out + i);
    for (int j = 0; j < n; ++j) acc += splat(p[j]) * load_lanes(v + static_cast<std::size_t>(j) * d + i);
    store_lanes(out + i, acc);
  }
  for (; i < d; ++i) {
    float acc = out[i];
    for (int j = 0; j < n; ++j) acc += p[j] * v[static_cast<std::size_t>(j) * d + i];
    out[i] = acc;
  }
}

// s[j] = dot_fixed(q, k[j]) * scale for j < n, four keys at a time (independent chains, each with
// dot_fixed's own order).
KV_ALWAYS_INLINE void scores(const float* q, const float* k, int n, int d, float scale, float* s) {
  const int d8 = d - d % kLanes;
  int j = 0;
  for (; j + 4 <= n; j += 4) {
    const float* k0 = k + static_cast<std::size_t>(j) * d;
    Lanes a0 = splat(0.0f), a1 = a0, a2 = a0, a3 = a0;
    for (int i = 0; i < d8; i += kLanes) {
      const Lanes qv = load_lanes(q + i);
      a0 += qv * load_lanes(k0 + i);
      a1 += qv * load_lanes(k0 + d + i);
      a2 += qv * load_lanes(k0 + 2 * d + i);
      a3 += qv * load_lanes(k0 + 3 * d + i);
    }
    float r[4] = {reduce_lanes(a0), reduce_lanes(a1), reduce_lanes(a2), reduce_lanes(a3)};
    for (int t = 0; t < 4; ++t) {
      for (int i = d8; i < d; ++i) r[t] += q[i] * k0[static_cast<std::size_t>(t) * d + i];
      s[j + t] = r[t] * scale;
    }
  }
  for (; j < n; ++j) s[j] = dot_fixed(q, k + static_cast<std::size_t>(j) * d, d) * scale;
}

// Cache rows [begin, end) that query row r attends to.
KV_ALWAYS_INLINE void row_range(const AttentionArgs& a, int r, int& begin, int& end) {
  const int pos = a.q_pos[r];
  begin = std::max(a.first, a.window > 0 ? pos - a.window + 1 : 0);
  end = pos + 1;
}

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
__attribute__((target_clones("avx2", "default")))
#endif
void attention_rows(const AttentionArgs& a) {
  // Keys in blocks that stay in L1 while every query row of the chunk passes over them (a prefill
  // chunk would otherwise stream the whole K and V once per row). Per score, per softmax and per
  // output element the arithmetic and its order are those of one row at a time.
  constexpr int kKeyBlock = 64;
  const int d = a.head_dim, len = a.ctx - a.first;
  for (int h = 0; h < a.group; ++h) {
    const std::size_t head = static_cast<std::size_t>(a.q_offset) + static_cast<std::size_t>(h) * d;
    // The bf16 Q of this head lives in its output slot until the softmax clears it: no workspace.
    const float* q = a.q;
    std::size_t q_stride = a.q_stride;
    if (a.bf16_q) {
      for (int r = 0; r < a.rows; ++r) {
        const float* src = a.q + static_cast<std::size_t>(r) * a.q_stride + head;
        float* dst = a.out + static_cast<std::size_t>(r) * a.out_stride + head;
        for (int i = 0; i < d; ++i) dst[i] = engine_round(src[i]);
      }
      q = a.out;
      q_stride = a.out_stride;
    }
    for (int j0 = a.first; j0 < a.ctx; j0 += kKeyBlock) {
      const int j1 = std::min(a.ctx, j0 + kKeyBlock);
      for (int r = 0; r < a.rows; ++r) {
        int begin, end;
        row_range(a, r, begin, end);
        const int lo = std::max(j0, begin), hi = std::min(j1, end);
        if (lo < hi)
          scores(q + static_cast<std::size_t>(r) * q_stride + head, a.k + static_cast<std::size_t>(lo - a.first) * d,
                 hi - lo, d, a.scale, a.scores + static_cast<std::size_t>(r) * len + (lo - a.first));
      }
    }
    for (int r = 0; r < a.rows; ++r) {  // softmax: fp32 exp, fp64 sum
      int begin, end;
      row_range(a, r, begin, end);
      float* s = a.scores + static_cast<std::size_t>(r) * len + (begin - a.first);
      const int n = end - begin;
      float mx = -INFINITY;
      for (int j = 0; j < n; ++j)
        if (s[j] > mx) mx = s[j];  // not std::fmax: a libm call
      double sum = 0.0;
      for (int j = 0; j < n; ++j) {
        s[j] = std::exp(s[j] - mx);
        sum += s[j];
      }
      const double inv = 1.0 / sum;
      // Engine: bf16(p) * (1 / l) equals FlashAttention's (sum bf16(p) v) / l up to fp32 rounding.
      if (a.bf16_p)
        for (int j = 0; j < n; ++j) s[j] = static_cast<float>(engine_round(s[j]) * inv);
      else
        for (int j = 0; j < n; ++j) s[j] = static_cast<float>(s[j] * inv);
      float* out = a.out + static_cast<std::size_t>(r) * a.out_stride + head;
      for (int i = 0; i < d; ++i) out[i] = 0.0f;
    }
    for (int j0 = a.first; j0 < a.ctx; j0 += kKeyBlock) {
      const int j1 = std::min(a.ctx, j0 + kKeyBlock);
      for (int r = 0; r < a.rows; ++r) {
        int begin, end;
        row_range(a, r, begin, end);
        const int lo = std::max(j0, begin), hi = std::min(j1, end);
        if (lo < hi)
          accumulate_pv(a.scores + static_cast<std::size_t>(r) * len + (lo - a.first),
                        a.v + static_cast<std::size_t>(lo - a.first) * d, hi - lo, d,
                        a.out + static_cast<std::size_t>(r) * a.out_stride + head);
      }
    }
  }
}

}  // namespace

void attention_rows_ref(const AttentionArgs& a) { attention_rows(a); }

void attention_kv_ref(const KvAttentionArgs& a, const KvStore& store, AttentionWorkspace& ws) {
  if (a.rows <= 0) return;
  const int d = a.head_dim, group = a.heads / a.kv_heads, width = a.heads * d;
  int lo = a.q_pos[0], hi = a.q_pos[0];
  for (int r = 1; r < a.rows; ++r) {
    lo = std::min(lo, a.q_pos[r]);
    hi = std::max(hi, a.q_pos[r]);
  }
  const int first = a.window > 0 ? std::max(0, lo - a.window + 1) : 0;
  const int ctx = hi + 1;
  const std::size_t need = static_cast<std::size_t>(ctx - first) * d;
  if (ws.k.size() < need) ws.k.resize(need);
  if (ws.v.size() < need) ws.v.resize(need);
  const std::size_t score_need = static_cast<std::size_t>(a.rows) * (ctx - first);
  if (ws.scores.size() < score_need) ws.scores.resize(score_need);
  for (int kvh = 0; kvh < a.kv_heads; ++kvh) {
    store.read(a.layer, kvh, first, ctx, ws.k.data(), ws.v.data());
    const AttentionArgs rows{.q = a.q,
                        .k = ws.k.data(),
                        .v = ws.v.data(),
                        .out = a.out,
                        .q_pos = a.q_pos,
                        .rows = a.rows,
                        .ctx = ctx,
                        .first = first,
                        .head_dim = d,
                        .group = group,
                        .q_stride = width,
                        .q_offset = kvh * group * d,
                        .out_stride = width,
                        .window = a.window,
                        .scale = a.scale,
                        .scores = ws.scores.data(),
                        .bf16_q = a.emulation.numerics == AttentionNumerics::kEngine,
                        .bf16_p = a.emulation.numerics == AttentionNumerics::kEngine};
    if (a.emulation.active()) attention_rows_emulated_ref(rows, a.emulation);
    else attention_rows_ref(rows);
  }
}

}  // namespace kvgate::kernels
