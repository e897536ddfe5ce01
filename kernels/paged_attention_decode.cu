// decode_attention (paged_attention_decode.h): the decode fast path of the paged attention, built for
// bytes in flight. A block (4 warps) takes 4 query vectors of one tile and KV head (a one-row tile of
// GQA 5-16 takes several blocks, block_work) and one split of its pages; cp.async copies the raw K
// and V regions of the next pages into a 3-stage shared-memory ring while the warps compute the
// current page, so the loads never wait on the maths.
//
// Per page each warp owns 16 tokens; a half-warp takes 8 of them, and lane s (0..15) of the half
// owns 8 of the 128 dimensions of every K and V row (its 16-byte bf16 chunk, 8 bytes of fp8/int8,
// 4 bytes of 4-bit codes, ...), decoded in registers with packed conversions; Q (rotated and scaled
// once per block, see below) sits in registers for those 8 dimensions. Partial dots of 8 tokens x 4
// queries are reduce-scattered over the 16 lanes (30 shuffles), leaving each lane 2 scores; the warp
// keeps its own online softmax (fp32), writes P to shared memory, and accumulates P.V for its 8
// dimensions x 4 queries in fp32 registers. Warps merge at the end; a second kernel merges splits.
//
// Exactness: every element decodes to the codec's value (hardware fp8/fp16 widening, integer codes
// via exact float tricks); per-block/per-token multipliers are applied to the lane's partial dot and
// to P instead of to each element, and linear transforms are moved from K and V onto Q and the
// output: q.(H k) = (H q).k for the Hadamard-rotated formats (int4_per_token_head's randomized
// transform, llama.cpp's block rotation, TurboQuant keys), V's inverse rotation once on the
// accumulator. All of that reorders fp32 arithmetic only; nothing runs below fp32.
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string>

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>

#include "kernels/cp_async.cuh"
#include "kernels/cuda_check.cuh"
#include "kernels/fwht_rows.cuh"
#include "kernels/float_formats.h"
#include "kernels/kv_codecs.h"
#include "kernels/kv_rotations.cuh"
#include "kernels/paged_attention_decode.h"
#include "kernels/pdl.cuh"
#include "kernels/softmax_exp.cuh"

namespace kvgate::kernels::cuda {

namespace {

constexpr int kD = 128, kNQ = 4, kPage = 64, kWarps = 4, kThreads = 32 * kWarps;
static_assert(kPage == kEmuPage, "split_pages partitions pages of kEmuPage tokens");

enum class Fmt { kBf16, kF16, kE4M3, kE5M2, kFp8Pth, kInt8Pth, kInt4Pth, kNvfp4, kQ8_0, kQ4_0, kTqK8V4, kTqK4V4, kTqK3V4, kTqK3V3 };

// ---- element decoding -------------------------------------------------------------------------

__device__ __forceinline__ float2 half2_bits_to_float2(std::uint32_t u) {
  __half2 h;
  memcpy(&h, &u, 4);
  return __half22float2(h);
}

template <__nv_fp8_interpretation_t K>
__device__ __forceinline__ void fp8x4(std::uint32_t w, float* x) {
  const __half2_raw lo = __nv_cvt_fp8x2_to_halfraw2(static_cast<__nv_fp8x2_storage_t>(w & 0xffffu), K);
  const __half2_raw hi = __nv_cvt_fp8x2_to_halfraw2(static_cast<__nv_fp8x2_storage_t>(w >> 16), K);
  const float2 a = __half22float2(__half2(lo)), b = __half22float2(__half2(hi));
  x[0] = a.x, x[1] = a.y, x[2] = b.x, x[3] = b.y;
}

// Byte e of w as an exact float: 2^23 + byte built by a byte permute, minus 2^23 (+ bias).
template <int E>
__device__ __forceinline__ float byte_plus_2p23(std::uint32_t w) {
  return __int_as_float(static_cast<int>(__byte_perm(w, 0x4B000000u, 0x7440u | E)));
}
__device__ __forceinline__ void int8x4(std::uint32_t w, float* x) {
  const std::uint32_t u = w ^ 0x80808080u;  // int8 + 128
  x[0] = byte_plus_2p23<0>(u) - 8388736.0f;
  x[1] = byte_plus_2p23<1>(u) - 8388736.0f;
  x[2] = byte_plus_2p23<2>(u) - 8388736.0f;
  x[3] = byte_plus_2p23<3>(u) - 8388736.0f;
}
// Eight 4-bit codes of w (code i in bits 4i..4i+3) minus `zero` (a small integer): exact.
__device__ __forceinline__ void nibbles8(std::uint32_t w, float zero, float* x) {
  const std::uint32_t lo = w & 0x0F0F0F0Fu, hi = (w >> 4) & 0x0F0F0F0Fu;
  const float sub = 8388608.0f + zero;
  x[0] = byte_plus_2p23<0>(lo) - sub, x[1] = byte_plus_2p23<0>(hi) - sub;
  x[2] = byte_plus_2p23<1>(lo) - sub, x[3] = byte_plus_2p23<1>(hi) - sub;
  x[4] = byte_plus_2p23<2>(lo) - sub, x[5] = byte_plus_2p23<2>(hi) - sub;
  x[6] = byte_plus_2p23<3>(lo) - sub, x[7] = byte_plus_2p23<3>(hi) - sub;
}
__device__ __forceinline__ float small_int(std::uint32_t c) { return __int_as_float(static_cast<int>(0x4B000000u | c)) - 8388608.0f; }

// 32 bits from a 2-byte (or 1-byte) aligned shared-memory address. The second word is read only
// when needed: a row's last bytes may end a stage whose neighbour cp.async is filling.
__device__ __forceinline__ std::uint32_t load_u32_any(const std::uint8_t* p) {
  const std::uintptr_t a = reinterpret_cast<std::uintptr_t>(p);
  const std::uint32_t* w = reinterpret_cast<const std::uint32_t*>(a & ~std::uintptr_t{3});
  const unsigned sh = static_cast<unsigned>(a & 3u) * 8u;
  return __funnelshift_r(w[0], sh ? w[1] : 0u, sh);
}
__device__ __forceinline__ float half_at(const std::uint8_t* p) {
  return __half2float(__ushort_as_half(*reinterpret_cast<const unsigned short*>(p)));
}
__device__ __forceinline__ float e4m3_byte(std::uint32_t b) {
  return __half2float(__half(__nv_cvt_fp8_to_halfraw(static_cast<__nv_fp8_storage_t>(b & 0xffu), __NV_E4M3)));
}

// E2M1 codes (bit 3 sign, bits 0-2 magnitude) of byte i of w as two fp16 values placed so that
// their value is the E2M1 value * 2^-14 (exponent bits 10-11, mantissa bit 9; code 1 subnormal).
__device__ __forceinline__ float2 e2m1x2_scaled(std::uint32_t t) {
  const std::uint32_t h = ((t & 0x7u) << 9) | ((t & 0x8u) << 12) | ((t & 0x70u) << 21) | ((t & 0x80u) << 24);
  return half2_bits_to_float2(h);
}

// ---- formats ------------------------------------------------------------------------------------
// kKBytes/kVBytes: slot bytes at head_dim 128. dim(s, e): the dimension of lane s's element e.
// k8/v8: lane s's 8 elements of a row (shared memory) and the multiplier of the lane's partial sum;
// v8 also returns an additive offset per token (TurboQuant values' minimum; 0 otherwise).
template <Fmt F>
struct Traits {
  static constexpr bool kQ4 = F == Fmt::kQ4_0;
  static constexpr bool kTqMse = F == Fmt::kTqK4V4 || F == Fmt::kTqK3V4 || F == Fmt::kTqK3V3;
  static constexpr bool kTq = kTqMse || F == Fmt::kTqK8V4;
  static constexpr int kKeyBits = F == Fmt::kTqK4V4 ? 4 : 3;
  static constexpr int kValueBits = F == Fmt::kTqK3V3 ? 3 : 4;
  static constexpr int kKBytes = F == Fmt::kBf16 || F == Fmt::kF16 ? 256
                                 : F == Fmt::kE4M3 || F == Fmt::kE5M2 || F == Fmt::kTqK8V4 ? 128
                                 : F == Fmt::kFp8Pth || F == Fmt::kInt8Pth ? 132
                                 : F == Fmt::kInt4Pth ? 68
                                 : F == Fmt::kNvfp4 || F == Fmt::kQ4_0 ? 72
                                 : F == Fmt::kQ8_0 ? 136
                                                     : (kKeyBits == 4 ? 66 : 50);  // TurboQuant MSE keys
  static constexpr int kVBytes = kTq ? (kValueBits == 4 ? 68 : 52) : kKBytes;

  __device__ static int dim(int s, int e) {
    if constexpr (kQ4) return 32 * (s >> 2) + 4 * (s & 3) + (e & 3) + (e >= 4 ? 16 : 0);
    else return 8 * s + e;
  }

  // Plain formats shared by K and V.
  __device__ static float plain8(const std::uint8_t* row, int s, float* x) {
    if constexpr (F == Fmt::kBf16) {
      const uint4 w = *reinterpret_cast<const uint4*>(row + 16 * s);
      const std::uint32_t u[4] = {w.x, w.y, w.z, w.w};
#pragma unroll
      for (int i = 0; i < 4; ++i) {
        x[2 * i] = __uint_as_float(u[i] << 16);
        x[2 * i + 1] = __uint_as_float(u[i] & 0xffff0000u);
      }
      return 1.0f;
    } else if constexpr (F == Fmt::kF16) {
      const uint4 w = *reinterpret_cast<const uint4*>(row + 16 * s);
      const std::uint32_t u[4] = {w.x, w.y, w.z, w.w};
#pragma unroll
      for (int i = 0; i < 4; ++i) {
        const float2 f = half2_bits_to_float2(u[i]);
        x[2 * i] = f.x;
        x[2 * i + 1] = f.y;
      }
      return 1.0f;
    } else if constexpr (F == Fmt::kE4M3 || F == Fmt::kE5M2 || F == Fmt::kFp8Pth || F == Fmt::kTqK8V4) {
      constexpr __nv_fp8_interpretation_t K = F == Fmt::kE5M2 ? __NV_E5M2 : __NV_E4M3;
      const std::uint32_t* w = reinterpret_cast<const std::uint32_t*>(row + 8 * s);
      fp8x4<K>(w[0], x);
      fp8x4<K>(w[1], x + 4);
      return F == Fmt::kFp8Pth ? *reinterpret_cast<const float*>(row + kD) : 1.0f;
    } else if constexpr (F == Fmt::kInt8Pth) {
      const std::uint32_t* w = reinterpret_cast<const std::uint32_t*>(row + 8 * s);
      int8x4(w[0], x);
      int8x4(w[1], x + 4);
      return *reinterpret_cast<const float*>(row + kD);
    } else if constexpr (F == Fmt::kInt4Pth) {
      const std::uint32_t w = *reinterpret_cast<const std::uint32_t*>(row + 4 * s);
      const std::uint32_t sw = *reinterpret_cast<const std::uint32_t*>(row + kD / 2);
      nibbles8(w, static_cast<float>(sw & 0xFu), x);
      return __uint_as_float(sw & ~0xFu);
    } else if constexpr (F == Fmt::kNvfp4) {
      const std::uint32_t w = *reinterpret_cast<const std::uint32_t*>(row + 4 * s);
#pragma unroll
      for (int i = 0; i < 4; ++i) {
        const float2 f = e2m1x2_scaled(w >> (8 * i));
        x[2 * i] = f.x;
        x[2 * i + 1] = f.y;
      }
      return e4m3_byte(row[kD / 2 + (s >> 1)]) * 16384.0f;  // block scale * 2^14 (exact)
    } else if constexpr (F == Fmt::kQ8_0) {
      const int b = s >> 2, off = 34 * b + 2 + 8 * (s & 3);
      const std::uint32_t* w = reinterpret_cast<const std::uint32_t*>(row + (off & ~3));
      const unsigned sh = (off & 3) * 8u;  // blocks 1, 3 (the row's end) are 4-byte aligned: 2 words
      const std::uint32_t w1 = w[1], w2 = sh ? w[2] : 0u;
      int8x4(__funnelshift_r(w[0], w1, sh), x);
      int8x4(__funnelshift_r(w1, w2, sh), x + 4);
      return half_at(row + 34 * b);
    } else if constexpr (F == Fmt::kQ4_0) {
      const int b = s >> 2, off = 18 * b + 2 + 4 * (s & 3);
      const std::uint32_t* w = reinterpret_cast<const std::uint32_t*>(row + (off & ~3));
      const unsigned sh = (off & 3) * 8u;  // blocks 1, 3 (the row's end) are 4-byte aligned: 1 word
      const std::uint32_t u = __funnelshift_r(w[0], sh ? w[1] : 0u, sh);
      const std::uint32_t lo = u & 0x0F0F0F0Fu, hi = (u >> 4) & 0x0F0F0F0Fu;
      x[0] = byte_plus_2p23<0>(lo) - 8388616.0f, x[1] = byte_plus_2p23<1>(lo) - 8388616.0f;
      x[2] = byte_plus_2p23<2>(lo) - 8388616.0f, x[3] = byte_plus_2p23<3>(lo) - 8388616.0f;
      x[4] = byte_plus_2p23<0>(hi) - 8388616.0f, x[5] = byte_plus_2p23<1>(hi) - 8388616.0f;
      x[6] = byte_plus_2p23<2>(hi) - 8388616.0f, x[7] = byte_plus_2p23<3>(hi) - 8388616.0f;
      return half_at(row + 18 * b);
    } else {
      return 0.0f;
    }
  }

