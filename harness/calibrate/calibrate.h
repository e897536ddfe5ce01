// `kvgate calibrate` as a library call: calibration text through the model with a bf16 cache (what
// the engines hold before quantizing), the absolute maximum of every K (after k_norm and RoPE, as
// cached) and V per layer and KV head, and scales = amax / the format's largest value, so the
// largest value seen maps to the format's largest code. Written in kvgate's scales format
// (kv_scales.h; --kv-scales reads it back) and exported in SGLang's / vLLM's
// --quantization-param-path layout.
#pragma once
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "harness/decoder/engine.h"
#include "kernels/kv_scales.h"

namespace kvgate::calibrate {

struct CalibrateOptions {
  std::string kv_format = "fp8_e4m3";  // what the scales are for: fp8_e4m3, fp8_e5m2 or nvfp4
  std::string granularity = "tensor";  // "tensor": one scale per layer; "head": one per KV head
  int parallel = 1;                    // windows in flight at once (an engine that batches takes them together)
};

// The largest magnitude a scale maps amax to: 448 (e4m3), 57344 (e5m2), 6 * 448 (nvfp4: the E2M1
// maximum times the largest E4M3 block scale, so the tensor scale is amax / 2688 as in
// TensorRT-LLM). Other formats take no per-tensor scales: an Error says so.
double format_max(const std::string& kv_format);

// A scale never goes below amax_floor / format max (1 / (format max * 512), vLLM's
// min_scaling_factor), so an all-zero layer still gets a valid, positive scale.
kernels::KvScaleTable scales_from_absmax(const decoder::KvAbsmax& amax, double format_max, const std::string& granularity);

struct Calibration {
  decoder::KvAbsmax amax;
  kernels::KvScaleTable scales;
  double format_max = 0;
  long long tokens = 0;
  int windows = 0;
};

// Runs every window (each >= 1 token) through `engine`, which must be fresh (its maxima start
// empty) and hold a bf16 (or fp32) cache.
Calibration calibrate(decoder::Engine& engine, const std::vector<std::vector<int>>& windows, const CalibrateOptions& options);

// kvgate's scales file: kv_scales_to_json plus "calibration" (provenance, the format, its max) and
// "amax" (the maxima the scales came from).
nlohmann::json kvgate_scales_json(const Calibration& c, const CalibrateOptions& o, const nlohmann::json& provenance);

// SGLang's --quantization-param-path JSON (vLLM's QuantParamSchema): {"model_type", "kv_cache":
// {"dtype": "float8_e4m3fn", "scaling_factor": {rank: {layer: scale}}}}, one scale per layer shared
// by K and V (the larger of the two, so neither saturates), per rank the largest over the KV heads
// that rank holds under tensor parallelism `tp`. fp8_e4m3 only (the only dtype the schema takes).
nlohmann::json sglang_scales_json(const kernels::KvScaleTable& scales, const std::string& kv_format,
                                  const std::string& model_type, int tp);

}  // namespace kvgate::calibrate
