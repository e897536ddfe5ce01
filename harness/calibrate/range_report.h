// `kvgate calibrate --report`: where the K/V values sit against a per-tensor FP8 format's range,
// per layer and K/V. Absmax and the 99.99th percentile of |x| tell a rare spike (absmax far above
// the percentile) from an outlier channel (both far above the other layers'); for the scales being
// written (or one scale everywhere, e.g. 1.0, what an uncalibrated engine uses): the fraction of
// values clipped (|x / scale| above the format's largest value beyond float rounding: saturated),
// the fraction flushed to zero (x != 0 whose round trip is 0) and the round-trip RMS error, through
// the codec the cache uses (codec_fp8_per_tensor.h).
#pragma once
#include <memory>
#include <span>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "harness/decoder/model.h"
#include "kernels/kv_scales.h"

namespace kvgate::calibrate {

struct RangeStats {
  long long count = 0;
  double absmax = 0, p9999 = 0;   // of |x|; p9999 by linear interpolation on the sorted values
  double clipped = 0, flushed = 0;  // fractions of count
  double rms_error = 0;           // sqrt(mean (x - roundtrip(x))^2)
  float scale_min = 0, scale_max = 0;  // the scales applied (one per KV head)
};

// Values of one tensor, [kv_head][values], each head with its own scale.
RangeStats range_stats(const std::vector<std::vector<float>>& heads, const std::vector<float>& scales,
                       const std::string& kv_format);

struct LayerRange {
  int layer = 0;
  RangeStats k, v;
};

// Every window through a CPU session with a bf16 cache (the values a bf16 cache holds, K after
// k_norm and RoPE), then each layer's K and V against `scales` (per layer and head).
std::vector<LayerRange> range_report(std::shared_ptr<const decoder::Model> model,
                                     const std::vector<std::vector<int>>& windows, const kernels::KvScaleTable& scales,
                                     const std::string& kv_format, int threads);

// A scale table with one value everywhere (--report-scale).
kernels::KvScaleTable uniform_scales(int layers, int kv_heads, float scale);

std::string range_report_text(const std::vector<LayerRange>& r, const std::string& kv_format, const std::string& scales_label);
nlohmann::json range_report_json(const std::vector<LayerRange>& r, const std::string& kv_format, const std::string& scales_label);

}  // namespace kvgate::calibrate
