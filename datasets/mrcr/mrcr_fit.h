// Exact length targeting for generated MRCR conversations: whole filler turns are added or
// dropped until the rendered input (count_chat, after any merge) first reaches the target, then
// filler replies, most recent first, are cut (at a word, else a character) to land on it exactly.
#pragma once
#include <cstdint>

#include "datasets/mrcr/mrcr_conversation.h"
#include "harness/tokenizer/token_counter.h"

namespace kvgate::mrcr {

struct FitOptions {
  std::int64_t target_tokens = 0;
  bool merge_user_turns = false;
};

struct FitResult {
  std::int64_t tokens = 0;       // count_chat of the final messages
  bool exact = false;            // tokens == target
  std::size_t fillers = 0;       // filler turns kept
  std::size_t cut_replies = 0;   // filler replies cut
  int full_counts = 0;           // count_chat calls spent (for benchmarks)
};

// Throws Error when the needles and the example alone exceed the target (names the bucket and the fix).
FitResult fit_to_length(Conversation& conversation, const TokenCounter& counter, const FitOptions& options);

}  // namespace kvgate::mrcr
