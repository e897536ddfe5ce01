// The CPU forward pass: chunking and threads change nothing (kivi2 aside: its reads depend on the chunk),
// and a small model decodes the same tokens every time.
#include <cmath>
#include <set>
#include <vector>

#include "tests/catch_compat.hpp"
#include "harness/core/error.h"
#include "harness/decoder/generate.h"
#include "harness/decoder/session.h"
#include "tests/decoder_fixtures.h"

using namespace kvgate::decoder;
using kvtest::contains;

namespace {

std::vector<int> test_tokens(int n, int vocab, int salt = 0) {
  std::vector<int> t(n);
  for (int i = 0; i < n; ++i) t[i] = (i * 37 + 11 + salt * 101) % vocab;
  return t;
}

// Logits of every position of `tokens`.
std::vector<float> all_logits(Session& s, const std::vector<int>& tokens) {
  const int vocab = s.model().config().vocab_size;
  std::vector<float> out(tokens.size() * vocab);
  s.reset();
  s.forward(tokens, static_cast<int>(tokens.size()), [&](int i, const float* l) {
    std::copy(l, l + vocab, out.begin() + static_cast<std::size_t>(i) * vocab);
  });
  return out;
}

MakeModelOptions small(const std::string& arch) {
  MakeModelOptions o;
  o.arch = arch;
  o.seed = 7;
  o.layers = 2;
  o.hidden = 48;
  o.heads = 4;
  o.kv_heads = 2;
  o.head_dim = 16;
  o.intermediate = 96;
  o.merges = 64;
  o.dtype = "fp32";
  return o;
}

}  // namespace

TEST_CASE("session: chunk size and thread count give bit-identical logits", "[decoder]") {
  kvtest::TempDir tmp;
  auto model = kvtest::make_and_load(tmp, "m", small("qwen3"));
  const auto tokens = test_tokens(70, model->config().vocab_size);
  Session one({model, {.kv = {"fp32", {}}, .max_chunk = 1}});
  Session seven({model, {.kv = {"fp32", {}}, .max_chunk = 7}});
  Session wide({model, {.kv = {"fp32", {}}, .max_chunk = 64, .threads = 2}});
  const auto a = all_logits(one, tokens), b = all_logits(seven, tokens), c = all_logits(wide, tokens);
  REQUIRE(a.size() == b.size());
  CHECK(a == b);
  CHECK(a == c);
  for (float x : a) REQUIRE(std::isfinite(x));
}

TEST_CASE("session: kivi2's reads depend on the chunk size (its groups are quantized as tokens arrive)", "[decoder]") {
  // Why the CUDA engine prefills kivi2 in the Session's chunks (cuda_engine.cpp): a chunk's rows read
  // the key groups and values its later rows completed. G 16, R 32, 70 tokens: with chunks of 64,
  // row 0 already reads key 0 quantized (row 31 completed its window) and value 0 (row 32); token
  // by token it reads them exact. Every row differs; the same chunk size is bit-identical.
  kvtest::TempDir tmp;
  auto model = kvtest::make_and_load(tmp, "m", small("qwen3"));
  const int vocab = model->config().vocab_size;
  const auto tokens = test_tokens(70, vocab);
  const kvgate::kernels::KvStoreOptions kv{"kivi2", {{"group_size", 16}, {"residual", 32}}};
  Session one({model, {.kv = kv, .max_chunk = 1}});
  Session wide({model, {.kv = kv, .max_chunk = 64}});
  Session wide2({model, {.kv = kv, .max_chunk = 64, .threads = 2}});
  const auto a = all_logits(one, tokens), b = all_logits(wide, tokens), c = all_logits(wide2, tokens);
  CHECK(b == c);
  auto row = [&](const std::vector<float>& l, int i) {
    return std::vector<float>(l.begin() + i * vocab, l.begin() + (i + 1) * vocab);
  };
  int differ = 0;
  for (int i = 0; i < 70; ++i) differ += row(a, i) != row(b, i);
  CHECK(differ == 70);
}

