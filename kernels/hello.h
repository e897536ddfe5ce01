// The smallest kernel, y = a*x + y, proving the CUDA toggle: a CUDA kernel and its CPU twin.
#pragma once
#include <cstddef>

namespace kvgate::kernels {

// CPU twin (always built).
void axpy_ref(float a, const float* x, float* y, std::size_t n);

}  // namespace kvgate::kernels
