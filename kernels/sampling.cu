// sample_rows (sampling.h): sample_ref's rule on the device. Three kernels and one cub radix sort:
// keys (row, logit descending) -> sort -> fp64 weights -> per row, the host's sequential sums.
#include <algorithm>
#include <cstdint>
#include <string>

#include <cub/device/device_radix_sort.cuh>

#include "kernels/cuda_check.cuh"
#include "kernels/sampling.h"

namespace kvgate::kernels::cuda {

namespace {

using u64 = unsigned long long;
constexpr int kThreads = 256;
constexpr int kChunk = 2048;  // fp64 weights staged in shared memory per step of a sequential pass

int row_bits(int rows) {
  int b = 0;
  while ((1LL << b) < rows) ++b;
  return b;
}

// Where each array sits in the workspace (256-byte aligned), and cub's temporary storage.
struct Layout {
  std::size_t keys_in, keys_out, ids_in, ids_out, prob, rows, temp, temp_bytes, total;
};
Layout layout(int rows, int vocab) {
  const std::size_t n = static_cast<std::size_t>(rows) * vocab;
  Layout L{};
  std::size_t off = 0;
  auto take = [&off](std::size_t bytes) {
    const std::size_t at = off;
    off = (off + bytes + 255) & ~std::size_t{255};
    return at;
  };
  L.keys_in = take(n * sizeof(u64));
  L.keys_out = take(n * sizeof(u64));
  L.ids_in = take(n * sizeof(int));
  L.ids_out = take(n * sizeof(int));
  L.prob = take(n * sizeof(double));
  L.rows = take(static_cast<std::size_t>(rows) * sizeof(SampleRow));
  KV_CUDA_CHECK(cub::DeviceRadixSort::SortPairs(nullptr, L.temp_bytes, static_cast<const u64*>(nullptr), static_cast<u64*>(nullptr),
                                                static_cast<const int*>(nullptr), static_cast<int*>(nullptr),
                                                static_cast<int>(n), 0, 32 + row_bits(rows)));
  L.temp = take(L.temp_bytes);
  L.total = off;
  return L;
}

// The candidates the host keeps before top-p: top_k of them when 0 < top_k < n.
__device__ __forceinline__ int kept_of(const SamplerParams& p, int n) { return p.top_k > 0 && p.top_k < n ? p.top_k : n; }

// Row r in the high bits; the logit's bits mapped so that an ascending sort is descending in the
// logit (-0 as +0: the host compares them equal), NaN last (0xffffffff, which no number maps to).
// The sort is stable, so ties keep the lower id first.
__global__ void keys_kernel(const float* logits, int vocab, std::int64_t n, u64* keys, int* ids) {
  for (std::int64_t i = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<std::int64_t>(gridDim.x) * blockDim.x) {
    const float f = logits[i];
    const std::uint32_t b = __float_as_uint(f == 0.0f ? 0.0f : f);
    const std::uint32_t ascending = (b & 0x80000000u) ? ~b : (b | 0x80000000u);
    keys[i] = (static_cast<u64>(i / vocab) << 32) | static_cast<u64>(isnan(f) ? 0xffffffffu : ~ascending);
    ids[i] = static_cast<int>(i % vocab);
  }
}

// prob[r][i] = exp((l[order[i]] - l[order[0]]) / temperature) in fp64 (0 for NaN), i < the kept candidates.
__global__ void weights_kernel(const float* logits, int vocab, const SampleRow* rows, const int* order, double* prob) {
  const int r = blockIdx.y;
  const SamplerParams p = rows[r].params;
  if (p.temperature <= 0.0) return;
  const std::size_t base = static_cast<std::size_t>(r) * vocab;
  const int* o = order + base;
  const double top = logits[base + o[0]];
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < kept_of(p, vocab); i += gridDim.x * blockDim.x) {
    const float l = logits[base + o[i]];
    prob[base + i] = isnan(l) ? 0.0 : exp((static_cast<double>(l) - top) / p.temperature);
  }
}

// Thread 0 calls f(w) on w = p[0], p[1], ... in order while it returns true; the block stages kChunk
// weights at a time in shared memory. Returns (to every thread) the index where f returned false, or n.
template <class F>
__device__ int sequential(const double* p, int n, double* stage, int& stop, F f) {
  for (int c0 = 0; c0 < n; c0 += kChunk) {
    const int m = min(kChunk, n - c0);
    for (int j = threadIdx.x; j < m; j += blockDim.x) stage[j] = p[c0 + j];
    __syncthreads();
    if (threadIdx.x == 0) {
      int s = -1;
      for (int j = 0; j < m; ++j)
        if (!f(stage[j])) {
          s = c0 + j;
          break;
        }
      stop = s;
    }
    __syncthreads();
    if (stop >= 0) return stop;  // thread 0 rewrites `stop` only after the next chunk's barrier
  }
  return n;
}

// One block per row: sample_ref's passes over the weights in its order, on thread 0.
__global__ void __launch_bounds__(kThreads) pick_kernel(int vocab, const SampleRow* rows, const int* order, const double* prob,
                                                        int* ids) {
  __shared__ double stage[kChunk];
  __shared__ int stop;
  const int r = blockIdx.x;
  const SampleRow row = rows[r];
  const std::size_t base = static_cast<std::size_t>(r) * vocab;
  const int* o = order + base;
  if (row.params.temperature <= 0.0) {
    if (threadIdx.x == 0) ids[r] = o[0];
    return;
  }
  const double* p = prob + base;
  const int kept0 = kept_of(row.params, vocab);
  double sum = 0.0;  // thread 0's sums
  sequential(p, kept0, stage, stop, [&sum](double w) {
    sum += w;
    return true;
  });
  int kept = kept0;
  if (row.params.top_p < 1.0) {  // the shortest prefix whose probability reaches top_p
    double cum = 0.0;
    const double top_p = row.params.top_p;
    const int at = sequential(p, kept0, stage, stop, [&](double w) {
      cum += w / sum;
      return !(cum >= top_p);
    });
    kept = at < kept0 ? at + 1 : kept0;
  }
  double kept_sum = sum;  // the same additions in the same order when nothing was cut
  if (kept < kept0) {
    kept_sum = 0.0;
    sequential(p, kept, stage, stop, [&kept_sum](double w) {
      kept_sum += w;
      return true;
    });
  }
  const double target = row.u * kept_sum;
  double cum = 0.0;
  const int at = sequential(p, kept, stage, stop, [&](double w) {
    cum += w;
    return !(cum > target);
  });
  if (threadIdx.x == 0) ids[r] = o[at < kept ? at : kept - 1];  // rounding can leave the target at the end
}

}  // namespace

