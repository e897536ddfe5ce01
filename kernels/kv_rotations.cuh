// The codecs' linear transforms that the attention kernels (decode and prefill) move off the tokens:
// K's onto Q (q . H y = (H q) . y, H symmetric), V's onto the accumulator (sum p H y = H sum p y), once
// per query block instead of once per token. One rule per family, for both kernels. Device code only.
#pragma once

#include "kernels/kv_paged_cuda.h"

namespace kvgate::kernels::cuda {

// Q's Hadamard block size (0: none; the butterflies are fwht_rows.cuh's) and its multiplier after
// them; the output's block size and multiplier; signs (int4_per_token_head's randomized transform)
// multiply q element j before the butterflies and output element j after them.
struct KvRotations {
  int q_block = 0, o_block = 0;
  const float* signs = nullptr;
  float q_mul = 1.0f, o_mul = 1.0f;

  __device__ float q_sign(int j) const { return signs ? signs[j] : 1.0f; }
  __device__ float out_multiplier(int j) const { return signs ? signs[j] * o_mul : o_mul; }
};

// The families that can rotate at all: a compile-time guard, so the other families' kernels carry no
// rotation code (kv_rotations' zeros alone do not let the compiler drop it: the PTX differs).
template <KvFamily F>
constexpr bool may_rotate() {
  return F == KvFamily::kInt4Pth || F == KvFamily::kQ8_0 || F == KvFamily::kQ4_0 || F == KvFamily::kTqMse;
}

template <KvFamily F, int D>
__device__ __forceinline__ KvRotations kv_rotations(const KvLayerCodec& c) {
  KvRotations r;
  if constexpr (F == KvFamily::kInt4Pth) {  // x = s .* (H y) / d, for K and V
    if (c.signs) r = {D, D, c.signs, 1.0f / D, 1.0f / D};
  } else if constexpr (F == KvFamily::kQ8_0 || F == KvFamily::kQ4_0) {  // x = (H_n / sqrt(n)) y per n-block
    r.q_block = c.k_rot, r.o_block = c.v_rot;
    if (c.k_rot) r.q_mul = 1.0f / sqrtf(static_cast<float>(c.k_rot));
    if (c.v_rot) r.o_mul = 1.0f / sqrtf(static_cast<float>(c.v_rot));
  } else if constexpr (F == KvFamily::kTqMse) {  // keys: k = (H / sqrt(d)) (n c); values not rotated
    r.q_block = D, r.q_mul = 1.0f / sqrtf(static_cast<float>(D));
  }
  return r;
}

}  // namespace kvgate::kernels::cuda
