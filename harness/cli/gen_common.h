// Options every `kvgate gen TASK` takes (product.md contract), shared by the cmd_gen_<task>.cpp files.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "harness/cli/cli_common.h"
#include "harness/tokenizer/token_counter.h"

namespace kvgate::cli {

struct GenCommonOptions {
  std::string out;               // --out tasks.jsonl (required)
  std::uint64_t seed = 1;        // --seed
  std::string lengths_text;      // --lengths 4096,8192,... (parsed by lengths())
  int per_bucket = 50;           // --per-bucket
  std::string tokenizer;         // --tokenizer tokenizer.json
  std::string tokenize_url;      // --tokenize-url URL
  std::string tokenize_model;    // --tokenize-model NAME (sent to /tokenize)
  std::string tokenize_api = "auto";  // --tokenize-api auto|llamacpp|vllm|sglang

  std::vector<std::int64_t> lengths() const { return parse_lengths(lengths_text, "--lengths"); }
  TokenCounterOptions token_counter_options() const { return {tokenizer, tokenize_url, tokenize_model, tokenize_api}; }
};

// Adds the common options to a task's subcommand. `default_lengths` is shown in --help and used
// when --lengths is not given ("" for tasks without length buckets: then --lengths is not added).
void add_gen_common_options(CLI::App* sub, GenCommonOptions& options, const std::string& default_lengths);

// Registration of each task, one per cmd_gen_<task>.cpp.
void register_gen_niah(CLI::App& gen, Commands& commands);
void register_gen_multicode(CLI::App& gen, Commands& commands);
void register_gen_mrcr(CLI::App& gen, Commands& commands);
void register_gen_gsm8k(CLI::App& gen, Commands& commands);
void register_gen_golden(CLI::App& gen, Commands& commands);
void register_gen_custom(CLI::App& gen, Commands& commands);

}  // namespace kvgate::cli
