// models/demo-outliers, models/demo with key outlier channels (scripts/demo-model/derive_outliers.py):
// its bf16 logits are bit-identical to models/demo's through the reference decoder, while the range
// report (calibrate --report) and the per-layer KLD (kld --per-layer) both point at the rescaled
// layers, 2 and 5.
#include <cstring>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "harness/calibrate/range_report.h"
#include "harness/core/jsonl.h"
#include "harness/decoder/model.h"
#include "harness/decoder/session.h"
#include "harness/kld/per_layer.h"
#include "harness/tokenizer/tokenizer.h"
#include "tests/catch_compat.hpp"
#include "tests/test_util.h"

using namespace kvgate;

namespace {

const std::set<int> kRescaled = {2, 5};  // LAYERS in derive_outliers.py

// The first `n` tokens of the first 1K multicode trial's prompt (prose and code lines).
std::vector<int> trial_tokens(std::size_t n) {
  const std::string line = read_file(kvtest::data_dir() + "/demo-model/multicode-1k.jsonl");
  const auto j = nlohmann::json::parse(line.substr(0, line.find('\n')));
  const std::string text = j.at("input").at("messages").at(0).at("content").get<std::string>();
  const std::vector<std::int32_t> ids = Tokenizer::load("models/demo").encode(text, false);
  REQUIRE(ids.size() >= n);
  return {ids.begin(), ids.begin() + static_cast<std::ptrdiff_t>(n)};
}

// Every position's logits, in order, teacher-forced through a CPU session with a bf16 cache.
std::vector<float> all_logits(const std::string& dir, const std::vector<int>& tokens) {
  const auto model = decoder::Model::load(dir);
  decoder::Session s(model, {.kv = {.format = "bf16"}, .threads = 2});
  const int vocab = model->config().vocab_size;
  std::vector<float> out;
  s.forward(tokens, static_cast<int>(tokens.size()), [&](int, const float* logits) { out.insert(out.end(), logits, logits + vocab); });
  return out;
}

}  // namespace

TEST_CASE("demo-outliers: bf16 logits bit-identical to models/demo over 320 positions", "[demo-outliers]") {
  const std::vector<int> tokens = trial_tokens(320);
  const std::vector<float> a = all_logits("models/demo", tokens), b = all_logits("models/demo-outliers", tokens);
  REQUIRE(a.size() == 320u * 4096u);
  REQUIRE(b.size() == a.size());
  std::size_t differing = 0;
  for (std::size_t i = 0; i < a.size(); ++i) differing += std::memcmp(&a[i], &b[i], sizeof(float)) != 0;
  CHECK(differing == 0);
}

TEST_CASE("demo-outliers: at scale 1.0 only the rescaled layers' keys clip in fp8_e4m3", "[demo-outliers]") {
  const auto model = decoder::Model::load("models/demo-outliers");
  const auto& c = model->config();
  const std::vector<std::vector<int>> windows = {trial_tokens(256)};
  const auto r = calibrate::range_report(model, windows, calibrate::uniform_scales(c.num_layers, c.num_kv_heads, 1.0f),
                                         "fp8_e4m3", 2);
  REQUIRE(r.size() == 8u);
  for (const calibrate::LayerRange& l : r) {
    INFO("layer " << l.layer);
    CHECK(l.v.clipped == 0);
    if (kRescaled.count(l.layer)) {
      CHECK(l.k.absmax > 1000);  // thousands, as keys without QK-norm
      CHECK(l.k.clipped > 0.01);
      CHECK(l.k.rms_error > 10 * r[0].k.rms_error);
    } else {
      CHECK(l.k.absmax < 448);
      CHECK(l.k.clipped == 0);
    }
  }
  // With the layer's own absmax as the scale nothing clips.
  const auto own = calibrate::range_report(model, windows, calibrate::uniform_scales(c.num_layers, c.num_kv_heads, 8192.0f / 448.0f),
                                           "fp8_e4m3", 2);
  for (int l : kRescaled) CHECK(own[static_cast<std::size_t>(l)].k.clipped == 0);
}

