// `kvgate gate --ladder` (harness/gate/ladder.h) on the demo model on the CPU with a small suite:
// a format that FAILs every rung climbs to the sensitive-layer rungs and ends on bf16; a format that
// cannot PASS (a margin no few trials can show) takes the calibration rung on the way; one that
// PASSes stops at its first rung. Rung order, labels, what run.json records, the reports' ladder,
// the calibration text (the suite's own prompts, none scored), and a re-run that resumes without
// running anything again.
#include <filesystem>

#include "tests/catch_compat.hpp"
#include "harness/core/error.h"
#include "harness/core/jsonl.h"
#include "harness/gate/ladder.h"
#include "tests/test_util.h"

using kvtest::contains;
using nlohmann::json;
namespace fs = std::filesystem;
namespace g = kvgate::gate;

namespace {

g::Suite mini_suite(const std::string& margin) {
  const std::string yaml = "suite: mini\nseed: 3\nmargin: " + margin +
                           "\ndefaults: {per_bucket: 6, sampling: {temperature: 0, max_tokens: 64}}\n"
                           "tasks:\n  - task: multicode\n    lengths: [512]\n    lines: 8\n    ask: 2\n    max_tokens: 64\n";
  g::LineMap lines;
  return g::parse_suite(g::yaml_to_json(yaml, "mini.yaml", &lines), "mini.yaml", lines);
}

g::LadderOptions ladder(const std::string& format, const std::string& margin, const std::string& out) {
  g::LadderOptions o;
  o.gate.suite = mini_suite(margin);
  o.gate.out_dir = out;
  o.gate.configs = g::make_configurations({.model_dir = "models/demo", .candidate_kv = {format}, .device = "cpu", .threads = 1});
  o.gate.concurrency = 2;
  o.gate.progress = "none";
  o.gate.gen_threads = 1;
  o.start = g::parse_kv_settings({format}, "--ladder")[0];
  o.calibration_tokens = 2048;
  o.calibration_ctx = 1024;
  o.kld_ctx = 256;
  o.kld_chunks = 1;
  o.max_skip_layers = 2;
  o.log = [](const std::string&) {};
  return o;
}

std::vector<std::string> labels(const g::LadderResult& r) {
  std::vector<std::string> out;
  for (const g::LadderRung& x : r.rungs) out.push_back(x.label);
  return out;
}

std::map<std::string, std::string> run_files(const std::string& out) {
  std::map<std::string, std::string> m;
  for (const auto& e : fs::recursive_directory_iterator(out + "/runs"))
    if (e.path().filename() == "results.jsonl") m[e.path().string()] = kvgate::read_file(e.path().string());
  m["per_layer"] = kvgate::read_file(out + "/ladder/per_layer.json");
  return m;
}

}  // namespace

TEST_CASE("ladder: skip sizes double up to the limit", "[gate][ladder]") {
  CHECK(g::skip_sizes(1) == std::vector<int>{1});
  CHECK(g::skip_sizes(2) == std::vector<int>{1, 2});
  CHECK(g::skip_sizes(6) == std::vector<int>{1, 2, 4, 6});
  CHECK(g::skip_sizes(8) == std::vector<int>{1, 2, 4, 8});
  CHECK(g::skip_sizes(0).empty());
}

TEST_CASE("ladder: what it cannot climb is refused before any work", "[gate][ladder]") {
  kvtest::TempDir dir;
  auto o = ladder("fp8_e4m3", "0.5", dir.file("g"));
  o.start = g::parse_kv_settings({"bf16"}, "--ladder")[0];
  CHECK_THROWS_WITH(g::run_ladder(o), contains("nothing to climb"));
  o.start = g::parse_kv_settings({"fp8_e4m3,skip=0"}, "--ladder")[0];
  CHECK_THROWS_WITH(g::run_ladder(o), contains("finds the scales and the layers to skip itself"));
  o = ladder("fp8_e4m3", "0.5", dir.file("g"));
  o.gate.configs = g::make_configurations({.baseline_url = "http://127.0.0.1:1/v1", .candidate_urls = {"http://127.0.0.1:2/v1"}, .model = "m"});
  CHECK_THROWS_WITH(g::run_ladder(o), contains("docs/ladder.md"));
  CHECK_FALSE(fs::exists(dir.file("g")));
}

