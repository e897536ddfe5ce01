// niah: one needle in a haystack, RULER niah_single style (NVIDIA/RULER scripts/data/synthetic:
// needle "One of the special magic {numbers} for {key} is: {value}.", the singular question, the
// answer prefix for completions), at exact token lengths and Kamradt-style depths.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "datasets/common/input_api.h"
#include "harness/core/grade.h"
#include "harness/core/rng.h"
#include "harness/core/trial.h"
#include "datasets/haystack/corpus.h"
#include "harness/tokenizer/token_counter.h"

namespace kvgate::niah {

enum class ValueType { numbers, uuids, words };
ValueType parse_value_type(const std::string& text, const std::string& flag);
const char* to_string(ValueType v);

struct NiahOptions {
  std::uint64_t seed = 1;
  std::vector<std::int64_t> lengths;  // buckets: target tokens of the whole input
  int per_bucket = 50;
  std::vector<double> depths;         // percents, cycled over a bucket's trials; empty: random per trial
  InputApi api = InputApi::chat;
  ValueType value_type = ValueType::numbers;
  const haystack::Corpus* corpus = nullptr;  // --haystack-file; null: generated prose
  double tolerance = 0.005;
  int max_tokens = 128;               // generation hint in each input (RULER: 128); 0 leaves it out
  int threads = 0;                    // 0: one per hardware thread
};

// Every trial, bucket by bucket, ids "niah/<bucket>/<index>" (index zero-padded to 4 digits).
// Deterministic from the options and the counter's counts, whatever the thread count.
std::vector<Trial> generate_niah(const NiahOptions& options, const TokenCounter& counter);

// The grader "niah": passes when the needle's value appears in the response as a whole token
// (exact case, not inside a longer word or number); details carry RULER's case-insensitive
// substring score and the trial's depth and length for heatmaps.
Grade grade_niah(const GradeInput& input);

// Keys: "adjective-noun" from kvgate's own word pools (RULER draws from wonderwords' lists).
std::string random_key(Rng& rng);
// Values: 7-digit numbers (RULER: randint(10**6, 10**7 - 1)), version-4 UUIDs, or "adjective-noun".
std::string random_value(Rng& rng, ValueType type);

}  // namespace kvgate::niah
