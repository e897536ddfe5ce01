// Teacher-forced scoring: log-probabilities equal what decoding step by step computes, the greedy
// path scores as all matches, every position reads the KV cache, and the per-position logits come
// out in order for the KL-divergence report.
#include <cmath>
#include <vector>

#include "tests/catch_compat.hpp"
#include "harness/core/error.h"
#include "harness/decoder/generate.h"
#include "harness/decoder/score.h"
#include "tests/decoder_fixtures.h"

using namespace kvgate::decoder;
using kvtest::contains;

namespace {

MakeModelOptions options() {
  MakeModelOptions o;
  o.arch = "llama";
  o.seed = 9;
  o.hidden = 64;
  o.heads = 4;
  o.kv_heads = 2;
  o.head_dim = 16;
  o.merges = 32;
  return o;
}

double log_prob(const float* logits, int vocab, int token) {
  double mx = -INFINITY, sum = 0;
  for (int v = 0; v < vocab; ++v) mx = std::max(mx, double(logits[v]));
  for (int v = 0; v < vocab; ++v) sum += std::exp(double(logits[v]) - mx);
  return logits[token] - mx - std::log(sum);
}

}  // namespace

TEST_CASE("score: log-probs equal step-by-step decoding's, and the greedy path is all matches", "[score]") {
  kvtest::TempDir tmp;
  auto model = kvtest::make_and_load(tmp, "m", options());
  const int vocab = model->config().vocab_size;
  const std::vector<int> prompt = {3, 141, 59, 26, 53, 58, 97};
  Session s(model, {.kv = {"bf16", {}}, .max_chunk = 4});
  const Generation g = generate(s, prompt, {.max_tokens = 12});
  std::vector<int> seen;
  const ContinuationScore sc = score_continuation(s, prompt, g.tokens, [&](int i, std::span<const float> logits) {
    CHECK(logits.size() == static_cast<std::size_t>(vocab));
    seen.push_back(i);
  });
  CHECK(sc.greedy_matches == 12);
  CHECK(seen == std::vector<int>{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11});
  // The same numbers by hand: one token at a time through step().
  Session t(model, {.kv = {"bf16", {}}, .max_chunk = 1});
  t.forward(prompt, 0, {});
  std::vector<double> by_hand;
  const float* logits = nullptr;
  double total = 0;
  for (std::size_t i = 0; i < g.tokens.size(); ++i) {
    if (i == 0) {
      t.reset();
      t.forward(prompt, 1, [&](int, const float* l) { by_hand.push_back(log_prob(l, vocab, g.tokens[0])); });
    } else {
      logits = t.step(g.tokens[i - 1]);
      by_hand.push_back(log_prob(logits, vocab, g.tokens[i]));
    }
    total += by_hand.back();
  }
  CHECK(sc.logprobs == by_hand);
  CHECK(sc.total == kvtest::Approx(total).epsilon(1e-12));
  for (double lp : sc.logprobs) CHECK(lp <= 0.0);
}

TEST_CASE("score: every position reads the cache (an fp32 and a bf16 cache disagree at each)", "[score][kv]") {
  kvtest::TempDir tmp;
  auto model = kvtest::make_and_load(tmp, "m", options());
  const std::vector<int> prompt = {5, 6, 7, 8, 9, 10, 11, 12};
  const std::vector<int> cont = {13, 200, 14, 15, 280, 16};
  Session f32(model, {.kv = {"fp32", {}}}), b16(model, {.kv = {"bf16", {}}});
  const auto a = score_continuation(f32, prompt, cont), b = score_continuation(b16, prompt, cont);
  const auto a2 = score_continuation(f32, prompt, cont);
  CHECK(a.logprobs == a2.logprobs);
  for (std::size_t i = 0; i < cont.size(); ++i) {
    INFO("position " << i);
    CHECK(a.logprobs[i] != b.logprobs[i]);
    CHECK(std::fabs(a.logprobs[i] - b.logprobs[i]) < 0.05);
  }
}

TEST_CASE("score: bad requests are clear errors", "[score]") {
  kvtest::TempDir tmp;
  auto model = kvtest::make_and_load(tmp, "m", options());
  Session s(model, {.kv = {"fp32", {}}});
  REQUIRE_THROWS_WITH(score_continuation(s, std::vector<int>{}, std::vector<int>{1}), contains("prompt has no tokens"));
  REQUIRE_THROWS_WITH(score_continuation(s, std::vector<int>{1}, std::vector<int>{}), contains("continuation has no tokens"));
  REQUIRE_THROWS_WITH(score_continuation(s, std::vector<int>{1}, std::vector<int>{1, 99999}),
                      contains("continuation token id 99999 is outside the vocabulary"));
}