  // K: TurboQuant MSE keys give the centroids (lut in shared memory) and add their squares to ss.
  __device__ static float k8(const std::uint8_t* row, int s, float* x, const float* lut, float& ss) {
    if constexpr (kTqMse) {
      const std::uint32_t u = load_u32_any(row + kKeyBits * s);  // codes 8s.. start at byte kKeyBits*s
      float acc = 0.0f;
#pragma unroll
      for (int e = 0; e < 8; ++e) {
        x[e] = lut[(u >> (kKeyBits * e)) & ((1u << kKeyBits) - 1u)];
        acc = fmaf(x[e], x[e], acc);
      }
      ss = acc;
      return 1.0f;
    } else {
      (void)lut;
      (void)ss;
      return plain8(row, s, x);
    }
  }

  __device__ static float v8(const std::uint8_t* row, int s, float* x, float& offset) {
    if constexpr (kTq) {
      constexpr int nb = kValueBits == 4 ? kD / 2 : kD * 3 / 8;
      if constexpr (kValueBits == 4) {
        nibbles8(*reinterpret_cast<const std::uint32_t*>(row + 4 * s), 0.0f, x);
      } else {
        const std::uint32_t u = load_u32_any(row + 3 * s);
#pragma unroll
        for (int e = 0; e < 8; ++e) x[e] = small_int((u >> (3 * e)) & 7u);
      }
      const std::uint32_t sm = *reinterpret_cast<const std::uint32_t*>(row + nb);  // scale f16, min f16
      offset = __half2float(__ushort_as_half(static_cast<unsigned short>(sm >> 16)));
      return __half2float(__ushort_as_half(static_cast<unsigned short>(sm & 0xffffu)));
    } else {
      offset = 0.0f;
      return plain8(row, s, x);
    }
  }
};

// ---- Q and output transforms --------------------------------------------------------------------

// The KV family of a format, for the transforms shared with the prefill kernel (kv_rotations.cuh).
constexpr KvFamily family_of(Fmt f) {
  switch (f) {
    case Fmt::kBf16: return KvFamily::kBf16;
    case Fmt::kF16: return KvFamily::kF16;
    case Fmt::kE4M3: case Fmt::kE5M2: return KvFamily::kFp8Tensor;
    case Fmt::kFp8Pth: return KvFamily::kFp8Pth;
    case Fmt::kInt8Pth: return KvFamily::kInt8Pth;
    case Fmt::kInt4Pth: return KvFamily::kInt4Pth;
    case Fmt::kNvfp4: return KvFamily::kNvfp4;
    case Fmt::kQ8_0: return KvFamily::kQ8_0;
    case Fmt::kQ4_0: return KvFamily::kQ4_0;
    case Fmt::kTqK8V4: return KvFamily::kTqFp8Key;
    default: return KvFamily::kTqMse;
  }
}
template <Fmt F>
__device__ KvRotations rotations(const KvLayerCodec& c) {
  return kv_rotations<family_of(F), kD>(c);
}
// Per-tensor scales (fp8 per tensor, nvfp4) join the rotations' multipliers: K's on Q, V's on the output.
template <Fmt F>
__device__ float q_multiplier(const KvLayerCodec& c, int kvh) {
  const float m = rotations<F>(c).q_mul;
  if constexpr (F == Fmt::kE4M3 || F == Fmt::kE5M2 || F == Fmt::kNvfp4) return m * c.k_scales[kvh];
  else return m;
}
template <Fmt F>
__device__ float out_multiplier(const KvLayerCodec& c, int kvh, int j) {
  const float m = rotations<F>(c).out_multiplier(j);
  if constexpr (F == Fmt::kE4M3 || F == Fmt::kE5M2 || F == Fmt::kNvfp4) return m * c.v_scales[kvh];
  else return m;
}

// ---- reductions ---------------------------------------------------------------------------------

// One step of a reduce-scatter over the 16 lanes of a half-warp: lanes with bit O of s keep the upper
// half of v[0..N), the others the lower half, each adding its partner's copy. After steps O = 8, 4, 2, 1
// lane s holds the sums of the original entries s*N/16 .. s*N/16 + N/16 - 1 in v[0..N/16).
template <int O, int N>
__device__ __forceinline__ void rs_step(float* v, int s) {
  const bool upper = (s & O) != 0;
#pragma unroll
  for (int k = 0; k < N / 2; ++k) {
    const float send = upper ? v[k] : v[k + N / 2];
    const float keep = upper ? v[k + N / 2] : v[k];
    v[k] = keep + __shfl_xor_sync(0xffffffffu, send, O);
  }
}

template <Fmt F>
constexpr int stage_bytes() {
  return kPage * (Traits<F>::kKBytes + Traits<F>::kVBytes);  // a multiple of 128
}
// Ring depth of the CUDA-core kernel (TC false): 2 pages for bf16/fp16 (32 KB a page), so three
// blocks fit a multiprocessor; 3 otherwise. The tensor-core kernel refills the slot of the page
// before the one it just finished (its ring runs on mbarriers), so it holds one page more: 3 and 4.
template <Fmt F, bool TC>
constexpr int stages() {
  return (stage_bytes<F>() >= 24 * 1024 ? 2 : 3) + (TC ? 1 : 0);
}
template <Fmt F, bool TC>
constexpr int dynamic_smem() {
  return stages<F, TC>() * stage_bytes<F>() + 16;  // + 16: spare (unaligned rows read whole words)
}
// Blocks per multiprocessor the shared memory allows (228 KB, ~4 KB static and 1 KB reserved a
// block), at most 4: the register cap of __launch_bounds__.
template <Fmt F, bool TC>
constexpr int min_blocks() {
  const int fit = 233472 / (dynamic_smem<F, TC>() + 5 * 1024);
  return fit < 4 ? fit : 4;
}

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
  constexpr int kBatch = 16;  // up to 64 splits a block in one round of loads (8 measured the same at 49)
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

// ---- the CUDA-core kernel ---------------------------------------------------------------------------

template <Fmt F>
__global__ void __launch_bounds__(kThreads, min_blocks<F, false>()) decode_kernel(KvLayerCodec c, PagedAttentionArgs a) {
  using T = Traits<F>;
  constexpr int kStages = stages<F, false>();
  constexpr int kRegionK = kPage * T::kKBytes, kStage = stage_bytes<F>();
  extern __shared__ float4 ring4[];
  std::uint8_t* ring = reinterpret_cast<std::uint8_t*>(ring4);
  __shared__ float q_raw[kNQ][kD];
  __shared__ __align__(16) float p_s[kWarps][16][kNQ];
  __shared__ float lut[16];
  __shared__ int qpos_s[kNQ], qfirst_s[kNQ];

  pdl_launch_dependents();
  pdl_wait();  // Q, the tiles and this step's K/V come from earlier kernels
  const BlockWork w = block_work(a);
  if (w.nq <= 0) return;
  const int kvh = w.kvh, nq = w.nq, pb = w.pb, pe = w.pe, hi = w.hi;
  const int tid = threadIdx.x, warp = tid >> 5, lane = tid & 31, half = lane >> 4, s = lane & 15;
  // Prologue: the first pages are in flight while Q is prepared.
#pragma unroll
  for (int st = 0; st < kStages - 1; ++st) {
    if (pb + st < pe) issue_page<F>(a, kvh, w.table[pb + st], ring + st * kStage);
    cp_async_commit();
  }
  if constexpr (T::kTqMse) {
    if (tid < (1 << T::kKeyBits)) lut[tid] = c.centroids[tid];
  }
  stage_q<F>(c, a, w, q_raw, qpos_s, qfirst_s);
  const float qmul = q_multiplier<F>(c, kvh);
  float qreg[kNQ][8];
#pragma unroll
  for (int qi = 0; qi < kNQ; ++qi)
#pragma unroll
    for (int e = 0; e < 8; ++e) qreg[qi][e] = q_raw[qi][T::dim(s, e)] * qmul;

  float m[kNQ], acc[kNQ][8], accoff[kNQ];
  float l0 = 0.0f, l1 = 0.0f;  // this lane's share of l for queries q0, q0 + 1
  const int q0 = 2 * (s & 1);
#pragma unroll
  for (int qi = 0; qi < kNQ; ++qi) {
    m[qi] = -INFINITY;
    accoff[qi] = 0.0f;
#pragma unroll
    for (int e = 0; e < 8; ++e) acc[qi][e] = 0.0f;
  }
  const float scale = a.scale;
  int next_id = pb + kStages - 1 < pe ? w.table[pb + kStages - 1] : 0;

  for (int p = pb, it = 0; p < pe; ++p, ++it) {
    // Page p's group is complete once at most kStages - 2 younger ones are pending; after the
    // barrier every warp is done with the page before, whose stage then takes page p + kStages - 1.
    cp_async_wait<kStages - 2>();
    __syncthreads();
    if (p + kStages - 1 < pe) issue_page<F>(a, kvh, next_id, ring + ((it + kStages - 1) % kStages) * kStage);
    cp_async_commit();
    next_id = p + kStages < pe ? w.table[p + kStages] : 0;
    const std::uint8_t* kst = ring + (it % kStages) * kStage;
    const std::uint8_t* vst = kst + kRegionK;
    // Token slot (0..15) of the warp's 16 tokens for local token t of this half: interleaved halves
    // (rows an odd number of words apart hit other banks).
    const int tok_base = p * kPage + warp * 16;

    // Scores: partial dots of 8 tokens x 4 queries, reduce-scattered over the half-warp.
    float v[8 * kNQ], ssq[8];
#pragma unroll
    for (int t = 0; t < 8; ++t) {
      const std::uint8_t* row = kst + (warp * 16 + 2 * t + half) * T::kKBytes;
      float x[8];
      const float mul = T::k8(row, s, x, lut, ssq[t]);
#pragma unroll
      for (int qi = 0; qi < kNQ; ++qi) {
        float d0 = 0.0f;
#pragma unroll
        for (int e = 0; e < 8; ++e) d0 = fmaf(qreg[qi][e], x[e], d0);
        v[t * kNQ + qi] = d0 * mul;
      }
    }
    rs_step<8, 32>(v, s);
    rs_step<4, 16>(v, s);
    rs_step<2, 8>(v, s);
    rs_step<1, 4>(v, s);
    // This lane now holds token t = s >> 1 (slot 2t + half), queries q0 and q0 + 1.
    const int slot = 2 * (s >> 1) + half, tok = tok_base + slot;
    float post = scale;
    if constexpr (T::kTqMse) {
      rs_step<8, 8>(ssq, s);
      rs_step<4, 4>(ssq, s);
      rs_step<2, 2>(ssq, s);
      const float ss = ssq[0] + __shfl_xor_sync(0xffffffffu, ssq[0], 1);
      const float norm = half_at(kst + (warp * 16 + slot) * T::kKBytes + (T::kKeyBits * kD) / 8);
      post *= c.norm_correction ? norm * (1.0f / sqrtf(ss + 1e-16f)) : norm;
    }
    float sc0, sc1;
    {
      const bool in = tok < hi;
      const bool ok0 = in && q0 < nq && tok >= qfirst_s[q0] && tok <= qpos_s[q0];
      const bool ok1 = in && q0 + 1 < nq && tok >= qfirst_s[q0 + 1] && tok <= qpos_s[q0 + 1];
      sc0 = ok0 ? v[0] * post : -INFINITY;
      sc1 = ok1 ? v[1] * post : -INFINITY;
    }
    // Online softmax of the warp: page maxima per query (lanes of one parity hold q0, q0 + 1).
    float mx0 = sc0, mx1 = sc1;
#pragma unroll
    for (int o = 2; o <= 16; o <<= 1) {
      mx0 = fmaxf(mx0, __shfl_xor_sync(0xffffffffu, mx0, o));
      mx1 = fmaxf(mx1, __shfl_xor_sync(0xffffffffu, mx1, o));
    }
    const float ox0 = __shfl_xor_sync(0xffffffffu, mx0, 1), ox1 = __shfl_xor_sync(0xffffffffu, mx1, 1);
    const bool odd = (s & 1) != 0;
    const float pm[kNQ] = {odd ? ox0 : mx0, odd ? ox1 : mx1, odd ? mx0 : ox0, odd ? mx1 : ox1};
    // The maxima are the same in every lane: the rescale (and its exp) runs only when one grew.
    float alpha[kNQ];
    bool grew = false;
#pragma unroll
    for (int qi = 0; qi < kNQ; ++qi) {
      const float mn = fmaxf(m[qi], pm[qi]);
      alpha[qi] = 1.0f;
      if (mn != m[qi]) {
        alpha[qi] = expf(m[qi] - mn);  // 0 when m was -inf
        grew = true;
      }
      m[qi] = mn;
    }
    const float my0 = odd ? m[2] : m[0], my1 = odd ? m[3] : m[1];
    const float p0 = sc0 == -INFINITY ? 0.0f : softmax_exp(sc0 - my0);
    const float p1 = sc1 == -INFINITY ? 0.0f : softmax_exp(sc1 - my1);
    l0 = l0 * (odd ? alpha[2] : alpha[0]) + p0;
    l1 = l1 * (odd ? alpha[3] : alpha[1]) + p1;
    if (grew) {
#pragma unroll
      for (int qi = 0; qi < kNQ; ++qi) {
        accoff[qi] *= alpha[qi];
#pragma unroll
        for (int e = 0; e < 8; ++e) acc[qi][e] *= alpha[qi];
      }
    }
    *reinterpret_cast<float2*>(&p_s[warp][slot][q0]) = make_float2(p0, p1);
    __syncwarp();

    // P.V over this half's 8 tokens; rows past the sequence end may hold any bytes: zeroed.
#pragma unroll
    for (int t = 0; t < 8; ++t) {
      const int sl = 2 * t + half;
      const std::uint8_t* row = vst + (warp * 16 + sl) * T::kVBytes;
      float x[8], off;
      float mul = T::v8(row, s, x, off);
      if (tok_base + sl >= hi) {
        mul = 0.0f;
        off = 0.0f;
#pragma unroll
        for (int e = 0; e < 8; ++e) x[e] = 0.0f;
      }
      const float4 pp = *reinterpret_cast<const float4*>(&p_s[warp][sl][0]);
      const float pq[kNQ] = {pp.x, pp.y, pp.z, pp.w};
#pragma unroll
      for (int qi = 0; qi < kNQ; ++qi) {
        const float pw = pq[qi] * mul;
#pragma unroll
        for (int e = 0; e < 8; ++e) acc[qi][e] = fmaf(pw, x[e], acc[qi][e]);
        if constexpr (T::kTq) accoff[qi] = fmaf(pq[qi], off, accoff[qi]);
      }
    }
  }
  cp_async_wait<0>();
  __syncthreads();

  // Merge the two halves (same dimensions, other tokens) and the lanes' shares of l.
#pragma unroll
  for (int qi = 0; qi < kNQ; ++qi)
#pragma unroll
    for (int e = 0; e < 8; ++e) {
      float x = acc[qi][e];
      if constexpr (T::kTq) x += accoff[qi];
      acc[qi][e] = x + __shfl_xor_sync(0xffffffffu, x, 16);
    }
#pragma unroll
  for (int o = 2; o <= 16; o <<= 1) {
    l0 += __shfl_xor_sync(0xffffffffu, l0, o);
    l1 += __shfl_xor_sync(0xffffffffu, l1, o);
  }
  // Merge the warps through the (now idle) ring: wacc [warps][4][128], wm, wl [warps][4], merged [4][128].
  float* wacc = reinterpret_cast<float*>(ring);
  float* wm = wacc + kWarps * kNQ * kD;
  float* wl = wm + kWarps * kNQ;
  if (half == 0) {
#pragma unroll
    for (int qi = 0; qi < kNQ; ++qi)
#pragma unroll
      for (int e = 0; e < 8; ++e) wacc[(warp * kNQ + qi) * kD + T::dim(s, e)] = acc[qi][e];
  }
  if (lane < 2) {
    wl[warp * kNQ + 2 * lane] = l0;
    wl[warp * kNQ + 2 * lane + 1] = l1;
  }
  if (lane == 0)
#pragma unroll
    for (int qi = 0; qi < kNQ; ++qi) wm[warp * kNQ + qi] = m[qi];
  __syncthreads();
  finish_block<F>(c, a, w, wacc);
}

// ---- the tensor-core kernel -----------------------------------------------------------------------
// decode_tc_kernel: the blocks and splits of decode_kernel (its ring runs on mbarriers, below) for the
// formats whose elements are exact in a 16-bit mma type and whose multipliers are per tensor or per
// token: bf16 (as bf16), fp16, fp8 (as fp16: fp8 codes, the per-tensor scales applied to Q and to the
// output as before), the per-token-head formats (fp8, int8 and int4 - zero codes as fp16; K's
// scale on the token's score, V's on its P, below), q8_0/q4_0 (int8 codes, or 4-bit codes - 8;
// a scale per token and 32-dimension block: below), nvfp4 (E2M1 x its block scale in one fp16:
// below) and turboquant_k8v4 (e4m3 keys; values code x scale + min: the kernel's lmin). Per page a
// warp's 16 tokens are two n-tiles of S = Q K^T and one k-step of O += P V, mma.sync m16n8k16 with
// fp32 accumulation, in place of 64 scalar FMAs per element.
//
// Exactness (as the tensor-core prefill, paged_attention_prefill.cu): Q and P enter as three terms
// x0 = r(x), x1 = r(x - x0), x2 = r(x - x0 - x1) (every difference exact in fp32; 24 bits in bf16,
// 33 in fp16), placed in the fragment's rows 0-3 (x0 of the 4 query vectors), 8-11 (x1) and 4-7
// (x2; rows 12-15 zero), so one mma computes all three products and lanes l and l ^ 16 add them.
// The K/V elements are exact, so every product is exact in fp32 and only the order of the fp32
// sums differs from decode_kernel. fp16 terms need range: Q is scaled by a power of two per query
// vector (its largest |q| below 2^14) and P (<= 1) by 2^12, both undone exactly in fp32; a
// per-token V scale vs enters P as p * vs / sref, sref a power of two >= the scales so far (below).
//
// Fragments (g = lane / 4, c = lane % 4): for S, lane (g, c) holds token g of an n-tile as B,
// dimensions 32c .. 32c + 31 (k-step ks: k_dim(c, ks) + 0..3 (int4_per_token_head: + 0, 1, 4, 5), the
// permutation Q's A fragment uses);
// S's accumulator layout is P's A fragment (tokens 2c, 2c + 1, 2c + 8, 2c + 9 of the warp's 16);
// for P V, lane (g, c) holds those tokens at dimensions 16g .. 16g + 15 (n-tile j: dimension 16g + j).
//
// q8_0/q4_0 (4 blocks of 32 dimensions a row, each an fp16 scale d then 32 int8 codes or 16 bytes of
// nibbles: 34 or 18 bytes) keep every fragment within one block, so each block's products sum apart
// and take their scale in fp32:
// - S: k-steps 2b and 2b + 1 are block b (lane c: dimensions 32b + 4c + 16 (ks & 1) + 0..3: one
//   word of q8_0 codes, 2-way bank conflicts; q4_0's word c holds both k-steps, its low and high
//   nibbles), an accumulator chain per block, and the token's score is the sum of d_b x chain b;
// - P V: n-tile J is block J / 4 (column n: dimension 32 (J / 4) + 4n + J % 4 for q8_0, so lane
//   (g, c) reads one word of codes a token and block; q4_0: 32 (J / 4) + 16 (n / 4) + 4 (n % 4) +
//   J % 4, word g % 4's low or high nibbles), and block b's k-step takes its own P terms,
//   p x d_b / sref, sref a power of two >= every d of the warp's tokens so far, as the per-token-head
//   formats' V scale.
// Blocks 0 and 2 start 2 bytes past a word: their words are two loads and a byte permute.
//
// nvfp4 (64 bytes of E2M1 codes, then 8 e4m3 scales, one a 16-dimension block) needs no chains: an
// element E2M1 x s has at most 6 significant bits and lies in [2^-10, 2688], so it is one exact fp16
// term, made as (E2M1 x 2^-6, an e4m3 byte widened in hardware) x (2^6 s) in one fp16 multiply. A
// lane's k-step (4 dimensions) and its V n-tiles (dimensions 16g ..) each stay within one block.

static_assert(kWarps == kNQ, "warp v scales query vector v");

// Per-token-head formats: rows of 128 codes and the token's scale (132 or 68 bytes, 4-byte aligned).
constexpr bool pth_format(Fmt f) { return f == Fmt::kFp8Pth || f == Fmt::kInt8Pth || f == Fmt::kInt4Pth; }
// q8_0/q4_0: 4 blocks of 32 dimensions a row, each an fp16 scale d then the codes (codec_ggml.h).
constexpr bool ggml_format(Fmt f) { return f == Fmt::kQ8_0 || f == Fmt::kQ4_0; }
template <Fmt F>
constexpr int ggml_block_bytes() {
  return F == Fmt::kQ8_0 ? kQ8_0Bytes : kQ4_0Bytes;
}
constexpr bool tc_format(Fmt f) {
  return f == Fmt::kBf16 || f == Fmt::kF16 || f == Fmt::kE4M3 || f == Fmt::kE5M2 || pth_format(f) || ggml_format(f) ||
         f == Fmt::kNvfp4 || f == Fmt::kTqK8V4;
}
// V scales that ride on P (per token, or per token and block): P's terms a block.
template <Fmt F>
constexpr int p_blocks() {
  return ggml_format(F) ? 4 : 1;
}
template <Fmt F>
constexpr int tc_min_blocks() {
  return min_blocks<F, true>() < 3 ? min_blocks<F, true>() : 3;  // ~170 registers a thread
}

template <bool BF>
__device__ __forceinline__ std::uint32_t pack_pair(float a, float b) {
  std::uint32_t u;
  if constexpr (BF) {
    const __nv_bfloat162 h = __floats2bfloat162_rn(a, b);
    memcpy(&u, &h, 4);
  } else {
    const __half2 h = __floats2half2_rn(a, b);
    memcpy(&u, &h, 4);
  }
  return u;
}
template <bool BF>
__device__ __forceinline__ float2 unpack_pair(std::uint32_t u) {
  if constexpr (BF) return make_float2(__uint_as_float(u << 16), __uint_as_float(u & 0xffff0000u));
  else return half2_bits_to_float2(u);
}
// The three terms of (a, b), packed pairs.
template <bool BF>
__device__ __forceinline__ void terms3(float a, float b, std::uint32_t (&t)[3]) {
#pragma unroll
  for (int k = 0; k < 3; ++k) {
    t[k] = pack_pair<BF>(a, b);
    const float2 r = unpack_pair<BF>(t[k]);
    a -= r.x;  // exact
    b -= r.y;
  }
}

template <bool BF>
__device__ __forceinline__ void mma16816(float (&d)[4], const std::uint32_t (&a)[4], std::uint32_t b0, std::uint32_t b1) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  if constexpr (BF)
    asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
  else
    asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
#else
  (void)d, (void)a, (void)b0, (void)b1;
  __trap();
#endif
}

// fp16 pair arithmetic on bits (a uint32 in, a uint32 out): x * y, x - y.
template <class Op>
__device__ __forceinline__ std::uint32_t half2_bits_op(std::uint32_t x, std::uint32_t y, Op op) {
  __half2 a, b;
  memcpy(&a, &x, 4);
  memcpy(&b, &y, 4);
  a = op(a, b);
  std::uint32_t u;
  memcpy(&u, &a, 4);
  return u;
}
__device__ __forceinline__ std::uint32_t hmul2_bits(std::uint32_t x, std::uint32_t y) {
  return half2_bits_op(x, y, [](__half2 a, __half2 b) { return __hmul2(a, b); });
}
__device__ __forceinline__ std::uint32_t hsub2_bits(std::uint32_t x, std::uint32_t y) {
  return half2_bits_op(x, y, [](__half2 a, __half2 b) { return __hsub2(a, b); });
}

// The four codes of `four` (low byte first) as two fp16 pairs, exact: codes 0, 1 into lo, 2, 3 into
// hi. fp8 widens in hardware, straight from each half of the word (F2FP reads a register half: no
// shift for the upper pair, 32 instructions a warp a page fewer); an int8 code c becomes the fp16
// 1024 + (c + 128) (exponent 10: the byte is the mantissa, placed by a byte permute), minus 1152.
template <Fmt F>
__device__ __forceinline__ void code4_f16x2(std::uint32_t four, std::uint32_t& lo, std::uint32_t& hi) {
  if constexpr (F == Fmt::kInt8Pth || F == Fmt::kQ8_0) {
    const std::uint32_t x = four ^ 0x80808080u;
    const __half2 bias(__ushort_as_half(0x6480), __ushort_as_half(0x6480));
    std::uint32_t h[2] = {__byte_perm(x, 0x6464u, 0x4140), __byte_perm(x, 0x6464u, 0x4342)};
#pragma unroll
    for (int i = 0; i < 2; ++i) {
      __half2 v;
      memcpy(&v, &h[i], 4);
      v = __hsub2(v, bias);
      memcpy(&h[i], &v, 4);
    }
    lo = h[0], hi = h[1];
  } else {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 890
    if constexpr (F == Fmt::kE5M2)
      asm("{\n .reg .b16 l, h;\n mov.b32 {l, h}, %2;\n cvt.rn.f16x2.e5m2x2 %0, l;\n cvt.rn.f16x2.e5m2x2 %1, h;\n}\n"
          : "=r"(lo), "=r"(hi) : "r"(four));
    else
      asm("{\n .reg .b16 l, h;\n mov.b32 {l, h}, %2;\n cvt.rn.f16x2.e4m3x2 %0, l;\n cvt.rn.f16x2.e4m3x2 %1, h;\n}\n"
          : "=r"(lo), "=r"(hi) : "r"(four));
#else
    constexpr __nv_fp8_interpretation_t K = F == Fmt::kE5M2 ? __NV_E5M2 : __NV_E4M3;
    const __half2_raw a = __nv_cvt_fp8x2_to_halfraw2(static_cast<__nv_fp8x2_storage_t>(four & 0xffffu), K);
    const __half2_raw b = __nv_cvt_fp8x2_to_halfraw2(static_cast<__nv_fp8x2_storage_t>(four >> 16), K);
    lo = static_cast<std::uint32_t>(a.x) | (static_cast<std::uint32_t>(a.y) << 16);
    hi = static_cast<std::uint32_t>(b.x) | (static_cast<std::uint32_t>(b.y) << 16);
#endif
  }
}

// nvfp4: two e4m3 block scales (the low 16 bits, low byte first) as the fp16 pair (2^6 s0, 2^6 s1).
// An element is then E2M1 x 2^-6 (e2m1x8_to_e4m3, codec_nvfp4.h, widened in hardware) times 2^6 s: at
// most 6 significant bits, between 2^-10 and 2688, so the fp16 product is exact.
__device__ __forceinline__ std::uint32_t nvfp4_scales64(std::uint32_t two) {
  std::uint32_t s, unused;
  code4_f16x2<Fmt::kE4M3>(two, s, unused);
  return hmul2_bits(s, 0x54005400u);  // x 64
}
// A per-token-head row's scale (int4: the fp32 scale word with its low 4 bits holding the zero point).
template <Fmt F>
__device__ __forceinline__ float row_scale(const std::uint8_t* row) {
  if constexpr (F == Fmt::kInt4Pth) return __uint_as_float(*reinterpret_cast<const std::uint32_t*>(row + kD / 2) & ~0xFu);
  else if constexpr (F == Fmt::kTqK8V4) return half_at(row + kD / 2);  // a value row: fp16 scale, then min
  else return *reinterpret_cast<const float*>(row + kD);
}
// q8_0/q4_0: bytes 4i .. 4i + 3 of block b's codes in a row (they start at byte 34b + 2 or 18b + 2:
// 4-byte aligned for odd b, 2 bytes past a word for even b). q8_0: codes 4i .. 4i + 3; q4_0: codes
// 4i .. 4i + 3 in the bytes' low nibbles, 16 + 4i .. 16 + 4i + 3 in their high ones.
template <Fmt F>
__device__ __forceinline__ std::uint32_t ggml_word(const std::uint8_t* row, int b, int i) {
  const std::uint32_t* w = reinterpret_cast<const std::uint32_t*>(row + ((ggml_block_bytes<F>() * b + 2) & ~3)) + i;
  return b & 1 ? w[0] : __byte_perm(w[0], w[1], 0x5432);
}
// q8_0/q4_0: block b's scale d of a row.
template <Fmt F>
__device__ __forceinline__ float ggml_scale(const std::uint8_t* row, int b) {
  return half_at(row + ggml_block_bytes<F>() * b);
}
// (x & m) | C in one LOP3, m in a register. Written in C++, ptxas emits two (an AND, then an OR: a
// LOP3 takes one immediate), and the 4-bit formats' nibble decoding is mostly these: LOP3 is a
// quarter of int4_per_token_head's executed instructions
// (docs/bench-notes/decode-4bit-nibbles-h200-2026-12-03.txt).
template <std::uint32_t C>
__device__ __forceinline__ std::uint32_t and_or(std::uint32_t x, std::uint32_t m) {
  std::uint32_t r;
  asm("lop3.b32 %0, %1, %2, %3, 0xEA;" : "=r"(r) : "r"(x), "r"(m), "n"(C));  // 0xEA: (a & b) | c
  return r;
}
// The nibbles `mask` picks (0x000F000F: low ones, 0x00F000F0: high ones) of bytes 0 and 2 of x as the
// fp16 pair 1024 + code (or 1024 + 16 code: the code is mantissa bits, exact), then one fma, x mul +
// add, exact in fp16: q4_0's codes - 8 (x 1 - 1032, x 1/16 - 72), int4_per_token_head's high nibbles
// minus the zero point (nib_hi_f16x2).
__device__ __forceinline__ std::uint32_t nibble_pair(std::uint32_t x, std::uint32_t mask, __half2 mul, __half2 add) {
  return half2_bits_op(and_or<0x64006400u>(x, mask), 0u, [&](__half2 v, __half2) { return __hfma2(v, mul, add); });
}
__device__ __forceinline__ __half2 half2_of(unsigned short bits) { return __half2(__ushort_as_half(bits), __ushort_as_half(bits)); }
// q4_0 nibble halves: 0 low (x 1, - 1032), 1 high (x 1/16, - 72).
__device__ __forceinline__ std::uint32_t q4_mask(int hi) { return hi ? 0x00F000F0u : 0x000F000Fu; }
__device__ __forceinline__ __half2 q4_mul(int hi) { return half2_of(hi ? 0x2C00 : 0x3C00); }
__device__ __forceinline__ __half2 q4_add(int hi) { return half2_of(hi ? 0xD480 : 0xE408); }
// int4_per_token_head: the fp16 pair (1024 + zero) of the row's zero point, twice or of two rows.
__device__ __forceinline__ std::uint32_t zero_f16(const std::uint8_t* row) {
  return and_or<0x6400u>(*reinterpret_cast<const std::uint32_t*>(row + kD / 2), 0xFu);
}
// The nibbles of bytes 0 and 2 of x minus the zero points, as an fp16 pair. Low nibbles: 1024 + code
// minus zz, the pair 1024 + zero. High nibbles: (1024 + 16 code) / 16 - (64 + zero) in one fma, its
// addend zn the pair -(64 + zero) (zn16). Both exact: the code is mantissa bits, the result a small
// integer. Two instructions a pair: the high nibbles need no shift (as q4_0's), fewer than a byte
// permute, a mask and a subtraction (docs/bench-notes/decode-4bit-nibbles-h200-2026-12-03.txt).
__device__ __forceinline__ std::uint32_t nib_lo_f16x2(std::uint32_t x, std::uint32_t zz) {
  return hsub2_bits(and_or<0x64006400u>(x, 0x000F000Fu), zz);
}
__device__ __forceinline__ std::uint32_t nib_hi_f16x2(std::uint32_t x, __half2 zn) {
  return nibble_pair(x, 0x00F000F0u, half2_of(0x2C00), zn);  // x 1/16
}
// zn for nib_hi_f16x2 from zz: -(64 + zero) is 0xD400 | zero << 4 in fp16.
__device__ __forceinline__ __half2 zn16(std::uint32_t zz) {
  const std::uint32_t u = and_or<0xD400D400u>(zz << 4, 0x00F000F0u);
  __half2 h;
  memcpy(&h, &u, 4);
  return h;
}

// The 16-byte chunk of a K row that lane c's k-steps 2i and 2i + 1 read: 16-bit formats rotate the
// chunks of a lane (bank groups), 8-bit ones do not. A chunk holds 8 (16-bit) or 16 (fp8) dimensions.
template <Fmt F>
__device__ __forceinline__ int k_chunk(int c, int i) {
  if constexpr (F == Fmt::kBf16 || F == Fmt::kF16) return 4 * c + ((i + c) & 3);
  else return 2 * c + i;
}
// The first of the 4 dimensions of lane c's k-step ks (Q's A fragment uses the same permutation).
template <Fmt F>
__device__ __forceinline__ int k_dim(int c, int ks) {
  if constexpr (F == Fmt::kBf16 || F == Fmt::kF16) return 8 * k_chunk<F>(c, ks >> 1) + 4 * (ks & 1);
  else if constexpr (ggml_format(F)) return 32 * (ks >> 1) + 4 * c + 16 * (ks & 1);
  else if constexpr (F == Fmt::kInt4Pth) return 32 * c + 8 * (ks >> 1) + 2 * (ks & 1);
  else return 16 * k_chunk<F>(c, ks >> 2) + 4 * (ks & 3);
}
// The dimensions (k_dim + offset) of a k-step's two K pairs: pair 0 offsets 0 and 1, pair 1 2 and 3,
// except q4_0 ((0, 2), (1, 3)) and int4_per_token_head ((0, 4), (1, 5)), whose pairs come from
// masking a word's nibbles in place.
template <Fmt F>
__device__ __forceinline__ int k_pair_offset(int i) {
  if constexpr (F == Fmt::kQ4_0) return (i & 1) * 2 + (i >> 1);
  else if constexpr (F == Fmt::kInt4Pth) return (i & 1) * 4 + (i >> 1);
  else return i;
}
// The dimension of the P V accumulator's n-tile j, column n (the V fragments' layout, above).
template <Fmt F>
__device__ __forceinline__ int out_dim(int j, int n) {
  if constexpr (F == Fmt::kQ8_0) return 32 * (j >> 2) + 4 * n + (j & 3);
  else if constexpr (F == Fmt::kQ4_0) return 32 * (j >> 2) + 16 * (n >> 2) + 4 * (n & 3) + (j & 3);
  else return 16 * n + j;
}

// K's B fragments of token row r for lane c: kb[ks] = dimensions k_dim(c, ks) + k_pair_offset (0, 1),
// (2, 3) (q4_0: (0, 2), (1, 3); int4_per_token_head: (0, 4), (1, 5)).
template <Fmt F>
__device__ __forceinline__ void k_fragments(const std::uint8_t* rows, int r, int c, std::uint32_t (&kb)[8][2]) {
  const std::uint8_t* row = rows + r * Traits<F>::kKBytes;
  if constexpr (F == Fmt::kBf16 || F == Fmt::kF16) {
#pragma unroll
    for (int i = 0; i < 4; ++i) {
      const uint4 v = *reinterpret_cast<const uint4*>(row + 16 * k_chunk<F>(c, i));
      kb[2 * i][0] = v.x, kb[2 * i][1] = v.y, kb[2 * i + 1][0] = v.z, kb[2 * i + 1][1] = v.w;
    }
  } else if constexpr (F == Fmt::kInt4Pth) {  // word 4c + i: dimensions 32c + 8i .. + 7, nibble e = dimension
                                              // + e; k-step 2i + m takes nibbles (2m, 2m + 4) and (2m + 1,
                                              // 2m + 5) (k_pair_offset; 2-way conflicts)
    const std::uint32_t zz = zero_f16(row) * 0x10001u;
    const __half2 zn = zn16(zz);
#pragma unroll
    for (int i = 0; i < 4; ++i) {
      const std::uint32_t u = *reinterpret_cast<const std::uint32_t*>(row + 16 * c + 4 * i), u8 = u >> 8;
      kb[2 * i][0] = nib_lo_f16x2(u, zz);
      kb[2 * i][1] = nib_hi_f16x2(u, zn);
      kb[2 * i + 1][0] = nib_lo_f16x2(u8, zz);
      kb[2 * i + 1][1] = nib_hi_f16x2(u8, zn);
    }
  } else if constexpr (F == Fmt::kQ8_0) {  // k-step ks: word c + 4 (ks & 1) of block ks / 2
#pragma unroll
    for (int ks = 0; ks < 8; ++ks) code4_f16x2<F>(ggml_word<F>(row, ks >> 1, c + 4 * (ks & 1)), kb[ks][0], kb[ks][1]);
  } else if constexpr (F == Fmt::kQ4_0) {  // word c of block b: k-step 2b its low nibbles, 2b + 1 its high
                                           // ones; pair 0 of a k-step holds codes (0, 2), pair 1 (1, 3)
#pragma unroll
    for (int b = 0; b < 4; ++b) {
      const std::uint32_t u = ggml_word<F>(row, b, c), u8 = u >> 8;
#pragma unroll
      for (int hi = 0; hi < 2; ++hi) {
        kb[2 * b + hi][0] = nibble_pair(u, q4_mask(hi), q4_mul(hi), q4_add(hi));
        kb[2 * b + hi][1] = nibble_pair(u8, q4_mask(hi), q4_mul(hi), q4_add(hi));
      }
    }
  } else if constexpr (F == Fmt::kNvfp4) {  // bytes 16c .. 16c + 15 (dimensions 32c .. 32c + 31: blocks 2c
                                            // and 2c + 1); k-step 4i + m: word 2i + m / 2, codes 4 (m % 2) ..
    const std::uint32_t s2 = nvfp4_scales64(*reinterpret_cast<const std::uint16_t*>(row + kD / 2 + 2 * c));
#pragma unroll
    for (int i = 0; i < 2; ++i) {
      const uint2 v = *reinterpret_cast<const uint2*>(row + 16 * c + 8 * i);  // rows of 72 bytes: 8-byte aligned
      const std::uint32_t sb = __byte_perm(s2, 0, i ? 0x3232 : 0x1010), u[2] = {v.x, v.y};
#pragma unroll
      for (int j = 0; j < 2; ++j) {
        std::uint32_t ev, od;
        e2m1x8_to_e4m3(u[j], ev, od);
        const int ks = 4 * i + 2 * j;
        code4_f16x2<Fmt::kE4M3>(__byte_perm(ev, od, 0x5140), kb[ks][0], kb[ks][1]);
        code4_f16x2<Fmt::kE4M3>(__byte_perm(ev, od, 0x7362), kb[ks + 1][0], kb[ks + 1][1]);
#pragma unroll
        for (int e = 0; e < 4; ++e) kb[ks + e / 2][e % 2] = hmul2_bits(kb[ks + e / 2][e % 2], sb);
      }
    }
  } else if constexpr (pth_format(F)) {  // word ks of lane c: dimensions 32c + 4ks .. + 3 (row r's words
                                         // are 33r + 8c + ks: the 32 lanes hit 32 banks)
#pragma unroll
    for (int ks = 0; ks < 8; ++ks) {
      const std::uint32_t u = *reinterpret_cast<const std::uint32_t*>(row + 32 * c + 4 * ks);
      code4_f16x2<F>(u, kb[ks][0], kb[ks][1]);
    }
  } else {
#pragma unroll
    for (int i = 0; i < 2; ++i) {
      const uint4 v = *reinterpret_cast<const uint4*>(row + 16 * k_chunk<F>(c, i));
      const std::uint32_t u[4] = {v.x, v.y, v.z, v.w};
#pragma unroll
      for (int m = 0; m < 4; ++m) {
        code4_f16x2<F>(u[m], kb[4 * i + m][0], kb[4 * i + m][1]);
      }
    }
  }
}

// V's B fragments for n-tiles 8h .. 8h + 7 of lane (g, c): vb[j][0] pairs tokens (2c, 2c + 1),
// vb[j][1] tokens (2c + 8, 2c + 9), at dimension 16g + 8h + j. rows: the page's V rows, r0 the
// warp's first.
template <Fmt F>
__device__ __forceinline__ void v_fragments(const std::uint8_t* rows, int r0, int g, int c, int h, std::uint32_t (&vb)[8][2]) {
  using T = Traits<F>;
  const int t[4] = {r0 + 2 * c, r0 + 2 * c + 1, r0 + 2 * c + 8, r0 + 2 * c + 9};
  if constexpr (F == Fmt::kBf16 || F == Fmt::kF16) {
    uint4 v[4];
#pragma unroll
    for (int k = 0; k < 4; ++k)
      v[k] = *reinterpret_cast<const uint4*>(rows + t[k] * T::kVBytes + 16 * (2 * g + h));
#pragma unroll
    for (int p = 0; p < 2; ++p) {
      const std::uint32_t a[4] = {v[2 * p].x, v[2 * p].y, v[2 * p].z, v[2 * p].w};
      const std::uint32_t b[4] = {v[2 * p + 1].x, v[2 * p + 1].y, v[2 * p + 1].z, v[2 * p + 1].w};
#pragma unroll
      for (int i = 0; i < 4; ++i) {
        vb[2 * i][p] = __byte_perm(a[i], b[i], 0x5410);
        vb[2 * i + 1][p] = __byte_perm(a[i], b[i], 0x7632);
      }
    }
  } else if constexpr (F == Fmt::kInt4Pth || F == Fmt::kTqK8V4) {  // the token's word 2g + h (dimensions
                                                                     // 16g + 8h + 0..7); TurboQuant: zero 8
    std::uint32_t v[4];
#pragma unroll
    for (int k = 0; k < 4; ++k) v[k] = *reinterpret_cast<const std::uint32_t*>(rows + t[k] * T::kVBytes + 8 * g + 4 * h);
#pragma unroll
    for (int p = 0; p < 2; ++p) {
      const std::uint8_t* ra = rows + t[2 * p] * T::kVBytes;
      const std::uint32_t zz = F == Fmt::kTqK8V4 ? 0x64086408u  // code - 8 (see lmin)
                                                 : zero_f16(ra) | (zero_f16(ra + T::kVBytes) << 16);
      const __half2 zn = zn16(zz);
      const std::uint32_t a = v[2 * p], b = v[2 * p + 1];  // byte i: dimensions 2i, 2i + 1
#pragma unroll
      for (int i = 0; i < 4; ++i) {
        const std::uint32_t x = __byte_perm(a, b, i | ((4 + i) << 8));  // byte i of a, of b: bytes 0 and 2
        vb[2 * i][p] = nib_lo_f16x2(x, zz);
        vb[2 * i + 1][p] = nib_hi_f16x2(x, zn);
      }
    }
  } else if constexpr (F == Fmt::kNvfp4) {  // the token's word 2g + h (dimensions 16g + 8h + 0..7, block g)
    std::uint32_t v[4];
#pragma unroll
    for (int k = 0; k < 4; ++k) v[k] = *reinterpret_cast<const std::uint32_t*>(rows + t[k] * T::kVBytes + 8 * g + 4 * h);
#pragma unroll
    for (int p = 0; p < 2; ++p) {
      const std::uint32_t sab = nvfp4_scales64(rows[t[2 * p] * T::kVBytes + kD / 2 + g] |
                                               (rows[t[2 * p + 1] * T::kVBytes + kD / 2 + g] << 8));
      std::uint32_t ea, oa, eb, ob;  // tokens 2c (+ 8) and 2c + 1 (+ 8): even and odd dimensions
      e2m1x8_to_e4m3(v[2 * p], ea, oa);
      e2m1x8_to_e4m3(v[2 * p + 1], eb, ob);
      code4_f16x2<Fmt::kE4M3>(__byte_perm(ea, eb, 0x5140), vb[0][p], vb[2][p]);
      code4_f16x2<Fmt::kE4M3>(__byte_perm(ea, eb, 0x7362), vb[4][p], vb[6][p]);
      code4_f16x2<Fmt::kE4M3>(__byte_perm(oa, ob, 0x5140), vb[1][p], vb[3][p]);
      code4_f16x2<Fmt::kE4M3>(__byte_perm(oa, ob, 0x7362), vb[5][p], vb[7][p]);
#pragma unroll
      for (int j = 0; j < 8; ++j) vb[j][p] = hmul2_bits(vb[j][p], sab);
    }
  } else if constexpr (F == Fmt::kQ8_0) {  // n-tiles 8h .. 8h + 7: blocks 2h and 2h + 1, word g of each
#pragma unroll
    for (int bb = 0; bb < 2; ++bb) {
      std::uint32_t v[4];
#pragma unroll
      for (int k = 0; k < 4; ++k) v[k] = ggml_word<F>(rows + t[k] * T::kVBytes, 2 * h + bb, g);
#pragma unroll
      for (int p = 0; p < 2; ++p) {
        const std::uint32_t lo = __byte_perm(v[2 * p], v[2 * p + 1], 0x5140), hi = __byte_perm(v[2 * p], v[2 * p + 1], 0x7362);
        code4_f16x2<F>(lo, vb[4 * bb][p], vb[4 * bb + 1][p]);
        code4_f16x2<F>(hi, vb[4 * bb + 2][p], vb[4 * bb + 3][p]);
      }
    }
  } else if constexpr (F == Fmt::kQ4_0) {  // as q8_0, lane g taking word g & 3, its low nibbles for g < 4
    const int hi = g >> 2;
    const std::uint32_t mask = q4_mask(hi);
    const __half2 mul = q4_mul(hi), add = q4_add(hi);
#pragma unroll
    for (int bb = 0; bb < 2; ++bb) {
      std::uint32_t v[4];
#pragma unroll
      for (int k = 0; k < 4; ++k) v[k] = ggml_word<F>(rows + t[k] * T::kVBytes, 2 * h + bb, g & 3);
#pragma unroll
      for (int p = 0; p < 2; ++p)
#pragma unroll
        for (int i = 0; i < 4; ++i) vb[4 * bb + i][p] = nibble_pair(__byte_perm(v[2 * p], v[2 * p + 1], i | ((4 + i) << 8)), mask, mul, add);
    }
  } else {  // fp8: the token's 16 bytes at once, half h used; per-token-head rows are 4-byte aligned:
            // two words (2-way conflicts). The 128-byte rows are not swizzled since the bulk copies
            // landed them as they are: K's 16-byte chunks and these loads conflict 2- and 4-way.
    uint2 v[4];
#pragma unroll
    for (int k = 0; k < 4; ++k) {
      if constexpr (pth_format(F)) {
        const std::uint32_t* w = reinterpret_cast<const std::uint32_t*>(rows + t[k] * T::kVBytes + 16 * g + 8 * h);
        v[k] = make_uint2(w[0], w[1]);
      } else {
        const uint4 w = *reinterpret_cast<const uint4*>(rows + t[k] * T::kVBytes + 16 * g);
        v[k] = h ? make_uint2(w.z, w.w) : make_uint2(w.x, w.y);
      }
    }
#pragma unroll
    for (int p = 0; p < 2; ++p) {
      const std::uint32_t a[2] = {v[2 * p].x, v[2 * p].y};
      const std::uint32_t b[2] = {v[2 * p + 1].x, v[2 * p + 1].y};
#pragma unroll
      for (int i = 0; i < 2; ++i) {
        const std::uint32_t lo = __byte_perm(a[i], b[i], 0x5140), hi = __byte_perm(a[i], b[i], 0x7362);
        code4_f16x2<F>(lo, vb[4 * i][p], vb[4 * i + 1][p]);
        code4_f16x2<F>(hi, vb[4 * i + 2][p], vb[4 * i + 3][p]);
      }
    }
  }
}

template <Fmt F>
__global__ void __launch_bounds__(kThreads, tc_min_blocks<F>()) decode_tc_kernel(KvLayerCodec c, PagedAttentionArgs a) {
  using T = Traits<F>;
  constexpr bool kBf = F == Fmt::kBf16, kPth = pth_format(F), kGgml = ggml_format(F), kTq = F == Fmt::kTqK8V4;
  constexpr bool kScaledV = kPth || kGgml || kTq;
  constexpr float kPScale = kBf ? 1.0f : 4096.0f;  // P's fp16 terms: P * 2^12
  constexpr int kStages = stages<F, true>(), kPB = p_blocks<F>(), kChains = kGgml ? 4 : 2;
  constexpr int kRegionK = kPage * T::kKBytes, kStage = stage_bytes<F>();
  extern __shared__ float4 ring4[];
  std::uint8_t* ring = reinterpret_cast<std::uint8_t*>(ring4);
  __shared__ float q_raw[kNQ][kD];
  __shared__ float qscale_s[kNQ];
  __shared__ std::uint64_t ring_full[kStages], ring_empty[kStages];
  __shared__ int qpos_s[kNQ], qfirst_s[kNQ];

  pdl_launch_dependents();
  pdl_wait();  // Q, the tiles and this step's K/V come from earlier kernels
  const BlockWork w = block_work(a);
  if (w.nq <= 0) return;
  const int pb = w.pb, pe = w.pe;
  const int tid = threadIdx.x, warp = tid >> 5, lane = tid & 31, g = lane >> 2, c4 = lane & 3, q = g & 3;
  const bool upper = g >= 4;  // rows 4-7: the x2 terms; rows 0-3 and 8-11: x0 and x1
  // The ring on mbarriers: page i (of the block's pages) lands in slot i % kStages, whose "empty"
  // barrier completes when every thread has read it. No block barrier per page: a warp may run a page
  // ahead of the slowest, and the slot of page i - 1 is refilled after page i. On compute capability
  // 9.0 thread 0 refills it with two bulk copies (the copy engine; a page's K and V regions are each
  // contiguous in the pool) completing their bytes on the slot's "full" barrier: up to 1.11x (fp8_e4m3)
  // the cp.async of every thread (8 a thread for 16 KB, with their addresses), although
  // the rows can no longer be swizzled against bank conflicts.
  // Before 9.0 every thread copies its chunks and arrives once they landed (arrive.noinc).
  // kElect (9.0, pages of 16 KB or more: the 8-bit formats, and bf16/fp16): page i's slot is refilled
  // right after page i, by the last warp done with it (an atomicAdd on the slot's count elects it), so
  // the ring holds a page more and no thread waits for the slowest warp. Smaller pages (turboquant's
  // 12.3 KB, the 4-bit formats') lose by it and keep thread 0's refill
  // (docs/bench-notes/decode-tc-nvfp4-h200-2026-12-03.txt).
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  constexpr bool kBulk = true;
#else
  constexpr bool kBulk = false;
#endif
  constexpr bool kElect = kBulk && stage_bytes<F>() >= 16 * 1024;
  __shared__ int ring_done[kStages];  // kElect: warps done with each slot, all uses
  if (tid == 0) {
#pragma unroll
    for (int st = 0; st < kStages; ++st) {
      mbar_init(&ring_full[st], kBulk ? 1 : kThreads), mbar_init(&ring_empty[st], kThreads);
      ring_done[st] = 0;
    }
  }
  __syncthreads();
  const int n_pages = pe - pb;
  const auto fill = [&](int i, int page_id) {  // page i into its slot, once page i - kStages released it
    if (kBulk && !kElect && tid != 0) return;  // kElect: the caller is the one thread
    if (i >= kStages) mbar_wait(&ring_empty[i % kStages], (i / kStages - 1) & 1);
    std::uint8_t* slot = ring + (i % kStages) * kStage;
    if constexpr (kBulk) {
      using R = PageRegions<F>;
      const R src(a, w.kvh, page_id);
      mbar_arrive_expect_tx(&ring_full[i % kStages], kStage);
      bulk_copy_g2s(slot, src.k(), R::kRegionK, &ring_full[i % kStages]);
      bulk_copy_g2s(slot + R::kRegionK, src.v(), R::kRegionV, &ring_full[i % kStages]);
    } else {
      issue_page<F>(a, w.kvh, page_id, slot);
      cp_async_arrive_noinc(&ring_full[i % kStages]);
    }
  };
  // Page 0 first: the ring's other pages are asked for once Q is staged, so a block's first page does
  // not queue behind every block's whole ring (25 MB at 128K tokens): the first page lands sooner
  // (docs/bench-notes/decode-timeline-merge-h200-2026-12-03.txt).
  if (n_pages > 0 && (!kElect || tid == 0)) fill(0, w.table[pb]);
  stage_q<F>(c, a, w, q_raw, qpos_s, qfirst_s);
  const float qmul = q_multiplier<F>(c, w.kvh);
  {  // warp v: query vector v's power-of-two scale (fp16: its largest |q| below 2^14)
    float mx = 0.0f;
    for (int j = lane; j < kD; j += 32) mx = fmaxf(mx, fabsf(q_raw[warp][j] * qmul));
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, o));
    int e = 0;
    if (!kBf && mx > 0.0f && mx <= 3.0e38f) frexpf(mx, &e);  // mx < 2^e
    if (lane == 0) qscale_s[warp] = ldexpf(1.0f, 14 - max(e, -100));  // bf16, zero or non-finite Q: e = 0
    if (kBf && lane == 0) qscale_s[warp] = 1.0f;
  }
  __syncthreads();