TEST_CASE("session: step() continues the cache exactly as forward() over the whole sequence", "[decoder]") {
  kvtest::TempDir tmp;
  auto model = kvtest::make_and_load(tmp, "m", small("llama"));
  const int vocab = model->config().vocab_size;
  const auto tokens = test_tokens(20, vocab);
  Session s(model, {.kv = {"bf16", {}}});
  const auto full = all_logits(s, tokens);
  s.reset();
  s.forward(std::vector<int>(tokens.begin(), tokens.begin() + 12), 0, {});
  for (int i = 12; i < 20; ++i) {
    const float* l = s.step(tokens[i]);
    REQUIRE(std::equal(l, l + vocab, full.begin() + static_cast<std::size_t>(i) * vocab));
  }
  CHECK(s.position() == 20);
  CHECK(s.kv().size(0) == 20);
}

TEST_CASE("session: attention reads the KV store (fp32 and bf16 stores differ slightly, same stores agree)",
          "[decoder][kv]") {
  kvtest::TempDir tmp;
  auto model = kvtest::make_and_load(tmp, "m", small("qwen3"));
  const auto tokens = test_tokens(40, model->config().vocab_size);
  Session f32a(model, {.kv = {"fp32", {}}}), f32b(model, {.kv = {"fp32", {}}}), b16(model, {.kv = {"bf16", {}}});
  CHECK(b16.kv().format() == "bf16");
  const auto a = all_logits(f32a, tokens), b = all_logits(f32b, tokens), c = all_logits(b16, tokens);
  CHECK(a == b);
  double max_diff = 0, max_abs = 0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    max_diff = std::max(max_diff, std::fabs(double(a[i]) - c[i]));
    max_abs = std::max(max_abs, std::fabs(double(a[i])));
  }
  CHECK(max_diff > 0.0);               // the bf16 cache is really read
  CHECK(max_diff < 0.05 * max_abs);    // and it is only rounding
  // The cache holds K after q/k norm and RoPE: rereading position 0 from fp32 equals recomputing it.
  std::vector<float> k(model->config().head_dim), v(model->config().head_dim);
  f32a.kv().read(0, 0, 0, 1, k.data(), v.data());
  bool any = false;
  for (float x : k) any |= x != 0.0f;
  CHECK(any);
}

TEST_CASE("session: an unknown KV format and out-of-range token ids are clear errors", "[decoder]") {
  kvtest::TempDir tmp;
  auto model = kvtest::make_and_load(tmp, "m", small("qwen3"));
  REQUIRE_THROWS_WITH(Session(model, {.kv = {"fp7", {}}}), contains("--kv-format fp7"));
  Session s(model, {.kv = {"bf16", {}}});
  const std::vector<int> bad = {1, 2, model->config().vocab_size};
  REQUIRE_THROWS_WITH(s.forward(bad, 1, {}), contains("outside the model's vocabulary"));
  CHECK(s.position() == 0);  // nothing ran
}

TEST_CASE("session: a 2-layer model generates the same tokens twice, and sessions do not share state", "[decoder]") {
  kvtest::TempDir tmp;
  auto model = kvtest::make_and_load(tmp, "m", small("qwen3"));
  const auto prompt = test_tokens(9, model->config().vocab_size);
  Session s(model, {.kv = {"bf16", {}}});
  const GenerateOptions greedy{.max_tokens = 24};
  const Generation a = generate(s, prompt, greedy);
  const Generation b = generate(s, prompt, greedy);
  Session other(model, {.kv = {"bf16", {}}, .threads = 2});
  const Generation c = generate(other, prompt, greedy);
  REQUIRE(a.tokens.size() == 24);
  CHECK(a.finish_reason == "length");
  CHECK(a.tokens == b.tokens);
  CHECK(a.tokens == c.tokens);
  std::set<int> distinct(a.tokens.begin(), a.tokens.end());
  CHECK(distinct.size() > 1);  // a real model, not a constant
}

