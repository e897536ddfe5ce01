// Options shared by the haystack tasks (`gen niah`, `gen multicode`): the haystack text, the input
// style, generation threads; and writing their tasks file with a summary on stderr.
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "harness/cli/cli_common.h"
#include "harness/core/trial.h"
#include "datasets/haystack/corpus.h"
#include "harness/tokenizer/token_counter.h"

namespace kvgate::cli {

struct HaystackCliOptions {
  std::vector<std::string> haystack_files;  // --haystack-file (repeatable)
  std::string api = "chat";                 // --api chat|completions
  int max_tokens = 0;                       // --max-tokens (generation hint written into each input)
  int threads = 0;                          // --threads (0: one per hardware thread)
};

void add_haystack_cli_options(CLI::App* sub, HaystackCliOptions& options, int default_max_tokens);

// The corpus of --haystack-file, or nullopt for generated prose.
std::optional<haystack::Corpus> load_haystack_files(const HaystackCliOptions& options);

// Writes the tasks file atomically and says what was written, how lengths were counted, and
// whether any haystack went round a too-short corpus.
void write_haystack_tasks(const std::string& out, const std::vector<Trial>& trials, const TokenCounter& counter);

}  // namespace kvgate::cli
