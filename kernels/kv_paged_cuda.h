// The CUDA engine's KV cache: a paged pool per layer holding exactly the bytes the format's codec
// writes (kv_head_codec.h's slots, the same __host__ __device__ codec functions), and the attention
// that reads it: split-K flash-decoding over pages, dequantizing K and V in registers/shared memory
// with fp32 accumulation, for a batch of sequences and for chunks of prefill rows alike.
//
// Layout of one layer's K (and V) pool: [page][kv_head][page_tokens][k_bytes] (a page holds
// page_tokens consecutive tokens of one sequence; one (page, head) region is contiguous). Each
// sequence has a row of the block table: page ids for its tokens 0, P, 2P, ...
//
// kivi2 has no per-token slot (a key group spans G tokens, and a full-precision window trails the
// groups), so its layers are materialized: an fp32 pool (family kF32, 4 * head_dim bytes per K and
// per V: 512 at head_dim 128 against kivi2's 48) holding per token exactly what KiviKvStore::read()
// returns. kv_write stores the (rounded) inputs, then applies the store's append rule for every
// row: a count n = pos + 1 that is a multiple of R quantizes the key groups of tokens n-R .. n-1, a
// count n > R the value of token n-R-1; those slots are overwritten with the codec's dequantized
// values (codec_kivi.h, the host's functions). Attention reads plain fp32 slots: exact, at fp32's
// speed and memory, not 2-bit's. A forward's reads see the state after all its rows (the CPU
// Session's chunk rule), so callers must feed sequences in the Session's chunks (CudaEngine does)
// and each position once, in order: the inputs of quantized slots are gone, so re-writing a
// position, or truncating into a quantized range, is not supported.
// Only in a CUDA build (KVGATE_HAVE_CUDA).
#pragma once
#if defined(KVGATE_HAVE_CUDA)
#include <cuda_runtime.h>

#include <cstdint>
#include <functional>
#include <string_view>
#include <vector>

#include "kernels/attention_emulation.h"
#include "kernels/codec_per_token_head.h"
#include "kernels/fp8_formats.h"
#include "kernels/kv_format.h"

namespace kvgate::kernels::cuda {

// The codec families the attention kernel is instantiated for.
enum class KvFamily : int {
  kF32, kBf16, kF16, kFp8Tensor, kFp8Pth, kInt8Pth, kInt4Pth, kNvfp4, kQ8_0, kQ4_0, kTqFp8Key, kTqMse, kCount
};
const char* kv_family_name(KvFamily f);

// One layer's codec as kernels see it (by value; pointers are device memory owned by the cache).
struct KvLayerCodec {
  KvFamily family = KvFamily::kBf16;
  int head_dim = 0, k_bytes = 0, v_bytes = 0;
  bool round_bf16 = true;                  // inputs rounded to bf16 before encoding
  Fp8Kind fp8_kind = Fp8Kind::kE4M3;       // kFp8Tensor
  IntRounding rounding = IntRounding::kRne;  // kInt8Pth
  const float* k_scales = nullptr;         // [kv_heads]: fp8 per-tensor dequant scales, nvfp4 tensor scales
  const float* v_scales = nullptr;
  const float* signs = nullptr;            // kInt4Pth: [head_dim] Hadamard signs, or null (no rotation)
  int k_rot = 0, v_rot = 0;                // kQ8_0/kQ4_0 rotation blocks (0: none)
  int key_bits = 0, value_bits = 0;        // TurboQuant
  bool norm_correction = false;
  const float* centroids = nullptr;        // kTqMse: [2^key_bits]
  const float* midpoints = nullptr;        // kTqMse: [2^key_bits - 1]
  int kivi_group = 0, kivi_residual = 0, kivi_bits = 0;  // kivi2 (family kF32, materialized); residual 0: not kivi2
};

// Largest head_dim the kernels take; query vectors (GQA group x rows) per attention tile.
constexpr int kMaxHeadDim = 256;
constexpr int kMaxTileQ = 16;

struct PagedKvOptions {
  int page_tokens = 64;      // the attention tile: must stay 64
  int max_seqs = 1;          // rows of the block table
  int max_tokens_per_seq = 0;
  int num_pages = 0;         // pool size per layer (0: max_seqs * pages per sequence)
};

// Layer `layer`'s codec for spec at its head_dim. table(v) returns where the codec reads the float
// table v and keeps it alive: device memory for PagedKvCache, host memory where the device code runs
// on the host (kv-encode-warp-test). Throws for a format with no CUDA codec.
KvLayerCodec make_layer_codec(const KvFormatSpec& spec, int layer, const std::function<const float*(const std::vector<float>&)>& table);

// The pools, block table and codec tables of every layer. Page bookkeeping is on the host; the
// block table is mirrored to the device by sync_block_table(). Not thread-safe.
class PagedKvCache {
 public:
  PagedKvCache(const KvFormatSpec& spec, const PagedKvOptions& options);
  ~PagedKvCache();
  PagedKvCache(const PagedKvCache&) = delete;
  PagedKvCache& operator=(const PagedKvCache&) = delete;