#pragma unroll
  for (int st = 1; st < (kElect ? kStages : kStages - 1); ++st)
    if (st < n_pages && (!kElect || tid == 0)) fill(st, w.table[pb + st]);
  const float qs = qscale_s[q];
  std::uint32_t qa[8][4];
#pragma unroll
  for (int ks = 0; ks < 8; ++ks) {
    const float* x = &q_raw[q][k_dim<F>(c4, ks)];
    std::uint32_t t01[3], t23[3];
    terms3<kBf>((x[k_pair_offset<F>(0)] * qmul) * qs, (x[k_pair_offset<F>(1)] * qmul) * qs, t01);
    terms3<kBf>((x[k_pair_offset<F>(2)] * qmul) * qs, (x[k_pair_offset<F>(3)] * qmul) * qs, t23);
    qa[ks][0] = upper ? t01[2] : t01[0];
    qa[ks][1] = upper ? 0u : t01[1];
    qa[ks][2] = upper ? t23[2] : t23[0];
    qa[ks][3] = upper ? 0u : t23[1];
  }
  const float post = a.scale / qs;  // exact: qs is a power of two
  const bool q_ok = q < w.nq;
  const int qfirst = qfirst_s[q], qpos = qpos_s[q];

  float acc[16][4];
#pragma unroll
  for (int j = 0; j < 16; ++j) acc[j][0] = acc[j][1] = acc[j][2] = acc[j][3] = 0.0f;
  float m = -INFINITY, l = 0.0f;  // query q's running maximum and this lane's share of its sum
  // Per-token-head (and q8_0/q4_0's per-block) V scales ride on P: P's terms hold p * vs / sref, where sref
  // (the same in the warp) is a power of two >= every scale of the warp's tokens so far, so they stay
  // in fp16 range; when a page raises it, acc is rescaled exactly, as m's rise rescales it. Other
  // formats: 1.
  float sref = kScaledV ? 0.0f : 1.0f;
  // turboquant_k8v4's values are code x scale + min per token: the codes go through the mma as code - 8,
  // the scale rides on P, and min + 8 x scale adds sum(p x (min + 8 x scale)) to every dimension: lmin,
  // this lane's share, kept as l. Centring the codes keeps the two sums small: with codes 0..15 they
  // nearly cancel (a positive sum and a negative min), and the mma's fp32 accumulation error, relative
  // to them, reached NMSE 1.5e-10 against the twin at 1,500 tokens (the CUDA-core kernel: 4e-12).
  float lmin = 0.0f;
  int next_id = pb + kStages - 1 < pe ? w.table[pb + kStages - 1] : 0;

  for (int p = pb, it = 0; p < pe; ++p, ++it) {
    const int id_ahead = kElect && it + kStages < n_pages ? w.table[pb + it + kStages] : 0;  // kElect's refill
    mbar_wait(&ring_full[it % kStages], (it / kStages) & 1);
    const std::uint8_t* krows = ring + (it % kStages) * kStage;
    const std::uint8_t* vrows = krows + kRegionK;
    const int tok0 = p * kPage + warp * 16;

    // S for the warp's 16 tokens: lane (g, c) ends with query q's scores of tokens 8n + 2c + (0, 1).
    float sc[2][2];
#pragma unroll
    for (int n = 0; n < 2; ++n) {
      std::uint32_t kb[8][2];
      k_fragments<F>(krows, warp * 16 + 8 * n + g, c4, kb);
      // Two chains of dependent mmas (even and odd k-steps), not one of 8; q8_0/q4_0: one per block.
      float d[kChains][4] = {};
#pragma unroll
      for (int ks = 0; ks < 8; ++ks) mma16816<kBf>(d[kGgml ? ks >> 1 : ks & 1], qa[ks], kb[ks][0], kb[ks][1]);
#pragma unroll
      for (int e = 0; e < 2; ++e) {
        // x0 + x1 terms (rows g, g + 8), or x2 (row g; row g + 8 is zero)
        const std::uint8_t* krow = krows + (warp * 16 + 8 * n + 2 * c4 + e) * T::kKBytes;
        float x;
        if constexpr (kGgml) {
          x = ggml_scale<F>(krow, 0) * (d[0][e] + d[0][e + 2]);
#pragma unroll
          for (int b = 1; b < 4; ++b) x = fmaf(ggml_scale<F>(krow, b), d[b][e] + d[b][e + 2], x);
        } else {
          x = (d[0][e] + d[1][e]) + (d[0][e + 2] + d[1][e + 2]);
        }
        x += __shfl_xor_sync(0xffffffffu, x, 16);
        if constexpr (kPth) x *= row_scale<F>(krow);
        const int tok = tok0 + 8 * n + 2 * c4 + e;
        const bool ok = q_ok && tok < w.hi && tok >= qfirst && tok <= qpos;
        sc[n][e] = ok ? x * post : -INFINITY;
      }
    }
    // Online softmax of query q over the warp's tokens (the 4 lanes of a row group share it).
    float pm = fmaxf(fmaxf(sc[0][0], sc[0][1]), fmaxf(sc[1][0], sc[1][1]));
    pm = fmaxf(pm, __shfl_xor_sync(0xffffffffu, pm, 1));
    pm = fmaxf(pm, __shfl_xor_sync(0xffffffffu, pm, 2));
    const float mn = fmaxf(m, pm);
    float alpha = 1.0f;
    if (mn != m) {
      alpha = expf(m - mn);  // 0 when m was -inf
      l *= alpha;
      if constexpr (kTq) lmin *= alpha;
      m = mn;
    }
    float vmul[kPB][2][2];  // vs / sref of the lane's tokens (q8_0/q4_0: per block)
    float vmin[2][2];       // turboquant_k8v4: the tokens' min + 8 x scale (the codes enter as code - 8)
#pragma unroll
    for (int b = 0; b < kPB; ++b) vmul[b][0][0] = vmul[b][0][1] = vmul[b][1][0] = vmul[b][1][1] = 1.0f;
    if constexpr (kScaledV) {  // rows past the sequence end may hold any scale: 0
      float smax = 0.0f;
#pragma unroll
      for (int n = 0; n < 2; ++n)
#pragma unroll
        for (int e = 0; e < 2; ++e) {
          const int r = 8 * n + 2 * c4 + e;
          const std::uint8_t* vrow = vrows + (warp * 16 + r) * T::kVBytes;
#pragma unroll
          for (int b = 0; b < kPB; ++b) {
            if constexpr (kGgml) vmul[b][n][e] = tok0 + r < w.hi ? ggml_scale<F>(vrow, b) : 0.0f;
            else vmul[b][n][e] = tok0 + r < w.hi ? row_scale<F>(vrow) : 0.0f;
            smax = fmaxf(smax, fabsf(vmul[b][n][e]));
          }
          if constexpr (kTq)  // min + 8 x scale (the min: the fp16 after the scale)
            vmin[n][e] = tok0 + r < w.hi ? fmaf(8.0f, vmul[0][n][e], half_at(vrow + kD / 2 + 2)) : 0.0f;
        }
      smax = fmaxf(smax, __shfl_xor_sync(0xffffffffu, smax, 1));
      smax = fmaxf(smax, __shfl_xor_sync(0xffffffffu, smax, 2));
      const float sp = __uint_as_float((__float_as_uint(smax) + 0x007fffffu) & 0xff800000u);  // a power of two >= smax
      if (sp > sref) {
        alpha *= sref / sp;  // exact (0 for the first scale)
        sref = sp;
      }
      const float inv = sref > 0.0f ? 1.0f / sref : 0.0f;
#pragma unroll
      for (int b = 0; b < kPB; ++b)
#pragma unroll
        for (int n = 0; n < 2; ++n) vmul[b][n][0] *= inv, vmul[b][n][1] *= inv;
    }
    if (alpha != 1.0f) {
#pragma unroll
      for (int j = 0; j < 16; ++j) acc[j][0] *= alpha, acc[j][1] *= alpha, acc[j][2] *= alpha, acc[j][3] *= alpha;
    }
    float pr[2][2];
#pragma unroll
    for (int n = 0; n < 2; ++n)
#pragma unroll
      for (int e = 0; e < 2; ++e) {
        pr[n][e] = sc[n][e] == -INFINITY ? 0.0f : softmax_exp(sc[n][e] - m);
        l += pr[n][e];
        if constexpr (kTq) lmin = fmaf(pr[n][e], vmin[n][e], lmin);
      }
    std::uint32_t pa[kPB][4];
#pragma unroll
    for (int b = 0; b < kPB; ++b) {
      std::uint32_t t0[3], t1[3];
      terms3<kBf>(pr[0][0] * vmul[b][0][0] * kPScale, pr[0][1] * vmul[b][0][1] * kPScale, t0);
      terms3<kBf>(pr[1][0] * vmul[b][1][0] * kPScale, pr[1][1] * vmul[b][1][1] * kPScale, t1);
      pa[b][0] = upper ? t0[2] : t0[0];
      pa[b][1] = upper ? 0u : t0[1];
      pa[b][2] = upper ? t1[2] : t1[0];
      pa[b][3] = upper ? 0u : t1[1];
    }
    // V rows past the sequence end may hold any bytes (NaN codes): their P is 0 but 0 * NaN is not,
    // so a page that ends the sequence masks them to zero codes first.
    const bool tail = tok0 + 16 > w.hi;
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      std::uint32_t vb[8][2];
      v_fragments<F>(vrows, warp * 16, g, c4, h, vb);
      if (tail) {
        const bool z0 = tok0 + 2 * c4 >= w.hi, z1 = tok0 + 2 * c4 + 1 >= w.hi;
        const bool z2 = tok0 + 2 * c4 + 8 >= w.hi, z3 = tok0 + 2 * c4 + 9 >= w.hi;
        const std::uint32_t m0 = (z0 ? 0u : 0xffffu) | (z1 ? 0u : 0xffff0000u);
        const std::uint32_t m1 = (z2 ? 0u : 0xffffu) | (z3 ? 0u : 0xffff0000u);
#pragma unroll
        for (int j = 0; j < 8; ++j) vb[j][0] &= m0, vb[j][1] &= m1;
      }
#pragma unroll
      for (int j = 0; j < 8; ++j) mma16816<kBf>(acc[8 * h + j], pa[kGgml ? 2 * h + j / 4 : 0], vb[j][0], vb[j][1]);
    }
    mbar_arrive(&ring_empty[it % kStages]);
    if constexpr (kElect) {
      if (it + kStages < n_pages) {
        __syncwarp();  // the warp's arrivals before its count
        if (lane == 0 && atomicAdd(&ring_done[it % kStages], 1) % kWarps == kWarps - 1) fill(it + kStages, id_ahead);
      }
    } else if (it + kStages - 1 < n_pages) {
      fill(it + kStages - 1, next_id);
      next_id = it + kStages < n_pages ? w.table[pb + it + kStages] : 0;
    }
  }
  __syncthreads();  // every warp is done with the ring (no copy is in flight: each page was awaited)

  // The warp's partial: terms added (lanes l, l ^ 16), P's scale undone; wacc [warp][q][dim].
  float* wacc = reinterpret_cast<float*>(ring);
  float* wm = wacc + kWarps * kNQ * kD;
  float* wl = wm + kWarps * kNQ;
