#include "harness/calibrate/calibrate.h"

#include <algorithm>
#include <atomic>
#include <exception>
#include <mutex>
#include <thread>

#include "harness/core/error.h"

namespace kvgate::calibrate {

using nlohmann::json;

double format_max(const std::string& f) {
  if (f == "fp8_e4m3") return 448.0;
  if (f == "fp8_e5m2") return 57344.0;
  if (f == "nvfp4") return 6.0 * 448.0;
  throw Error("--kv-format " + f +
              ": calibrated scales are for the per-tensor formats fp8_e4m3, fp8_e5m2 and nvfp4 (the others scale per token "
              "or per block by themselves)");
}

kernels::KvScaleTable scales_from_absmax(const decoder::KvAbsmax& a, double fmax, const std::string& granularity) {
  if (granularity != "tensor" && granularity != "head")
    throw Error("--granularity " + granularity + ": must be tensor or head");
  const double floor = 1.0 / (fmax * 512.0);
  const auto scale = [&](float amax) { return static_cast<float>(std::max(static_cast<double>(amax) / fmax, floor)); };
  kernels::KvScaleTable t;
  t.granularity = granularity;
  for (std::size_t l = 0; l < a.k.size(); ++l) {
    std::vector<float> k(a.k[l].size()), v(a.v[l].size());
    if (granularity == "head") {
      for (std::size_t h = 0; h < k.size(); ++h) {
        k[h] = scale(a.k[l][h]);
        v[h] = scale(a.v[l][h]);
      }
    } else {
      const float mk = a.k[l].empty() ? 0.0f : *std::max_element(a.k[l].begin(), a.k[l].end());
      const float mv = a.v[l].empty() ? 0.0f : *std::max_element(a.v[l].begin(), a.v[l].end());
      std::fill(k.begin(), k.end(), scale(mk));
      std::fill(v.begin(), v.end(), scale(mv));
    }
    t.k.push_back(std::move(k));
    t.v.push_back(std::move(v));
  }
  return t;
}

Calibration calibrate(decoder::Engine& engine, const std::vector<std::vector<int>>& windows, const CalibrateOptions& o) {
  if (windows.empty()) throw Error("calibrate: the calibration text gives no tokens");
  Calibration c;
  c.format_max = format_max(o.kv_format);
  // Teacher forcing writes every token of the window to the cache; one logits row is enough.
  std::atomic<std::size_t> next{0};
  std::mutex mu;
  std::exception_ptr error;
  const auto work = [&] {
    for (std::size_t i; (i = next.fetch_add(1)) < windows.size();) {
      {
        std::lock_guard<std::mutex> lock(mu);
        if (error) return;
      }
      try {
        const std::vector<int>& w = windows[i];
        if (w.empty()) throw Error("calibrate: an empty window", kExitInternal);
        const int dummy[1] = {w[0]};  // predicts nothing we use: the window itself is what fills the cache
        engine.score(w, dummy);
      } catch (...) {
        std::lock_guard<std::mutex> lock(mu);
        if (!error) error = std::current_exception();
      }
    }
  };
  const int parallel = std::max(1, std::min<int>(o.parallel, static_cast<int>(windows.size())));
  std::vector<std::thread> threads;
  for (int t = 1; t < parallel; ++t) threads.emplace_back(work);
  work();
  for (std::thread& t : threads) t.join();
  if (error) std::rethrow_exception(error);
  for (const auto& w : windows) c.tokens += static_cast<long long>(w.size());
  c.windows = static_cast<int>(windows.size());
  c.amax = engine.kv_absmax();
  c.scales = scales_from_absmax(c.amax, c.format_max, o.granularity);
  return c;
}

json kvgate_scales_json(const Calibration& c, const CalibrateOptions& o, const json& provenance) {
  json j = kernels::kv_scales_to_json(c.scales);
  json amax = json::array();
  for (std::size_t l = 0; l < c.amax.k.size(); ++l) amax.push_back({{"k", c.amax.k[l]}, {"v", c.amax.v[l]}});
  json cal = provenance;
  cal["kv_format"] = o.kv_format;
  cal["format_max"] = c.format_max;
  cal["rule"] = "scale = max(amax / format_max, 1 / (format_max * 512)); x ~ q * scale";
  cal["observed"] = "K after k_norm and RoPE, V as projected, as a bf16 cache holds them";
  cal["tokens"] = c.tokens;
  cal["windows"] = c.windows;
  j["calibration"] = cal;
  j["amax"] = {{"granularity", "head"}, {"layers", amax}};
  return j;
}

json sglang_scales_json(const kernels::KvScaleTable& s, const std::string& kv_format, const std::string& model_type, int tp) {
  if (kv_format != "fp8_e4m3")
    throw Error("SGLang's --quantization-param-path takes float8_e4m3fn scales only; calibrate with --kv-format fp8_e4m3 "
                "to export them (kvgate's own file works for " + kv_format + ")");
  if (s.k.empty()) throw Error("calibrate: no layers to export", kExitInternal);
  const int heads = static_cast<int>(s.k[0].size());
  if (tp < 1 || (heads % tp != 0 && tp % heads != 0))
    throw Error("--tp " + std::to_string(tp) + ": must divide the model's " + std::to_string(heads) +
                " KV heads, or be a multiple of it (heads replicated)");
  json ranks = json::object();
  for (int r = 0; r < tp; ++r) {
    int h0, h1;  // the KV heads rank r holds
    if (tp <= heads) {
      h0 = r * heads / tp;
      h1 = (r + 1) * heads / tp;
    } else {
      h0 = r / (tp / heads);
      h1 = h0 + 1;
    }
    json layers = json::object();
    for (std::size_t l = 0; l < s.k.size(); ++l) {
      float m = 0.0f;
      for (int h = h0; h < h1; ++h) m = std::max({m, s.k[l][h], s.v[l][h]});
      layers[std::to_string(l)] = m;
    }
    ranks[std::to_string(r)] = std::move(layers);
  }
  return {{"model_type", model_type}, {"kv_cache", {{"dtype", "float8_e4m3fn"}, {"scaling_factor", std::move(ranks)}}}};
}

}  // namespace kvgate::calibrate
