// kvgate make-model: a deterministic random-weight checkpoint, so tests need no downloads.
#include <memory>

#include "cli_common.h"

namespace kvgate::cli {

namespace {
struct MakeModelOptions {
  std::string arch = "qwen3", out;
  std::uint64_t seed = 1;
  int layers = 2, hidden = 64, heads = 4, kv_heads = 2, head_dim = 16, intermediate = 128, vocab = 0;
};
}  // namespace

void register_make_model(CLI::App& app, Commands& commands) {
  auto o = std::make_shared<MakeModelOptions>();
  CLI::App* sub = app.add_subcommand("make-model", "Write a deterministic random-weight Hugging Face checkpoint (config.json, model.safetensors, tokenizer)");
  sub->add_option("--arch", o->arch, "qwen3 or llama")->check(CLI::IsMember({"qwen3", "llama"}))->capture_default_str();
  sub->add_option("--seed", o->seed, "Seed of the weights")->capture_default_str();
  sub->add_option("--layers", o->layers, "Decoder layers")->check(CLI::PositiveNumber)->capture_default_str();
  sub->add_option("--hidden", o->hidden, "Hidden size")->check(CLI::PositiveNumber)->capture_default_str();
  sub->add_option("--heads", o->heads, "Attention heads")->check(CLI::PositiveNumber)->capture_default_str();
  sub->add_option("--kv-heads", o->kv_heads, "KV heads (GQA)")->check(CLI::PositiveNumber)->capture_default_str();
  sub->add_option("--head-dim", o->head_dim, "Head dimension")->check(CLI::PositiveNumber)->capture_default_str();
  sub->add_option("--intermediate", o->intermediate, "MLP intermediate size")->check(CLI::PositiveNumber)->capture_default_str();
  sub->add_option("--vocab", o->vocab, "Vocabulary size (0: the tokenizer's)")->capture_default_str();
  sub->add_option("--out", o->out, "Directory to write")->required();
  commands.add(sub, [o] { return not_built("make-model", 10); });
}

}  // namespace kvgate::cli
