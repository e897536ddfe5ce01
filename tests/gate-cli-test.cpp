// `kvgate gate` through the binary: built-in suites listed and shown, bad suites and flags refused
// with exit 2, and a gate against local servers that prints the verdict and the report's path and
// exits with the verdict.

#include <filesystem>

#include "tests/catch_compat.hpp"
#include "harness/core/jsonl.h"
#include "tests/niah_server.h"
#include "tests/test_util.h"

using kvtest::contains;
using kvtest::run_kvgate;
using kvtest::NiahServer;
using nlohmann::json;

namespace {

// margin 0.8: the 12 trials of an identical candidate show at most 12 / (12 + z^2) = 0.816
// (Tang's score bound); the default 0.95 would take 52.
const char* kSuite = R"(suite: cli-niah
seed: 5
margin: 0.8
tasks:
  - task: niah
    lengths: [1024, 2048]
    per_bucket: 6
    depths: [20, 80]
    max_tokens: 16
)";

}  // namespace

TEST_CASE("gate cli: built-in suites are listed and shown", "[gate][e2e]") {
  auto r = run_kvgate({"gate", "--list-suites"});
  REQUIRE(r.exit_code == 0);
  for (const char* s : {"quick\t", "ship\t", "nightly\t", "demo\t"}) CHECK_THAT(r.out, contains(s));
  r = run_kvgate({"gate", "--show-suite", "ship"});
  REQUIRE(r.exit_code == 0);
  CHECK_THAT(r.out, contains("suite: ship"));
  CHECK_THAT(r.out, contains("task: gsm8k"));
}

TEST_CASE("gate cli: bad suites and flags exit 2 with the fix", "[gate][e2e]") {
  kvtest::TempDir dir;
  kvtest::write_text(dir.file("bad.yaml"), "suite: x\ntasks:\n  - task: niah\n    lengths: [1024]\n    per_bucket: 0\n");
  auto r = run_kvgate({"gate", "--suite", dir.file("bad.yaml"), "--out", dir.file("g"), "--baseline", "http://127.0.0.1:9/v1",
                       "--candidate", "http://127.0.0.1:9/v1", "--model", "m"});
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.err, contains(dir.file("bad.yaml") + ":5: tasks[0].per_bucket: must be in [1, "));
  r = run_kvgate({"gate", "--suite", "fast", "--out", dir.file("g")});
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.err, contains("--suite fast: not a built-in suite (demo, nightly, quick, ship)"));
  r = run_kvgate({"gate", "--out", dir.file("g"), "--baseline", "http://127.0.0.1:9/v1", "--model", "m"});
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.err, contains("no candidate"));
  r = run_kvgate({"gate", "--suite", "nightly", "--out", dir.file("g"), "--baseline", "http://127.0.0.1:9/v1", "--candidate",
                  "http://127.0.0.1:9/v1", "--model", "m", "--max-context", "8192"});
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.err, contains("pass --history FILE"));
  // KV settings and the ladder: bad settings and flags the ladder makes itself exit 2, nothing written.
  r = run_kvgate({"gate", "--out", dir.file("k"), "--model-dir", "models/demo", "--candidate-kv", "fp8_e4m3,scale=x.json"});
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.err, contains("unknown setting \"scale\""));
  r = run_kvgate({"gate", "--out", dir.file("k"), "--model-dir", "models/demo", "--candidate-kv", "fp8_e4m3,skip=0:99", "--device", "cpu"});
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.err, contains("fp8_e4m3+skip(0,99)"));
  r = run_kvgate({"gate", "--out", dir.file("k"), "--model-dir", "models/demo", "--ladder", "fp8_e4m3", "--candidate-kv", "int8_per_token_head"});
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.err, contains("--candidate-kv with --ladder"));
  r = run_kvgate({"gate", "--out", dir.file("k"), "--model-dir", "models/demo", "--calibration-text", dir.file("bad.yaml")});
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.err, contains("--calibration-text goes with --ladder"));
  CHECK_FALSE(std::filesystem::exists(dir.file("k")));
}

TEST_CASE("gate cli: a broken candidate FAILs with exit 1; the verdict printed is the JSON's", "[gate][e2e]") {
  kvtest::TempDir dir;
  kvtest::write_text(dir.file("s.yaml"), kSuite);
  NiahServer good(true), bad(false);
  const std::string out = dir.file("g");
  auto r = run_kvgate({"gate", "--suite", dir.file("s.yaml"), "--out", out, "--baseline", good.url("/v1"), "--candidate", bad.url("/v1"),
                       "--candidate", good.url("/v1"), "--candidate-label", "broken", "--candidate-label", "same", "--model", "m",
                       "--progress", "none"});
  INFO(r.err);
  CHECK(r.exit_code == 1);
  CHECK_THAT(r.out, contains("verdict: FAIL"));
  CHECK_THAT(r.out, contains("broken: FAIL"));
  CHECK_THAT(r.out, contains("same: PASS"));
  CHECK_THAT(r.out, contains("report: " + out + "/report.html"));
  const json j = json::parse(kvgate::read_file(out + "/compare.json"));
  CHECK(j["verdict"] == "FAIL");
  CHECK(j["exit_code"] == r.exit_code);
  CHECK(j["runs"].size() == 3);
  CHECK(j["runs"][1]["label"] == "broken");

  // Each configuration's joined run directory is what `kvgate compare` reads as it is.
  auto cmp = run_kvgate({"compare", out + "/runs/baseline", out + "/runs/broken"});
  CHECK(cmp.exit_code == 1);
  cmp = run_kvgate({"compare", out + "/runs/baseline", out + "/runs/same", "--margin", "0.8"});
  CHECK(cmp.exit_code == 0);
  cmp = run_kvgate({"compare", out + "/runs/baseline", out + "/runs/same"});  // 0.95: too few identical trials
  CHECK(cmp.exit_code == 3);

  // Same command again: resumes (nothing to run), same verdict.
  auto again = run_kvgate({"gate", "--suite", dir.file("s.yaml"), "--out", out, "--baseline", good.url("/v1"), "--candidate", bad.url("/v1"),
                           "--candidate", good.url("/v1"), "--candidate-label", "broken", "--candidate-label", "same", "--model", "m",
                           "--progress", "none"});
  CHECK(again.exit_code == 1);
  CHECK_THAT(again.err, contains("12 already done, 0 to run"));
}
