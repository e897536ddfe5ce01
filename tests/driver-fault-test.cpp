// The driver under faults, end to end (the kvgate binary against a fault-injecting server):
// 2,000 trials at 20% faults give every (trial, repeat) exactly once with the fault-free scores;
// a run killed with SIGKILL several times and resumed gives the same.
#include <chrono>
#include <thread>

#include "tests/catch_compat.hpp"
#include "harness/core/run_dir.h"
#include "tests/driver_test_util.h"

using namespace kvtest;

namespace {
std::vector<std::string> run_args(const std::string& tasks, const std::string& out, const FakeOpenAIServer& s) {
  return {"run", "--tasks", tasks, "--out", out, "--endpoint", s.base_url(), "--model", "fake-model",
          "--timeout", "0.25", "--max-retries", "15", "--retry-base-delay", "0.005", "--retry-max-delay", "0.05",
          "--progress", "lines", "--progress-interval", "0.5"};
}
// Sets (or adds) a flag's value.
std::vector<std::string> with(std::vector<std::string> a, const std::string& flag, const std::string& value) {
  for (std::size_t i = 0; i + 1 < a.size(); ++i)
    if (a[i] == flag) {
      a[i + 1] = value;
      return a;
    }
  a.push_back(flag);
  a.push_back(value);
  return a;
}
}  // namespace

TEST_CASE("faults: 2,000 trials at 20% faults: every trial once, the fault-free scores", "[e2e][faults]") {
  TempDir dir;
  const std::string tasks = dir.file("tasks.jsonl");
  write_say_tasks(tasks, 2000);

  FakeOpenAIServer clean(1);
  clean.start();
  auto args = run_args(tasks, dir.file("clean"), clean);
  args.insert(args.end(), {"--concurrency", "32"});
  auto r = run_kvgate(args);
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  const Journal reference = read_journal(dir.file("clean/results.jsonl"));
  check_complete_and_scored(reference, 2000, 1);

  FakeOpenAIServer faulty(2);
  faulty.faults = FaultRates::uniform(0.20);
  faulty.faults.slow_ms = 450;  // past --timeout 0.25
  faulty.start();
  args = run_args(tasks, dir.file("faulty"), faulty);
  args.insert(args.end(), {"--concurrency", "32"});
  r = run_kvgate(args);
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  const Journal j = read_journal(dir.file("faulty/results.jsonl"));
  check_complete_and_scored(j, 2000, 1);
  for (const auto& [pair, line] : reference.lines) CHECK(j.lines.at(pair)["score"] == line["score"]);

  // The faults were real: about 20% of requests, every kind present.
  const double rate = static_cast<double>(faulty.injected) / static_cast<double>(faulty.requests);
  CHECK(rate > 0.15);
  CHECK(rate < 0.25);
  for (const char* kind : {"429", "500", "503", "slow", "drop", "truncated"}) CHECK(faulty.fault_counts()[kind] > 0);
  const auto manifest = kvgate::read_manifest(dir.file("faulty/run.json"));
  CHECK(manifest.extra["summary"]["error_rate"] == 0.0);
  CHECK(manifest.extra["sessions"][0]["retries"].get<std::size_t>() >= faulty.injected.load() * 9 / 10);
  CHECK(manifest.extra["status"] == "complete");
  CHECK_THAT(r.out, contains("errors 0 (0.00%)"));
}

TEST_CASE("faults: streamed answers at 20% faults, broken SSE included", "[e2e][faults]") {
  TempDir dir;
  const std::string tasks = dir.file("tasks.jsonl");
  write_say_tasks(tasks, 400);
  FakeOpenAIServer faulty(3);
  faulty.faults = FaultRates::uniform(0.20);
  faulty.faults.slow_ms = 450;
  faulty.start();
  auto args = run_args(tasks, dir.file("run"), faulty);
  args.insert(args.end(), {"--concurrency", "16", "--stream", "--repeats", "2"});
  auto r = run_kvgate(args);
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  const Journal j = read_journal(dir.file("run/results.jsonl"));
  check_complete_and_scored(j, 400, 2);
  CHECK(faulty.fault_counts()["broken_sse"] > 0);
  const auto& line = j.lines.begin()->second;
  CHECK(line["ttft_ms"].is_number());
  CHECK(line["itl_ms"]["n"].get<int>() >= 1);
  CHECK(line["inter_token_ms"].is_array());
  CHECK(line["reasoning"] == "thinking");
}

