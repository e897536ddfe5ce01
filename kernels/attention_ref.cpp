// Causal (optionally sliding-window) attention of query rows over the KV cache, the twin of the
// CUDA decode-attention kernels. Every query reads K and V as the store returns them (dequantized),
// its own token included: that is what an engine's decode step does, and why a quantized cache's
// error shows in every position (seed 001: prefill-only perplexity never reads the cache).
#include <algorithm>
#include <cmath>

#include "cpu_lanes.h"
#include "kv_store.h"
#include "ops_ref.h"

namespace kvgate::kernels {

namespace {

using namespace cpu;

// out[d] = sum_j p[j] * v[j][d], fp32, j in order; vectorized over d.
KV_ALWAYS_INLINE void weighted_sum(const float* p, const float* v, int n, int d, float* out) {
  int i = 0;
  for (; i + kLanes <= d; i += kLanes) {
    Lanes acc = splat(0.0f);
    for (int j = 0; j < n; ++j) acc += splat(p[j]) * load_lanes(v + static_cast<std::size_t>(j) * d + i);
    store_lanes(out + i, acc);
  }
  for (; i < d; ++i) {
    float acc = 0.0f;
    for (int j = 0; j < n; ++j) acc += p[j] * v[static_cast<std::size_t>(j) * d + i];
    out[i] = acc;
  }
}

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
__attribute__((target_clones("avx2", "default")))
#endif
void attention_rows(const AttentionArgs& a) {
  const int d = a.head_dim;
  for (int r = 0; r < a.rows; ++r) {
    const int pos = a.q_pos[r];
    const int begin = std::max(a.first, a.window > 0 ? pos - a.window + 1 : 0);
    const int n = pos + 1 - begin;
    const float* k = a.k + static_cast<std::size_t>(begin - a.first) * d;
    const float* v = a.v + static_cast<std::size_t>(begin - a.first) * d;
    for (int h = 0; h < a.group; ++h) {
      const float* q = a.q + static_cast<std::size_t>(r) * a.q_stride + a.q_offset + static_cast<std::size_t>(h) * d;
      float* out = a.out + static_cast<std::size_t>(r) * a.out_stride + a.q_offset + static_cast<std::size_t>(h) * d;
      float* s = a.scores;
      float mx = -INFINITY;
      for (int j = 0; j < n; ++j) {
        s[j] = dot_fixed(q, k + static_cast<std::size_t>(j) * d, d) * a.scale;
        mx = std::fmax(mx, s[j]);
      }
      double sum = 0.0;
      for (int j = 0; j < n; ++j) {
        s[j] = std::exp(s[j] - mx);
        sum += s[j];
      }
      const double inv = 1.0 / sum;
      for (int j = 0; j < n; ++j) s[j] = static_cast<float>(s[j] * inv);
      weighted_sum(s, v, n, d, out);
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
  if (ws.scores.size() < static_cast<std::size_t>(ctx - first)) ws.scores.resize(ctx - first);
  for (int kvh = 0; kvh < a.kv_heads; ++kvh) {
    store.read(a.layer, kvh, first, ctx, ws.k.data(), ws.v.data());
    attention_rows_ref({.q = a.q,
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
                        .scores = ws.scores.data()});
  }
}

}  // namespace kvgate::kernels
