// kvgate gen TASK --out tasks.jsonl ...: renders trials into a frozen tasks file.
#include "harness/cli/gen_common.h"

namespace kvgate::cli {

void add_gen_common_options(CLI::App* sub, GenCommonOptions& o, const std::string& default_lengths) {
  sub->add_option("--out", o.out, "Tasks file to write (JSONL, one trial per line); written atomically")
      ->required();
  sub->add_option("--seed", o.seed, "Seed: the same seed and options give a byte-identical tasks file")
      ->capture_default_str();
  if (!default_lengths.empty()) {
    o.lengths_text = default_lengths;
    sub->add_option("--lengths", o.lengths_text,
                    "Length buckets in tokens, comma separated (k = 1024): targets for the whole rendered input")
        ->capture_default_str();
  }
  sub->add_option("--per-bucket", o.per_bucket, "Trials per length bucket")->capture_default_str()->check(
      CLI::PositiveNumber);
  sub->add_option("--tokenizer", o.tokenizer,
                  "Hugging Face tokenizer.json for exact lengths (tokenizer_config.json beside it gives the chat template)");
  sub->add_option("--tokenize-url", o.tokenize_url,
                  "Count tokens with a server's /tokenize endpoint instead (vLLM, SGLang, llama.cpp), e.g. http://localhost:8000");
  sub->add_option("--tokenize-model", o.tokenize_model, "Model name sent to --tokenize-url");
  sub->add_option("--tokenize-api", o.tokenize_api, "Request shape of --tokenize-url: auto (detected), llamacpp, vllm, sglang")
      ->capture_default_str();
  sub->footer("Without --tokenizer or --tokenize-url, lengths are estimated (about 4 bytes a token) and the trials say so.");
}

void register_gen(CLI::App& app, Commands& commands) {
  CLI::App* gen = app.add_subcommand("gen", "Generate trials into a tasks file: niah | multicode | mrcr | gsm8k | golden | custom");
  gen->require_subcommand(1);
  register_gen_niah(*gen, commands);
  register_gen_multicode(*gen, commands);
  register_gen_mrcr(*gen, commands);
  register_gen_gsm8k(*gen, commands);
  register_gen_golden(*gen, commands);
  register_gen_custom(*gen, commands);
}

}  // namespace kvgate::cli
