// A KV-cache format resolved for one model: its parameters with every default filled in (what
// run.json records), its byte layout and its size. The stores (make_kv_store) and the capacity
// planner both start here, so a format's size is computed in one place.
//
// Formats (--kv-format) and their parameters (KvStoreOptions::params, a JSON object):
//   every format:
//     skip_layers   [int] or "0,1,-2,-1": layers kept in bf16 (negative counts from the end), as vLLM's
//                   --kv-cache-dtype-skip-layers; default [] (turboquant_*: the first and last two
//                   layers, capped at layers/2, as vLLM protects them on dense models); a no-op for bf16
//   every format but fp32/bf16:
//     input_dtype   "bf16" (default: the engines cache K/V in the model dtype, so inputs are rounded to
//                   bf16 first) | "fp32" (quantize the decoder's fp32 values directly)
//   fp32, bf16, fp16            nothing else
//   fp8_e4m3, fp8_e5m2          k_scale, v_scale: numbers (default 1.0, vLLM's uncalibrated scale);
//                               scales: a scales object or the path of a scales file (kv_scales.h),
//                               per layer or per KV head; replaces k_scale/v_scale
//   fp8_per_token_head          -
//   int8_per_token_head         rounding: "rne" (default, vLLM since PR #45361) | "trunc" (older vLLM)
//   int4_per_token_head         hadamard: bool (default true, as vLLM); hadamard_signs: "+-+..." or
//                               [1,-1,...] (head_dim signs, e.g. vLLM's torch-generated vector);
//                               hadamard_seed: integer (default 2654435769) used when no signs are given
//   nvfp4                       k_tensor_scale, v_tensor_scale: numbers (default 1.0); scales: as fp8
//   q8_0, q4_0                  rotate: bool (default: head_dim % 64 == 0, as llama.cpp's attn_rot;
//                               LLAMA_ATTN_ROT_DISABLE=1 is rotate: false)
//   turboquant_k8v4, turboquant_4bit_nc, turboquant_k3v4_nc, turboquant_3bit_nc   -
//   kivi2                       group_size: int (default 32), residual: int (default 128)
// Unknown parameters are errors (a typo must not silently run the default).
#pragma once
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "kernels/codec_per_token_head.h"
#include "kernels/codec_turboquant.h"
#include "kernels/kv_scales.h"
#include "kernels/kv_store.h"

namespace kvgate::kernels {

// Bytes of one (token, KV head) of one layer, scales included.
struct KvLayerBytes {
  std::string codec;  // the format, or "bf16" for a skipped layer
  double k = 0, v = 0;
};

struct KvFormatSpec {
  std::string format;
  KvShape shape;
  nlohmann::json params = nlohmann::json::object();  // resolved: every parameter, defaults filled in
  std::vector<KvLayerBytes> layers;
  std::string layout;  // the byte layout of one (token, head), in words

  // Resolved parameters, typed, for the stores.
  bool round_input_bf16 = true;
  std::vector<int> skip_layers;  // sorted, non-negative
  KvScaleTable scales;           // fp8_e4m3/e5m2: dequant scales; nvfp4: tensor scales
  IntRounding rounding = IntRounding::kRne;
  std::vector<float> hadamard_signs;  // int4_per_token_head with hadamard; empty without
  int k_rotation_block = 0, v_rotation_block = 0;  // q8_0/q4_0: 0 = no rotation
  TurboQuantPreset turboquant{};
  int kivi_group = 32, kivi_residual = 128, kivi_bits = 2;

  bool skipped(int layer) const;
  // Bytes per token over all layers, K and V, scales included (the steady state for kivi2).
  double bytes_per_token() const;
  // Bytes one sequence of `tokens` tokens holds: bytes_per_token() * tokens, plus kivi2's
  // full-precision residual window.
  double bytes_for_sequence(long long tokens) const;
  // {"format": ..., <params>, "bytes_per_token": ...}: what run.json's "kv" records.
  nlohmann::json record() const;
};

// Sanity limits on a model's KV shape (a config beyond them is an error, not an allocation).
constexpr int kMaxLayers = 4096, kMaxKvHeads = 4096, kMaxHeadDim = 16384;

// TEST ONLY, deliberately broken: bf16 K, and V read back as zeros. End-to-end tests use it to show
// that a gate FAILs a broken candidate. Accepted by resolve_kv_format and make_kv_store (CPU), never
// listed by kv_format_names(), --help or docs/kv-formats.md.
inline constexpr const char* kTestBrokenZeroV = "test_broken_zero_v";

// Every --kv-format, in a stable order.
const std::vector<std::string>& kv_format_names();

// Checks the format and its parameters against the model's shape; errors name the parameter and the fix.
KvFormatSpec resolve_kv_format(const KvStoreOptions& options, const KvShape& shape);

}  // namespace kvgate::kernels
