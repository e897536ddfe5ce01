// Which layers hurt: `kvgate kld --per-layer` as a library call. Each layer in turn is the only one
// the cache quantizes (every other layer kept in bf16 through the format's skip_layers), scored
// against a bf16 engine with run_kld, so a layer's KLD is its own damage, not its share of a sum.
// What seed 000's step 6 ("skip the sensitive layers") needs to pick the layers to skip.
#pragma once
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "harness/decoder/engine.h"
#include "harness/decoder/model.h"
#include "harness/kld/kld_run.h"
#include "harness/kld/kld_stats.h"

namespace kvgate::kld {

struct LayerKld {
  int layer = 0;
  Summary summary;
};

// One run per layer: the cache quantizes only `layer` in candidate.kv's format and parameters
// (every other layer kept in bf16 through skip_layers), scored against a bf16 engine on `chunks`
// (run_kld). Sorted by mean KLD, largest first. `engine`, when given, receives the first test
// engine's describe() (the caller's provenance: this call makes every engine it scores with).
std::vector<LayerKld> per_layer_kld(std::shared_ptr<const decoder::Model> model, const decoder::EngineOptions& candidate,
                                    const std::vector<std::vector<int>>& chunks, const KldRunOptions& options,
                                    const std::function<void(int layers_done, int layers)>& progress = {},
                                    nlohmann::json* engine = nullptr);

// candidate.kv with skip_layers = every layer but `layer` (the candidate's own skip list is replaced).
kernels::KvStoreOptions only_layer(const kernels::KvStoreOptions& kv, int layer, int layers);

// A table, largest KLD first: rank, layer, mean KLD ± uncertainty, 99.9% KLD, maximum, same top p, RMS Δp.
std::string per_layer_text(const std::vector<LayerKld>& layers);
// {"per_layer": [{"layer", "kld_mean", "kld_uncertainty", "kld_99.9", "kld_max", "same_top_p",
// "same_top_p_uncertainty", "rms_delta_p", "positions"}, ...]} merged into `context`.
nlohmann::json per_layer_json(const std::vector<LayerKld>& layers, const nlohmann::json& context);

}  // namespace kvgate::kld
