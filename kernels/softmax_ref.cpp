// Softmax and log-softmax over one row, with the denominator summed in fp64.
#include <cmath>

#include "kernels/ops_ref.h"

namespace kvgate::kernels {

void softmax_ref(const float* x, int n, float* out) {
  float mx = -INFINITY;
  for (int i = 0; i < n; ++i) mx = std::fmax(mx, x[i]);
  double sum = 0.0;
  for (int i = 0; i < n; ++i) {
    const float e = std::exp(x[i] - mx);
    out[i] = e;
    sum += e;
  }
  const double inv = 1.0 / sum;
  for (int i = 0; i < n; ++i) out[i] = static_cast<float>(out[i] * inv);
}

void log_softmax_ref(const float* x, int n, double* out) {
  double mx = -INFINITY;
  for (int i = 0; i < n; ++i) mx = std::fmax(mx, static_cast<double>(x[i]));
  double sum = 0.0;
  for (int i = 0; i < n; ++i) sum += std::exp(static_cast<double>(x[i]) - mx);
  const double lse = mx + std::log(sum);
  for (int i = 0; i < n; ++i) out[i] = static_cast<double>(x[i]) - lse;
}

}  // namespace kvgate::kernels
