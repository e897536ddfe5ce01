// kvgate make-model: a deterministic random-weight checkpoint, so tests need no downloads.
#include <iostream>
#include <memory>

#include "harness/cli/cli_common.h"
#include "harness/decoder/make_model.h"

namespace kvgate::cli {

namespace {
struct MakeModelCli {
  decoder::MakeModelOptions o;
  std::string out, tie = "default";
};
}  // namespace

void register_make_model(CLI::App& app, Commands& commands) {
  auto c = std::make_shared<MakeModelCli>();
  auto& o = c->o;
  CLI::App* sub = app.add_subcommand(
      "make-model",
      "Write a deterministic random-weight Hugging Face checkpoint (config.json, model.safetensors, tokenizer)");
  sub->add_option("--arch", o.arch, "qwen3, llama, qwen2 (q/k/v bias) or mistral")
      ->check(CLI::IsMember({"qwen3", "llama", "qwen2", "mistral"}))
      ->capture_default_str();
  sub->add_option("--seed", o.seed, "Seed of the weights")->capture_default_str();
  sub->add_option("--layers", o.layers, "Decoder layers")->check(CLI::PositiveNumber)->capture_default_str();
  sub->add_option("--hidden", o.hidden, "Hidden size")->check(CLI::PositiveNumber)->capture_default_str();
  sub->add_option("--heads", o.heads, "Attention heads")->check(CLI::PositiveNumber)->capture_default_str();
  sub->add_option("--kv-heads", o.kv_heads, "KV heads (GQA)")->check(CLI::PositiveNumber)->capture_default_str();
  sub->add_option("--head-dim", o.head_dim, "Head dimension")->check(CLI::PositiveNumber)->capture_default_str();
  sub->add_option("--intermediate", o.intermediate, "MLP intermediate size")->check(CLI::PositiveNumber)->capture_default_str();
  sub->add_option("--vocab", o.vocab, "Vocabulary size (0: the tokenizer's)")->check(CLI::NonNegativeNumber)->capture_default_str();
  sub->add_option("--merges", o.merges, "BPE merges of the synthetic tokenizer")->check(CLI::NonNegativeNumber)->capture_default_str();
  sub->add_option("--tie-embeddings", c->tie, "true, false or default (qwen3 tied, others not)")
      ->check(CLI::IsMember({"true", "false", "default"}))
      ->capture_default_str();
  sub->add_option("--rope-scaling", o.rope_scaling, "none, linear, llama3 or yarn")
      ->check(CLI::IsMember({"none", "linear", "llama3", "yarn"}))
      ->capture_default_str();
  sub->add_option("--rope-factor", o.rope_factor, "RoPE scaling factor")->capture_default_str();
  sub->add_option("--rope-theta", o.rope_theta, "RoPE base (0: 1e6 for qwen, 10000 otherwise)")->capture_default_str();
  sub->add_option("--rope-config", o.rope_config, "legacy (rope_theta + rope_scaling) or parameters (rope_parameters)")
      ->check(CLI::IsMember({"legacy", "parameters"}))
      ->capture_default_str();
  sub->add_option("--max-position", o.max_position, "max_position_embeddings")->check(CLI::PositiveNumber)->capture_default_str();
  sub->add_option("--original-max-position", o.original_max_position,
                  "llama3/yarn original_max_position_embeddings (0: max-position / rope-factor)")
      ->capture_default_str();
  sub->add_option("--sliding-window", o.sliding_window, "mistral sliding window (0: none)")->capture_default_str();
  sub->add_option("--dtype", o.dtype, "bf16, fp16 or fp32")->check(CLI::IsMember({"bf16", "fp16", "fp32"}))->capture_default_str();
  sub->add_option("--shards", o.shards, "Safetensors shards (more than 1 writes model.safetensors.index.json)")
      ->check(CLI::Range(1, 99))
      ->capture_default_str();
  sub->add_option("--out", c->out, "Directory to write")->required();
  commands.add(sub, [c] {
    if (c->tie != "default") c->o.tie_embeddings = c->tie == "true";
    const nlohmann::json summary = decoder::make_model(c->o, c->out);
    std::cout << summary.dump() << "\n";
    return 0;
  });
}

}  // namespace kvgate::cli
