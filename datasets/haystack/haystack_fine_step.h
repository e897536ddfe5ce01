// The finer last step of haystack length fitting. The byte search (common/length_fit.h) moves the
// haystack's end a byte at a time, but one more byte of budget can change which top-up sentences
// close it, and so jump several tokens: past a short target's window (3 tokens wide at 512).
// This step starts from the byte search's closest input under the window and varies its ending
// instead: up to `max_dropped` of the stream's last sentences dropped, up to `max_fillers` pool
// sentences after them. Each choice's count is predicted from the pieces' own counts (they add up
// under word-level pre-tokenizers); the choice closest to the window's middle is counted in full,
// a miss corrects the predictions that share its prefix, and the next is tried. Deterministic, and
// never above the window: only a full count accepts a choice.
#pragma once
#include <cstddef>
#include <cstdint>
#include <functional>

#include "datasets/haystack/haystack.h"
#include "harness/tokenizer/token_counter.h"

namespace kvgate::haystack {

struct FineStepOptions {
  std::int64_t lowest = 0;       // the window, as the byte search had it
  std::int64_t highest = 0;
  std::size_t max_dropped = 3;   // stream sentences the ending may lose
  std::size_t max_fillers = 3;   // pool sentences after them
  int max_counts = 12;           // full counts to spend
};

struct FineStepResult {
  bool found = false;
  HaystackSelection selection;   // the choice that landed
  std::int64_t tokens = 0;       // its full count
  int counts = 0;                // full counts spent
  std::size_t choices = 0;       // choices predicted near the window (what a failure searched)
};

// `start` is the selection whose whole input counted `start_tokens` (under the window).
// count(selection) renders the whole input with that selection and counts it.
FineStepResult fine_step(const HaystackBuilder& builder, const HaystackSelection& start, std::int64_t start_tokens,
                         const TokenCounter& counter, const FineStepOptions& options,
                         const std::function<std::int64_t(const HaystackSelection&)>& count);

}  // namespace kvgate::haystack
