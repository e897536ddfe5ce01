#include "harness/decoder/kernel_switches.h"

#include <algorithm>
#include <cctype>
#include <cmath>

#include "harness/core/error.h"

namespace kvgate::decoder {

std::string kernel_switches_help() {
  return "known: \"gemm\": \"bf16\"|\"fp32\", \"attention_splits\": 1..128, \"q_fp8\": true|false, \"q_scale\": number > 0, "
         "\"q_vec_dot\": \"q8_0\"|\"f16\", \"cuda_graphs\": true|false, \"gemv\": true|false|0-4, \"prefill_pool\": true|false, "
         "\"pv_fp8\": true|false, \"pv_accum\": \"fp32\"|\"reduced\"|\"two_level\", \"pv_promote_every\": 32..65536 "
         "(a multiple of 32), \"prefill\": \"tensor_core\"|\"bf16x3\"|\"generic\""
         ", \"numerics\": \"exact\"|\"engine\", \"prefill_chunk\": 64..65536 (a multiple of 64)";
}

kernels::AttentionNumerics resolve_numerics(const std::string& n, kernels::AttentionNumerics engine_default) {
  if (n.empty()) return engine_default;
  if (n == "exact") return kernels::AttentionNumerics::kExact;
  if (n == "engine") return kernels::AttentionNumerics::kEngine;
  throw Error("numerics \"" + n +
              "\" is not valid: use \"exact\" (fp32 Q and softmax weights) or \"engine\" (Q and softmax weights "
              "rounded to bf16 before the products, fp32 accumulation, as FlashAttention and FlashInfer compute)");
}

const char* numerics_name(kernels::AttentionNumerics n) { return n == kernels::AttentionNumerics::kEngine ? "engine" : "exact"; }

kernels::AttentionNumerics default_numerics(const std::string& device) {
  return device == "cuda" ? kernels::AttentionNumerics::kEngine : kernels::AttentionNumerics::kExact;
}

int cuda_default_prefill_chunk(const std::string& device_name, std::size_t device_bytes) {
  std::string name = device_name;
  std::transform(name.begin(), name.end(), name.begin(), [](unsigned char ch) { return static_cast<char>(std::tolower(ch)); });
  const bool large = device_bytes >= std::size_t{70} << 30 && name.find("a100") == std::string::npos;
  return large ? 8192 : 2048;
}

KernelSwitches resolve_kernel_switches(const nlohmann::json& j) {
  if (j.is_null()) return {};
  if (!j.is_object()) throw Error("--kernel-switches: not a JSON object (" + j.dump() + "); " + kernel_switches_help());
  KernelSwitches k;
  auto bad = [](const std::string& key, const nlohmann::json& v, const std::string& want) {
    return Error("--kernel-switches: \"" + key + "\" = " + v.dump() + " is not valid: " + want);
  };
  bool has_scale = false, has_promote = false;
  for (const auto& [key, v] : j.items()) {
    if (key == "gemm") {
      if (!v.is_string() || (v != "bf16" && v != "fp32")) throw bad(key, v, "use \"bf16\" or \"fp32\"");
      k.gemm = v.get<std::string>();
    } else if (key == "prefill") {
      if (!v.is_string() || (v != "tensor_core" && v != "bf16x3" && v != "generic" && v != "mma_sync"))
        throw bad(key, v,
                  "use \"tensor_core\" (the default: tensor cores, operands split into bf16 terms to fp32 precision; wgmma on "
                  "compute capability 9.0), \"bf16x3\" (tensor cores, 2^-16 per product: faster, less exact), \"mma_sync\" "
                  "(exact, on the mma.sync kernel) or \"generic\" (the fp32 CUDA-core kernel)");
      k.prefill = v.get<std::string>();
    } else if (key == "attention_splits") {
      if (!v.is_number_integer() || v.get<long long>() < 1 || v.get<long long>() > 128) throw bad(key, v, "an integer 1..128");
      k.attention_splits = v.get<int>();
    } else if (key == "q_fp8" || key == "pv_fp8") {
      if (!v.is_boolean()) throw bad(key, v, "true or false");
      (key == "q_fp8" ? k.attention.q_fp8 : k.attention.pv_fp8) = v.get<bool>();
    } else if (key == "q_vec_dot") {
      if (v == "q8_0") k.attention.q_vec_dot = kernels::QVecDot::kQ8_0;
      else if (v == "f16") k.attention.q_vec_dot = kernels::QVecDot::kF16;
      else
        throw bad(key, v,
                  "\"q8_0\" (Q in q8_0 blocks of 32, as llama.cpp's CPU attention reads a q8_0 or q4_0 cache) or \"f16\" "
                  "(Q in f16, as it reads an f16 cache)");
    } else if (key == "q_scale") {
      if (!v.is_number() || !std::isfinite(v.get<double>()) || v.get<double>() <= 0 || v.get<double>() > 1e30)
        throw bad(key, v, "a finite number > 0 (the per-tensor Q scale; vLLM's uncalibrated default is 1.0)");
      k.attention.q_scale = v.get<float>();
      has_scale = true;
    } else if (key == "pv_accum") {
      if (v == "fp32") k.attention.pv_accum = kernels::PvAccum::kFp32;
      else if (v == "reduced") k.attention.pv_accum = kernels::PvAccum::kReduced;
      else if (v == "two_level") k.attention.pv_accum = kernels::PvAccum::kTwoLevel;
      else throw bad(key, v, "\"fp32\" (exact), \"reduced\" (Hopper FP8 MMA accumulator, FP22) or \"two_level\" (the fix)");
    } else if (key == "pv_promote_every") {
      if (!v.is_number_integer() || v.get<long long>() < kernels::kEmuStep || v.get<long long>() > 65536 ||
          v.get<long long>() % kernels::kEmuStep != 0)
        throw bad(key, v, "tokens between promotions: a multiple of 32 in 32..65536");
      k.attention.pv_promote_every = v.get<int>();
      has_promote = true;
    } else if (key == "cuda_graphs") {
      if (!v.is_boolean()) throw bad(key, v, "true (replay decode steps as CUDA graphs, the default) or false");
      k.cuda_graphs = v.get<bool>();
      k.has_cuda_graphs = true;
    } else if (key == "prefill_pool") {
      if (!v.is_boolean())
        throw bad(key, v, "true (prefill chunks decode quantized pages once a layer into a tile pool, the default) or false");
      k.prefill_pool = v.get<bool>();
      k.has_prefill_pool = true;
    } else if (key == "gemv") {
      if (v.is_boolean()) k.gemv_rows = v.get<bool>() ? 1 : 0;
      else if (v.is_number_integer() && v.get<int>() >= 0 && v.get<int>() <= 4) k.gemv_rows = v.get<int>();
      else
        throw bad(key, v,
                  "true (decode steps of one row on the fused GEMV, the default), false (cuBLAS for every step) or the "
                  "most rows a GEMV step takes, 0-4");
      k.has_gemv = true;
    } else if (key == "numerics") {
      if (!v.is_string() || (v != "exact" && v != "engine" && v != ""))
        throw bad(key, v,
                  "\"exact\" (fp32 Q and softmax weights; the CPU default) or \"engine\" (Q and softmax weights rounded to "
                  "bf16 before the products, fp32 accumulation, as FlashAttention and FlashInfer compute; the CUDA default; "
                  "\"\": the engine's default)");
      k.numerics = v.get<std::string>();
    } else if (key == "prefill_chunk") {
      if (v == "") continue;  // the engine's default
      if (!v.is_number_integer() || ((v.get<long long>() < 64 || v.get<long long>() > 65536 || v.get<long long>() % 64 != 0) &&
                                     v.get<long long>() != 0))
        throw bad(key, v, "rows per prefill forward pass: a multiple of 64 in 64..65536 (0 or \"\": the engine's default)");
      k.prefill_chunk = v.get<int>();
    } else {
      throw Error("--kernel-switches: unknown switch \"" + key + "\"; " + kernel_switches_help());
    }
  }
  if (has_scale && !k.attention.q_fp8) throw Error("--kernel-switches: \"q_scale\" needs \"q_fp8\": true");
  if (k.attention.q_fp8 && k.attention.q_vec_dot != kernels::QVecDot::kNone)
    throw Error("--kernel-switches: \"q_fp8\" and \"q_vec_dot\" both round Q (vLLM's fp8 Q for FlashAttention-3, "
                "llama.cpp's vec_dot type): keep one");
  if (k.attention.pv_accum != kernels::PvAccum::kFp32 && !k.attention.pv_fp8)
    throw Error("--kernel-switches: \"pv_accum\" \"reduced\"/\"two_level\" emulate the FP8 tensor-core accumulator: set "
                "\"pv_fp8\": true too");
  if (has_promote && k.attention.pv_accum != kernels::PvAccum::kTwoLevel)
    throw Error("--kernel-switches: \"pv_promote_every\" needs \"pv_accum\": \"two_level\"");
  k.attention.splits = k.attention_splits > 0 ? k.attention_splits : 1;
  return k;
}

}  // namespace kvgate::decoder
