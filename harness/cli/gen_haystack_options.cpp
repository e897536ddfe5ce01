#include "harness/cli/gen_haystack_options.h"

#include <algorithm>

#include "harness/core/log.h"

namespace kvgate::cli {

void add_haystack_cli_options(CLI::App* sub, HaystackCliOptions& o, int default_max_tokens) {
  o.max_tokens = default_max_tokens;
  sub->add_option("--haystack-file", o.haystack_files,
                  "Use your own UTF-8 text (e.g. production documents) as the haystack instead of generated prose; "
                  "repeat for several files (read in order; each trial starts at a random sentence)");
  sub->add_option("--api", o.api,
                  "Input style: chat (one user message; the server's chat template is counted) or completions "
                  "(a raw prompt ending in an answer prefix, RULER's for niah; one token kept free for a BOS)")
      ->capture_default_str();
  sub->add_option("--max-tokens", o.max_tokens, "Generation limit written into each input (0: leave it to `kvgate run`)")
      ->capture_default_str()
      ->check(CLI::NonNegativeNumber);
  sub->add_option("--threads", o.threads, "Generation threads (0: one per hardware thread); the output does not depend on it")
      ->capture_default_str()
      ->check(CLI::NonNegativeNumber);
}

std::optional<haystack::Corpus> load_haystack_files(const HaystackCliOptions& o) {
  if (o.haystack_files.empty()) return std::nullopt;
  return haystack::load_corpus(o.haystack_files);
}

void write_haystack_tasks(const std::string& out, const std::vector<Trial>& trials, const TokenCounter& counter) {
  write_tasks(out, trials);
  std::size_t wrapped = 0, max_counts = 0, total_counts = 0;
  for (const Trial& t : trials) {
    const auto& h = t.meta.at("haystack");
    if (h.contains("wraps") && h["wraps"].get<std::size_t>() > 0) ++wrapped;
    const std::size_t c = t.meta.value("fit_counts", std::size_t{0});
    max_counts = std::max(max_counts, c);
    total_counts += c;
  }
  log_info("wrote " + std::to_string(trials.size()) + " trials to " + out + "; lengths counted by " + counter.source() +
           " (" + std::to_string(total_counts) + " counts, at most " + std::to_string(max_counts) + " for one trial)");
  if (!counter.exact())
    log_warn("lengths are estimates (about 4 bytes a token), and the trials say so: pass --tokenizer tokenizer.json "
             "or --tokenize-url URL for exact lengths");
  if (wrapped > 0)
    log_warn(std::to_string(wrapped) + " trials needed more text than --haystack-file holds and repeat it: "
             "add text for haystacks without repeats");
}

}  // namespace kvgate::cli
