#include "harness/kld/per_layer.h"

#include <algorithm>
#include <cstdio>

#include "harness/core/error.h"

namespace kvgate::kld {

using nlohmann::json;

kernels::KvStoreOptions only_layer(const kernels::KvStoreOptions& kv, int layer, int layers) {
  if (layer < 0 || layer >= layers)
    throw Error("kld: layer " + std::to_string(layer) + " out of range for a " + std::to_string(layers) + "-layer model",
                kExitInternal);
  kernels::KvStoreOptions o = kv;
  if (!o.params.is_object()) o.params = json::object();
  json skip = json::array();
  for (int l = 0; l < layers; ++l)
    if (l != layer) skip.push_back(l);
  o.params["skip_layers"] = skip;
  return o;
}

std::vector<LayerKld> per_layer_kld(std::shared_ptr<const decoder::Model> model, const decoder::EngineOptions& candidate,
                                    const std::vector<std::vector<int>>& chunks, const KldRunOptions& options,
                                    const std::function<void(int layers_done, int layers)>& progress, json* engine) {
  if (candidate.kv.format == "bf16")
    throw Error("kld --per-layer: the candidate's format is bf16, the baseline itself: give the format to test "
                "(e.g. --kv-format fp8_e4m3)");
  const int layers = model->config().num_layers;
  decoder::EngineOptions base_options = candidate;
  base_options.kv = {.format = "bf16"};
  base_options.kernel_switches = json::object();  // the baseline is the exact bf16 engine
  // One baseline engine for every layer: its sessions stay warm and its logits do not change.
  std::unique_ptr<decoder::Engine> base = decoder::make_engine(model, base_options);
  std::vector<LayerKld> out;
  KldRunOptions o = options;
  o.on_chunk = {};  // chunk lines of every layer would interleave; progress is per layer
  for (int l = 0; l < layers; ++l) {
    decoder::EngineOptions test_options = candidate;
    test_options.kv = only_layer(candidate.kv, l, layers);
    std::unique_ptr<decoder::Engine> test = decoder::make_engine(model, test_options);
    if (engine && l == 0) *engine = test->describe();
    out.push_back({.layer = l, .summary = run_kld(*base, *test, chunks, o).summary});
    if (progress) progress(l + 1, layers);
  }
  std::stable_sort(out.begin(), out.end(),
                   [](const LayerKld& a, const LayerKld& b) { return a.summary.kld.mean > b.summary.kld.mean; });
  return out;
}

std::string per_layer_text(const std::vector<LayerKld>& layers) {
  std::string o = "rank  layer     Mean KLD ±        unc   99.9% KLD     Maximum   Same top p     RMS Δp\n";
  char buf[256];
  int rank = 0;
  for (const LayerKld& l : layers) {
    const Summary& s = l.summary;
    std::snprintf(buf, sizeof buf, "%4d  %5d  %10.6lf ± %10.6lf  %10.6lf  %10.6lf  %8.3lf %%  %7.3lf %%\n", ++rank, l.layer,
                  s.kld.mean, s.kld.unc, percentile(s.kld_sorted, 0.999), s.kld_sorted.empty() ? 0.0 : s.kld_sorted.back(),
                  100.0 * s.same_top.mean, 100.0 * s.rms_p_diff.mean);
    o += buf;
  }
  return o;
}

json per_layer_json(const std::vector<LayerKld>& layers, const json& context) {
  json rows = json::array();
  for (const LayerKld& l : layers) {
    const Summary& s = l.summary;
    rows.push_back({{"layer", l.layer},
                    {"kld_mean", s.kld.mean},
                    {"kld_uncertainty", s.kld.unc},
                    {"kld_99.9", percentile(s.kld_sorted, 0.999)},
                    {"kld_max", s.kld_sorted.empty() ? 0.0 : s.kld_sorted.back()},
                    {"same_top_p", s.same_top.mean},
                    {"same_top_p_uncertainty", s.same_top.unc},
                    {"rms_delta_p", s.rms_p_diff.mean},
                    {"positions", s.sums.count}});
  }
  json j = context;
  j["per_layer"] = rows;
  j["sorted_by"] = "kld_mean, largest first";
  return j;
}

}  // namespace kvgate::kld