TEST_CASE("session: sliding-window layers attend to the last window tokens only", "[decoder]") {
  kvtest::TempDir tmp;
  MakeModelOptions o = small("mistral");
  o.sliding_window = 5;
  auto windowed = kvtest::make_and_load(tmp, "w", o);
  o.sliding_window = 0;
  auto full = kvtest::make_and_load(tmp, "f", o);
  REQUIRE(windowed->config().layer_window == std::vector<int>{5, 5});
  auto tokens = test_tokens(12, windowed->config().vocab_size);
  Session sw(windowed, {.kv = {"fp32", {}}}), sf(full, {.kv = {"fp32", {}}});
  const auto a = all_logits(sw, tokens), b = all_logits(sf, tokens);
  const std::size_t vocab = windowed->config().vocab_size;
  // Same weights: the first 5 positions see the same context, later ones do not.
  CHECK(std::equal(a.begin(), a.begin() + 5 * vocab, b.begin()));
  CHECK(!std::equal(a.begin() + 5 * vocab, a.end(), b.begin() + 5 * vocab));
  // Changing a token outside every later window changes nothing there.
  auto changed = tokens;
  changed[0] = (changed[0] + 1) % static_cast<int>(vocab);
  const auto c = all_logits(sw, changed);
  // Token 0 reaches position p through layer 1 only if p - 0 < 2 * (5 - 1) + 1 = 9.
  CHECK(std::equal(a.begin() + 9 * vocab, a.end(), c.begin() + 9 * vocab));
  CHECK(!std::equal(a.begin(), a.begin() + vocab, c.begin()));
}

TEST_CASE("session: the cache holds K after k_norm and RoPE, and V as projected", "[decoder][kv]") {
  kvtest::TempDir tmp;
  auto model = kvtest::make_and_load(tmp, "m", small("qwen3"));
  const auto& c = model->config();
  const auto tokens = test_tokens(6, c.vocab_size);
  Session s(model, {.kv = {"fp32", {}}, .max_chunk = 4});
  s.forward(tokens, 0, {});
  // Layer 0 of token 5, by hand from the weights: embed -> input norm -> k/v projection ->
  // k_norm per head -> RoPE at position 5.
  namespace kk = kvgate::kernels;
  const int h = c.hidden_size, d = c.head_dim, kw = c.num_kv_heads * d;
  const auto& L = model->layer(0);
  std::vector<float> x(h), xn(h), k(kw), v(kw);
  kk::embedding_ref(model->embed(), h, &tokens[5], 1, x.data());
  kk::rmsnorm_ref(x.data(), L.input_norm, 1, h, c.rms_norm_eps, xn.data());
  kk::matmul_ref({.x = xn.data(), .w = L.k, .y = k.data(), .rows = 1, .k = h, .cols = kw});
  kk::matmul_ref({.x = xn.data(), .w = L.v, .y = v.data(), .rows = 1, .k = h, .cols = kw});
  std::vector<float> k_no_rope = k;
  kk::rmsnorm_ref(k.data(), L.k_norm, c.num_kv_heads, d, c.rms_norm_eps, k.data());
  const int pos = 5;
  kk::rope_ref(k.data(), 1, c.num_kv_heads, d, &pos, model->inv_freq().data(), model->rope_attention_scaling());
  for (int head = 0; head < c.num_kv_heads; ++head) {
    std::vector<float> ck(d), cv(d);
    s.kv().read(0, head, 5, 6, ck.data(), cv.data());
    CHECK(std::equal(ck.begin(), ck.end(), k.begin() + head * d));
    CHECK(std::equal(cv.begin(), cv.end(), v.begin() + head * d));
    CHECK(!std::equal(ck.begin(), ck.end(), k_no_rope.begin() + head * d));
  }
}