#pragma unroll
  for (int j = 0; j < 16; ++j)
#pragma unroll
    for (int e = 0; e < 2; ++e) {
      float x = acc[j][e] + acc[j][e + 2];
      x += __shfl_xor_sync(0xffffffffu, x, 16);
      if (!upper) wacc[(warp * kNQ + q) * kD + out_dim<F>(j, 2 * c4 + e)] = x * (sref / kPScale);
    }
  l += __shfl_xor_sync(0xffffffffu, l, 1);
  l += __shfl_xor_sync(0xffffffffu, l, 2);
  if constexpr (kTq) {  // the lanes of a row group hold all 128 dimensions of query q between them
    lmin += __shfl_xor_sync(0xffffffffu, lmin, 1);
    lmin += __shfl_xor_sync(0xffffffffu, lmin, 2);
#pragma unroll
    for (int j = 0; j < 16; ++j)
#pragma unroll
      for (int e = 0; e < 2; ++e)
        if (!upper) wacc[(warp * kNQ + q) * kD + out_dim<F>(j, 2 * c4 + e)] += lmin;
  }
  if (!upper && c4 == 0) {
    wl[warp * kNQ + q] = l;
    wm[warp * kNQ + q] = m;
  }
  __syncthreads();
  finish_block<F>(c, a, w, wacc);
}

