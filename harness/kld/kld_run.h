// `kvgate kld` as a library call: teacher-forced decoding of the same token chunks by a baseline
// engine (bf16 cache) and a test engine (the format under test), compared position by position.
// Engine::score runs each chunk through the cache the way decoding does, so every position's
// logits come from attention over the (quantized) cache, its own token included: a prefill that
// attends over full-precision values before storing them would hide the format (seed 001). The two
// engines run side by side, their logits meeting position by position, so memory stays at a few
// rows of vocabulary whatever the context.
#pragma once
#include <functional>
#include <vector>

#include "harness/decoder/engine.h"
#include "harness/kld/kld_stats.h"

namespace kvgate::kld {

struct KldRunOptions {
  bool second_half = false;  // score only positions >= ctx/2 of each chunk, as llama-perplexity does
  int buckets = 8;           // context-position buckets over [0, ctx)
  std::function<void(int chunk, const Running& so_far)> on_chunk{};  // after each chunk
};

struct PositionBucket {
  int from = 0, to = 0;  // positions [from, to): the context a prediction had is position + 1 tokens
  Sums sums;
};

struct KldResult {
  Summary summary;
  std::vector<PositionBucket> buckets;
  int chunks = 0, ctx = 0;
};

// `chunks` all hold the same number of tokens (>= 2). Errors of either engine are rethrown.
KldResult run_kld(decoder::Engine& base, decoder::Engine& test, const std::vector<std::vector<int>>& chunks,
                  const KldRunOptions& options);

}  // namespace kvgate::kld
