// kvgate capacity: KV bytes per token and how many tokens and sequences fit.
#include <memory>

#include "cli_common.h"

namespace kvgate::cli {

namespace {
struct CapacityOptions {
  std::string config, kv_format;
  double gpu_mem_gb = 141.0, mem_util = 0.92, overhead_gb = 6.0, weights_gb = -1.0;
  long long seq_len = 32768;
  int tp = 1;
  bool json = false;
};
}  // namespace

void register_capacity(CLI::App& app, Commands& commands) {
  auto o = std::make_shared<CapacityOptions>();
  CLI::App* sub = app.add_subcommand("capacity", "KV-cache capacity planner: bytes per token, tokens and sequences that fit, per format");
  sub->add_option("--config", o->config, "The model's config.json")->required();
  sub->add_option("--kv-format", o->kv_format, "KV-cache format(s), comma separated")->required();
  sub->add_option("--gpu-mem-gb", o->gpu_mem_gb, "GPU memory, GB")->capture_default_str();
  sub->add_option("--mem-util", o->mem_util, "Fraction of GPU memory the engine may use")->capture_default_str();
  sub->add_option("--overhead-gb", o->overhead_gb, "Activations, CUDA graphs and runtime, GB")->capture_default_str();
  sub->add_option("--weights-gb", o->weights_gb, "Weight memory, GB (default: from the config's parameter count in bf16)");
  sub->add_option("--seq-len", o->seq_len, "Tokens per sequence")->capture_default_str();
  sub->add_option("--tp", o->tp, "Tensor-parallel GPUs")->capture_default_str();
  sub->add_flag("--json", o->json, "One JSON object: bytes_per_token, kv_budget_bytes, tokens, sequences");
  commands.add(sub, [o] { return not_built("capacity", 11); });
}

}  // namespace kvgate::cli
