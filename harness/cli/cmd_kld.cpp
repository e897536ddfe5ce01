// kvgate kld: teacher-forced, cache-reading KL divergence of a KV format against bf16.
#include <memory>

#include "cli_common.h"

namespace kvgate::cli {

namespace {
struct KldOptions {
  std::string model_dir, kv_format, text, device;
  long long ctx = 0;
  bool json = false;
};
}  // namespace

void register_kld(CLI::App& app, Commands& commands) {
  auto o = std::make_shared<KldOptions>();
  CLI::App* sub = app.add_subcommand("kld", "KL divergence against bf16 with every position reading the quantized cache");
  sub->add_option("--model-dir", o->model_dir, "Hugging Face checkpoint directory")->required();
  sub->add_option("--kv-format", o->kv_format, "KV-cache format")->required();
  sub->add_option("--text", o->text, "Text file to score")->required();
  sub->add_option("--ctx", o->ctx, "Context length per chunk (default: the whole text, up to the model's maximum)");
  sub->add_option("--device", o->device, "cuda or cpu")->check(CLI::IsMember({"cuda", "cpu"}));
  sub->add_flag("--json", o->json, "One JSON object (kld_mean, percentiles, same-top-token %, ...)");
  commands.add(sub, [o] { return not_built("kld", 13); });
}

}  // namespace kvgate::cli
