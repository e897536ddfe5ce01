// Engine-kernel emulation of the attention (--kernel-switches): the numerics of
// FlashAttention-3's FP8 path on Hopper, kept apart from the KV storage format so storage loss and
// kernel loss can be told apart. Off by default (exact fp32 attention). The CPU twin
// (attention_emulated_ref.cpp) and the CUDA generic kernel (paged_attention.cu) follow the same
// algorithm step by step, so they agree to fp32 rounding of the softmax sum.
//
// The model (docs/cuda-decoder.md, "Engine emulation"):
//  - q_fp8: Q is quantized as vLLM does before FA3: fp8 e4m3 of q / q_scale (RNE, saturating),
//    times q_scale. One static per-tensor scale (vLLM's q_scale, 1.0 uncalibrated; FA3's
//    q_descale is per (sequence, KV head) and vLLM expands the scalar to that shape).
//  - q_vec_dot: Q as llama.cpp's CPU flash attention converts it to the K type's vec_dot type
//    (emu_q_row): q8_0 blocks of 32 along head_dim, or f16, in the basis of the K cache's rotation.
//  - Every other switch needs the paged online softmax: per 64-token page (aligned to absolute
//    positions) the running max m, alpha = exp(m_old - m_new), p = exp(s - m_new) (fp32 values of
//    double exps), l = l * alpha + sum(p) from the unrounded p (as FA3's row_sum).
//  - pv_fp8: p is rounded to fp8 e4m3 (no scale: p <= 1) before P.V; V is used as the cache
//    returns it (an fp8 cache gives exactly FA3's fp8 V operand).
//  - pv_accum: how P.V accumulates, per MMA k-step of 32 tokens (m16n8k32 / WGMMA k = 32 for FP8):
//    the step's 32 products are summed exactly (double, token order), then added to the
//      fp32       accumulator and rounded to fp32 (an ideal fp32 accumulator);
//      reduced    accumulator and truncated to FP22 (1 sign, 8 exponent, 13 mantissa bits: the
//                 accumulator SageAttention2 measured for mma.f32.f8.f8.f32 on Ada/Hopper, bits
//                 past 13 dropped toward zero): the Hopper bug, whose error grows with context;
//      two_level  FP22 partial accumulator, added into a true fp32 accumulator and cleared every
//                 pv_promote_every tokens (32-token steps counted from the split's first step)
//                 and at the end: vLLM's fix (flash-attention#104, every-n variant #122).
//    Online-softmax rescales multiply the accumulators by alpha in fp32. Steps with no token in
//    the row's range are skipped. Not modelled: the truncation of the aligned products inside one
//    MMA (DeepSeek's "highest 14 bits"), Q.K accumulation in FP22, FA3's reverse block order.
//  - splits: the row's pages are cut into `splits` consecutive ranges of ceil(pages / splits)
//    pages, each with its own accumulators, merged in fp32 (flash-decoding's combine). The split
//    count changes the result (a fresh accumulator per split), so it is fixed: 1 unless
//    --kernel-switches sets "attention_splits".
#pragma once
#include <math.h>

#include <cstdint>
#include <cstring>

#include "kernels/float_formats.h"
#include "kernels/fp8_formats.h"
#include "kernels/hadamard.h"