std::size_t sample_workspace_bytes(int rows, int vocab) { return rows > 0 && vocab > 0 ? layout(rows, vocab).total : 0; }

void sample_rows(const float* logits, int vocab, const SampleRow* rows, int R, int* ids, void* workspace,
                 std::size_t workspace_bytes, cudaStream_t s) {
  if (R <= 0) return;
  if (vocab <= 0 || static_cast<std::int64_t>(R) * vocab > (std::int64_t{1} << 31) - 1)
    throw Error("sample_rows: " + std::to_string(R) + " rows of " + std::to_string(vocab) + " logits is out of range",
                kExitInternal);
  const Layout L = layout(R, vocab);
  if (workspace_bytes < L.total)
    throw Error("sample_rows: the workspace holds " + std::to_string(workspace_bytes) + " bytes, " +
                    std::to_string(L.total) + " needed (sample_workspace_bytes)",
                kExitInternal);
  auto* w = static_cast<char*>(workspace);
  auto* keys_in = reinterpret_cast<u64*>(w + L.keys_in);
  auto* keys_out = reinterpret_cast<u64*>(w + L.keys_out);
  auto* ids_in = reinterpret_cast<int*>(w + L.ids_in);
  auto* order = reinterpret_cast<int*>(w + L.ids_out);
  auto* prob = reinterpret_cast<double*>(w + L.prob);
  auto* drows = reinterpret_cast<SampleRow*>(w + L.rows);
  const std::int64_t n = static_cast<std::int64_t>(R) * vocab;
  // Pageable source: returns once the rows are staged, so the caller's span may go.
  KV_CUDA_CHECK(cudaMemcpyAsync(drows, rows, R * sizeof(SampleRow), cudaMemcpyHostToDevice, s));
  keys_kernel<<<static_cast<int>(std::min<std::int64_t>((n + kThreads - 1) / kThreads, 2048)), kThreads, 0, s>>>(logits, vocab, n,
                                                                                                                   keys_in, ids_in);
  KV_CUDA_CHECK_LAUNCH();
  std::size_t temp_bytes = L.temp_bytes;
  KV_CUDA_CHECK(cub::DeviceRadixSort::SortPairs(w + L.temp, temp_bytes, keys_in, keys_out, ids_in, order, static_cast<int>(n), 0,
                                                32 + row_bits(R), s));
  weights_kernel<<<dim3(std::min((vocab + kThreads - 1) / kThreads, 64), R), kThreads, 0, s>>>(logits, vocab, drows, order, prob);
  KV_CUDA_CHECK_LAUNCH();
  pick_kernel<<<R, kThreads, 0, s>>>(vocab, drows, order, prob, ids);
  KV_CUDA_CHECK_LAUNCH();
}

}  // namespace kvgate::kernels::cuda
