// kvgate kld's statistics (llama-perplexity's definitions) and the cache-reading comparison of two
// engines: bf16 against itself is exactly 0; lossy formats are above 0 in the expected order.
#include <cmath>
#include <map>

#include "tests/catch_compat.hpp"
#include "harness/core/error.h"
#include "harness/core/rng.h"
#include "tests/decoder_fixtures.h"
#include "harness/kld/kld_report.h"
#include "harness/kld/kld_run.h"

using namespace kvgate;
using namespace kvgate::kld;

TEST_CASE("kld stats: one position by hand", "[kld]") {
  // base p = softmax(log 0.5, log 0.25, log 0.25); Q p = (0.25, 0.5, 0.25); next token 1.
  const std::vector<float> base = {std::log(0.5f), std::log(0.25f), std::log(0.25f)};
  const std::vector<float> q = {std::log(0.25f), std::log(0.5f), std::log(0.25f)};
  const PositionStats s = compare_position(base, q, 1);
  const double kld = 0.5 * std::log(0.5 / 0.25) + 0.25 * std::log(0.25 / 0.5) + 0.0;
  CHECK(s.kld == kvtest::Approx(kld).epsilon(1e-6));
  CHECK(s.p_diff == kvtest::Approx(0.25).epsilon(1e-6));
  CHECK(s.nll_q == kvtest::Approx(-std::log(0.5)).epsilon(1e-6));
  CHECK(s.nll_base == kvtest::Approx(-std::log(0.25)).epsilon(1e-6));
  CHECK_FALSE(s.same_top);
  const PositionStats same = compare_position(base, base, 0);
  CHECK(same.kld == 0.0);
  CHECK(same.p_diff == 0.0);
  CHECK(same.same_top);
}

TEST_CASE("kld stats: llama.cpp's mean_and_uncertainty, percentiles and median", "[kld]") {
  // 11 values 0..10: mean 5, population variance 10, unc = sqrt(10 / 10) = 1.
  double s = 0, s2 = 0;
  for (int i = 0; i <= 10; ++i) s += i, s2 += i * i;
  const MeanUnc m = mean_and_uncertainty(s, s2, 11);
  CHECK(m.mean == kvtest::Approx(5.0));
  CHECK(m.unc == kvtest::Approx(1.0));
  CHECK(mean_and_uncertainty(s, s2, 10).unc == 0.0);  // n <= 10: no uncertainty, as llama.cpp
  const std::vector<double> v = {1, 2, 3, 4};
  CHECK(percentile(v, 0.5) == kvtest::Approx(2.5));
  CHECK(percentile(v, 0.999) == kvtest::Approx(3.997));
  CHECK(percentile(v, 0.0) == 1.0);
  CHECK(percentile(v, 1.0) == 4.0);
  CHECK(median(v) == 2.5);
  CHECK(median({1, 2, 9}) == 2.0);
  CHECK(covariance(3, 3, 5, 2) == kvtest::Approx((5.0 / 2 - 1.5 * 1.5) / 1));
}

TEST_CASE("kld stats: RMS dp, same-top p and the report layout", "[kld]") {
  Accumulator acc;
  for (int i = 0; i < 20; ++i) acc.add({.kld = 0.01 * i, .p_diff = (i % 2 ? 0.1 : -0.1), .nll_q = 1.0 + 0.01 * i, .nll_base = 1.0, .same_top = i < 15});
  const Summary s = acc.summary();
  CHECK(s.rms_p_diff.mean == kvtest::Approx(0.1));
  CHECK(s.same_top.mean == kvtest::Approx(0.75));
  CHECK(s.same_top.unc == kvtest::Approx(std::sqrt(0.75 * 0.25 / 19)));
  CHECK(s.kld.mean == kvtest::Approx(0.095));
  KldResult r{.summary = s, .buckets = {{.from = 0, .to = 10, .sums = s.sums}}, .chunks = 1, .ctx = 21};
  const std::string text = report_text(r);
  for (const char* line : {"====== Perplexity statistics ======", "Mean PPL(Q)                   :", "Cor(ln(PPL(Q)), ln(PPL(base))):",
                           "====== KL divergence statistics ======", "Mean    KLD:   0.095000 ±", "Maximum KLD:   0.190000",
                           "99.9%   KLD:", "Median  KLD:   0.095000", " 0.1%   KLD:", "Minimum KLD:   0.000000",
                           "====== Token probability statistics ======", "RMS Δp    : 10.000 ±",
                           "Same top p: 75.000 ±", "75.0%   Δp:", "KL divergence by context position"})
    CHECK_THAT(text, kvtest::contains(line));
  const nlohmann::json j = report_json(r, {{"model_dir", "m"}});
  CHECK(j["kld_mean"].get<double>() == kvtest::Approx(0.095));
  CHECK(j["model_dir"] == "m");
  CHECK(j["kld_percentiles"].contains("99.9"));
  CHECK(j["by_position"].size() == 1);
  CHECK(j["positions_scored"] == 20);
}