  const KvFormatSpec& spec() const { return spec_; }
  const PagedKvOptions& options() const { return o_; }
  int max_pages_per_seq() const { return max_pages_; }
  const KvLayerCodec& codec(int layer) const { return codecs_[layer]; }
  std::uint8_t* k_pool(int layer) const { return k_pool_[layer]; }
  std::uint8_t* v_pool(int layer) const { return v_pool_[layer]; }
  const int* block_table() const { return d_table_; }  // device [max_seqs][max_pages_per_seq]
  float* absmax() const { return d_absmax_; }           // device [layers][kv_heads][2] (K, V)
  // Pool bytes of all layers (what one full cache holds), for reports and bandwidth numbers.
  double pool_bytes() const;
  // Device bytes per token of the pools, all layers, K and V: the format's bytes_per_token(), but
  // kivi2's layers hold fp32 (8 * head_dim per KV head). Sizes the pool before it exists.
  static double device_bytes_per_token(const KvFormatSpec& spec);

  // Gives sequence `seq` pages for `tokens` tokens (keeps its existing pages); Error when the pool
  // is exhausted. release() returns them. Call sync_block_table() before kernels read the table
  // (it copies only after a change).
  void reserve(int seq, int tokens);
  void release(int seq);
  void sync_block_table(cudaStream_t s);
  // Stored bytes of one (page, head) region of a layer: K and V.
  std::size_t k_region_bytes(int layer) const;
  std::size_t v_region_bytes(int layer) const;
  int page_of(int seq, int token) const { return table_[static_cast<std::size_t>(seq) * max_pages_ + token / o_.page_tokens]; }

