// Pinning provenance inside compare: the pinning check on fixture run.json pairs (tests/fixtures/pinning),
// --strict-pinning, the Hopper warning, latency percentiles and paired ratios with known values,
// KV capacity from engine logs or an estimate, and the JSON fields.
#include <cmath>
#include <filesystem>
#include <string>

#include "tests/catch_compat.hpp"
#include "harness/compare/compare.h"
#include "harness/compare/comparison_json.h"
#include "harness/compare/gains_text.h"
#include "harness/compare/text_table.h"
#include "harness/core/error.h"
#include "harness/stats/geometric_mean_ratio.h"
#include "harness/stats/percentile.h"
#include "tests/test_util.h"

using namespace kvgate;
using namespace kvgate::compare;
using kvtest::Approx;
using nlohmann::json;

namespace {
const std::string kDir = "tests/fixtures/pinning/";
bool has(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }
Comparison run_compare(const std::vector<std::string>& labels, CompareOptions o = {}) {
  std::vector<std::string> dirs;
  for (const auto& l : labels) dirs.push_back(kDir + l);
  return compare_runs(dirs, o);
}
const PinnedFact* find(const std::vector<PinnedFact>& v, const std::string& field) {
  for (const auto& f : v)
    if (f.field == field) return &f;
  return nullptr;
}
}  // namespace

TEST_CASE("percentiles interpolate linearly between order statistics, as numpy") {
  std::vector<double> v;
  for (int i = 100; i >= 1; --i) v.push_back(i);  // unsorted on purpose
  const stats::Percentiles p = stats::percentiles(v);
  CHECK(p.n == 100);
  CHECK(p.mean == Approx(50.5));
  CHECK(p.p50 == Approx(50.5));   // numpy.percentile(range(1, 101), 50)
  CHECK(p.p90 == Approx(90.1));
  CHECK(p.p99 == Approx(99.01));
  CHECK(p.max == 100);
  const std::vector<double> one = {7.0};
  CHECK(stats::percentile_sorted(one, 99) == 7.0);
  CHECK(stats::percentiles({}).n == 0);
  CHECK_THROWS_AS(stats::percentile_sorted(std::vector<double>{}, 50), std::invalid_argument);
  CHECK_THROWS_AS(stats::percentile_sorted(one, 101), std::invalid_argument);
}

TEST_CASE("geometric mean ratio: exp(mean log ratio) with a t interval; constant ratios have a zero-width interval") {
  const std::vector<double> logs = {0.1, 0.2, 0.3};  // mean 0.2, sd 0.1, t(0.975, 2) = 4.302652729911275
  const stats::GeometricRatio r = stats::geometric_mean_ratio(logs, 0.05);
  const double half = 4.302652729911275 * 0.1 / std::sqrt(3.0);
  CHECK(r.estimate == Approx(std::exp(0.2)));
  CHECK(r.log_sd == Approx(0.1));
  CHECK(r.interval.lo == Approx(std::exp(0.2 - half)).epsilon(1e-9));
  CHECK(r.interval.hi == Approx(std::exp(0.2 + half)).epsilon(1e-9));
  const std::vector<double> same = {std::log(0.5), std::log(0.5), std::log(0.5)};
  const stats::GeometricRatio s = stats::geometric_mean_ratio(same, 0.05);
  CHECK(s.estimate == Approx(0.5));
  CHECK(s.interval.lo == Approx(0.5));
  CHECK(s.interval.hi == Approx(0.5));
  const std::vector<double> single = {std::log(2.0)};
  CHECK(std::isinf(stats::geometric_mean_ratio(single, 0.05).interval.hi));
  CHECK_THROWS_AS(stats::geometric_mean_ratio(std::vector<double>{}, 0.05), std::invalid_argument);
}

TEST_CASE("pinning: the attention backend and max tokens differ, the KV settings are not listed, Hopper is named") {
  const Comparison c = run_compare({"bf16", "fp8"});
  REQUIRE(c.pairs.size() == 1);
  const Pinning& pin = c.pairs[0].pinning;
  CHECK_FALSE(pin.pinned());
  CHECK(pin.differences.size() == 2);
  const PinnedFact* backend = find(pin.differences, "attention_backend");
  REQUIRE(backend);
  CHECK(*backend->reference == "FLASH_ATTN");
  CHECK(*backend->candidate == "FLASHINFER");
  const PinnedFact* max_tokens = find(pin.differences, "max_tokens");
  REQUIRE(max_tokens);
  CHECK(*max_tokens->reference == 1024);
  CHECK(*max_tokens->candidate == 2048);
  for (const char* kv : {"kv", "kv_cache_dtype", "kv_cache_tokens"}) CHECK_FALSE(find(pin.differences, kv));
  REQUIRE(pin.warnings.size() == 1);
  CHECK(has(pin.warnings[0], "Hopper FP8"));
  CHECK(has(pin.warnings[0], "(Hopper GPU)"));
  CHECK(has(pin.warnings[0], "bf16 ran on FLASH_ATTN, fp8 on FLASHINFER"));
  // Printed at the top (before the table) and counted in the warnings.
  const std::string text = format_text(c);
  CHECK(text.find("pinning, fp8 vs bf16") < text.find("task  bucket"));
  CHECK(has(text, "differs: attention backend FLASH_ATTN -> FLASHINFER"));
  CHECK(has(text, "differs: max tokens 1024 -> 2048"));
  bool warned = false;
  for (const auto& w : c.warnings) warned = warned || has(w, "not pinned");
  CHECK(warned);
  const json j = to_json(c);
  CHECK(j["pairs"][0]["pinning"]["pinned"] == false);
  CHECK(j["pairs"][0]["pinning"]["differences"][0]["field"].is_string());
  CHECK(j["options"]["strict_pinning"] == false);
}