TEST_CASE("kld run: bf16 against itself is 0; lossy formats are above 0 in the expected order", "[kld][decoder]") {
  kvtest::TempDir tmp;
  auto model = kvtest::make_and_load(tmp, "m", kvtest::every_format_model());
  const int vocab = model->config().vocab_size;
  Rng rng(2024);
  std::vector<std::vector<int>> chunks(2, std::vector<int>(120));
  for (auto& c : chunks)
    for (int& t : c) t = static_cast<int>(rng.below(static_cast<std::uint64_t>(vocab)));
  auto base = decoder::make_engine(model, {.device = "cpu", .kv = {.format = "bf16"}});
  std::map<std::string, KldResult> r;
  for (const std::string f : {"bf16", "fp8_per_token_head", "fp8_e4m3", "int4_per_token_head", "turboquant_3bit_nc"}) {
    nlohmann::json p = nlohmann::json::object();
    if (f == "turboquant_3bit_nc") p["skip_layers"] = nlohmann::json::array();  // quantize every layer
    auto test = decoder::make_engine(model, {.device = "cpu", .kv = {.format = f, .params = p}});
    int chunk_calls = 0;
    r[f] = run_kld(*base, *test, chunks, {.buckets = 4, .on_chunk = [&](int, const Running&) { ++chunk_calls; }});
    CHECK(chunk_calls == 2);
    UNSCOPED_INFO(f << ": mean KLD " << r[f].summary.kld.mean);
  }
  const KldResult& same = r["bf16"];
  CHECK(same.summary.kld.mean == 0.0);
  CHECK(same.summary.kld_sorted.back() == 0.0);
  CHECK(same.summary.same_top.mean == 1.0);
  CHECK(same.summary.rms_p_diff.mean == 0.0);
  CHECK(same.summary.sums.count == 2 * 119);
  std::size_t in_buckets = 0;
  for (const auto& b : same.buckets) in_buckets += b.sums.count;
  CHECK(in_buckets == same.summary.sums.count);
  CHECK(same.buckets.front().from == 0);
  CHECK(same.buckets.back().to == 120);
  for (const auto& [f, res] : r)
    if (f != "bf16") CHECK(res.summary.kld.mean > 0.0);
  CHECK(r["fp8_per_token_head"].summary.kld.mean < r["fp8_e4m3"].summary.kld.mean);
  CHECK(r["fp8_e4m3"].summary.kld.mean < r["int4_per_token_head"].summary.kld.mean);
  CHECK(r["int4_per_token_head"].summary.kld.mean < r["turboquant_3bit_nc"].summary.kld.mean);
  // llama-perplexity's window: only the second half of each chunk.
  auto test = decoder::make_engine(model, {.device = "cpu", .kv = {.format = "int4_per_token_head"}});
  const KldResult half = run_kld(*base, *test, chunks, {.second_half = true});
  CHECK(half.summary.sums.count == 2 * (119 - 60));
}

TEST_CASE("kld run: an engine's error reaches the caller; bad chunks are errors", "[kld]") {
  kvtest::TempDir tmp;
  auto model = kvtest::make_and_load(tmp, "m", kvtest::every_format_model());
  auto base = decoder::make_engine(model, {.device = "cpu"});
  auto test = decoder::make_engine(model, {.device = "cpu"});
  CHECK_THROWS_AS(run_kld(*base, *test, {}, {}), Error);
  CHECK_THROWS_AS(run_kld(*base, *test, {{1}}, {}), Error);
  // A token outside the vocabulary: both engines refuse it, and the error comes back, not a hang.
  CHECK_THROWS_AS(run_kld(*base, *test, {{1, 2, 1 << 30}}, {}), Error);
}
