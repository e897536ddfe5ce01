// End to end: `kvgate run --engine-log` stores the engine's facts in run.json (and keeps
// them on resume), a log with nothing known warns, a missing log is exit 2 before anything is
// written; `kvgate compare` prints pinning and gains, writes them to the JSON, and
// --strict-pinning turns a difference into exit 2 with no file written.
#include <filesystem>

#include "tests/catch_compat.hpp"
#include "harness/core/manifest.h"
#include "tests/driver_test_util.h"

using namespace kvtest;
using nlohmann::json;
namespace fs = std::filesystem;

namespace {
const std::string kLogs = "tests/fixtures/engine-logs/";
const std::string kRuns = "tests/fixtures/pinning/";
bool has(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }
std::vector<std::string> run_args(const std::string& tasks, const std::string& out, const FakeOpenAIServer& s) {
  return {"run", "--tasks", tasks, "--out", out, "--endpoint", s.base_url(), "--model", "fake-model", "--timeout", "2",
          "--progress", "none", "--stream", "--kv-format", "fp8_e4m3"};
}
std::vector<std::string> plus(std::vector<std::string> a, const std::vector<std::string>& more) {
  a.insert(a.end(), more.begin(), more.end());
  return a;
}
}  // namespace

TEST_CASE("run --engine-log: the facts go into run.json engine.log, secrets do not, a resume keeps them", "[e2e]") {
  TempDir dir;
  write_say_tasks(dir.file("tasks.jsonl"), 6);
  FakeOpenAIServer s;
  s.start();
  auto r = run_kvgate(plus(run_args(dir.file("tasks.jsonl"), dir.file("fp8"), s), {"--engine-log", kLogs + "vllm-fp8-h200.log"}));
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  CHECK(has(r.err, "engine log: vllm 0.19.1, attention FLASH_ATTN"));
  const auto m = kvgate::read_manifest(dir.file("fp8/run.json"));
  const json& log = m.engine["log"];
  CHECK(log["engine"] == "vllm");
  CHECK(log["facts"]["attention_backend"] == "FLASH_ATTN");
  CHECK(log["facts"]["kv_cache_tokens"] == 1519744);
  CHECK(log["facts"]["kv_scales"] == "default_1.0");
  CHECK(log["path"] == kLogs + "vllm-fp8-h200.log");
  CHECK(m.engine["summary"].is_object());  // the endpoint probe is still there beside the log
  CHECK_FALSE(has(read_text(dir.file("fp8/run.json")), "SECRET"));
  // Resuming without --engine-log keeps what the first session read.
  auto again = run_kvgate(run_args(dir.file("tasks.jsonl"), dir.file("fp8"), s));
  REQUIRE(again.exit_code == 0);
  CHECK(kvgate::read_manifest(dir.file("fp8/run.json")).engine["log"]["facts"]["kv_cache_tokens"] == 1519744);
}

TEST_CASE("run --engine-log: nothing known is a warning; a missing file is exit 2 before the run directory exists", "[e2e]") {
  TempDir dir;
  write_say_tasks(dir.file("tasks.jsonl"), 3);
  FakeOpenAIServer s;
  s.start();
  auto unknown = run_kvgate(plus(run_args(dir.file("tasks.jsonl"), dir.file("a"), s), {"--engine-log", kLogs + "unknown.log"}));
  CHECK(unknown.exit_code == 0);
  CHECK(has(unknown.err, "warning:"));
  CHECK(has(unknown.err, "no line of a vLLM, SGLang or TensorRT-LLM startup log"));
  CHECK(kvgate::read_manifest(dir.file("a/run.json")).engine["log"]["facts"].empty());
  auto missing = run_kvgate(plus(run_args(dir.file("tasks.jsonl"), dir.file("b"), s), {"--engine-log", dir.file("nope.log")}));
  CHECK(missing.exit_code == 2);
  CHECK(has(missing.err, "nope.log"));
  CHECK_FALSE(fs::exists(dir.file("b")));
}

TEST_CASE("compare: pinning and gains printed and in the JSON; --strict-pinning exits 2 and writes nothing", "[e2e]") {
  TempDir dir;
  auto r = run_kvgate({"compare", kRuns + "bf16", kRuns + "fp8", "--json", dir.file("c.json")});
  INFO(r.err);
  CHECK((r.exit_code == 1 || r.exit_code == 3));
  CHECK(has(r.out, "differs: attention backend FLASH_ATTN -> FLASHINFER"));
  CHECK(has(r.out, "Hopper FP8"));
  CHECK(has(r.out, "what you gain (fp8 / bf16)"));
  CHECK(has(r.out, "KV capacity x2.00"));
  const json j = json::parse(read_text(dir.file("c.json")));
  CHECK(j["pairs"][0]["pinning"]["pinned"] == false);
  CHECK(j["pairs"][0]["gains"]["kv_capacity"]["ratio"] == 2.0);
  CHECK(j["runs"][1]["performance"]["ttft_ms"]["p50"] == 69.0);

  auto strict = run_kvgate({"compare", kRuns + "bf16", kRuns + "fp8", "--strict-pinning", "--json", dir.file("s.json")});
  CHECK(strict.exit_code == 2);
  CHECK(has(strict.err, "--strict-pinning"));
  CHECK(has(strict.err, "max tokens 1024 -> 2048"));
  CHECK_FALSE(fs::exists(dir.file("s.json")));
  auto pinned = run_kvgate({"compare", kRuns + "bf16", kRuns + "fp8-pinned", "--strict-pinning"});
  CHECK(pinned.exit_code != 2);
  CHECK(has(pinned.out, "pinned: no difference other than the KV settings"));
}
