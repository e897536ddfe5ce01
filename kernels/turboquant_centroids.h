// TurboQuant's Lloyd-Max centroids for N(0, 1/d), computed as vLLM computes them
// (turboquant/centroids.py solve_lloyd_max), in double, then rounded to fp32; the midpoints the store
// kernel bucketizes against are (c[i] + c[i+1]) / 2 in fp32 (turboquant_attn.py).
#pragma once
#include <vector>

namespace kvgate::kernels {

struct LloydMaxTable {
  std::vector<float> centroids;  // 2^bits, sorted
  std::vector<float> midpoints;  // 2^bits - 1
};

// Start at 2^bits evenly spaced points in [-3.5 sigma, 3.5 sigma]; each step integrates x*pdf and pdf
// by the trapezoid rule (n = 200) over cells whose outer edges are +-10.5 sigma; at most 200 steps,
// stopping (and keeping the previous centroids, as vLLM's loop does) once no centroid moves by 1e-10.
LloydMaxTable turboquant_lloyd_max(int d, int bits);

// The same, computed once per (d, bits) and kept (thread-safe).
const LloydMaxTable& turboquant_table(int d, int bits);

}  // namespace kvgate::kernels