TEST_CASE("pinning: runs that differ only in KV settings are pinned; --strict-pinning refuses the others (exit 2)") {
  const Comparison c = run_compare({"bf16", "fp8-pinned"});
  CHECK(c.pairs[0].pinning.pinned());
  CHECK(c.pairs[0].pinning.warnings.empty());
  CHECK(has(format_text(c), "pinned: no difference other than the KV settings"));
  CompareOptions strict;
  strict.strict_pinning = true;
  CHECK_NOTHROW(run_compare({"bf16", "fp8-pinned"}, strict));
  try {
    run_compare({"bf16", "fp8"}, strict);
    FAIL("no error");
  } catch (const Error& e) {
    CHECK(e.exit_code() == 2);
    CHECK(has(e.what(), "fp8: attention backend FLASH_ATTN -> FLASHINFER"));
    CHECK(has(e.what(), "drop --strict-pinning"));
  }
}

TEST_CASE("pinning: facts one run lacks are unchecked, facts neither recorded are named") {
  RunManifest a, b;
  a.label = "a";
  b.label = "b";
  a.engine = {{"log", {{"facts", {{"attention_backend", "FLASH_ATTN"}, {"revision", nullptr}}}}}};
  b.engine = {{"log", {{"facts", {{"revision", "abc"}}}}}};
  a.sampling = {{"temperature", 0.0}, {"top_p", 1.0}};
  b.sampling = {{"temperature", 0.6}, {"top_p", 1.0}};
  const Pinning p = check_pinning(a, b, "a", "b");
  CHECK(find(p.differences, "sampling.temperature"));
  CHECK(find(p.differences, "revision"));  // unset (None) vs a pinned revision is a difference
  const PinnedFact* backend = find(p.one_sided, "attention_backend");
  REQUIRE(backend);
  CHECK_FALSE(backend->candidate.has_value());
  CHECK(describe(*backend) == "attention backend FLASH_ATTN -> (not recorded)");
  CHECK(p.warnings.empty());  // a backend recorded on one side only is not a known difference
  bool named = false;
  for (const auto& u : p.unrecorded) named = named || u == "engine version";
  CHECK(named);
}

