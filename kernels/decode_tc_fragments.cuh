// decode_tc_fragments.cuh: decode_tc_kernel's design and its fragments - the mma types and terms,
// nibble and scale helpers, and the K and V fragments of a page in shared memory.
// Part of paged_attention_decode.cu, its only includer: the decode kernels' definitions stay in one
// translation unit (internal linkage, so ptxas inlines and specializes them as one file).

#pragma once

#include <cstdint>

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>

#include "kernels/decode_formats.cuh"

namespace kvgate::kernels::cuda {

namespace {

// ---- the tensor-core kernel -----------------------------------------------------------------------
// decode_tc_kernel (paged_attention_decode.cu; "below" here: this header's helpers and the kernel's
// steps there): the blocks and splits of decode_kernel (its ring runs on mbarriers) for the
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

}  // namespace

}  // namespace kvgate::kernels::cuda
