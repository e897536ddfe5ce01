// A long-context trial input of an exact token length: instructions, a haystack with needles at
// chosen depths, then the question. The haystack's size is searched with LengthFitSearch so the
// whole rendered input (chat template included) counts within the window under the target; when one
// byte of budget jumps over the window, haystack_fine_step.h varies the haystack's ending instead.
#pragma once
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "datasets/common/input_api.h"
#include "datasets/haystack/corpus.h"
#include "datasets/haystack/haystack.h"
#include "datasets/haystack/sentence_source.h"
#include "harness/tokenizer/token_counter.h"

namespace kvgate::haystack {

struct HaystackPrompt {
  std::string before;                 // instructions before the haystack
  std::string after;                  // the question after it (for completions, with the answer prefix)
  std::vector<Insertion> insertions;  // needles, at depths 0..1
};

struct HaystackFitOptions {
  std::int64_t target = 0;       // tokens of the whole rendered input
  double tolerance = 0.005;      // accepted: [target - floor(target * tolerance), target - reserve]
  InputApi api = InputApi::chat;
  double bytes_per_token = 4.0;  // first guess (measure_bytes_per_token)
};

struct FittedHaystackInput {
  nlohmann::json input;              // {"messages": [...]} or {"prompt": ...}
  std::vector<std::size_t> offsets;  // byte offset of each insertion in the input's text
  std::vector<double> depths;        // depth each insertion got, 0..1 of the haystack's bytes
  HaystackSelection selection;
  std::int64_t body_bytes = 0;       // haystack bytes without the insertions
  std::size_t pool_sentences = 0;    // sentences the builder's top-up pool took before the stream
  std::int64_t tokens = 0;           // measured count of the whole input
  std::int64_t reserved = 0;         // tokens kept free for special tokens the server adds
  int counts = 0;                    // counts the fitting took
};

// Fits and renders. `what` names the trial in errors, e.g. "niah/4096/0003: ...".
FittedHaystackInput fit_haystack_input(HaystackBuilder& builder, const HaystackPrompt& prompt,
                                       const TokenCounter& counter, const HaystackFitOptions& options,
                                       const std::string& what);

// The text of a rendered input: the user message's content or the prompt.
const std::string& input_text(const nlohmann::json& input);

// One trial's sentence source: prose seeded by `seed`, or the corpus from a sentence the seed picks
// (written to *start).
std::unique_ptr<SentenceSource> make_trial_source(const Corpus* corpus, std::uint64_t seed, std::size_t* start);

// Trial meta about the haystack: its source (prose, or file names, sha256, start and how many times
// it went round the corpus), sentences and bytes.
nlohmann::json haystack_meta(const Corpus* corpus, std::size_t start, const FittedHaystackInput& fitted);

// Trial meta about the length: prompt_tokens (measured), target_tokens, token_counter, length_exact,
// length_note (when estimated), reserved_special_tokens (completions), fit_counts.
nlohmann::json length_meta(const FittedHaystackInput& fitted, const TokenCounter& counter, std::int64_t target);

// Bytes per token of a source's text under `counter`: one count of about `bytes` of it. Used as
// the fitting's first guess, measured once per generation run. A megabyte pins the density to about
// 0.1% (Qwen3 on generated prose: 0.4% from 128 KB), so the first full-size count of a 128K trial
// usually lands in its 0.5% window.
double measure_bytes_per_token(const TokenCounter& counter, SentenceSource& source, std::size_t bytes = 1048576);

}  // namespace kvgate::haystack