TEST_CASE("gains: per-run percentiles and paired ratios with known values; capacity from the engine logs") {
  const Comparison c = run_compare({"bf16", "fp8"});
  const RunPerformance& base = c.runs[0].performance;
  const RunPerformance& cand = c.runs[1].performance;
  REQUIRE(base.ttft_ms);
  CHECK(base.ttft_ms->n == 10);
  CHECK(base.ttft_ms->p50 == Approx(145));
  CHECK(base.ttft_ms->p90 == Approx(181));
  CHECK(base.ttft_ms->p99 == Approx(189.1));
  REQUIRE(cand.ttft_ms);
  CHECK(cand.ttft_ms->p50 == Approx(69));
  CHECK(cand.ttft_ms->p90 == Approx(103.2));
  CHECK(cand.ttft_ms->p99 == Approx(112.92));
  REQUIRE(base.itl_ms);
  CHECK(base.itl_basis == "inter_token_ms");
  CHECK(base.itl_ms->n == 40);  // every streamed gap, pooled
  CHECK(base.itl_ms->p99 == Approx(20));
  REQUIRE(base.output_tokens_per_s);
  CHECK(base.output_tokens_per_s->max == Approx(5.0 / 0.18));  // 5 tokens in 180 ms
  REQUIRE(base.kv_capacity);
  CHECK(base.kv_capacity->tokens == 759872);
  CHECK(base.kv_capacity->source == "engine_log");
  CHECK(has(base.kv_capacity->detail, "line 18"));

  const Gains& g = c.pairs[0].gains;
  const PairedRatio* ttft = nullptr;
  const PairedRatio* itl = nullptr;
  for (const auto& r : g.ratios) {
    if (r.metric == "ttft_ms") ttft = &r;
    if (r.metric == "itl_ms") itl = &r;
  }
  REQUIRE(ttft);
  CHECK(ttft->trials == 10);
  CHECK(ttft->ratio == Approx(0.48989794855663565));  // sqrt(0.4 * 0.6)
  CHECK(ttft->interval.lo == Approx(0.4204502390084099).epsilon(1e-6));
  CHECK(ttft->interval.hi == Approx(0.5708166573195824).epsilon(1e-6));
  CHECK(*ttft->p50_ratio == Approx(69.0 / 145.0));
  REQUIRE(itl);
  CHECK(itl->ratio == Approx(0.75));
  CHECK(itl->lower_is_better);
  REQUIRE(g.capacity);
  CHECK(g.capacity->ratio == Approx(2.0));
  CHECK_FALSE(g.capacity->estimate);

  const std::string text = format_text(c);
  CHECK(has(text, "what you gain (fp8 / bf16)"));
  CHECK(has(text, "KV capacity x2.00: 1,519,744 vs 759,872 tokens (engine logs)"));
  CHECK(has(text, "ITL x0.75 [0.75, 0.75] (25% less time"));
  CHECK(has(text, "TTFT x0.49 [0.42, 0.57] (51% less time"));
  CHECK(has(text, "accuracy custom x0.90"));
  CHECK(gain_summary(c.pairs[0]) == "capacity x2.00, ITL x0.75, TTFT x0.49, E2E latency x0.59, output tokens/s x1.70");

  const std::vector<GainRow> rows = gain_rows(c, c.pairs[0]);
  REQUIRE(rows.size() == 6);  // capacity, ITL, TTFT, E2E, tokens/s, then the accuracy loss
  CHECK(rows[0].what == "KV capacity");
  CHECK(rows[0].basis == "1,519,744 vs 759,872 tokens, from the engine logs");
  CHECK(rows[1].what == "ITL");
  CHECK(rows[2].interval == "[0.42, 0.57]");
  CHECK(rows[2].good);
  CHECK_FALSE(rows[5].gain);
  CHECK(rows[5].what == "accuracy custom");
  CHECK(rows[5].interval == ">= 0.652");
  CHECK_FALSE(rows[5].good);

  const json j = to_json(c);
  const json& gj = j["pairs"][0]["gains"];
  CHECK(gj["method"] == "geometric_mean_t");
  CHECK(gj["kv_capacity"]["ratio"] == 2.0);
  CHECK(gj["kv_capacity"]["source"] == "engine_log");
  CHECK(gj["metrics"].size() == 4);
  CHECK(j["runs"][0]["performance"]["ttft_ms"]["p90"] == Approx(181));
  CHECK(j["runs"][0]["performance"]["itl_ms"]["basis"] == "inter_token_ms");
  CHECK(j["runs"][1]["performance"]["kv_capacity"]["tokens"] == 1519744);
}

TEST_CASE("gains: without engine logs the capacity is an estimate from --model-config, labelled so") {
  // The same runs without their engine logs: kvgate capacity on a Qwen3-8B-shaped config.
  kvtest::TempDir dir;
  for (const std::string label : {"bf16", "fp8"}) {
    std::filesystem::create_directories(dir.file(label));
    json m = json::parse(kvtest::read_text(kDir + label + "/run.json"));
    m["engine"].erase("log");
    kvtest::write_text(dir.file(label + "/run.json"), m.dump());
    kvtest::write_text(dir.file(label + "/results.jsonl"), kvtest::read_text(kDir + label + "/results.jsonl"));
  }
  const json config = {{"model_type", "qwen3"}, {"num_hidden_layers", 36}, {"num_attention_heads", 32},
                       {"num_key_value_heads", 8}, {"head_dim", 128}, {"hidden_size", 4096},
                       {"intermediate_size", 12288}, {"vocab_size", 151936}, {"tie_word_embeddings", false}};
  kvtest::write_text(dir.file("config.json"), config.dump());
  CompareOptions o;
  Comparison without = compare_runs({dir.file("bf16"), dir.file("fp8")}, o);
  CHECK_FALSE(without.pairs[0].gains.capacity);
  CHECK(has(format_text(without), "no KV capacity ratio"));
  o.model_config = dir.file("config.json");
  const Comparison c = compare_runs({dir.file("bf16"), dir.file("fp8")}, o);
  REQUIRE(c.pairs[0].gains.capacity);
  CHECK(c.pairs[0].gains.capacity->estimate);
  CHECK(c.pairs[0].gains.capacity->ratio == Approx(2.0).epsilon(0.001));  // fp8 holds twice the tokens of bf16
  CHECK(c.runs[0].performance.kv_capacity->source == "estimate");
  CHECK(has(format_text(c), "(estimate: kvgate capacity"));
  o.model_config = dir.file("missing.json");
  CHECK_THROWS_AS(compare_runs({dir.file("bf16"), dir.file("fp8")}, o), Error);
}

