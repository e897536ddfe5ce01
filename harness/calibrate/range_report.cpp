#include "harness/calibrate/range_report.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "harness/core/error.h"
#include "harness/decoder/session.h"
#include "kernels/codec_fp8_per_tensor.h"

namespace kvgate::calibrate {

using nlohmann::json;

namespace {

kernels::Fp8Kind fp8_kind(const std::string& f) {
  if (f == "fp8_e4m3") return kernels::Fp8Kind::kE4M3;
  if (f == "fp8_e5m2") return kernels::Fp8Kind::kE5M2;
  throw Error("--report: clip and flush fractions are for the per-tensor FP8 formats (--kv-format fp8_e4m3 or "
              "fp8_e5m2), not " + f);
}

double percentile_sorted(const std::vector<float>& v, double f) {
  if (v.empty()) return 0;
  const double at = f * static_cast<double>(v.size() - 1);
  const std::size_t lo = static_cast<std::size_t>(at);
  const std::size_t hi = std::min(lo + 1, v.size() - 1);
  return v[lo] + (at - static_cast<double>(lo)) * (static_cast<double>(v[hi]) - v[lo]);
}

}  // namespace

RangeStats range_stats(const std::vector<std::vector<float>>& heads, const std::vector<float>& scales,
                       const std::string& kv_format) {
  const kernels::Fp8Kind kind = fp8_kind(kv_format);
  const double fmax = kind == kernels::Fp8Kind::kE4M3 ? kernels::kFp8E4M3Max : 57344.0;
  if (heads.size() != scales.size()) throw Error("range report: one scale per KV head expected", kExitInternal);
  // A value at the calibrated absmax divides to the format's max within the float rounding of its
  // scale (amax / max); that is the largest code, not saturation.
  const double clip_above = fmax * (1.0 + 1e-6);
  RangeStats s;
  std::vector<float> mags;
  long long clipped = 0, flushed = 0;
  double sq = 0;
  for (std::size_t h = 0; h < heads.size(); ++h) {
    const float scale = scales[h];
    if (!(scale > 0)) throw Error("range report: scales must be positive", kExitInternal);
    s.scale_min = h == 0 ? scale : std::min(s.scale_min, scale);
    s.scale_max = std::max(s.scale_max, scale);
    for (const float x : heads[h]) {
      const float back = kernels::fp8_tensor_decode(kernels::fp8_tensor_encode(x, scale, kind), scale, kind);
      if (std::fabs(static_cast<double>(x) / scale) > clip_above) ++clipped;
      if (x != 0.0f && back == 0.0f) ++flushed;
      const double d = static_cast<double>(x) - back;
      sq += d * d;
      mags.push_back(std::fabs(x));
    }
  }
  s.count = static_cast<long long>(mags.size());
  if (s.count == 0) return s;
  std::sort(mags.begin(), mags.end());
  s.absmax = mags.back();
  s.p9999 = percentile_sorted(mags, 0.9999);
  s.clipped = static_cast<double>(clipped) / static_cast<double>(s.count);
  s.flushed = static_cast<double>(flushed) / static_cast<double>(s.count);
  s.rms_error = std::sqrt(sq / static_cast<double>(s.count));
  return s;
}

kernels::KvScaleTable uniform_scales(int layers, int kv_heads, float scale) {
  kernels::KvScaleTable t;
  t.granularity = "tensor";
  t.k.assign(static_cast<std::size_t>(layers), std::vector<float>(static_cast<std::size_t>(kv_heads), scale));
  t.v = t.k;
  return t;
}

std::vector<LayerRange> range_report(std::shared_ptr<const decoder::Model> model, const std::vector<std::vector<int>>& windows,
                                     const kernels::KvScaleTable& scales, const std::string& kv_format, int threads) {
  fp8_kind(kv_format);  // a format without clip/flush semantics fails before any work
  const decoder::ModelConfig& c = model->config();
  const int layers = c.num_layers, heads = c.num_kv_heads, d = c.head_dim;
  if (static_cast<int>(scales.k.size()) != layers || static_cast<int>(scales.v.size()) != layers)
    throw Error("range report: the scales do not cover the model's layers", kExitInternal);
  // [layer][head] -> values
  std::vector<std::vector<std::vector<float>>> ks(layers, std::vector<std::vector<float>>(heads)), vs = ks;
  decoder::Session s(model, {.kv = {.format = "bf16"}, .threads = threads});
  std::vector<float> k, v;
  for (const std::vector<int>& w : windows) {
    s.reset();
    s.forward(w, 0, {});
    for (int l = 0; l < layers; ++l) {
      const int n = s.kv().size(l);
      k.resize(static_cast<std::size_t>(n) * d);
      v.resize(k.size());
      for (int h = 0; h < heads; ++h) {
        s.kv().read(l, h, 0, n, k.data(), v.data());
        ks[l][h].insert(ks[l][h].end(), k.begin(), k.end());
        vs[l][h].insert(vs[l][h].end(), v.begin(), v.end());
      }
    }
  }
  std::vector<LayerRange> out;
  for (int l = 0; l < layers; ++l) {
    out.push_back({.layer = l, .k = range_stats(ks[l], scales.k[l], kv_format), .v = range_stats(vs[l], scales.v[l], kv_format)});
    ks[l].clear();
    vs[l].clear();
  }
  return out;
}

namespace {

std::string scale_text(const RangeStats& s) {
  char buf[64];
  if (s.scale_min == s.scale_max)
    std::snprintf(buf, sizeof buf, "%.4g", s.scale_min);
  else
    std::snprintf(buf, sizeof buf, "%.4g-%.4g", s.scale_min, s.scale_max);
  return buf;
}

json stats_json(const RangeStats& s) {
  return {{"values", s.count},   {"absmax", s.absmax},   {"p99_99", s.p9999},         {"scale_min", s.scale_min},
          {"scale_max", s.scale_max}, {"clipped", s.clipped}, {"flushed_to_zero", s.flushed}, {"rms_error", s.rms_error}};
}

}  // namespace

std::string range_report_text(const std::vector<LayerRange>& r, const std::string& kv_format, const std::string& scales_label) {
  std::string o = "K/V ranges against " + kv_format + " at " + scales_label + " (clipped: |x/scale| > the format's max; " +
                  "flushed: x != 0 stored as 0)\n";
  o += "layer  K/V        absmax    99.99%  absmax/99.99%        scale    clipped %    flushed %   RMS error\n";
  char buf[256];
  for (const LayerRange& l : r)
    for (const auto& [name, s] : {std::pair<const char*, const RangeStats&>{"K", l.k}, {"V", l.v}}) {
      std::snprintf(buf, sizeof buf, "%5d  %-3s  %10.4g  %8.4g  %13.1f  %11s  %11.4f  %11.4f  %10.4g\n", l.layer, name, s.absmax,
                    s.p9999, s.p9999 > 0 ? s.absmax / s.p9999 : 0.0, scale_text(s).c_str(), 100.0 * s.clipped,
                    100.0 * s.flushed, s.rms_error);
      o += buf;
    }
  return o;
}

json range_report_json(const std::vector<LayerRange>& r, const std::string& kv_format, const std::string& scales_label) {
  json layers = json::array();
  for (const LayerRange& l : r) layers.push_back({{"layer", l.layer}, {"k", stats_json(l.k)}, {"v", stats_json(l.v)}});
  return {{"kv_format", kv_format},
          {"scales", scales_label},
          {"definitions",
           {{"clipped", "fraction of values with |x / scale| above the format's largest finite value (saturated)"},
            {"flushed_to_zero", "fraction of values x != 0 whose round trip through the format is 0"},
            {"rms_error", "sqrt(mean((x - dequantize(quantize(x)))^2)), in the values' own units"},
            {"p99_99", "99.99th percentile of |x| (linear interpolation)"}}},
          {"layers", layers}};
}

}  // namespace kvgate::calibrate
