// RMSNorm as transformers' LlamaRMSNorm / Qwen3RMSNorm compute it for fp32 weights and inputs:
//   variance = x.pow(2).mean(-1); x = x * rsqrt(variance + eps); return weight * x
// The mean's sum runs in fp64 here (torch sums fp32 with wider partial sums; fp64 is the exact
// reference); the rest is fp32, in the same order.
#include <cmath>

#include "kernels/ops_ref.h"

namespace kvgate::kernels {

void rmsnorm_ref(const float* x, const float* weight, int rows, int dim, float eps, float* out) {
  for (int r = 0; r < rows; ++r) {
    const float* xr = x + static_cast<std::size_t>(r) * dim;
    float* o = out + static_cast<std::size_t>(r) * dim;
    double ss = 0.0;
    for (int i = 0; i < dim; ++i) ss += static_cast<double>(xr[i]) * xr[i];
    const float variance = static_cast<float>(ss / dim);
    const float inv = static_cast<float>(1.0 / std::sqrt(static_cast<double>(variance + eps)));
    for (int i = 0; i < dim; ++i) o[i] = weight[i] * (xr[i] * inv);
  }
}

}  // namespace kvgate::kernels