TEST_CASE("demo-outliers: kld per layer ranks the rescaled layers first for fp8_e4m3 at scale 1.0", "[demo-outliers]") {
  const auto model = decoder::Model::load("models/demo-outliers");
  const std::vector<std::vector<int>> chunks = {trial_tokens(192)};
  const decoder::EngineOptions candidate{.device = "cpu", .kv = {.format = "fp8_e4m3"}, .max_batch = 2, .threads = 1};
  std::vector<int> seen;
  const auto layers = kld::per_layer_kld(model, candidate, chunks, {}, [&](int done, int total) {
    CHECK(total == 8);
    seen.push_back(done);
  });
  CHECK(seen == std::vector<int>{1, 2, 3, 4, 5, 6, 7, 8});
  REQUIRE(layers.size() == 8u);
  CHECK(kRescaled.count(layers[0].layer) == 1);
  CHECK(kRescaled.count(layers[1].layer) == 1);
  for (std::size_t i = 1; i < layers.size(); ++i) CHECK(layers[i - 1].summary.kld.mean >= layers[i].summary.kld.mean);
  CHECK(layers[1].summary.kld.mean > 3 * layers[2].summary.kld.mean);
  CHECK(layers[0].summary.sums.count == 191u);
  // The per-layer JSON keeps the order and names the layer.
  const auto j = kld::per_layer_json(layers, {{"model_dir", "models/demo-outliers"}});
  CHECK(j["per_layer"][0]["layer"].get<int>() == layers[0].layer);
  CHECK(j["model_dir"] == "models/demo-outliers");
}

TEST_CASE("kld per layer: one layer quantized, the others skipped; bf16 is refused", "[demo-outliers]") {
  const kernels::KvStoreOptions kv{.format = "fp8_e4m3", .params = {{"scales", "x.json"}, {"skip_layers", {0}}}};
  const kernels::KvStoreOptions o = kld::only_layer(kv, 2, 4);
  CHECK(o.params["skip_layers"] == nlohmann::json({0, 1, 3}));
  CHECK(o.params["scales"] == "x.json");
  CHECK(o.format == "fp8_e4m3");
  const auto model = decoder::Model::load("models/demo");
  CHECK_THROWS_WITH(kld::per_layer_kld(model, {.kv = {.format = "bf16"}}, {trial_tokens(8)}, {}),
                    kvtest::contains("--kv-format fp8_e4m3"));
}

TEST_CASE("kvgate kld --per-layer and calibrate --report on the command line", "[demo-outliers]") {
  kvtest::TempDir tmp;
  const std::string text = tmp.file("text.txt");
  const std::string line = read_file(kvtest::data_dir() + "/demo-model/multicode-1k.jsonl");
  kvtest::write_text(text, nlohmann::json::parse(line.substr(0, line.find('\n')))["input"]["messages"][0]["content"].get<std::string>());
  const auto k = kvtest::run_kvgate({"kld", "--model-dir", "models/demo-outliers", "--kv-format", "fp8_e4m3", "--text", text,
                                     "--ctx", "128", "--chunks", "1", "--per-layer", "--json", "--threads", "1"});
  REQUIRE(k.exit_code == 0);
  const auto kj = nlohmann::json::parse(k.out);
  REQUIRE(kj["per_layer"].size() == 8u);
  CHECK(kRescaled.count(kj["per_layer"][0]["layer"].get<int>()) == 1);
  CHECK(kRescaled.count(kj["per_layer"][1]["layer"].get<int>()) == 1);
  CHECK(kj["engine"].value("device", "") == "cpu");  // the engines the per-layer run scored with
  const auto bad = kvtest::run_kvgate({"kld", "--model-dir", "models/demo-outliers", "--kv-format", "fp8_e4m3", "--text", text,
                                       "--per-layer", "--base-kv-format", "fp8_e5m2"});
  CHECK(bad.exit_code == 2);
  CHECK(bad.err.find("drop --base-kv-format") != std::string::npos);

  const auto c = kvtest::run_kvgate({"calibrate", "--model-dir", "models/demo-outliers", "--data", text, "--out",
                                     tmp.file("s.json"), "--max-tokens", "256", "--report", "--report-scale", "1", "--json"});
  REQUIRE(c.exit_code == 0);
  const auto cj = nlohmann::json::parse(c.out);
  const auto& rl = cj["range_report"]["layers"];
  REQUIRE(rl.size() == 8u);
  for (const auto& l : rl) CHECK((l["k"]["clipped"].get<double>() > 0) == (kRescaled.count(l["layer"].get<int>()) == 1));
  const auto t = kvtest::run_kvgate({"calibrate", "--model-dir", "models/demo-outliers", "--data", text, "--out",
                                     tmp.file("u.json"), "--max-tokens", "256", "--report"});
  REQUIRE(t.exit_code == 0);
  CHECK(t.out.find("clipped %") != std::string::npos);
  CHECK(t.out.find("the calibrated scales written") != std::string::npos);
  const auto no_report = kvtest::run_kvgate({"calibrate", "--model-dir", "models/demo-outliers", "--data", text, "--out",
                                             tmp.file("t.json"), "--report-scale", "1"});
  CHECK(no_report.exit_code == 2);
  CHECK(no_report.err.find("add --report") != std::string::npos);
}
