// Embedding lookup, residual add and the SwiGLU activation: the element-wise twins.
#include <cmath>
#include <cstring>

#include "kernels/ops_ref.h"

namespace kvgate::kernels {

void embedding_ref(const float* table, int dim, const int* ids, int n, float* out) {
  for (int i = 0; i < n; ++i)
    std::memcpy(out + static_cast<std::size_t>(i) * dim, table + static_cast<std::size_t>(ids[i]) * dim,
                sizeof(float) * static_cast<std::size_t>(dim));
}

void add_ref(float* x, const float* y, std::int64_t n) {
  for (std::int64_t i = 0; i < n; ++i) x[i] += y[i];
}

void swiglu_ref(const float* gate, const float* up, std::int64_t n, float* out) {
  for (std::int64_t i = 0; i < n; ++i) {
    const float g = gate[i];
    const float silu = g / (1.0f + std::exp(-g));  // torch's fp32 silu: x / (1 + exp(-x))
    out[i] = silu * up[i];
  }
}

}  // namespace kvgate::kernels