// One block per (tile, KV head, part): the splits of its query vectors merged into the output.
__global__ void __launch_bounds__(kMergeThreads) decode_combine_kernel(PagedAttentionArgs a, int splits) {
  pdl_launch_dependents();
  pdl_wait();
  const int parts = gridDim.y / a.kv_heads, q0 = kNQ * (blockIdx.y % parts);
  const int nq = min(kNQ, a.tiles[blockIdx.x].rows * (a.heads / a.kv_heads) - q0);
  if (nq <= 0) return;
  merge_splits(a, blockIdx.x, blockIdx.y / parts, q0, nq, splits);
}

// ---- dispatch -----------------------------------------------------------------------------------

bool fmt_of(const KvLayerCodec& c, Fmt& f) {
  switch (c.family) {
    case KvFamily::kBf16: f = Fmt::kBf16; return true;
    case KvFamily::kF16: f = Fmt::kF16; return true;
    case KvFamily::kFp8Tensor: f = c.fp8_kind == Fp8Kind::kE4M3 ? Fmt::kE4M3 : Fmt::kE5M2; return true;
    case KvFamily::kFp8Pth: f = Fmt::kFp8Pth; return true;
    case KvFamily::kInt8Pth: f = Fmt::kInt8Pth; return true;
    case KvFamily::kInt4Pth: f = Fmt::kInt4Pth; return true;
    case KvFamily::kNvfp4: f = Fmt::kNvfp4; return true;
    case KvFamily::kQ8_0: f = Fmt::kQ8_0; return true;
    case KvFamily::kQ4_0: f = Fmt::kQ4_0; return true;
    case KvFamily::kTqFp8Key: f = Fmt::kTqK8V4; return c.value_bits == 4;
    case KvFamily::kTqMse:
      if (c.key_bits == 4 && c.value_bits == 4) f = Fmt::kTqK4V4;
      else if (c.key_bits == 3 && c.value_bits == 4) f = Fmt::kTqK3V4;
      else if (c.key_bits == 3 && c.value_bits == 3) f = Fmt::kTqK3V3;
      else return false;
      return true;
    default: return false;
  }
}

