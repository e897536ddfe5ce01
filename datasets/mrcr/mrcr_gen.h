// `kvgate gen mrcr`: generated MRCR trials at exact lengths. Trial ids "mrcr/<bucket>/<index>",
// bucket = the target length in tokens of the whole rendered input; needle counts cycle through
// `needles` within a bucket (trial i gets needles[i % size]).
#pragma once
#include <cstdint>
#include <vector>

#include "harness/core/trial.h"
#include "harness/tokenizer/token_counter.h"

namespace kvgate::mrcr {

inline constexpr int kGeneratorVersion = 1;  // bump when generated text or layout changes

struct GenOptions {
  std::uint64_t seed = 1;
  std::vector<std::int64_t> lengths = {};  // buckets, tokens
  int per_bucket = 50;
  std::vector<int> needles = {2, 4, 8};
  bool merge_user_turns = false;
  const TokenCounter* counter = nullptr;  // count_chat decides the length
  int threads = 0;                        // generation threads (0: one per hardware thread); the output does not depend on it
};

Trial generate_trial(const GenOptions& options, std::int64_t bucket, int index);
std::vector<Trial> generate_trials(const GenOptions& options);

}  // namespace kvgate::mrcr