TEST_CASE("A slowdown is called a slowdown: '3.33× slower', never a gain of x0.30") {
  CHECK(change_words(1.94, "slower") == "\u00d71.94");
  CHECK(change_words(0.3, "slower") == "3.33\u00d7 slower");
  CHECK(change_words(0.5, "less") == "2.00\u00d7 less");
  CHECK(change_words(0.05, "slower") == "20.0\u00d7 slower");
  PairedRatio e2e{.metric = "e2e_ms", .lower_is_better = true, .trials = 48, .results = 48, .ratio = 3.3, .interval = {3.1, 3.5}};
  PairedRatio tps{.metric = "output_tokens_per_s", .lower_is_better = false, .trials = 48, .results = 48, .ratio = 0.3, .interval = {0.28, 0.32}};
  CHECK(oriented(e2e) == Approx(1 / 3.3));
  CHECK(oriented(tps) == Approx(0.3));
  Comparison c;
  PairComparison p;
  p.gains.ratios = {e2e, tps};
  p.gains.capacity = CapacityGain{.reference_tokens = 1000, .candidate_tokens = 500, .ratio = 0.5, .estimate = false, .source = "engine_log"};
  const std::string summary = gain_summary(p);
  CHECK(summary == "capacity 2.00\u00d7 less, E2E latency 3.30\u00d7 slower, output tokens/s 3.33\u00d7 slower");
  const std::vector<std::string> lines = gain_lines(c, p);
  REQUIRE(lines.size() == 3);
  CHECK(has(lines[0], "KV capacity x0.50 (2.00\u00d7 less): 500 vs 1,000 tokens"));
  CHECK(has(lines[1], "(3.30\u00d7 slower: 230% more time"));
  CHECK(has(lines[2], "(3.33\u00d7 slower: 70% fewer tokens/s per request"));
  const std::vector<GainRow> rows = gain_rows(c, p);
  CHECK(rows[1].ratio == "3.30\u00d7 slower");
  CHECK_FALSE(rows[1].good);
}

TEST_CASE("Pinning: the probed engine name stays (a log that matched nothing does not unset it); llama.cpp's flash attention; same KV types warn") {
  RunManifest llama, reference;
  llama.engine = {{"summary", {{"engine", "llama.cpp"}, {"version", "b7100-a1b2c3d4e"}}},
                  {"log", {{"engine", nullptr}, {"facts", json::object()}}}};
  reference.engine = {{"summary", {{"engine", "kvgate-reference"}}}};
  Pinning p = check_pinning(llama, reference, "llama", "ref");
  const PinnedFact* engine = find(p.differences, "engine");
  REQUIRE(engine);
  CHECK(describe(*engine) == "engine llama.cpp -> kvgate-reference");

  RunManifest f16, q8;
  f16.engine = {{"summary", {{"engine", "llama.cpp"}, {"version", "b7100-a1b2c3d4e"}}},
                {"log", {{"engine", "llama.cpp"}, {"facts", {{"version", "b7100-a1b2c3d4e"}, {"type_k", "f16"}, {"type_v", "f16"}, {"flash_attn", "enabled"}}}}}};
  q8 = f16;
  q8.engine["log"]["facts"]["type_k"] = "q8_0";
  q8.engine["log"]["facts"]["type_v"] = "q8_0";
  p = check_pinning(f16, q8, "f16", "q8_0");
  CHECK(p.pinned());  // the K/V types are the KV settings under test
  CHECK(p.warnings.empty());
  PairComparison pair;
  pair.pinning = p;
  CHECK(pinning_lines(Comparison{}, pair)[0] ==
        "pinned: no difference other than the KV settings among the facts both runs recorded (engine, engine version, "
        "flash attention (llama.cpp))");
  pair.pinning = check_pinning(RunManifest{}, RunManifest{}, "a", "b");
  CHECK(pinning_lines(Comparison{}, pair)[0] ==
        "pinned: no difference other than the KV settings among the facts both runs recorded (none: nothing was checked)");
  q8.engine["log"]["facts"]["flash_attn"] = "disabled";
  q8.engine["log"]["facts"]["version"] = "b7200-0000000";
  p = check_pinning(f16, q8, "f16", "q8_0");
  REQUIRE(find(p.differences, "flash_attn"));
  CHECK(describe(*find(p.differences, "flash_attn")) == "flash attention (llama.cpp) enabled -> disabled");
  CHECK(find(p.differences, "engine_version"));  // the build
  p = check_pinning(f16, f16, "f16", "f16-again");
  REQUIRE(p.warnings.size() == 1);
  CHECK(has(p.warnings[0], "same KV cache types (K f16, V f16)"));
}
