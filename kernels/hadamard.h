// Walsh-Hadamard rotations used by the KV formats (__host__ __device__), all in the Sylvester order
// H_1 = [1], H_2n = [[H_n, H_n], [H_n, -H_n]], i.e. H[i][j] = (-1)^popcount(i & j), as built by
// vLLM (torch.cat) and llama.cpp (ggml_gen_hadamard):
//   - vLLM int4_per_token_head: the unnormalized randomized transform H * D * x (norm sqrt(d));
//   - TurboQuant keys: the orthonormal H / sqrt(d);
//   - llama.cpp's attention rotation: the orthonormal H_n / sqrt(n) on blocks of n elements.
#pragma once
#include <math.h>

#include <cstdint>

#include "kernels/float_formats.h"

namespace kvgate::kernels {

KV_HD bool is_power_of_two(int n) { return n > 0 && (n & (n - 1)) == 0; }

// x <- H_n x in place (unnormalized), n a power of two: the butterfly vLLM's CPU path runs.
KV_HD void fwht_inplace(float* x, int n) {
  for (int h = 1; h < n; h <<= 1)
    for (int i = 0; i < n; i += 2 * h)
      for (int j = i; j < i + h; ++j) {
        const float a = x[j], b = x[j + h];
        x[j] = a + b;
        x[j + h] = a - b;
      }
}

// x <- (H_n / sqrt(n)) x in place: orthonormal and its own inverse.
KV_HD void hadamard_orthonormal_inplace(float* x, int n) {
  fwht_inplace(x, n);
  const float s = 1.0f / sqrtf(static_cast<float>(n));
  for (int i = 0; i < n; ++i) x[i] *= s;
}

// The orthonormal rotation applied block by block: x[b*n .. b*n+n) <- H_n/sqrt(n) x[...] for each
// block of a row of `len` elements (len a multiple of n): llama.cpp's attn_rot on one head.
KV_HD void hadamard_blocks_inplace(float* x, int len, int n) {
  for (int b = 0; b + n <= len; b += n) hadamard_orthonormal_inplace(x + b, n);
}

// vLLM's randomized Hadamard transform (int4_per_token_head): forward y = H (s .* x), inverse
// x = s .* (H y) / d, with s a vector of +-1 signs. Unnormalized, as vLLM's scale math expects.
KV_HD void rht_forward_inplace(float* x, const float* signs, int d) {
  for (int i = 0; i < d; ++i) x[i] *= signs[i];
  fwht_inplace(x, d);
}

KV_HD void rht_inverse_inplace(float* y, const float* signs, int d) {
  fwht_inplace(y, d);
  const float inv_d = 1.0f / static_cast<float>(d);
  for (int i = 0; i < d; ++i) y[i] = y[i] * signs[i] * inv_d;
}

}  // namespace kvgate::kernels