template <Fmt F>
bool bytes_match(const KvLayerCodec& c) {
  return c.k_bytes == Traits<F>::kKBytes && c.v_bytes == Traits<F>::kVBytes;
}

template <Fmt F, bool TC>
constexpr auto kernel_of() {
  if constexpr (TC) return decode_tc_kernel<F>;
  else return decode_kernel<F>;
}

// Blocks of the kernel resident on the whole device at once.
template <Fmt F, bool TC>
int resident_blocks() {
  constexpr int smem = dynamic_smem<F, TC>();
  static const int blocks = [] {
    constexpr auto kernel = kernel_of<F, TC>();
    if constexpr (smem > 48 * 1024)
      KV_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
    int dev = 0, sms = 0, per_sm = 0;
    KV_CUDA_CHECK(cudaGetDevice(&dev));
    KV_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
    KV_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, kThreads, smem));
    return std::max(1, sms * per_sm);
  }();
  return blocks;
}

// The split count actually used: at most the caller's (its workspace holds that many), chosen to
// minimise waves x pages per split, so the last wave is not a small fraction of the device (the
// result is the same for any split count up to fp32 summation order). In practice one wave: split
// counts for 2-6 waves of shorter splits were 1.1-1.4x slower, as every block, in every
// wave, waits 8-10 us for its first page behind the loaded memory system.
int fit_splits(int splits, int base_blocks, int max_ctx, int resident) {
  const int pages = std::max(1, (max_ctx + kPage - 1) / kPage);
  int best = splits;
  long long best_cost = -1;
  for (int sp = 1; sp <= splits; ++sp) {
    const long long waves = (static_cast<long long>(base_blocks) * sp + resident - 1) / resident;
    const long long cost = waves * ((pages + sp - 1) / sp);
    if (best_cost < 0 || cost < best_cost) {
      best_cost = cost;
      best = sp;
    }
  }
  return best;
}

