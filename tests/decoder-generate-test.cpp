// Decoding: seeded sampling repeats exactly, greedy draws no random numbers, stop tokens and stop
// strings end a generation where they should, max tokens bounds it.
#include <vector>

#include "tests/catch_compat.hpp"
#include "harness/core/error.h"
#include "harness/decoder/generate.h"
#include "harness/decoder/synthetic_tokenizer.h"
#include "tests/decoder_fixtures.h"

using namespace kvgate::decoder;
using kvtest::contains;

namespace {

MakeModelOptions options() {
  MakeModelOptions o;
  o.arch = "qwen3";
  o.seed = 5;
  o.hidden = 48;
  o.heads = 4;
  o.kv_heads = 2;
  o.head_dim = 12;
  o.intermediate = 96;
  o.merges = 96;
  return o;
}

struct Fixture {
  kvtest::TempDir tmp;
  std::shared_ptr<const Model> model = kvtest::make_and_load(tmp, "m", options());
  SyntheticTokenizer tok = make_synthetic_tokenizer(options().merges, options().max_position);
  std::vector<int> prompt = {tok.im_start, 84, 82, 262, 198, 281, 300, 323, tok.im_end, 198, tok.im_start};
  std::function<std::string(int)> text = [this](int id) { return tok.token_bytes.at(id); };
};

GenerateOptions sampled(std::uint64_t seed) {
  GenerateOptions g;
  g.sampler = {.temperature = 1.0, .top_p = 0.95, .top_k = 50};
  g.seed = seed;
  g.max_tokens = 32;
  return g;
}

}  // namespace

TEST_CASE("generate: seeded sampling repeats exactly and depends on the seed", "[generate]") {
  Fixture f;
  Session s(f.model, {.kv = {"bf16", {}}}), t(f.model, {.kv = {"bf16", {}}, .threads = 2});
  const Generation a = generate(s, f.prompt, sampled(42));
  const Generation b = generate(t, f.prompt, sampled(42));
  const Generation c = generate(s, f.prompt, sampled(43));
  REQUIRE(a.tokens.size() == 32);
  CHECK(a.tokens == b.tokens);
  CHECK(a.tokens != c.tokens);
  CHECK(a.prompt_tokens == static_cast<int>(f.prompt.size()));
  // The draw is kvgate's own (xoshiro256** + the documented mapping), the weights make-model's, the
  // maths fixed-order fp32: these ids, recorded once, are what every machine and compiler must give.
  const std::vector<int> pinned(a.tokens.begin(), a.tokens.begin() + 8);
  CHECK(pinned == std::vector<int>{93, 216, 131, 306, 306, 306, 154, 76});
}

TEST_CASE("generate: greedy ignores the seed; top_k 1 and a tiny top_p are greedy at any temperature", "[generate]") {
  Fixture f;
  Session s(f.model, {.kv = {"bf16", {}}});
  GenerateOptions g;
  g.max_tokens = 20;
  const Generation greedy = generate(s, f.prompt, g);
  g.seed = 999;
  CHECK(generate(s, f.prompt, g).tokens == greedy.tokens);
  g.sampler = {.temperature = 5.0, .top_k = 1};
  CHECK(generate(s, f.prompt, g).tokens == greedy.tokens);
  g.sampler = {.temperature = 5.0, .top_p = 1e-9};
  CHECK(generate(s, f.prompt, g).tokens == greedy.tokens);
  g.sampler = {.temperature = 5.0};
  CHECK(generate(s, f.prompt, g).tokens != greedy.tokens);  // a hot sampler does sample
}

TEST_CASE("generate: stop tokens and stop strings end the generation and are left out of the text", "[generate]") {
  Fixture f;
  Session s(f.model, {.kv = {"fp32", {}}});
  GenerateOptions g = sampled(7);
  g.token_text = f.text;
  const Generation full = generate(s, f.prompt, g);
  REQUIRE(full.tokens.size() == 32);
  CHECK(full.finish_reason == "length");
  std::string joined;
  for (int t : full.tokens) joined += f.text(t);
  CHECK(full.text == joined);

  SECTION("a stop token") {
    g.stop_token_ids = {full.tokens[5]};
    const Generation r = generate(s, f.prompt, g);
    std::size_t first = 0;
    while (full.tokens[first] != full.tokens[5]) ++first;
    CHECK(r.finish_reason == "stop");
    CHECK(r.tokens == std::vector<int>(full.tokens.begin(), full.tokens.begin() + first + 1));
    std::string before;
    for (std::size_t i = 0; i < first; ++i) before += f.text(full.tokens[i]);
    CHECK(r.text == before);
  }
  SECTION("a stop string spanning tokens") {
    // The last 2 bytes of token 9 and the first byte of token 10, wherever they first appear.
    const std::string t9 = f.text(full.tokens[9]), t10 = f.text(full.tokens[10]);
    REQUIRE(!t10.empty());
    const std::string stop = t9.substr(t9.size() >= 2 ? t9.size() - 2 : 0) + t10.substr(0, 1);
    g.stop = {"never appears \x01", stop};
    const Generation r = generate(s, f.prompt, g);
    const std::size_t at = joined.find(stop);
    CHECK(r.finish_reason == "stop");
    CHECK(r.text == joined.substr(0, at));
    // It stopped on the token that completed the stop string.
    std::string prefix;
    std::size_t n = 0;
    while (prefix.find(stop) == std::string::npos) prefix += f.text(full.tokens[n++]);
    CHECK(r.tokens == std::vector<int>(full.tokens.begin(), full.tokens.begin() + n));
  }
  SECTION("max tokens") {
    g.max_tokens = 3;
    const Generation r = generate(s, f.prompt, g);
    CHECK(r.tokens == std::vector<int>(full.tokens.begin(), full.tokens.begin() + 3));
    CHECK(r.finish_reason == "length");
  }
  SECTION("bad requests") {
    REQUIRE_THROWS_WITH(generate(s, std::vector<int>{}, g), contains("the prompt has no tokens"));
    g.stop = {""};
    REQUIRE_THROWS_WITH(generate(s, f.prompt, g), contains("stop strings must not be empty"));
  }
}
