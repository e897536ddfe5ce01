// Teacher-forced scoring: the log-probability of each token of a continuation given the prompt and
// the continuation before it, and the full next-token logits at every continuation position (for
// the KL-divergence report). Every position reads the KV cache as decoding does (session.h), so a
// quantized cache's error is in every number.
#pragma once
#include <functional>
#include <span>
#include <vector>

#include "harness/decoder/session.h"

namespace kvgate::decoder {

struct ContinuationScore {
  std::vector<double> logprobs;  // log p(continuation[i] | prompt, continuation[0..i)), natural log
  double total = 0.0;            // their sum
  int greedy_matches = 0;        // positions where continuation[i] is the argmax (ties: lowest id)
};

// Called for continuation position i with the logits [vocab] that predict continuation[i].
using PositionFn = std::function<void(int i, std::span<const float> logits)>;

// Throws when a continuation token id is outside [0, vocab).
void check_continuation(std::span<const int> continuation, int vocab);

// Records continuation position i from the logits [vocab] that predict `target`: its log-probability
// (log-softmax in double, shifted by the maximum) into s.logprobs[i] and s.total, and whether it is
// the argmax (ties: lowest id) into s.greedy_matches. Shared by the CPU and CUDA engines.
void score_position(const float* logits, int vocab, int i, int target, ContinuationScore& s);

// Resets the session and scores `continuation` after `prompt` (both non-empty).
ContinuationScore score_continuation(Session& session, std::span<const int> prompt, std::span<const int> continuation,
                                     const PositionFn& on_position = {});

}  // namespace kvgate::decoder
