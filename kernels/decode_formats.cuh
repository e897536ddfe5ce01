// decode_formats.cuh: the decode kernels' constants and KV formats - element decoding (packed
// conversions, exact integer tricks), Traits<F> (a lane's 8 elements of a K or V row), the Q and
// output transforms, the half-warp reduce-scatter and the shared-memory ring's sizes.
// Part of paged_attention_decode.cu, its only includer: the decode kernels' definitions stay in one
// translation unit (internal linkage, so ptxas inlines and specializes them as one file).

#pragma once

#include <cstdint>

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>

#include "kernels/float_formats.h"
#include "kernels/kv_codecs.h"
#include "kernels/kv_rotations.cuh"
#include "kernels/paged_attention_decode.h"
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

}  // namespace

}  // namespace kvgate::kernels::cuda
