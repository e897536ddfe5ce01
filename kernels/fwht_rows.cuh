// Walsh-Hadamard butterflies on rows in shared memory, shared by the decode and prefill attention
// kernels (which move the codecs' rotations off the tokens onto Q and the output). Device code only.
#pragma once

namespace kvgate::kernels::cuda {

// x <- H_n x (unnormalized, fwht_inplace's order) on each n-element block of `rows` rows of D floats,
// by the threads tid = 0 .. threads - 1 of the caller's group (n a power of two <= D; 0 or 1:
// nothing). sync(): the group's barrier between butterfly stages (__syncthreads or __syncwarp).
template <int D, class Sync>
__device__ void fwht_rows(float* x, int rows, int n, int tid, int threads, Sync sync) {
  for (int h = 1; h < n; h <<= 1) {
    for (int idx = tid; idx < rows * D / 2; idx += threads) {
      const int b = idx % (D / 2), i = ((b & ~(h - 1)) << 1) | (b & (h - 1));
      float* r = x + (idx / (D / 2)) * D;
      const float u = r[i], w = r[i + h];
      r[i] = u + w;
      r[i + h] = u - w;
    }
    sync();
  }
}

}  // namespace kvgate::kernels::cuda
