// decode_blocks.cuh: what both decode kernels share - a block's work (tile, KV head, split, pages),
// the page copies into the ring, Q staging, and the merges of warps and splits.
// Part of paged_attention_decode.cu, its only includer: the decode kernels' definitions stay in one
// translation unit (internal linkage, so ptxas inlines and specializes them as one file).

#pragma once

#include <cstdint>

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>

#include "kernels/cp_async.cuh"
#include "kernels/decode_formats.cuh"
#include "kernels/fwht_rows.cuh"

namespace kvgate::kernels::cuda {

namespace {

// ---- what both kernels share ----------------------------------------------------------------------

// A block's work: its tile, KV head, split, pages [pb, pe) and the table of its sequence, and its
// query vectors q0 .. q0 + nq - 1 of the tile's (tile query vector i: row i / group, head kvh * group
// + i % group). A tile of more than 4 (GQA 5-16 at one row a tile) is taken in parts of 4 by
// gridDim.y / kv_heads blocks per KV head (blockIdx.y = kvh * parts + part), each reading the
// head's pages (the parts run side by side, so the second read mostly hits L2); a part past the
// tile's vectors (nq <= 0) has nothing to do.
struct BlockWork {
  AttentionTile tl;
  int kvh, split, splits, group, q0, nq, pb, pe, hi;
  const int* table;
};
__device__ BlockWork block_work(const PagedAttentionArgs& a) {
  BlockWork w;
  w.tl = a.tiles[blockIdx.z];
  const int parts = gridDim.y / a.kv_heads;
  w.kvh = blockIdx.y / parts, w.split = blockIdx.x, w.splits = gridDim.x;
  w.group = a.heads / a.kv_heads, w.q0 = kNQ * (blockIdx.y % parts), w.nq = min(kNQ, w.tl.rows * w.group - w.q0);
  const int p_first = a.row_pos[w.tl.row0];
  w.hi = a.row_pos[w.tl.row0 + w.tl.rows - 1] + 1;
  split_pages(a.window > 0 ? max(0, p_first - a.window + 1) : 0, w.hi, w.split, w.splits, w.pb, w.pe);
  w.table = a.block_table + static_cast<std::int64_t>(w.tl.seq) * a.max_pages;
  return w;
}

// cp.async of one page's K or V region (kBytes, contiguous in the pool) into shared memory, chunk
// i = threadIdx.x + kThreads * j by this thread: a compile-time trip count. A generic loop (i / chunks
// per row, a runtime trip count) was ~230 of the tensor-core kernel's ~600 instructions a warp a
// page; dropping them moved its time by 0-7%: the kernel waits on dependent latencies more
// than on issue slots.
template <int kBytes>
__device__ __forceinline__ void copy_region(std::uint8_t* dst, const std::uint8_t* src) {
  constexpr int kChunks = kBytes / 16, kIter = (kChunks + kThreads - 1) / kThreads;
  static_assert(kBytes % 16 == 0, "regions of whole 16-byte chunks");
  const int t = threadIdx.x;
  dst += 16 * t;
  src += 16 * t;
#pragma unroll
  for (int j = 0; j < kIter; ++j)
    if (kChunks % kThreads == 0 || t + kThreads * j < kChunks) cp_async16(dst + 16 * kThreads * j, src + 16 * kThreads * j);
}

// Page `page_id`'s K and V regions of KV head kvh in the pools (each contiguous: kRegionK and
// kRegionV bytes); a ring stage holds them in that order. A pool laid out [KV head][page] instead
// (a sequence's pages one run per head) timed the same on the tensor-core kernel.
template <Fmt F>
struct PageRegions {
  static constexpr int kRegionK = kPage * Traits<F>::kKBytes, kRegionV = kPage * Traits<F>::kVBytes;
  const PagedAttentionArgs& a;
  std::int64_t region;
  __device__ PageRegions(const PagedAttentionArgs& args, int kvh, int page_id)
      : a(args), region(static_cast<std::int64_t>(page_id) * args.kv_heads + kvh) {}
  __device__ const std::uint8_t* k() const { return a.k_pool + region * kRegionK; }
  __device__ const std::uint8_t* v() const { return a.v_pool + region * kRegionV; }
};

// cp.async of page `page_id`'s K and V regions of this KV head into ring stage `stage` (every thread).
template <Fmt F>
__device__ __forceinline__ void issue_page(const PagedAttentionArgs& a, int kvh, int page_id, std::uint8_t* stage) {
  using R = PageRegions<F>;
  const R src(a, kvh, page_id);
  copy_region<R::kRegionK>(stage, src.k());
  copy_region<R::kRegionV>(stage + R::kRegionK, src.v());
}

// The tile's query vectors into q_raw [4][128] (zeros past nq; int4_per_token_head's signs applied),
// their positions and window starts; then K's transform moved onto Q (barriers inside).
template <Fmt F>
__device__ void stage_q(const KvLayerCodec& c, const PagedAttentionArgs& a, const BlockWork& w, float (*q_raw)[kD],
                        int* qpos_s, int* qfirst_s) {
  const int tid = threadIdx.x, qw = a.heads * kD;
  const KvRotations rot = rotations<F>(c);
  for (int i = tid; i < kNQ * kD; i += kThreads) {
    const int qi = i / kD, j = i % kD, qt = w.q0 + qi;
    float x = qi < w.nq ? a.q[static_cast<std::int64_t>(w.tl.row0 + qt / w.group) * qw + (w.kvh * w.group + qt % w.group) * kD + j]
                        : 0.0f;
    if (a.emulation.numerics == AttentionNumerics::kEngine) x = engine_round(x);  // engine numerics: a bf16 Q
    q_raw[qi][j] = x * rot.q_sign(j);  // exact (signs are +-1)
  }
  if (tid < kNQ) {
    const int pos = tid < w.nq ? a.row_pos[w.tl.row0 + (w.q0 + tid) / w.group] : -1;
    qpos_s[tid] = pos;
    qfirst_s[tid] = a.window > 0 ? max(0, pos - a.window + 1) : 0;
  }
  __syncthreads();
  fwht_rows<kD>(&q_raw[0][0], kNQ, rot.q_block, threadIdx.x, kThreads, [] { __syncthreads(); });
}

// The splits of tile tl that hold pages (split_pages gives each split `per` pages, so the last ones
// can be empty: the split count is sized for the context bucket, not the context). Empty splits
// wrote max -inf and zero sums; the merge leaves them out.
__device__ int used_splits(const PagedAttentionArgs& a, const AttentionTile& tl, int splits) {
  const int p_first = a.row_pos[tl.row0], hi = a.row_pos[tl.row0 + tl.rows - 1] + 1;
  const int begin = a.window > 0 ? max(0, p_first - a.window + 1) : 0;
  const int np = (hi - 1) / kPage - begin / kPage + 1, per = (np + splits - 1) / splits;
  return min(splits, (np + per - 1) / per);
}

// The split merge's block: a warp for each of kNQ vectors x kMergeSlices slices of their splits.
constexpr int kMergeSlices = 4, kMergeThreads = 32 * kNQ * kMergeSlices;

// One partial (its max ms, sum ls and the lane's 4 numerator dimensions x) merged into the running
// (mx, sum, num). A partial of max -inf (no visible token) adds nothing; a weight of 0 adds nothing,
// whatever the other side holds (selects, not 0 * x).
__device__ __forceinline__ void merge_partial(float& mx, float& sum, float4& num, float ms, float ls, float4 x) {
  if (ms == -INFINITY) return;
  const float nm = fmaxf(mx, ms);
  const float wo = mx == -INFINITY ? 0.0f : expf(mx - nm), wn = expf(ms - nm);
  sum = sum * wo + ls * wn;
  const auto mix = [&](float n, float xv) { return (wo != 0.0f ? n * wo : 0.0f) + (wn != 0.0f ? xv * wn : 0.0f); };
  num = make_float4(mix(num.x, x.x), mix(num.y, x.y), mix(num.z, x.z), mix(num.w, x.w));
  mx = nm;
}

// The split merge of query vectors q0 .. q0 + nq - 1 (nq <= 4) of (tile t, KV head kvh) into the
// output, by kMergeThreads threads: warp w takes vector w % kNQ over slice w / kNQ of the splits, its
// lanes 4 dimensions each, in one online pass (each split's max, sum and partial loaded together,
// kBatch splits' loads issued before any is used: the loads are what a merge waits on); then the
// slices merge in order through shared memory: 2.4-2.8 us a launch at 8K/32K tokens, 4.7-4.9 us at
// 128K and batch 1 (docs/bench-notes/decode-timeline-merge-h200-2026-12-03.txt).
// The order of the sums is fixed: the result does not depend on which block ran when. Every thread
// of the block calls it (one barrier inside).
__device__ void merge_splits(const PagedAttentionArgs& a, int t, int kvh, int q0, int nq, int splits) {
  __shared__ float4 snum[kMergeSlices][kNQ][kD / 4];
  __shared__ float sml[kMergeSlices][kNQ][2];
  const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31, v = warp % kNQ, slice = warp / kNQ;
  const int group = a.heads / a.kv_heads;
  const AttentionTile tl = a.tiles[t];
  const int used = used_splits(a, tl, splits), per = (used + kMergeSlices - 1) / kMergeSlices;
  const int s0 = slice * per, s1 = min(used, s0 + per);
  const std::int64_t entries = static_cast<std::int64_t>(a.num_tiles) * a.kv_heads * splits * kMaxTileQ;
  const std::int64_t e0 = (static_cast<std::int64_t>(t) * a.kv_heads + kvh) * splits * kMaxTileQ + q0 + v;  // + sp * kMaxTileQ
  const float4* wacc = reinterpret_cast<const float4*>(a.workspace + 2 * entries + e0 * kD) + lane;  // + sp * kMaxTileQ * kD / 4
  float mx = -INFINITY, sum = 0.0f;
  float4 num = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
  constexpr int kBatch = 16;  // up to 64 splits a block in one round of loads (docs/bench-notes/decode-timeline-merge-h200-2026-12-03.txt)
  for (int sp0 = s0; v < nq && sp0 < s1; sp0 += kBatch) {
    float ms[kBatch], ls[kBatch];
    float4 x[kBatch];
#pragma unroll
    for (int b = 0; b < kBatch; ++b)
      if (sp0 + b < s1) {
        const std::int64_t e = e0 + static_cast<std::int64_t>(sp0 + b) * kMaxTileQ;
        ms[b] = a.workspace[2 * e], ls[b] = a.workspace[2 * e + 1];
        x[b] = wacc[static_cast<std::int64_t>(sp0 + b) * (kMaxTileQ * kD / 4)];
      }
#pragma unroll
    for (int b = 0; b < kBatch; ++b) {
      if (sp0 + b >= s1) break;
      merge_partial(mx, sum, num, ms[b], ls[b], x[b]);
    }
  }
  snum[slice][v][lane] = num;
  if (lane == 0) sml[slice][v][0] = mx, sml[slice][v][1] = sum;
  __syncthreads();
  if (slice != 0 || v >= nq) return;
  for (int sl = 1; sl < kMergeSlices; ++sl) merge_partial(mx, sum, num, sml[sl][v][0], sml[sl][v][1], snum[sl][v][lane]);
  const int qt = q0 + v;
  const float v4[4] = {sum > 0.0f ? num.x / sum : 0.0f, sum > 0.0f ? num.y / sum : 0.0f, sum > 0.0f ? num.z / sum : 0.0f,
                       sum > 0.0f ? num.w / sum : 0.0f};
  const std::int64_t o = static_cast<std::int64_t>(tl.row0 + qt / group) * a.heads * kD + (kvh * group + qt % group) * kD + 4 * lane;
#pragma unroll
  for (int i = 0; i < 4; ++i) {
    if (a.out_bf16) a.out_bf16[o + i] = f32_to_bf16(v4[i]);
    else a.out[o + i] = v4[i];
  }
}

// The block's result from the warps' partials, which the caller wrote at the ring's start (wacc
// [warps][4][128], then wm and wl [warps][4]) before a barrier: merged across warps, V's transform
// applied, stored to the workspace for the split merge (decode_combine_kernel), a launch of its
// own: merging in the last block of each split group makes ptxas schedule the page loop worse
// even where that code never runs (docs/bench-notes/decode-4bit-nibbles-h200-2026-12-03.txt).
template <Fmt F>
__device__ void finish_block(const KvLayerCodec& c, const PagedAttentionArgs& a, const BlockWork& w, float* wacc) {
  float* wm = wacc + kWarps * kNQ * kD;
  float* wl = wm + kWarps * kNQ;
  float* merged = wl + kWarps * kNQ;
  const int tid = threadIdx.x;
  const std::int64_t entries = static_cast<std::int64_t>(gridDim.z) * a.kv_heads * w.splits * kMaxTileQ;
  const std::int64_t base = ((static_cast<std::int64_t>(blockIdx.z) * a.kv_heads + w.kvh) * w.splits + w.split) * kMaxTileQ + w.q0;
#pragma unroll
  for (int qi = 0; qi < kNQ; ++qi) {
    float mm = -INFINITY;
#pragma unroll
    for (int v = 0; v < kWarps; ++v) mm = fmaxf(mm, wm[v * kNQ + qi]);
    float ll = 0.0f, aa = 0.0f;
    if (mm != -INFINITY)
#pragma unroll
      for (int v = 0; v < kWarps; ++v) {
        const float wmv = wm[v * kNQ + qi];
        if (wmv == -INFINITY) continue;
        const float f = expf(wmv - mm);
        ll += wl[v * kNQ + qi] * f;
        aa += wacc[(v * kNQ + qi) * kD + tid] * f;
      }
    merged[qi * kD + tid] = aa;
    if (tid == 0 && qi < w.nq) {
      a.workspace[2 * (base + qi)] = mm;
      a.workspace[2 * (base + qi) + 1] = ll;
    }
  }
  __syncthreads();
  fwht_rows<kD>(merged, kNQ, rotations<F>(c).o_block, threadIdx.x, kThreads, [] { __syncthreads(); });
  const float omul = out_multiplier<F>(c, w.kvh, tid);
  float* out_acc = a.workspace + 2 * entries;
  for (int qi = 0; qi < w.nq; ++qi) out_acc[(base + qi) * kD + tid] = merged[qi * kD + tid] * omul;
}

}  // namespace

}  // namespace kvgate::kernels::cuda
