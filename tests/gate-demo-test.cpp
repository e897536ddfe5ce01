// The README's main job in CI: `kvgate gate --suite quick` on the demo model (models/demo/, issue
// #14) through the reference decoder on the CPU, with a deliberately broken candidate (the test-only
// KV format test_broken_zero_v: V reads back as zeros) that must FAIL. The report files exist and
// the verdict printed, the exit code and the JSON agree.
#include <filesystem>
#include <map>

#include "tests/catch_compat.hpp"
#include "harness/core/jsonl.h"
#include "tests/test_util.h"

using kvtest::contains;
using kvtest::run_kvgate;
using nlohmann::json;
namespace fs = std::filesystem;

TEST_CASE("gate demo: quick on the demo model on CPU; the zeroed-V candidate FAILs", "[gate][e2e]") {
  INFO("models/demo/ must be in the checkout");
  REQUIRE(fs::is_regular_file("models/demo/config.json"));
  kvtest::TempDir dir;
  const std::string out = dir.file("gate");
  const std::vector<std::string> args = {"gate", "--suite", "quick", "--out", out, "--model-dir", "models/demo", "--baseline-kv", "bf16",
                                         "--candidate-kv", "fp8_e4m3,test_broken_zero_v", "--device", "cpu", "--concurrency", "2",
                                         "--progress", "none"};
  const auto r = run_kvgate(args);
  INFO(r.err);
  REQUIRE(r.exit_code == 1);  // the broken candidate fails, so the gate does

  for (const char* f : {"report.html", "report.md", "junit.xml", "compare.json", "summary.txt", "gate.json"})
    CHECK(fs::is_regular_file(out + "/" + f));
  const json j = json::parse(kvgate::read_file(out + "/compare.json"));
  CHECK(j["verdict"] == "FAIL");
  CHECK(j["exit_code"] == r.exit_code);
  CHECK_THAT(r.out, contains("verdict: FAIL"));
  CHECK_THAT(r.out, contains("report: " + out + "/report.html"));
  CHECK(j["gate"]["configurations"][0]["device"] == "cpu");

  // Per candidate and gated task (NIAH and multi-code): the baseline reads (the demo model finds
  // needles and codes), so a failure is the format's; the broken one FAILs both, fp8 neither.
  REQUIRE(j["runs"].size() == 3);
  std::map<std::string, int> broken_failed, fp8_seen;
  for (const json& p : j["pairs"]) {
    if (!p["gating"].get<bool>()) continue;
    const std::string label = p["candidate_label"];
    for (const json& t : p["tasks"]) {
      const std::string task = t["task"];
      INFO(label << " " << task);
      CHECK(t["gated"].get<bool>());
      CHECK(t["reference_metric"].get<double>() > 0.75);
      if (label == "test_broken_zero_v") {
        CHECK(p["verdict"] == "FAIL");
        CHECK(t["verdict"] == "FAIL");
        CHECK(t["candidate_metric"].get<double>() < 0.1);
        ++broken_failed[task];
      } else if (label == "fp8_e4m3") {
        CHECK(t["verdict"] != "FAIL");
        ++fp8_seen[task];
      }
    }
  }
  CHECK(broken_failed == std::map<std::string, int>{{"multicode", 1}, {"niah", 1}});
  CHECK(fp8_seen == std::map<std::string, int>{{"multicode", 1}, {"niah", 1}});
  const std::string html = kvgate::read_file(out + "/report.html");
  CHECK_THAT(html, contains("test_broken_zero_v"));
  CHECK(html.find("http://") == std::string::npos);

  // Re-running resumes: nothing to run, the same verdict.
  const auto again = run_kvgate(args);
  CHECK(again.exit_code == 1);
  CHECK_THAT(again.err, contains("0 to run"));
}

TEST_CASE("gate demo: the demo suite decides both ways on the CPU: int8 per token-head PASSes, int4 FAILs", "[gate][e2e]") {
  // scripts/demo's promise, on the path a machine without a GPU takes. Measured (docs/suites.md):
  // int8_per_token_head loses none of the 64 trials (AUC lower bound 0.958), int4_per_token_head
  // 20 (upper bound 0.766).
  REQUIRE(fs::is_regular_file("models/demo/config.json"));
  kvtest::TempDir dir;
  const std::string out = dir.file("gate");
  const auto r = run_kvgate({"gate", "--suite", "demo", "--out", out, "--model-dir", "models/demo", "--baseline-kv", "bf16", "--candidate-kv",
                             "int8_per_token_head,int4_per_token_head", "--device", "cpu", "--concurrency", "2", "--progress", "none"});
  INFO(r.err);
  REQUIRE(r.exit_code == 1);
  CHECK_THAT(r.out, contains("verdict: FAIL"));
  // The last lines: each candidate's verdict with its reason, then the report.
  CHECK_THAT(r.out, contains("  int8_per_token_head: PASS (multicode: AUC ratio 1.0000, lower bound 0.95"));
  CHECK_THAT(r.out, contains("  int4_per_token_head: FAIL (multicode: AUC ratio "));
  CHECK_THAT(r.out, contains("< margin 0.950; "));
  CHECK_THAT(r.out, contains("report: " + out + "/report.html"));
  const json j = json::parse(kvgate::read_file(out + "/compare.json"));
  for (const json& p : j["pairs"]) {
    if (!p["gating"].get<bool>()) continue;
    const json& t = p["tasks"][0];
    INFO(p["candidate_label"].get<std::string>());
    CHECK(t["reference_metric"].get<double>() > 0.9);
    if (p["candidate_label"] == "int8_per_token_head") {
      CHECK(p["verdict"] == "PASS");
      CHECK(t["flips"]["lost"] == 0);
    } else {
      CHECK(p["verdict"] == "FAIL");
      CHECK(t["flips"]["lost"].get<int>() >= 10);
    }
  }
}
