// The "numerics" and "prefill_chunk" kernel switches on the CPU engine: parsing (valid values, clear
// errors, --numerics against a contradicting switch), the resolved mode in describe() (what run.json
// records), engine numerics' logits against exact within the bf16 tolerance of cuda-engine-test
// (relative L2 error 1e-2), and prefill chunks that change nothing.
#include <cmath>
#include <span>

#include "harness/core/error.h"
#include "harness/core/rng.h"
#include "harness/decoder/engine.h"
#include "harness/decoder/kernel_switches.h"
#include "harness/decoder/kv_flags.h"
#include "tests/catch_compat.hpp"
#include "tests/decoder_fixtures.h"

using namespace kvgate::decoder;
using kvgate::kernels::AttentionNumerics;
using nlohmann::json;

namespace {

MakeModelOptions tiny() { return {.arch = "qwen3", .seed = 11, .merges = 200}; }

std::vector<int> random_ids(kvgate::Rng& rng, int n, int vocab) {
  std::vector<int> v(n);
  for (int& t : v) t = static_cast<int>(rng.below(static_cast<std::uint64_t>(vocab)));
  return v;
}

// ||a - b|| / ||b|| (cuda-engine-test's logit error).
double rel_error(std::span<const float> a, std::span<const float> b) {
  double num = 0, den = 0;
  for (std::size_t i = 0; i < b.size(); ++i) {
    num += (double(a[i]) - b[i]) * (double(a[i]) - b[i]);
    den += double(b[i]) * b[i];
  }
  return std::sqrt(num / den);
}

std::vector<std::vector<float>> logits(Engine& e, const std::vector<int>& prompt, const std::vector<int>& cont) {
  std::vector<std::vector<float>> out;
  e.score(prompt, cont, [&](int, std::span<const float> l) { out.emplace_back(l.begin(), l.end()); });
  return out;
}

}  // namespace

TEST_CASE("kernel switches: \"numerics\" is exact or engine; \"prefill_chunk\" a multiple of 64", "[numerics]") {
  CHECK(resolve_kernel_switches(json::object()).numerics.empty());
  CHECK(resolve_kernel_switches({{"numerics", "exact"}}).numerics == "exact");
  CHECK(resolve_kernel_switches({{"numerics", "engine"}}).numerics == "engine");
  CHECK(resolve_kernel_switches({{"numerics", ""}}).numerics.empty());
  for (const json& bad : {json("bf16"), json(true), json(1)}) {
    INFO(bad.dump());
    CHECK_THROWS_WITH(resolve_kernel_switches({{"numerics", bad}}), kvtest::contains("\"numerics\" = " + bad.dump() + " is not valid"));
  }
  CHECK(resolve_numerics("", AttentionNumerics::kExact) == AttentionNumerics::kExact);
  CHECK(resolve_numerics("", AttentionNumerics::kEngine) == AttentionNumerics::kEngine);
  CHECK(resolve_numerics("exact", AttentionNumerics::kEngine) == AttentionNumerics::kExact);
  CHECK(resolve_numerics("engine", AttentionNumerics::kExact) == AttentionNumerics::kEngine);
  CHECK_THROWS_AS(resolve_numerics("fast", AttentionNumerics::kExact), kvgate::Error);
  CHECK(std::string(numerics_name(AttentionNumerics::kEngine)) == "engine");

  CHECK(resolve_kernel_switches(json::object()).prefill_chunk == 0);
  for (int ok : {0, 64, 128, 4096, 65536}) CHECK(resolve_kernel_switches({{"prefill_chunk", ok}}).prefill_chunk == ok);
  CHECK(resolve_kernel_switches({{"prefill_chunk", ""}}).prefill_chunk == 0);
  for (const json& bad : {json(63), json(100), json(65600), json(-64), json("128"), json(64.5), json(true)}) {
    INFO(bad.dump());
    CHECK_THROWS_WITH(resolve_kernel_switches({{"prefill_chunk", bad}}), kvtest::contains("a multiple of 64 in 64..65536"));
  }
  CHECK_THAT(kernel_switches_help(), kvtest::contains("\"numerics\""));
  CHECK_THAT(kernel_switches_help(), kvtest::contains("\"prefill_chunk\""));
}