template <Fmt F, bool TC>
int launch_as(const KvLayerCodec& c, const PagedAttentionArgs& a, int splits, int parts, cudaStream_t s) {
  constexpr int smem = dynamic_smem<F, TC>();
  static_assert(smem >= (2 * kWarps * kNQ + (kWarps + 1) * kNQ * kD) * 4, "the warp merge reuses the ring");
  splits = fit_splits(splits, a.num_tiles * a.kv_heads * parts, a.max_ctx, resident_blocks<F, TC>());
  launch_kernel(a.pdl, kernel_of<F, TC>(), dim3(splits, a.kv_heads * parts, a.num_tiles), dim3(kThreads), smem, s, c, a);
  return splits;
}

// kAuto: the kernel measured faster for the format (docs/cuda-decoder.md): the tensor-core one for
// fp8 (57% of copy bandwidth against 48%), the per-token-head formats (1.17-1.27x), q8_0 and q4_0
// (1.46x, 1.34x), nvfp4 and turboquant_k8v4 (1.81x, 1.30-1.37x), the CUDA-core one
// for bf16/fp16 (85% against 69%).
template <Fmt F>
int launch(const KvLayerCodec& c, const PagedAttentionArgs& a, int splits, int parts, cudaStream_t s) {
  if constexpr (tc_format(F)) {
    const bool tc = a.decode == DecodeKernel::kTensorCore ||
                    (a.decode == DecodeKernel::kAuto && F != Fmt::kBf16 && F != Fmt::kF16);
    if (tc) return launch_as<F, true>(c, a, splits, parts, s);
  }
  return launch_as<F, false>(c, a, splits, parts, s);
}

