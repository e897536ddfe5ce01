// paged_attention (kv_paged_cuda.h): split-K flash-decoding over the paged, quantized cache.
//
// A block (128 threads) takes one tile of query vectors (GQA group x rows of one sequence), one KV
// head and one split of the pages the tile needs. Per page (64 tokens): the raw K and V bytes of
// the (page, head) regions are copied to shared memory with coalesced 16-byte loads; K is decoded
// into an fp32 tile (element-parallel for plain formats, one thread per token through the codec
// functions otherwise), scores are fp32 dots; an online softmax (fp32) rescales the running sums;
// V is decoded into the same tile and P.V accumulates in fp32 registers (thread = dimension). A
// second kernel merges the splits. Exact by default: no reduced-precision step anywhere.
#include <algorithm>
#include <string>

#include "cuda_check.cuh"
#include "kv_codecs.h"
#include "kv_paged_cuda.h"

namespace kvgate::kernels::cuda {

namespace {

constexpr int kTile = 64, kThreads = 128;

template <KvFamily F>
constexpr bool elementwise_family() {
  return F == KvFamily::kF32 || F == KvFamily::kBf16 || F == KvFamily::kF16 || F == KvFamily::kFp8Tensor;
}

// Element j of a plain-format slot.
template <KvFamily F>
__device__ __forceinline__ float decode_element(const KvLayerCodec& c, const std::uint8_t* slot, int j, float scale) {
  if constexpr (F == KvFamily::kF32) return load_f32_le(slot + 4 * j);
  else if constexpr (F == KvFamily::kBf16) return bf16_to_f32(load_u16_le(slot + 2 * j));
  else if constexpr (F == KvFamily::kF16) return f16_to_f32(load_u16_le(slot + 2 * j));
  else return fp8_tensor_decode(slot[j], scale, c.fp8_kind);
}

// A whole slot through the codec (one thread), into out[head_dim] (shared memory).
template <KvFamily F>
__device__ void decode_slot(const KvLayerCodec& c, bool is_k, int head, const std::uint8_t* in, float* out) {
  const int d = c.head_dim;
  if constexpr (F == KvFamily::kFp8Pth) {
    fp8_pth_decode(in, d, load_f32_le(in + d), out);
  } else if constexpr (F == KvFamily::kInt8Pth) {
    int8_pth_decode(reinterpret_cast<const std::int8_t*>(in), d, load_f32_le(in + d), out);
  } else if constexpr (F == KvFamily::kInt4Pth) {
    int4_pth_decode(in, d, load_u32_le(in + d / 2), out);
    if (c.signs) rht_inverse_inplace(out, c.signs, d);
  } else if constexpr (F == KvFamily::kNvfp4) {
    nvfp4_decode_head(in, d, (is_k ? c.k_scales : c.v_scales)[head], out);
  } else if constexpr (F == KvFamily::kQ8_0 || F == KvFamily::kQ4_0) {
    constexpr bool q8 = F == KvFamily::kQ8_0;
    constexpr int bb = q8 ? kQ8_0Bytes : kQ4_0Bytes;
    for (int b = 0; b < d / kGgmlBlock; ++b) {
      if (q8) q8_0_decode_block(in + b * bb, out + b * kGgmlBlock);
      else q4_0_decode_block(in + b * bb, out + b * kGgmlBlock);
    }
    const int rot = is_k ? c.k_rot : c.v_rot;
    if (rot) hadamard_blocks_inplace(out, d, rot);
  } else if constexpr (F == KvFamily::kTqFp8Key || F == KvFamily::kTqMse) {
    if (!is_k) tq_value_decode(in, d, c.value_bits, out);
    else if (F == KvFamily::kTqFp8Key) tq_key_decode_fp8(in, d, out);
    else tq_key_decode_mse(in, d, c.key_bits, c.centroids, c.norm_correction, out);
  }
}

// Decodes the 64 tokens of a staged page into tile[64][ld]; tokens >= valid become zeros.
template <KvFamily F>
__device__ void decode_page(const KvLayerCodec& c, bool is_k, int head, const std::uint8_t* raw, int bytes, int valid,
                            float* tile, int ld) {
  const int d = c.head_dim;
  if constexpr (elementwise_family<F>()) {
    const float scale = F == KvFamily::kFp8Tensor ? (is_k ? c.k_scales : c.v_scales)[head] : 1.0f;
    for (int i = threadIdx.x; i < kTile * d; i += kThreads) {
      const int t = i / d, j = i % d;
      tile[t * ld + j] = t < valid ? decode_element<F>(c, raw + t * bytes, j, scale) : 0.0f;
    }
  } else {
    if (threadIdx.x < kTile) {
      const int t = threadIdx.x;
      float* row = tile + t * ld;
      if (t < valid) decode_slot<F>(c, is_k, head, raw + t * bytes, row);
      else
        for (int j = 0; j < d; ++j) row[j] = 0.0f;
    }
  }
}

__device__ __forceinline__ float warp_max(float v) {
  for (int o = 16; o > 0; o >>= 1) v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, o));
  return v;
}
__device__ __forceinline__ float warp_sum(float v) {
  for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
  return v;
}

