// y = x w^T (+ bias), the projections of the reference decoder on the CPU.
//
// Each output is cpu::dot_fixed's 8-lane dot product (cpu_lanes.h), so the result does not depend
// on the blocking, on the thread that computes it, or on the instruction set (AVX2 or baseline clone).
// Blocking: 4 weight rows by 2 input rows per step (8 accumulators of 8 lanes), weight rows in
// blocks that stay in L1/L2 while every input row passes over them.
#include <algorithm>

#include "kernels/cpu_lanes.h"
#include "kernels/ops_ref.h"

namespace kvgate::kernels {

namespace {

using namespace cpu;
#define KV_INLINE KV_ALWAYS_INLINE

// Dot products of R input rows with C weight rows.
template <int R, int C>
KV_INLINE void dot_tile(const float* const* xr, const float* const* wr, int k, float* out /*[R][C]*/) {
  Lanes acc[R][C];
  for (int r = 0; r < R; ++r)
    for (int c = 0; c < C; ++c) acc[r][c] = splat(0.0f);
  const int k8 = k - k % kLanes;
  for (int i = 0; i < k8; i += kLanes) {
    Lanes xv[R], wv[C];
    for (int r = 0; r < R; ++r) xv[r] = load_lanes(xr[r] + i);
    for (int c = 0; c < C; ++c) wv[c] = load_lanes(wr[c] + i);
    for (int r = 0; r < R; ++r)
      for (int c = 0; c < C; ++c) acc[r][c] += xv[r] * wv[c];
  }
  for (int r = 0; r < R; ++r)
    for (int c = 0; c < C; ++c) {
      float s = reduce_lanes(acc[r][c]);
      for (int i = k8; i < k; ++i) s += xr[r][i] * wr[c][i];
      out[r * C + c] = s;
    }
}

template <int R, int C>
KV_INLINE void tile(const MatmulArgs& a, int r0, int c0) {
  const float* xr[R];
  const float* wr[C];
  for (int r = 0; r < R; ++r) xr[r] = a.x + static_cast<std::size_t>(r0 + r) * a.k;
  for (int c = 0; c < C; ++c) wr[c] = a.w + static_cast<std::size_t>(c0 + c) * a.k;
  float out[R * C];
  dot_tile<R, C>(xr, wr, a.k, out);
  for (int r = 0; r < R; ++r)
    for (int c = 0; c < C; ++c) {
      float v = out[r * C + c];
      if (a.bias) v += a.bias[c0 + c];
      a.y[static_cast<std::size_t>(r0 + r) * a.cols + c0 + c] = v;
    }
}

template <int C>
KV_INLINE void rows_over_cols(const MatmulArgs& a, int c0) {
  int r = 0;
  for (; r + 2 <= a.rows; r += 2) tile<2, C>(a, r, c0);
  for (; r < a.rows; ++r) tile<1, C>(a, r, c0);
}

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && !defined(__CUDACC__)
__attribute__((target_clones("avx2", "default")))
#endif
void matmul_range(const MatmulArgs& a, int c_begin, int c_end) {
  // Weight rows per block: about 64 KiB of weights, reused by every input row.
  const int block = std::max(4, (16384 / std::max(a.k, 1)) / 4 * 4);
  for (int cb = c_begin; cb < c_end; cb += block) {
    const int ce = std::min(c_end, cb + block);
    int c = cb;
    for (; c + 4 <= ce; c += 4) rows_over_cols<4>(a, c);
    for (; c < ce; ++c) rows_over_cols<1>(a, c);
  }
}

}  // namespace

void matmul_ref(const MatmulArgs& a) {
  const int end = a.col_end < 0 ? a.cols : a.col_end;
  if (a.rows <= 0 || end <= a.col_begin) return;
  matmul_range(a, a.col_begin, end);
}

}  // namespace kvgate::kernels