 private:
  KvFormatSpec spec_;
  PagedKvOptions o_;
  int max_pages_ = 0;
  std::vector<KvLayerCodec> codecs_;
  std::vector<std::uint8_t*> k_pool_, v_pool_;
  std::vector<void*> owned_;  // device tables (scales, signs, centroids)
  std::vector<int> table_;    // host block table, -1 = none
  std::vector<int> free_;     // free page ids
  std::vector<int> seq_pages_;
  bool dirty_ = true;  // the host table changed since the last sync
  int* d_table_ = nullptr;
  float* d_absmax_ = nullptr;
};

// Writes rows of K and V (fp32 [rows][kv_heads*head_dim], after k-norm and RoPE) into their slots:
// row r is token row_pos[r] of sequence row_seq[r] (pages reserved, table synced). Bit-identical to
// the host codec (this translation unit is built without FMA contraction). Also raises absmax
// [kv_heads][2] to the largest |value| written (after the input rounding). kivi2: then quantizes in
// place what the rows' appends complete (the header comment), bit-identical to KiviKvStore::read().
struct KvWriteArgs {
  const float* k = nullptr;
  const float* v = nullptr;
  const int* row_seq = nullptr;  // device [rows]
  const int* row_pos = nullptr;  // device [rows]
  int rows = 0, kv_heads = 0;
  const int* block_table = nullptr;
  int max_pages = 0, page_tokens = 64;
  std::uint8_t* k_pool = nullptr;
  std::uint8_t* v_pool = nullptr;
  float* absmax = nullptr;  // this layer's [kv_heads][2], or null
  bool pdl = false;         // programmatic dependent launch (pdl.cuh)
};
void kv_write(const KvLayerCodec& codec, const KvWriteArgs& a, cudaStream_t s);

// Attention of query rows over the paged cache. Rows are grouped in tiles: a tile is consecutive
// rows of one sequence with ascending positions (decode: one row per sequence; prefill: up to
// kMaxTileQ / group rows). Query row r at position row_pos[r] attends to tokens
// max(0, pos - window + 1) .. pos of its sequence (window 0: all). Scores = fp32 dot * scale, online
// softmax in fp32, P.V accumulated in fp32; `splits` blocks share each tile's pages and a second
// kernel merges them (flash-decoding). With head_dim 128 and at most 4 query vectors a tile, or
// one-row tiles of GQA <= 16 (decode steps), every format but fp32 takes the decode path
// (paged_attention_decode.h: a cp.async page ring, per-lane register decoding) and fp32 a register
// kernel; tiles of two or more rows with head_dim 64/128 the tensor-core prefill path
// (paged_attention_prefill.h, bf16x3 operands, fp32 accumulation); the rest a shared-memory kernel
// that decodes each page through the codec.
// Kernel switch "prefill": "tensor_core" (exact mode; the wgmma kernel on compute capability 9.0,
// the mma.sync kernel elsewhere), "bf16x3" (2^-16 per product), "generic" (the CUDA-core kernel),
// "mma_sync" (exact mode on the mma.sync kernel wherever it runs).
enum class PrefillKernel : int { kTensorCore, kBf16x3, kGeneric, kMmaSync };
inline PrefillKernel prefill_kernel_named(std::string_view name) {
  return name == "generic" ? PrefillKernel::kGeneric
         : name == "bf16x3" ? PrefillKernel::kBf16x3
         : name == "mma_sync" ? PrefillKernel::kMmaSync
                              : PrefillKernel::kTensorCore;
}
struct AttentionTile {
  int seq, row0, rows;
};
enum class DecodeKernel { kAuto, kTensorCore, kCudaCore, kGeneric };

struct PagedAttentionArgs {
  const float* q = nullptr;        // [rows][heads*head_dim]
  float* out = nullptr;            // [rows][heads*head_dim]; not written when out_bf16 is set
  std::uint16_t* out_bf16 = nullptr;  // or the output as bf16 (RNE of the fp32 result): what a bf16 GEMM reads
  const int* row_pos = nullptr;    // device [rows]
  const AttentionTile* tiles = nullptr;  // device [num_tiles]
  int num_tiles = 0, heads = 0, kv_heads = 0, window = 0;
  int max_tile_rows = 0;           // the most rows any tile holds (picks the kernel instantiation)
  int max_ctx = 0;                 // largest position + 1 of any row (sizes the split)
  float scale = 1.0f;
  const int* block_table = nullptr;
  int max_pages = 0, page_tokens = 64;
  const std::uint8_t* k_pool = nullptr;
  const std::uint8_t* v_pool = nullptr;
  // Pages each pool holds (PagedKvOptions::num_pages as the cache has it), 0: not given. The bf16
  // prefill kernel copies whole pages by TMA within these bounds (page_tensor_maps.h); without them,
  // by cp.async.
  int cache_pages = 0;
  int splits = 0;                  // 0: chosen from the grid size and max_ctx (ignored with emulation)
  float* workspace = nullptr;      // attention_workspace_floats(...) floats
  // Engine-kernel emulation (attention_emulation.h). When active, the generic kernel's emulating
  // instantiation runs with emulation.splits splits per query row; but FlashAttention-3's fp8 Q and P
  // under engine numerics (fp8_operands_fast) take the tensor-core prefill kernel, prefill tiles and
  // decode rows alike.
  AttentionEmulation emulation{};
  // Kernel switch "prefill" (PrefillKernel): the tensor-core prefill path (paged_attention_prefill.h)
  // in exact mode (default), in bf16x3, on the mma.sync kernel, or the generic CUDA-core kernel.
  PrefillKernel prefill = PrefillKernel::kTensorCore;
  // Decode path only (paged_attention_decode.h): both kernels with programmatic dependent launch (pdl.cuh).
  bool pdl = false;
  // Decode path only: kAuto picks per format the kernel measured faster; kTensorCore asks for the
  // tensor-core kernel where it takes the format (bf16, fp16, fp8 per tensor, fp8/int8/int4 per
  // token head), kCudaCore for the CUDA-core kernel (every format), kGeneric for the generic kernel
  // in place of the decode path (what shapes outside it run; for comparisons). The benchmark and
  // the tests run each.
  DecodeKernel decode = DecodeKernel::kAuto;
  // Prefill path, engine numerics (prefill_tile_pool.h): the call's pages decoded once into bf16 term
  // tiles before the attention, which then copies them as bf16 pages. tile_pool: the pool's bytes
  // (kTilePoolPageBytes a page and KV head), pool_plan: device [2 pool_seqs], each sequence's id and
  // tokens, pool_pages: the pool pages the plan takes. Null: the attention kernel decodes the pages.
  std::uint8_t* tile_pool = nullptr;
  const int* pool_plan = nullptr;
  int pool_seqs = 0, pool_pages = 0;
  // (prefill_f16_images_takes) The pool's block table for its fp16 images: [sequences][max_pages],
  // the pool page of each page a plan's sequence reads; written by the image pass.
  int* pool_table = nullptr;
  // Prefill path, engine numerics, on the wgmma kernel: an fp16 cache multiplied as fp16 operands,
  // one MMA per product (prefill_f16_operands_takes), and q8_0, q4_0 and TurboQuant caches decoded
  // into fp16 images first (prefill_f16_images_takes). false: the fp16 elements as two bf16 terms
  // (the same products; for comparisons), the other formats' exact values on the mma.sync kernel.
  bool prefill_f16 = true;
};
int attention_splits(int num_tiles, int kv_heads, int max_ctx, int page_tokens);
std::size_t attention_workspace_floats(int num_tiles, int kv_heads, int splits, int head_dim);
void paged_attention(const KvLayerCodec& codec, const PagedAttentionArgs& a, cudaStream_t s);

// Rows per tile for a GQA group (kMaxTileQ query vectors per tile).
inline int attention_rows_per_tile(int group) { return group >= kMaxTileQ ? 1 : kMaxTileQ / group; }

}  // namespace kvgate::kernels::cuda
#endif