// Copies `bytes` (a multiple of 16, both pointers 16-byte aligned) with every thread.
__device__ __forceinline__ void stage(std::uint8_t* dst, const std::uint8_t* src, int bytes) {
  const uint4* s = reinterpret_cast<const uint4*>(src);
  uint4* o = reinterpret_cast<uint4*>(dst);
  for (int i = threadIdx.x; i < bytes / 16; i += kThreads) o[i] = __ldg(s + i);
}

struct SmemLayout {
  int ld, tile, q, s, raw_k, raw_v;
  __host__ __device__ SmemLayout(int d, int k_bytes, int v_bytes)
      : ld(d + 1), tile(kTile * (d + 1)), q(kMaxTileQ * d), s(kMaxTileQ * kTile), raw_k(kTile * k_bytes),
        raw_v(kTile * v_bytes) {}
  // floats: tile, Q, S, m, l, alpha, qpos, qfirst; then raw K and V bytes
  __host__ __device__ int float_count() const { return tile + q + s + 5 * kMaxTileQ; }
};

template <KvFamily F>
__global__ void __launch_bounds__(kThreads) paged_attention_kernel(KvLayerCodec c, PagedAttentionArgs a) {
  extern __shared__ float4 smem4[];
  float* smem = reinterpret_cast<float*>(smem4);
  const int d = c.head_dim;
  const SmemLayout L(d, c.k_bytes, c.v_bytes);
  float* tile = smem;
  float* Qs = tile + L.tile;
  float* S = Qs + L.q;
  float* m_s = S + L.s;
  float* l_s = m_s + kMaxTileQ;
  float* alpha_s = l_s + kMaxTileQ;
  int* qpos = reinterpret_cast<int*>(alpha_s + kMaxTileQ);
  int* qfirst = qpos + kMaxTileQ;
  std::uint8_t* raw_k = reinterpret_cast<std::uint8_t*>(smem + ((L.float_count() + 3) / 4) * 4);
  std::uint8_t* raw_v = raw_k + L.raw_k;

  const AttentionTile tl = a.tiles[blockIdx.z];
  const int kvh = blockIdx.y, split = blockIdx.x, splits = gridDim.x;
  const int group = a.heads / a.kv_heads, nq = tl.rows * group, qw = a.heads * d;
  for (int i = threadIdx.x; i < nq * d; i += kThreads) {
    const int qi = i / d, j = i % d;
    Qs[i] = a.q[static_cast<std::int64_t>(tl.row0 + qi / group) * qw + (kvh * group + qi % group) * d + j];
  }
  if (threadIdx.x < kMaxTileQ) {
    const int qi = threadIdx.x;
    const int pos = qi < nq ? a.row_pos[tl.row0 + qi / group] : -1;
    qpos[qi] = pos;
    qfirst[qi] = a.window > 0 ? max(0, pos - a.window + 1) : 0;
    m_s[qi] = -INFINITY;
    l_s[qi] = 0.0f;
    alpha_s[qi] = 1.0f;
  }
  const int p_first = a.row_pos[tl.row0], hi = a.row_pos[tl.row0 + tl.rows - 1] + 1;
  const int lo = a.window > 0 ? max(0, p_first - a.window + 1) : 0;
  const int page0 = lo / kTile, npages = (hi - 1) / kTile - page0 + 1;
  const int per = (npages + splits - 1) / splits;
  const int pb = page0 + split * per, pe = min(page0 + npages, pb + per);
  const int* table = a.block_table + static_cast<std::int64_t>(tl.seq) * a.max_pages;

  float acc[2][kMaxTileQ];
#pragma unroll
  for (int jj = 0; jj < 2; ++jj)
#pragma unroll
    for (int qi = 0; qi < kMaxTileQ; ++qi) acc[jj][qi] = 0.0f;
  __syncthreads();

  const int t = threadIdx.x & (kTile - 1);
  const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
  for (int p = pb; p < pe; ++p) {
    const std::int64_t region = static_cast<std::int64_t>(table[p]) * a.kv_heads + kvh;
    stage(raw_k, a.k_pool + region * L.raw_k, L.raw_k);
    stage(raw_v, a.v_pool + region * L.raw_v, L.raw_v);
    __syncthreads();
    const int valid = min(kTile, hi - p * kTile);
    decode_page<F>(c, true, kvh, raw_k, c.k_bytes, valid, tile, L.ld);
    __syncthreads();
    const int tok = p * kTile + t;
    for (int qi = threadIdx.x / kTile; qi < nq; qi += kThreads / kTile) {
      const float* qv = Qs + qi * d;
      const float* kr = tile + t * L.ld;
      float dot = 0.0f;
      for (int j = 0; j < d; ++j) dot += qv[j] * kr[j];
      S[qi * kTile + t] = tok >= qfirst[qi] && tok <= qpos[qi] ? dot * a.scale : -INFINITY;
    }
    __syncthreads();
    for (int qi = warp; qi < nq; qi += kThreads / 32) {
      const float s0 = S[qi * kTile + lane], s1 = S[qi * kTile + lane + 32];
      const float m_old = m_s[qi], m_new = fmaxf(m_old, warp_max(fmaxf(s0, s1)));
      float p0 = 0.0f, p1 = 0.0f, alpha = 1.0f;
      if (m_new != -INFINITY) {
        p0 = expf(s0 - m_new);
        p1 = expf(s1 - m_new);
        alpha = expf(m_old - m_new);
      }
      const float sum = warp_sum(p0 + p1);
      S[qi * kTile + lane] = p0;
      S[qi * kTile + lane + 32] = p1;
      __syncwarp();
      if (lane == 0) {
        m_s[qi] = m_new;
        l_s[qi] = l_s[qi] * alpha + sum;
        alpha_s[qi] = alpha;
      }
    }
    // V replaces K in the tile (every score is read).
    decode_page<F>(c, false, kvh, raw_v, c.v_bytes, valid, tile, L.ld);
    __syncthreads();
#pragma unroll
    for (int jj = 0; jj < 2; ++jj) {
      const int j = threadIdx.x + jj * kThreads;
      if (j < d) {
#pragma unroll
        for (int qi = 0; qi < kMaxTileQ; ++qi)
          if (qi < nq) acc[jj][qi] *= alpha_s[qi];
        for (int tt = 0; tt < kTile; ++tt) {
          const float v = tile[tt * L.ld + j];
#pragma unroll
          for (int qi = 0; qi < kMaxTileQ; ++qi)
            if (qi < nq) acc[jj][qi] += S[qi * kTile + tt] * v;
        }
      }
    }
    __syncthreads();
  }
  // Partial results of this split: (m, l) and the unnormalized accumulator.
  const std::int64_t entries = static_cast<std::int64_t>(gridDim.z) * gridDim.y * splits * kMaxTileQ;
  const std::int64_t base = ((static_cast<std::int64_t>(blockIdx.z) * gridDim.y + kvh) * splits + split) * kMaxTileQ;
  if (threadIdx.x < nq) {
    a.workspace[2 * (base + threadIdx.x)] = m_s[threadIdx.x];
    a.workspace[2 * (base + threadIdx.x) + 1] = l_s[threadIdx.x];
  }
  float* wacc = a.workspace + 2 * entries;
#pragma unroll
  for (int jj = 0; jj < 2; ++jj) {
    const int j = threadIdx.x + jj * kThreads;
    if (j < d) {
#pragma unroll
      for (int qi = 0; qi < kMaxTileQ; ++qi)
        if (qi < nq) wacc[(base + qi) * d + j] = acc[jj][qi];
    }
  }
}