TEST_CASE("--numerics: sets the switch; a switch that says otherwise is an error naming both", "[numerics]") {
  CHECK(with_numerics(json::object(), "") == json::object());
  CHECK(with_numerics({{"q_fp8", true}}, "") == json{{"q_fp8", true}});
  CHECK(with_numerics(json::object(), "engine") == json{{"numerics", "engine"}});
  CHECK(with_numerics({{"q_fp8", true}}, "exact") == json{{"q_fp8", true}, {"numerics", "exact"}});
  CHECK(with_numerics({{"numerics", "engine"}}, "engine") == json{{"numerics", "engine"}});  // said twice alike
  CHECK(with_numerics({{"numerics", ""}}, "engine") == json{{"numerics", "engine"}});
  CHECK_THROWS_WITH(with_numerics({{"numerics", "exact"}}, "engine"),
                    kvtest::contains("--numerics engine contradicts the kernel switch \"numerics\": \"exact\""));
  CHECK_THROWS_AS(with_numerics(json::object(), "bf16"), kvgate::Error);
  CHECK(resolve_kernel_switches(with_numerics(parse_kernel_switches(R"({"pv_fp8": true})"), "engine")).numerics == "engine");
}

TEST_CASE("cpu engine: exact by default, engine on request, recorded; engine logits within the bf16 tolerance", "[numerics]") {
  kvtest::TempDir tmp;
  auto model = kvtest::make_and_load(tmp, "m", tiny());
  const int vocab = model->config().vocab_size;
  const kvgate::kernels::KvStoreOptions kv{.format = "bf16"};
  auto exact = make_engine(model, {.device = "cpu", .kv = kv});
  auto engine = make_engine(model, {.device = "cpu", .kv = kv, .kernel_switches = {{"numerics", "engine"}}});
  auto exact_named = make_engine(model, {.device = "cpu", .kv = kv, .kernel_switches = {{"numerics", "exact"}}});
  CHECK(exact->describe()["attention_numerics"] == "exact");
  CHECK(exact_named->describe()["attention_numerics"] == "exact");
  CHECK(engine->describe()["attention_numerics"] == "engine");
  CHECK(engine->describe()["kernel_switches"]["numerics"] == "engine");
  CHECK_THAT(engine->describe()["precision"].get<std::string>(), kvtest::contains("rounded to bf16"));
  CHECK_THROWS_AS(make_engine(model, {.device = "cpu", .kv = kv, .kernel_switches = {{"numerics", "fast"}}}), kvgate::Error);

  kvgate::Rng rng(3);
  const std::vector<int> prompt = random_ids(rng, 150, vocab), cont = random_ids(rng, 30, vocab);  // across prefill chunks
  const auto a = logits(*exact, prompt, cont), b = logits(*engine, prompt, cont), c = logits(*exact_named, prompt, cont);
  REQUIRE(a.size() == b.size());
  double worst = 0;
  bool any_difference = false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    worst = std::max(worst, rel_error(b[i], a[i]));
    any_difference = any_difference || a[i] != b[i];
  }
  INFO("engine vs exact: worst relative logit error " << worst);
  CHECK(worst < 1e-2);
  CHECK(any_difference);  // the rounding reaches the logits
  CHECK(a == c);          // "exact" named is the default
}

TEST_CASE("the CUDA engine's default prefill chunk is vLLM's token budget on that GPU", "[numerics]") {
  constexpr std::size_t GiB = std::size_t{1} << 30;
  CHECK(cuda_default_prefill_chunk("NVIDIA H100 80GB HBM3", 79 * GiB + GiB / 2) == 8192);
  CHECK(cuda_default_prefill_chunk("NVIDIA H200", 140 * GiB) == 8192);
  CHECK(cuda_default_prefill_chunk("NVIDIA A100-SXM4-80GB", 79 * GiB) == 2048);  // vLLM keeps A100 at 2048
  CHECK(cuda_default_prefill_chunk("NVIDIA L40S", 44 * GiB) == 2048);
  CHECK(cuda_default_prefill_chunk("NVIDIA H100 80GB HBM3", 70 * GiB) == 8192);
  CHECK(cuda_default_prefill_chunk("NVIDIA H100 80GB HBM3", 70 * GiB - 1) == 2048);
  CHECK(cuda_default_prefill_chunk("", 0) == 2048);
}

TEST_CASE("cpu engine: prefill_chunk is honoured, recorded, and changes no token or logit", "[numerics]") {
  kvtest::TempDir tmp;
  auto model = kvtest::make_and_load(tmp, "m", tiny());
  const int vocab = model->config().vocab_size;
  const kvgate::kernels::KvStoreOptions kv{.format = "int8_per_token_head"};
  auto base = make_engine(model, {.device = "cpu", .kv = kv});
  auto big = make_engine(model, {.device = "cpu", .kv = kv, .kernel_switches = {{"prefill_chunk", 192}}});
  CHECK(base->describe()["prefill_chunk"] == 64);
  CHECK(big->describe()["prefill_chunk"] == 192);
  kvgate::Rng rng(9);
  const std::vector<int> prompt = random_ids(rng, 200, vocab), cont = random_ids(rng, 20, vocab);
  GenerateOptions g;
  g.max_tokens = 10;
  CHECK(base->generate(prompt, g).tokens == big->generate(prompt, g).tokens);
  CHECK(logits(*base, prompt, cont) == logits(*big, prompt, cont));
}
