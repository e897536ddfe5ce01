#include "harness/decoder/score.h"

#include <cmath>
#include <vector>

#include "harness/core/error.h"

namespace kvgate::decoder {

void check_continuation(std::span<const int> continuation, int vocab) {
  for (int t : continuation)
    if (t < 0 || t >= vocab)
      throw Error("score: continuation token id " + std::to_string(t) + " is outside the vocabulary of " +
                  std::to_string(vocab));
}

void score_position(const float* logits, int vocab, int i, int target, ContinuationScore& s) {
  double mx = -INFINITY;
  int best = 0;
  for (int v = 0; v < vocab; ++v)
    if (logits[v] > mx) {
      mx = logits[v];
      best = v;
    }
  double sum = 0.0;
  for (int v = 0; v < vocab; ++v) sum += std::exp(static_cast<double>(logits[v]) - mx);
  s.logprobs[i] = static_cast<double>(logits[target]) - mx - std::log(sum);
  s.total += s.logprobs[i];
  s.greedy_matches += best == target;
}

ContinuationScore score_continuation(Session& session, std::span<const int> prompt, std::span<const int> continuation,
                                     const PositionFn& on_position) {
  if (prompt.empty()) throw Error("score: the prompt has no tokens (the first continuation token needs a context)");
  if (continuation.empty()) throw Error("score: the continuation has no tokens");
  // The last continuation token predicts nothing we need: feed prompt + continuation[0..n-1).
  std::vector<int> tokens(prompt.begin(), prompt.end());
  tokens.insert(tokens.end(), continuation.begin(), continuation.end() - 1);
  const int n = static_cast<int>(continuation.size());
  const int vocab = session.model().config().vocab_size;
  const int offset = static_cast<int>(prompt.size()) - 1;  // tokens[offset + i] predicts continuation[i]
  check_continuation(continuation, vocab);
  ContinuationScore s;
  s.logprobs.resize(n);
  session.reset();
  session.forward(tokens, n, [&](int index, const float* logits) {
    const int i = index - offset;
    score_position(logits, vocab, i, continuation[i], s);
    if (on_position) on_position(i, std::span<const float>(logits, vocab));
  });
  return s;
}

}  // namespace kvgate::decoder