// One block per (tile, KV head): merges the splits of every query vector of the tile.
__global__ void combine_kernel(PagedAttentionArgs a, int d, int splits) {
  const AttentionTile tl = a.tiles[blockIdx.x];
  const int kvh = blockIdx.y, group = a.heads / a.kv_heads, nq = tl.rows * group, qw = a.heads * d;
  const std::int64_t entries = static_cast<std::int64_t>(gridDim.x) * gridDim.y * splits * kMaxTileQ;
  const float* wacc = a.workspace + 2 * entries;
  for (int qi = 0; qi < nq; ++qi) {
    float m = -INFINITY;
    for (int s = 0; s < splits; ++s) {
      const std::int64_t e = ((static_cast<std::int64_t>(blockIdx.x) * gridDim.y + kvh) * splits + s) * kMaxTileQ + qi;
      m = fmaxf(m, a.workspace[2 * e]);
    }
    float* out = a.out + static_cast<std::int64_t>(tl.row0 + qi / group) * qw + (kvh * group + qi % group) * d;
    for (int j = threadIdx.x; j < d; j += blockDim.x) {
      float num = 0.0f, den = 0.0f;
      for (int s = 0; s < splits; ++s) {
        const std::int64_t e = ((static_cast<std::int64_t>(blockIdx.x) * gridDim.y + kvh) * splits + s) * kMaxTileQ + qi;
        const float ms = a.workspace[2 * e];
        if (ms == -INFINITY) continue;
        const float w = expf(ms - m);
        den += a.workspace[2 * e + 1] * w;
        num += wacc[e * d + j] * w;
      }
      out[j] = den > 0.0f ? num / den : 0.0f;
    }
  }
}

