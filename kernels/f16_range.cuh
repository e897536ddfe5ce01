// f16_range_exponent: the power of two that brings a vector into fp16's range for tensor-core products
// in fp16 (the decode path's fp16 Q terms, the prefill kernel's fp16 operands). Device code only.
#pragma once

namespace kvgate::kernels::cuda {

// k such that the vector's largest |x| = mx, times 2^k, lands below 2^14 (k = 14 - e for mx < 2^e):
// its values keep fp16's 11 significant bits down to 2^-31 of mx. 14 for a zero or non-finite mx.
__device__ __forceinline__ int f16_range_exponent(float mx) {
  int e = 0;
  if (mx > 0.0f && mx <= 3.0e38f) frexpf(mx, &e);
  return 14 - max(e, -100);
}

}  // namespace kvgate::kernels::cuda
