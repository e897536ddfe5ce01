#include "kernels/prefill_tile_pool.h"

#include <algorithm>

#include "kernels/cuda_check.cuh"
#include "kernels/paged_attention_prefill.h"

namespace kvgate::kernels::cuda {

PrefillTilePool::~PrefillTilePool() {
  cudaFree(pool_);
  cudaFree(plan_);
}

bool PrefillTilePool::prepare(const KvLayerCodec& codec, PagedAttentionArgs& a, const AttentionTile* tiles, int num_tiles,
                              const int* row_pos, cudaStream_t s) {
  a.tile_pool = nullptr, a.pool_plan = nullptr, a.pool_table = nullptr, a.pool_seqs = a.pool_pages = 0;
  if (num_tiles <= 0 || !prefill_tile_pool_takes(codec, a)) return false;
  const bool images = prefill_f16_images_takes(codec, a);
  // Each sequence once, with its tokens (last position + 1, over all its tiles), in order of first tile.
  host_plan_.clear();
  for (int t = 0; t < num_tiles; ++t) {
    const AttentionTile& tl = tiles[t];
    const int tokens = row_pos[tl.row0 + tl.rows - 1] + 1;
    std::size_t e = 0;
    while (e < host_plan_.size() && host_plan_[e] != tl.seq) e += 2;
    if (e == host_plan_.size()) host_plan_.insert(host_plan_.end(), {tl.seq, tokens});
    else host_plan_[e + 1] = std::max(host_plan_[e + 1], tokens);
  }
  long long pages = 0;
  int max_seq = 0;
  for (std::size_t e = 0; e < host_plan_.size(); e += 2) pages += (host_plan_[e + 1] + 63) / 64, max_seq = std::max(max_seq, host_plan_[e]);
  // (images) The fp16 images take a page's K and V (2 x 64 x 128 halves: less than a tile-pool page),
  // then the pool's block table.
  const std::size_t images_bytes = static_cast<std::size_t>(pages) * a.kv_heads * kTilePoolPageBytes;
  const std::size_t need = images_bytes + (images ? f16_image_table_bytes(max_seq, a.max_pages) : 0);
  if (need > pool_bytes_ || host_plan_.size() > plan_ints_) {
    KV_CUDA_CHECK(cudaStreamSynchronize(s));  // the last call's kernels may still read the old pool
    if (need > pool_bytes_) {
      cudaFree(pool_);
      pool_ = nullptr, pool_bytes_ = 0;
      if (cudaMalloc(&pool_, need) != cudaSuccess) {
        cudaGetLastError();  // out of memory is not sticky: the kernel decodes its pages itself
        pool_ = nullptr;
        return false;
      }
      pool_bytes_ = need;
    }
    if (host_plan_.size() > plan_ints_) {
      cudaFree(plan_);
      const std::size_t ints = std::max<std::size_t>(host_plan_.size(), 256);
      KV_CUDA_CHECK(cudaMalloc(&plan_, ints * sizeof(int)));
      plan_ints_ = ints;
    }
  }
  // Pageable source: the copy has read host_plan_ when the call returns, so the next prepare may refill it.
  KV_CUDA_CHECK(cudaMemcpyAsync(plan_, host_plan_.data(), host_plan_.size() * sizeof(int), cudaMemcpyHostToDevice, s));
  a.tile_pool = pool_, a.pool_plan = plan_;
  if (images) a.pool_table = reinterpret_cast<int*>(pool_ + images_bytes);
  a.pool_seqs = static_cast<int>(host_plan_.size() / 2), a.pool_pages = static_cast<int>(pages);
  return true;
}

}  // namespace kvgate::kernels::cuda