template <KvFamily F>
void launch(const KvLayerCodec& c, const PagedAttentionArgs& a, int splits, cudaStream_t s) {
  const SmemLayout L(c.head_dim, c.k_bytes, c.v_bytes);
  const int smem = ((L.float_count() + 3) / 4) * 16 + L.raw_k + L.raw_v;
  static int configured = 0;  // the largest dynamic size this instantiation was opened for
  if (smem > 48 * 1024 && smem > configured) {
    KV_CUDA_CHECK(cudaFuncSetAttribute(paged_attention_kernel<F>, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
    configured = smem;
  }
  const dim3 grid(splits, a.kv_heads, a.num_tiles);
  paged_attention_kernel<F><<<grid, kThreads, smem, s>>>(c, a);
  KV_CUDA_CHECK_LAUNCH();
}

}  // namespace

int attention_splits(int num_tiles, int kv_heads, int max_ctx, int page_tokens) {
  const int blocks = num_tiles * kv_heads;
  const int pages = (max_ctx + page_tokens - 1) / page_tokens;
  // Enough blocks for about four waves of 132 multiprocessors, each split at least 2 pages.
  int splits = (4 * 132 + blocks - 1) / blocks;
  splits = std::min(splits, std::max(1, pages / 2));
  return std::max(1, std::min(splits, 128));
}

std::size_t attention_workspace_floats(int num_tiles, int kv_heads, int splits, int head_dim) {
  return static_cast<std::size_t>(num_tiles) * kv_heads * splits * kMaxTileQ * (head_dim + 2);
}

void paged_attention(const KvLayerCodec& c, const PagedAttentionArgs& a0, cudaStream_t s) {
  if (a0.num_tiles <= 0) return;
  if (a0.heads % a0.kv_heads != 0 || a0.heads / a0.kv_heads > kMaxTileQ)
    throw Error("paged_attention: GQA group " + std::to_string(a0.heads / a0.kv_heads) + " above " +
                std::to_string(kMaxTileQ) + " is not supported");
  PagedAttentionArgs a = a0;
  const int splits = a.splits > 0 ? a.splits : attention_splits(a.num_tiles, a.kv_heads, a.max_ctx, a.page_tokens);
  switch (c.family) {
    case KvFamily::kF32: launch<KvFamily::kF32>(c, a, splits, s); break;
    case KvFamily::kBf16: launch<KvFamily::kBf16>(c, a, splits, s); break;
    case KvFamily::kF16: launch<KvFamily::kF16>(c, a, splits, s); break;
    case KvFamily::kFp8Tensor: launch<KvFamily::kFp8Tensor>(c, a, splits, s); break;
    case KvFamily::kFp8Pth: launch<KvFamily::kFp8Pth>(c, a, splits, s); break;
    case KvFamily::kInt8Pth: launch<KvFamily::kInt8Pth>(c, a, splits, s); break;
    case KvFamily::kInt4Pth: launch<KvFamily::kInt4Pth>(c, a, splits, s); break;
    case KvFamily::kNvfp4: launch<KvFamily::kNvfp4>(c, a, splits, s); break;
    case KvFamily::kQ8_0: launch<KvFamily::kQ8_0>(c, a, splits, s); break;
    case KvFamily::kQ4_0: launch<KvFamily::kQ4_0>(c, a, splits, s); break;
    case KvFamily::kTqFp8Key: launch<KvFamily::kTqFp8Key>(c, a, splits, s); break;
    case KvFamily::kTqMse: launch<KvFamily::kTqMse>(c, a, splits, s); break;
    default: throw Error("paged_attention: unknown KV family", kExitInternal);
  }
  combine_kernel<<<dim3(a.num_tiles, a.kv_heads), 128, 0, s>>>(a, c.head_dim, splits);
  KV_CUDA_CHECK_LAUNCH();
}

}  // namespace kvgate::kernels::cuda
