// kvgate capacity: KV bytes per token and how many tokens and sequences fit.
#include <iostream>
#include <memory>
#include <sstream>

#include "harness/capacity/capacity.h"
#include "harness/cli/cli_common.h"
#include "harness/core/error.h"

namespace kvgate::cli {

namespace {
struct CapacityArgs {
  std::string config, kv_format, skip_layers, kv_params;
  capacity::CapacityOptions options;
  double weights_gb = -1.0;
  bool json = false, layout = false;
};

int run_capacity(const CapacityArgs& a) {
  capacity::CapacityOptions o = a.options;
  if (a.weights_gb >= 0) o.weights_gb = a.weights_gb;
  nlohmann::json params = nlohmann::json::object();
  if (!a.kv_params.empty()) {
    params = nlohmann::json::parse(a.kv_params, nullptr, false);
    if (params.is_discarded() || !params.is_object())
      throw Error("--kv-params: not a JSON object (e.g. '{\"rounding\": \"trunc\"}')");
  }
  if (!a.skip_layers.empty()) params["skip_layers"] = a.skip_layers;
  const capacity::ModelDims model = capacity::read_model_dims(a.config);
  std::vector<capacity::CapacityRow> rows;
  std::stringstream ss(a.kv_format);
  std::string f;
  while (std::getline(ss, f, ','))
    if (!f.empty()) rows.push_back(capacity::plan_capacity(model, {f, params}, o));
  if (rows.empty()) throw Error("--kv-format: give at least one format (e.g. bf16,fp8_e4m3)");
  if (a.json) {
    if (rows.size() == 1) {
      std::cout << capacity::capacity_json(rows[0], model, o).dump(2) << "\n";
    } else {
      nlohmann::json all = nlohmann::json::array();
      for (const auto& r : rows) all.push_back(capacity::capacity_json(r, model, o));
      std::cout << nlohmann::json{{"formats", all}}.dump(2) << "\n";
    }
  } else {
    std::cout << capacity::capacity_table(rows, model, o, a.layout);
  }
  return 0;
}
}  // namespace

void register_capacity(CLI::App& app, Commands& commands) {
  auto a = std::make_shared<CapacityArgs>();
  CLI::App* sub = app.add_subcommand("capacity", "KV-cache capacity planner: bytes per token, tokens and sequences that fit, per format");
  sub->add_option("--config", a->config, "The model's config.json")->required();
  sub->add_option("--kv-format", a->kv_format, "KV-cache format(s), comma separated (e.g. bf16,fp8_e4m3,int4_per_token_head)")->required();
  sub->add_option("--gpu-mem-gb", a->options.gpu_mem_gb, "GPU memory, GB (10^9 bytes)")->capture_default_str();
  sub->add_option("--mem-util", a->options.mem_util, "Fraction of GPU memory the engine may use")->capture_default_str();
  sub->add_option("--overhead-gb", a->options.overhead_gb, "Activations, CUDA graphs and runtime, GB")->capture_default_str();
  sub->add_option("--weights-gb", a->weights_gb, "Weight memory, GB, all GPUs together (default: from the config's parameter count in --weights-dtype)");
  sub->add_option("--weights-dtype", a->options.weights_dtype, "Weights when --weights-gb is not given: bf16 | fp8 (linear layers in 1 byte)")
      ->capture_default_str();
  sub->add_option("--seq-len", a->options.seq_len, "Tokens per sequence")->capture_default_str();
  sub->add_option("--tp", a->options.tp, "Tensor-parallel GPUs (KV heads split across them)")->capture_default_str();
  sub->add_option("--block-size", a->options.block_size, "Tokens per cache block: capacity rounds down to whole blocks (vLLM: 16)")
      ->capture_default_str();
  sub->add_option("--kv-skip-layers", a->skip_layers, "Layers kept in bf16, e.g. 0,1,-2,-1 (default: none; turboquant_*: first and last two)");
  sub->add_option("--kv-params", a->kv_params, "Format parameters as a JSON object (kernels/kv_format.h)");
  sub->add_flag("--layout", a->layout, "Print each format's byte layout of one (token, KV head) under its row");
  sub->add_flag("--json", a->json, "One JSON object: bytes_per_token, kv_budget_bytes, tokens, sequences, ... ({\"formats\": [...]} for several)");
  commands.add(sub, [a] { return run_capacity(*a); });
}

}  // namespace kvgate::cli