template <Fmt F>
bool supported_fmt(const KvLayerCodec& c) {
  return bytes_match<F>(c);
}

}  // namespace

bool decode_attention_supported(const KvLayerCodec& c, int max_tile_rows, int group) {
  Fmt f;
  const int max_tile_q = max_tile_rows * group;
  if (c.head_dim != kD || !(max_tile_q <= kNQ || (max_tile_rows == 1 && max_tile_q <= kMaxTileQ)) || !fmt_of(c, f)) return false;
  if ((f == Fmt::kQ8_0 || f == Fmt::kQ4_0) && ((c.k_rot & (c.k_rot - 1)) != 0 || (c.v_rot & (c.v_rot - 1)) != 0 ||
                                              c.k_rot > kD || c.v_rot > kD))
    return false;
  switch (f) {
    case Fmt::kBf16: return supported_fmt<Fmt::kBf16>(c);
    case Fmt::kF16: return supported_fmt<Fmt::kF16>(c);
    case Fmt::kE4M3: return supported_fmt<Fmt::kE4M3>(c);
    case Fmt::kE5M2: return supported_fmt<Fmt::kE5M2>(c);
    case Fmt::kFp8Pth: return supported_fmt<Fmt::kFp8Pth>(c);
    case Fmt::kInt8Pth: return supported_fmt<Fmt::kInt8Pth>(c);
    case Fmt::kInt4Pth: return supported_fmt<Fmt::kInt4Pth>(c);
    case Fmt::kNvfp4: return supported_fmt<Fmt::kNvfp4>(c);
    case Fmt::kQ8_0: return supported_fmt<Fmt::kQ8_0>(c);
    case Fmt::kQ4_0: return supported_fmt<Fmt::kQ4_0>(c);
    case Fmt::kTqK8V4: return supported_fmt<Fmt::kTqK8V4>(c);
    case Fmt::kTqK4V4: return supported_fmt<Fmt::kTqK4V4>(c);
    case Fmt::kTqK3V4: return supported_fmt<Fmt::kTqK3V4>(c);
    case Fmt::kTqK3V3: return supported_fmt<Fmt::kTqK3V3>(c);
  }
  return false;
}

bool decode_tensor_core_takes(const KvLayerCodec& c) {
  Fmt f;
  if (!decode_attention_supported(c, 1, kNQ) || !fmt_of(c, f)) return false;
  return tc_format(f);
}

void decode_attention(const KvLayerCodec& c, const PagedAttentionArgs& a, int splits, cudaStream_t s) {
  Fmt f;
  if (!fmt_of(c, f)) throw Error("decode_attention: unsupported KV family", kExitInternal);
  const int max_tile_q = a.max_tile_rows * (a.heads / a.kv_heads), parts = (max_tile_q + kNQ - 1) / kNQ;
  switch (f) {
    case Fmt::kBf16: splits = launch<Fmt::kBf16>(c, a, splits, parts, s); break;
    case Fmt::kF16: splits = launch<Fmt::kF16>(c, a, splits, parts, s); break;
    case Fmt::kE4M3: splits = launch<Fmt::kE4M3>(c, a, splits, parts, s); break;
    case Fmt::kE5M2: splits = launch<Fmt::kE5M2>(c, a, splits, parts, s); break;
    case Fmt::kFp8Pth: splits = launch<Fmt::kFp8Pth>(c, a, splits, parts, s); break;
    case Fmt::kInt8Pth: splits = launch<Fmt::kInt8Pth>(c, a, splits, parts, s); break;
    case Fmt::kInt4Pth: splits = launch<Fmt::kInt4Pth>(c, a, splits, parts, s); break;
    case Fmt::kNvfp4: splits = launch<Fmt::kNvfp4>(c, a, splits, parts, s); break;
    case Fmt::kQ8_0: splits = launch<Fmt::kQ8_0>(c, a, splits, parts, s); break;
    case Fmt::kQ4_0: splits = launch<Fmt::kQ4_0>(c, a, splits, parts, s); break;
    case Fmt::kTqK8V4: splits = launch<Fmt::kTqK8V4>(c, a, splits, parts, s); break;
    case Fmt::kTqK4V4: splits = launch<Fmt::kTqK4V4>(c, a, splits, parts, s); break;
    case Fmt::kTqK3V4: splits = launch<Fmt::kTqK3V4>(c, a, splits, parts, s); break;
    case Fmt::kTqK3V3: splits = launch<Fmt::kTqK3V3>(c, a, splits, parts, s); break;
  }
  launch_kernel(a.pdl, decode_combine_kernel, dim3(a.num_tiles, a.kv_heads * parts), dim3(kMergeThreads), 0, s, a, splits);
}

}  // namespace kvgate::kernels::cuda