TEST_CASE("faults: SIGKILL at any moment, resumed several times: every pair exactly once", "[e2e][faults][resume]") {
  TempDir dir;
  const std::string tasks = dir.file("tasks.jsonl"), out = dir.file("run");
  const int n = 800, repeats = 2;
  write_say_tasks(tasks, n);
  FakeOpenAIServer s(4);
  s.faults = FaultRates::uniform(0.10);
  s.faults.slow_ms = 450;
  s.answer_delay_ms = 3;
  s.start();
  auto args = run_args(tasks, out, s);
  args.insert(args.end(), {"--concurrency", "8", "--repeats", std::to_string(repeats)});

  std::size_t before = 0;
  int kills = 0;
  for (int round = 0; round < 5; ++round) {
    KvgateProcess p(args, dir.file("log" + std::to_string(round)));
    REQUIRE(p.started());
    // Kill after a growing number of new lines (and once almost at once), mid-write or not.
    const std::size_t target = before + (round == 1 ? 1 : 120 + 37 * round);
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    while (p.running() && count_lines(out + "/results.jsonl") < target && std::chrono::steady_clock::now() < deadline)
      std::this_thread::sleep_for(std::chrono::microseconds(500));
    if (p.running()) {
      p.kill_hard();
      ++kills;
    }
    p.wait();
    const Journal j = read_journal(out + "/results.jsonl");
    CHECK(j.duplicates == 0);
    before = j.total;
  }
  CHECK(kills >= 4);
  // A write cut in the middle of a line, as a kill can leave it.
  {
    FILE* f = std::fopen((out + "/results.jsonl").c_str(), "ab");
    std::fputs("{\"id\":\"say/0003\",\"task\":\"odd\",\"buck", f);
    std::fclose(f);
  }
  auto r = run_kvgate(args);
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  CHECK_THAT(r.err, contains("discarded a torn last line"));
  check_complete_and_scored(read_journal(out + "/results.jsonl"), n, repeats);
  const auto manifest = kvgate::read_manifest(out + "/run.json");
  CHECK(manifest.extra["sessions"].size() == 6);
  CHECK(manifest.extra["status"] == "complete");
}

TEST_CASE("faults: malformed answers never crash the driver; they are counted as errors", "[e2e][faults]") {
  TempDir dir;
  const std::string tasks = dir.file("tasks.jsonl");
  write_say_tasks(tasks, 30);
  FakeOpenAIServer s;
  s.garbage = R"({"choices":[{"message":{"content":{"nested":true}}}]})";
  s.start();
  for (bool stream : {false, true}) {
    auto args = with(run_args(tasks, dir.file(stream ? "s" : "p"), s), "--max-retries", "1");
    if (stream) args.push_back("--stream");
    auto r = run_kvgate(args);
    INFO(r.err);
    CHECK(r.exit_code == 0);
    const Journal j = read_journal(dir.file(stream ? "s/results.jsonl" : "p/results.jsonl"));
    CHECK(j.total == 30);
    for (const auto& [pair, line] : j.lines) {
      CHECK_FALSE(line["error"].is_null());
      CHECK(line["error_kind"] == "malformed");
      CHECK(line["score"] == 0);
    }
    CHECK_THAT(r.out, contains("errors 30 (100.00%)"));
  }
  // The error rate can fail the run.
  auto args = with(with(run_args(tasks, dir.file("gated"), s), "--max-retries", "0"), "--max-error-rate", "0.1");
  CHECK(run_kvgate(args).exit_code == 1);
}
