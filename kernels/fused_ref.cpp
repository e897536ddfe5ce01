// The twins of the CUDA engine's fused GEMM epilogues (qkv_split, swiglu_fused): the CPU path's
// unfused steps composed (bias add, rmsnorm_ref, rope_ref, swiglu_ref), nothing restated.
#include <cstdint>

#include "kernels/ops_ref.h"

namespace kvgate::kernels {

void qkv_split_ref(const QkvSplitArgs& a) {
  const int d = a.head_dim, qw = a.q_heads * d, kw = a.kv_heads * d, width = qw + 2 * kw;
  for (int r = 0; r < a.rows; ++r) {
    const float* src = a.qkv + static_cast<std::size_t>(r) * width;
    float* dst[3] = {a.q + static_cast<std::size_t>(r) * qw, a.k + static_cast<std::size_t>(r) * kw,
                     a.v + static_cast<std::size_t>(r) * kw};
    const int begin[3] = {0, qw, qw + kw}, end[3] = {qw, qw + kw, width};
    for (int part = 0; part < 3; ++part)
      for (int c = begin[part]; c < end[part]; ++c) dst[part][c - begin[part]] = a.bias ? src[c] + a.bias[c] : src[c];
  }
  // session.cpp's order: q/k norm over each head (rows = tokens * heads), then RoPE.
  if (a.q_norm) rmsnorm_ref(a.q, a.q_norm, a.rows * a.q_heads, d, a.eps, a.q);
  if (a.k_norm) rmsnorm_ref(a.k, a.k_norm, a.rows * a.kv_heads, d, a.eps, a.k);
  rope_ref(a.q, a.rows, a.q_heads, d, a.positions, a.inv_freq, a.attention_scaling);
  rope_ref(a.k, a.rows, a.kv_heads, d, a.positions, a.inv_freq, a.attention_scaling);
}

void swiglu_fused_ref(const float* gate_up, int rows, int inter, const float* gate_bias, const float* up_bias, float* out) {
  for (int r = 0; r < rows; ++r) {
    const float* gu = gate_up + static_cast<std::size_t>(r) * 2 * inter;
    float* o = out + static_cast<std::size_t>(r) * inter;
    for (int c = 0; c < inter; ++c) {
      // One element at a time: the biased operands need no workspace.
      const float g = gate_bias ? gu[2 * c] + gate_bias[c] : gu[2 * c];
      const float u = up_bias ? gu[2 * c + 1] + up_bias[c] : gu[2 * c + 1];
      swiglu_ref(&g, &u, 1, o + c);
    }
  }
}

}  // namespace kvgate::kernels