namespace kvgate::kernels {

enum class PvAccum : std::uint8_t { kFp32, kReduced, kTwoLevel };

// The attention's operand precision (docs/reference-decoder.md, "Numerics"). kExact: Q, K, V and
// the softmax weights P at fp32 precision (the CPU's default; the CUDA tensor-core kernels split
// operands into bf16 terms to reach it). kEngine: Q and P rounded to bf16 before the products, fp32
// accumulation, as FlashAttention-2/3 and FlashInfer compute in a bf16 model (one tensor-core
// product per element: the CUDA default).
enum class AttentionNumerics : std::uint8_t { kExact, kEngine };

// Q rounded as llama.cpp's CPU flash attention converts it to the K type's vec_dot type before
// the Q.K dot products: q8_0 blocks of 32 (d = absmax / 127 in fp16, codes round(q / d)) for
// q8_0/q4_0 caches, f16 for an f16 cache. kNone: Q as computed.
enum class QVecDot : std::uint8_t { kNone, kQ8_0, kF16 };

struct AttentionEmulation {
  bool q_fp8 = false;
  float q_scale = 1.0f;
  bool pv_fp8 = false;
  PvAccum pv_accum = PvAccum::kFp32;
  int pv_promote_every = 128;  // tokens, a multiple of kEmuStep (two_level only)
  int splits = 1;              // KV splits of each row, merged in fp32
  AttentionNumerics numerics = AttentionNumerics::kExact;  // not an emulation: the fast kernels honour it
  QVecDot q_vec_dot = QVecDot::kNone;
  // The K cache's block Hadamard rotation (KvFormatSpec::k_rotation_block, llama.cpp's attn_rot; 0:
  // none). llama.cpp rotates Q with K, so q_vec_dot rounds the rotated Q. Set by the engines from the
  // KV format, not a switch.
  int q_vec_dot_rot = 0;
  // Any switch set: the CUDA engine runs the generic kernel's emulating instantiation.
  KV_HD bool active() const { return q_fp8 || q_vec_dot != QVecDot::kNone || pv_fp8 || pv_accum != PvAccum::kFp32; }
  // FlashAttention-3's fp8 Q and P with an fp32 P.V accumulator and one split, in engine numerics:
  // fp8 values are exact bf16 terms, so the tensor-core prefill kernel computes the emulation's
  // products itself (its pages are the emulation's 64-token softmax blocks) instead of the generic
  // emulating kernel.
  KV_HD bool fp8_operands_fast() const {
    return numerics == AttentionNumerics::kEngine && (q_fp8 || pv_fp8) && q_vec_dot == QVecDot::kNone &&
           pv_accum == PvAccum::kFp32 && splits == 1;
  }
  // The paged online-softmax algorithm is needed (exact attention otherwise, with Q rounded).
  KV_HD bool online() const { return pv_fp8 || pv_accum != PvAccum::kFp32; }
};

constexpr int kEmuPage = 64;  // the softmax block: one page of the paged cache
constexpr int kEmuStep = 32;  // tokens per FP8 MMA k-step

// q rounded through fp8 e4m3 with a per-tensor scale (vLLM's scaled_fp8_quant: x / scale).
KV_HD float emu_round_q(float x, float scale) { return fp8_e4m3_to_f32(f32_to_fp8_e4m3(x / scale)) * scale; }
// An operand of engine numerics (AttentionNumerics::kEngine): x rounded to bf16, to nearest even.
KV_HD float engine_round(float x) { return bf16_to_f32(f32_to_bf16(x)); }
// A softmax weight (0..1) as FA3 feeds it to the FP8 MMA: e4m3, no scale.
KV_HD float emu_round_p(float p) { return fp8_e4m3_to_f32(f32_to_fp8_e4m3(p)); }

constexpr int kQ8Block = 32;  // llama.cpp's QK8_0

// n <= 32 values of Q as one q8_0 block, back to floats (code * fp16 d), as llama.cpp's x86 build
// quantizes a row for its vec_dot (ggml-cpu/arch/x86/quants.c quantize_row_q8_0, the AVX/AVX2 path
// that -march=native compiles on any AVX machine): d = amax / 127 stored as fp16 (RNE), codes
// x * (127 / amax) rounded to nearest even (vroundps). Not quantize_row_q8_0_ref's roundf(x / d):
// that one rounds ties away from zero and multiplies by 1 / d, one fp32 rounding apart.
KV_HD void emu_q8_0_block(const float* x, float* out, int n) {
  float amax = 0.0f;
  for (int j = 0; j < n; ++j) amax = fmaxf(amax, fabsf(x[j]));
  const float d = f16_to_f32(f32_to_f16(amax / 127.0f));
  const float id = amax != 0.0f ? 127.0f / amax : 0.0f;
  for (int j = 0; j < n; ++j) out[j] = rintf(x[j] * id) * d;
}

// The values a thread of the CUDA kernel rounds at once (emu_q_row on a span that starts on a
// multiple of it rounds as the whole row does): a rotation block, or a q8_0 block.
KV_HD int emu_q_span(const AttentionEmulation& e) {
  return e.q_vec_dot != QVecDot::kNone && e.q_vec_dot_rot > 0 ? e.q_vec_dot_rot : kQ8Block;
}

// One head's query row of d values (q and out may be the same) as the Q.K products see it: fp8
// (q_fp8); with q_vec_dot, rotated by the K cache's block rotation if it has one, rounded to q8_0
// blocks of 32 from the row's start or to f16, and rotated back (H / sqrt(n) is its own inverse), so
// that its dot product with the cache's un-rotated K is llama.cpp's rotated Q with its rotated K;
// bf16 (engine numerics); or as computed. A last block of fewer than 32 values is its own block
// (llama.cpp needs head_dim % 32 == 0).
KV_HD void emu_q_row(const AttentionEmulation& e, const float* q, float* out, int d) {
  if (e.q_fp8) {
    for (int j = 0; j < d; ++j) out[j] = emu_round_q(q[j], e.q_scale);
  } else if (e.q_vec_dot != QVecDot::kNone) {
    if (out != q)
      for (int j = 0; j < d; ++j) out[j] = q[j];
    if (e.q_vec_dot_rot > 0) hadamard_blocks_inplace(out, d, e.q_vec_dot_rot);
    if (e.q_vec_dot == QVecDot::kQ8_0)
      for (int b = 0; b < d; b += kQ8Block) emu_q8_0_block(out + b, out + b, d - b < kQ8Block ? d - b : kQ8Block);
    else
      for (int j = 0; j < d; ++j) out[j] = f16_to_f32(f32_to_f16(out[j]));
    if (e.q_vec_dot_rot > 0) hadamard_blocks_inplace(out, d, e.q_vec_dot_rot);
  } else if (e.numerics == AttentionNumerics::kEngine) {
    for (int j = 0; j < d; ++j) out[j] = engine_round(q[j]);
  } else if (out != q) {
    for (int j = 0; j < d; ++j) out[j] = q[j];
  }
}

// x truncated toward zero to 13 mantissa bits (FP22), as a float.
KV_HD float emu_trunc_fp22(double x) {
  std::uint64_t b;
  std::memcpy(&b, &x, sizeof b);
  b &= ~((std::uint64_t{1} << (52 - 13)) - 1);
  double t;
  std::memcpy(&t, &b, sizeof t);
  return static_cast<float>(t);
}

// One k-step's exact sum `chunk` added to the accumulators (acc: fp32; mma: the FP22 partial).
KV_HD void emu_accumulate(PvAccum mode, double chunk, float& acc, float& mma) {
  if (mode == PvAccum::kFp32) acc = static_cast<float>(static_cast<double>(acc) + chunk);
  else if (mode == PvAccum::kReduced) acc = emu_trunc_fp22(static_cast<double>(acc) + chunk);
  else mma = emu_trunc_fp22(static_cast<double>(mma) + chunk);
}

// Pages [first, end) of the token range [begin, end_tok) that split `s` of `splits` covers: the
// split-K partition of every paged-attention kernel (exact, decode path, emulated) and the CPU twin.
KV_HD void split_pages(int begin, int end_tok, int s, int splits, int& pb, int& pe) {
  const int page0 = begin / kEmuPage, np = (end_tok - 1) / kEmuPage - page0 + 1;
  const int per = (np + splits - 1) / splits;
  pb = page0 + s * per;
  pe = pb + per < page0 + np ? pb + per : page0 + np;
}

}  // namespace kvgate::kernels
