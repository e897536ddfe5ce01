// Temperature sampling on the device: sample_ref's documented rule (ops_ref.h) for a
// batch of logits rows, step for step, so a seeded run draws the same tokens on the CUDA engine as
// on the CPU path without copying 152K logits a row to the host and sorting them there.
//   1. every row's candidates sorted by logit, descending, ties by lower id (one stable radix sort
//      of (row, logit) keys over the whole batch; -0 counts as +0, as the host's comparison does);
//   2. the weights exp((l - l_max) / temperature) in fp64, one thread an element;
//   3. per row, the host's sequential fp64 sums in the host's order (the sum, top-p's prefix, the
//      kept weight, the draw), on one thread reading the weights through shared memory: an fp64
//      sum in another order could round differently and move a draw across a boundary.
// NaN logits come last with weight 0, as on the host. Rows with temperature <= 0 take the first
// candidate (the largest number; the engine's greedy rows use argmax_rows_chunked, whose rule for
// NaN differs). The one difference from the host: CUDA's fp64 exp may differ from the C library's
// in the last bit, which moves a draw only when u lands within ~1e-16 of a boundary.
// Only in a CUDA build (KVGATE_HAVE_CUDA).
#pragma once
#if defined(KVGATE_HAVE_CUDA)
#include <cuda_runtime.h>

#include <cstddef>

#include "kernels/ops_ref.h"

namespace kvgate::kernels::cuda {

struct SampleRow {
  SamplerParams params;
  double u = 0.0;  // the row's uniform draw in [0, 1)
};

// Device memory sample_rows needs for `rows` rows of `vocab` logits.
std::size_t sample_workspace_bytes(int rows, int vocab);

// ids[r] (device) = the token sample_ref draws from logits[r][0..vocab) with rows[r], r < n;
// `workspace` holds at least sample_workspace_bytes(n, vocab) bytes. Copies the n host `rows` to
// the device (the call returns when that copy is staged; the kernels run on `s`).
void sample_rows(const float* logits, int vocab, const SampleRow* rows, int n, int* ids, void* workspace,
                 std::size_t workspace_bytes, cudaStream_t s);

}  // namespace kvgate::kernels::cuda
#endif
