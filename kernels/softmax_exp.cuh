// softmax_exp: a score's softmax weight exp(x), x = s - m <= 0, as 2^(x log2 e) on the MUFU unit.
// ex2.approx has a relative error of ~2^-22 and the product adds ~|x| 2^-24, so a weight that matters
// (x > -17, p > 4e-8) stays within ~1e-6 of accurate expf's, in 3 instructions against expf's 9-10.
// The prefill and decode kernels use it for every score (their NMSE against the fp32 twin
// did not move, mean 4.26e-12 over 175 prefill-shaped cases and 7.3e-13 over 110 decode-shaped ones,
// as with expf; prefill attention 1.03-1.08x faster, decode 1.00-1.02x). exp(-inf) = +0. The online
// softmax's rescale factors and the split merge keep expf: numerator and denominator share them.
// exp2_approx is the ex2 alone, for callers that fold log2 e into an FFMA before it (the prefill
// kernel's engine numerics, as FlashAttention does).
#pragma once

namespace kvgate::kernels::cuda {

__device__ __forceinline__ float exp2_approx(float x) {
  float y;
  asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x));
  return y;
}
__device__ __forceinline__ float softmax_exp(float x) { return exp2_approx(x * 1.44269504088896341f); }

}  // namespace kvgate::kernels::cuda
