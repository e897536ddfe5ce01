// kvgate gen gsm8k: GSM8K test problems as trials (datasets/gsm8k).
#include <memory>
#include <optional>

#include "harness/core/log.h"
#include "harness/core/trial.h"
#include "harness/cli/gen_common.h"
#include "datasets/gsm8k/gsm8k_data.h"
#include "datasets/gsm8k/gsm8k_prompts.h"

namespace kvgate::cli {

namespace {

struct Gsm8kCliOptions {
  GenCommonOptions common;
  std::string data, train, style = "gsm8k", system, primary = "strict", mirror = kGsm8kBaseUrl;
  std::optional<std::size_t> limit;
  std::optional<int> num_fewshot, max_tokens;
};

Gsm8kFile load_split(const std::string& given, const char* split, const std::string& mirror) {
  const Gsm8kSplit& official = gsm8k_split(split);
  Gsm8kFile file = load_gsm8k(given.empty() ? fetch_gsm8k_split(split, {.base_url = mirror}) : given);
  if (file.sha256 != official.sha256)
    log_warn(file.path + " is not the official GSM8K " + split + " split (sha256 " + file.sha256.substr(0, 12) +
             "...): scores are not comparable with published GSM8K numbers");
  return file;
}

int run(const Gsm8kCliOptions& o) {
  Gsm8kGenOptions g{.style = parse_gsm8k_style(o.style),
                    .seed = o.common.seed,
                    .limit = o.limit,
                    .num_fewshot = o.num_fewshot,
                    .system = o.system,
                    .max_tokens = o.max_tokens,
                    .primary = o.primary};
  const Gsm8kFile test = load_split(o.data, "test", o.mirror);
  const bool needs_train = o.num_fewshot ? *o.num_fewshot > 0 : g.style != Gsm8kStyle::chat;
  const Gsm8kFile train = needs_train ? load_split(o.train, "train", o.mirror) : Gsm8kFile{};
  const std::vector<Trial> trials = make_gsm8k_trials(test, train, g);
  write_tasks(o.common.out, trials);
  log_info("gsm8k: wrote " + std::to_string(trials.size()) + " trials (style " + o.style + ") to " + o.common.out);
  return 0;
}

}  // namespace

void register_gen_gsm8k(CLI::App& gen, Commands& commands) {
  auto o = std::make_shared<Gsm8kCliOptions>();
  CLI::App* sub = gen.add_subcommand("gsm8k", "GSM8K grade-school math (lm-eval compatible prompts and answer extraction)");
  add_gen_common_options(sub, o->common, "");
  sub->add_option("--data", o->data,
                  "GSM8K test JSONL (question, answer \"... #### N\"); default: the official file, downloaded once into the "
                  "cache and checked by sha256");
  sub->add_option("--train", o->train, "GSM8K train JSONL for the shots; default: the official file, as for --data");
  sub->add_option("--style", o->style,
                  "Prompt style: gsm8k (lm-eval, completions, 5-shot), gsm8k-cot (lm-eval CoT format, completions, 8-shot), "
                  "chat (zero-shot chain of thought, answer after ####)")
      ->capture_default_str();
  sub->add_option("--limit", o->limit, "A seeded random subset of N problems (ids keep the dataset index)")
      ->check(CLI::PositiveNumber);
  sub->add_option("--num-fewshot", o->num_fewshot, "Shots from the train split (default 5 for gsm8k, 8 for gsm8k-cot, 0 for chat)");
  sub->add_option("--system", o->system, "System message (chat style only)");
  sub->add_option("--max-tokens", o->max_tokens,
                  "New-token limit written into each trial (default 256 for the completion styles, as lm-eval; none for chat)");
  sub->add_option("--primary", o->primary, "Filter that decides passed: strict (lm-eval strict-match) or flexible (flexible-extract)")
      ->capture_default_str();
  sub->add_option("--mirror", o->mirror, "Base URL holding test.jsonl and train.jsonl (files are still checked by sha256)")
      ->capture_default_str();
  commands.add(sub, [o] { return run(*o); });
}

}  // namespace kvgate::cli
