// --kernel-switches: the JSON object of engine-kernel switches, validated in one place for both
// engines (docs/reference-decoder.md). Every key is known or an Error naming it and the fix; a
// switch that a device cannot honour is refused by that engine.
//   "gemm": "bf16" | "fp32"            CUDA only: the GEMM operand dtype (bf16 default)
//   "attention_splits": 1..128         KV splits per row (CUDA: the work split; with emulation:
//                                      part of the numerics, default 1)
//   "q_fp8": bool, "q_scale": x > 0    Q through fp8 e4m3 with a per-tensor scale (default 1.0)
//   "q_vec_dot": "q8_0" | "f16"        Q as llama.cpp's CPU attention converts it for its Q.K dot
//                                      products (q8_0 blocks of 32; f16); not with q_fp8
//   "pv_fp8": bool                     softmax weights through fp8 e4m3 before P.V
//   "pv_accum": "fp32" | "reduced" | "two_level"   P.V accumulator (reduced / two_level need pv_fp8)
//   "pv_promote_every": 32..65536      two_level: tokens between promotions, a multiple of 32
//   "prefill": "tensor_core" | "bf16x3" | "mma_sync" | "generic"   CUDA only: prefill tiles on the
//                                      tensor-core kernel (default: operands split into bf16 terms to
//                                      fp32 precision, fp32 accumulation; wgmma on compute capability
//                                      9.0), on it with bf16x3 operands (2^-16 per product), exact on
//                                      the mma.sync kernel, or on the generic CUDA-core kernel
//   "cuda_graphs": bool                CUDA only: replay each decode step as a CUDA graph (default
//                                      true; false launches every kernel each step, same numbers)
//   "prefill_pool": bool               CUDA only: engine-numerics prefill chunks decode the pages of
//                                      fp8, the per-token-head formats and nvfp4 once a layer into a
//                                      tile pool before the attention (default true); false: the
//                                      attention kernel decodes them (the same K/V values)
//   "gemv": bool | 0..4                CUDA only: decode steps of at most this many rows (true: 1,
//                                      the default; false: 0) run the hand-written GEMV with the
//                                      norm / SwiGLU / bf16 conversion before it fused in; larger
//                                      steps cuBLAS and separate kernels (measurements:
//                                      docs/bench-notes/cuda-decoder-measurements.md: the GEMV wins at batch 1 only)
//   "numerics": "exact" | "engine"     attention operand precision (attention_emulation.h): exact (fp32 Q
//                                      and P; the CPU default) or engine (Q and P rounded to bf16 before
//                                      the products, fp32 accumulation; the CUDA default)
//   "prefill_chunk": 64..65536         rows per prefill forward pass, a multiple of 64 (0: the engine's
//                                      default); identical results on the CPU except kivi2, whose
//                                      store quantizes as tokens arrive; on CUDA up to fp32 rounding
#pragma once
#include <cstddef>
#include <string>

#include <nlohmann/json.hpp>

#include "kernels/attention_emulation.h"

namespace kvgate::decoder {

struct KernelSwitches {
  std::string gemm;               // "" = the engine's default
  std::string prefill;            // "" = the engine's default (tensor_core), or "tensor_core" / "bf16x3" / "mma_sync" / "generic"
  std::string numerics;           // "" = the engine's default (CPU "exact", CUDA "engine"), or "exact" / "engine";
                                  // each engine resolves it into attention.numerics
  int attention_splits = 0;       // 0 = not set
  int prefill_chunk = 0;          // 0 = the engine's default
  kernels::AttentionEmulation attention;  // .splits = attention_splits or 1
  bool cuda_graphs = true;
  bool has_cuda_graphs = false;   // the switch was given
  bool prefill_pool = true;
  bool has_prefill_pool = false;  // the switch was given
  int gemv_rows = 1;              // "gemv": true = 1, false = 0
  bool has_gemv = false;          // the switch was given
};

KernelSwitches resolve_kernel_switches(const nlohmann::json& switches);

// "exact" | "engine" as the enum; "" is `engine_default`. Anything else: an Error naming the fix.
kernels::AttentionNumerics resolve_numerics(const std::string& numerics, kernels::AttentionNumerics engine_default);
// The name run.json records: "exact" | "engine".
const char* numerics_name(kernels::AttentionNumerics numerics);
// A device's numerics when no switch names them ("cuda" | "cpu", as resolve_device gives it): engine
// on CUDA, exact on the CPU (docs/reference-decoder.md, "Numerics" says why).
kernels::AttentionNumerics default_numerics(const std::string& device);

// The CUDA engine's rows per prefill forward when no "prefill_chunk" is given: the token budget a
// step of vLLM V1's OpenAI server takes on that GPU (vllm/engine/arg_utils.py,
// EngineArgs.get_batch_defaults): 8192 with 70 GiB or more, an A100 excepted, else 2048 (SGLang's
// chunked_prefill_size is 8192 on an H100 or H200 too). The chunk changes no value beyond fp32
// rounding, every row reads the cache; it sets the speed (docs/bench-notes/prefill-lean-softmax-2026-12-06.md)
// and the scratch, logits rows x vocabulary in fp32.
int cuda_default_prefill_chunk(const std::string& device_name, std::size_t device_bytes);

// The switches' names and values, one line, for error messages and docs.
std::string kernel_switches_help();

}  // namespace kvgate::decoder