TEST_CASE("ladder: a format that FAILs every rung ends on bf16; a re-run resumes", "[gate][ladder][e2e]") {
  REQUIRE(fs::is_regular_file("models/demo/config.json"));
  kvtest::TempDir dir;
  const std::string out = dir.file("g");
  const g::LadderResult r = g::run_ladder(ladder("test_broken_zero_v", "0.5", out));
  REQUIRE(r.rungs.size() == 3);  // no calibration rung: the format takes no scales
  CHECK(r.rungs[0].step == "uncalibrated");
  CHECK(r.rungs[0].label == "test_broken_zero_v");
  CHECK(r.rungs[1].step == "skip");
  CHECK(r.rungs[1].kv.skip_layers.size() == 1);
  CHECK(r.rungs[2].kv.skip_layers.size() == 2);
  REQUIRE(r.ranked_layers.size() == 8);
  CHECK(r.rungs[1].kv.skip_layers[0] == r.ranked_layers[0]);  // the most sensitive layer first
  CHECK_THAT(r.rungs[1].label, contains("test_broken_zero_v+skip(" + std::to_string(r.ranked_layers[0]) + ")"));
  for (const g::LadderRung& x : r.rungs) CHECK(x.verdict == kvgate::compare::Verdict::fail);
  CHECK(r.chosen == -1);
  CHECK(r.exit_code == 1);
  CHECK(r.recommendation == "stay on bf16: no rung of test_broken_zero_v passed (3 tried)");

  // The records: ladder.json, compare.json's "ladder", the Markdown and HTML sections, summary.txt.
  const json lj = json::parse(kvgate::read_file(out + "/ladder.json"));
  CHECK(lj["rungs"].size() == 3);
  CHECK(lj["rungs"][1]["kv"]["skip_layers"].size() == 1);
  CHECK(lj["chosen"].is_null());
  const json cj = json::parse(kvgate::read_file(out + "/compare.json"));
  CHECK(cj["ladder"] == lj);
  CHECK(cj["runs"].size() == 4);  // the final gate: the baseline and every rung
  CHECK_THAT(kvgate::read_file(out + "/report.md"), contains("Calibration ladder") && contains("stay on bf16"));
  CHECK_THAT(kvgate::read_file(out + "/report.html"), contains("id=\"ladder\""));
  CHECK_THAT(kvgate::read_file(out + "/summary.txt"), contains("recommendation: stay on bf16"));
  // run.json of a skip rung records its layers (the test format itself ignores them: every rung FAILs).
  const json run = json::parse(kvgate::read_file(out + "/runs/" + r.rungs[2].label + "/multicode/run.json"));
  CHECK(run["identity"]["kv"]["params"]["skip_layers"].size() == 2);

  // The same command again: the same ladder, nothing re-run or re-ranked.
  const auto before = run_files(out);
  const g::LadderResult again = g::run_ladder(ladder("test_broken_zero_v", "0.5", out));
  CHECK(labels(again) == labels(r));
  CHECK(again.recommendation == r.recommendation);
  CHECK(run_files(out) == before);
}

TEST_CASE("ladder: fp8_e4m3 climbs through calibrated scales; a PASS stops the ladder", "[gate][ladder][e2e]") {
  REQUIRE(fs::is_regular_file("models/demo/config.json"));
  kvtest::TempDir dir;
  // A margin of 0.999 that 6 trials can never show: no rung PASSes, every step is taken.
  const std::string out = dir.file("g");
  const g::LadderResult r = g::run_ladder(ladder("fp8_e4m3", "0.999", out));
  REQUIRE(r.rungs.size() == 4);  // uncalibrated, calibrated, 1 and 2 layers in bf16
  CHECK(r.rungs[0].label == "fp8_e4m3");
  CHECK(r.rungs[1].label == "fp8_e4m3+calibrated");
  CHECK(r.rungs[1].step == "calibrated");
  CHECK(r.rungs[1].kv.scales == out + "/ladder/scales.json");
  CHECK(r.rungs[2].label == "fp8_e4m3+calibrated+skip(" + std::to_string(r.ranked_layers[0]) + ")");
  CHECK(r.rungs[2].kv.scales == r.rungs[1].kv.scales);  // the skip rungs build on the calibrated scales
  CHECK(r.rungs[3].kv.skip_layers.size() == 2);
  const json skip_run = json::parse(kvgate::read_file(out + "/runs/" + r.rungs[3].label + "/multicode/run.json"));
  CHECK(skip_run["kv"]["skip_layers"].size() == 2);  // the resolved record the decoder ran with
  CHECK(fs::is_regular_file(out + "/ladder/scales.sglang.json"));  // for the same ladder on a server
  // Calibrated on the suite's own kind of prompt (multi-code haystacks), none of them a scored trial.
  const std::string calibration = kvgate::read_file(out + "/ladder/calibration.txt");
  CHECK_THAT(calibration, contains("The access code for"));
  const std::string scored = kvgate::read_file(out + "/tasks/multicode.jsonl");
  const std::string first = json::parse(scored.substr(0, scored.find('\n')))["input"]["messages"][0]["content"].get<std::string>();
  CHECK(calibration.find(first) == std::string::npos);
  CHECK(r.rungs[0].capacity == Approx(2.0));
  CHECK(r.rungs[2].capacity < r.rungs[1].capacity);  // a layer in bf16 costs capacity
  CHECK(r.exit_code == 1);
  const json run = json::parse(kvgate::read_file(out + "/runs/fp8_e4m3+calibrated/multicode/run.json"));
  CHECK(run["kv"].contains("scales"));
  CHECK(run["identity"]["kv"]["scales_sha256"].get<std::string>().size() == 64);
  const json pin = json::parse(kvgate::read_file(out + "/compare.json"))["pairs"][1]["pinning"];
  CHECK(pin["kv_settings"][1]["field"] == "kv.scales");

  // With a margin the runs can show, the uncalibrated rung PASSes and the ladder stops there.
  const g::LadderResult pass = g::run_ladder(ladder("fp8_e4m3", "0.5", dir.file("p")));
  REQUIRE(pass.rungs.size() == 1);
  CHECK(pass.chosen == 0);
  CHECK(pass.exit_code == 0);
  CHECK(pass.recommendation == "ship fp8_e4m3 at scale 1.0: PASS, \u00d72.00 capacity");
  CHECK_FALSE(fs::exists(dir.file("p") + "/ladder/scales.json"));
}
