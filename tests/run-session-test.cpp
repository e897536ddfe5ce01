// `kvgate run` and `kvgate merge` end to end against a fake server: run.json, resume and its
// refusals, --force-new, --retry-errors, repeats, shards and merge, the API key kept secret.
#include <cstdlib>
#include <filesystem>
#include <thread>

#include "tests/catch_compat.hpp"
#include "harness/core/manifest.h"
#include "tests/driver_test_util.h"

using namespace kvtest;
using nlohmann::json;
namespace fs = std::filesystem;

namespace {
std::vector<std::string> base_args(const std::string& tasks, const std::string& out, const FakeOpenAIServer& s) {
  return {"run", "--tasks", tasks, "--out", out, "--endpoint", s.base_url(), "--model", "fake-model", "--timeout", "2",
          "--retry-base-delay", "0.001", "--progress", "lines", "--progress-interval", "0.2"};
}
std::vector<std::string> plus(std::vector<std::string> a, const std::vector<std::string>& more) {
  a.insert(a.end(), more.begin(), more.end());
  return a;
}
std::string all_text_under(const std::string& dir) {
  std::string s;
  for (const auto& e : fs::recursive_directory_iterator(dir))
    if (e.is_regular_file()) s += read_text(e.path().string());
  return s;
}
}  // namespace

TEST_CASE("run: run.json records the configuration, the engine's metadata and the summary", "[e2e][run]") {
  TempDir dir;
  write_say_tasks(dir.file("tasks.jsonl"), 12);
  FakeOpenAIServer s;
  s.start();
  auto r = run_kvgate(plus(base_args(dir.file("tasks.jsonl"), dir.file("fp8-run"), s),
                           {"--temperature", "0.6", "--top-p", "0.95", "--seed", "9", "--kv-format", "fp8_e4m3", "--stop", "###",
                            "--extra-body", R"({"chat_template_kwargs":{"enable_thinking":false}})"}));
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  const auto m = kvgate::read_manifest(dir.file("fp8-run/run.json"));
  CHECK(m.label == "fp8-run");
  CHECK(m.backend == "openai");
  CHECK(m.model == "fake-model");
  CHECK(m.api == "chat");
  CHECK(m.endpoint == s.base_url());
  CHECK(m.sampling["temperature"] == 0.6);
  CHECK(m.sampling["seed"] == 9);
  CHECK(m.sampling["stop"] == json({"###"}));
  CHECK(m.sampling["extra_body"]["chat_template_kwargs"]["enable_thinking"] == false);
  CHECK(m.kv["format"] == "fp8_e4m3");
  CHECK(m.kv["engine_reported"] == "fp8_e4m3");
  CHECK(m.engine["endpoints"][0]["version"]["version"] == "0.0.fake");
  CHECK(m.engine["summary"]["max_model_len"] == 4096);
  CHECK(m.tasks_sha256.size() == 64);
  CHECK_FALSE(m.started_at.empty());
  CHECK_FALSE(m.ended_at.empty());
  CHECK(m.extra["summary"]["results"] == 12);
  CHECK(m.extra["summary"]["by_task"]["even"]["results"] == 6);
  CHECK(m.extra["status"] == "complete");
  CHECK(m.extra["identity"]["model"] == "fake-model");
  // The request carried the sampling, stop strings and extra body; each line its seed and grade.
  const json body = s.bodies().back();
  CHECK(body["temperature"] == 0.6);
  CHECK(body["stop"] == json({"###"}));
  CHECK(body["chat_template_kwargs"]["enable_thinking"] == false);
  const Journal j = read_journal(dir.file("fp8-run/results.jsonl"));
  check_complete_and_scored(j, 12, 1, 9);
  const json& line = j.lines.at({"say/0001", 0});
  CHECK(line["seed"] == kvgate::runner::repeat_seed(9, "say/0001", 0));
  CHECK(line["grade"]["value"].is_string());
  CHECK(line["reasoning"] == "thinking about Say w1");
  CHECK(line["prompt_tokens"].is_number());
  CHECK(line["latency_ms"].get<double>() > 0);
  CHECK(line["usage"]["completion_tokens"] == 3);
  CHECK_THAT(r.out, contains("results 12/12"));
}

TEST_CASE("run: re-running resumes; another configuration is refused; --force-new sets the old run aside", "[e2e][run][resume]") {
  TempDir dir;
  const std::string tasks = dir.file("tasks.jsonl"), out = dir.file("run");
  write_say_tasks(tasks, 20);
  FakeOpenAIServer s;
  s.start();
  REQUIRE(run_kvgate(base_args(tasks, out, s)).exit_code == 0);
  const std::size_t requests = s.requests;

  auto r = run_kvgate(base_args(tasks, out, s));  // nothing left to do
  CHECK(r.exit_code == 0);
  CHECK(s.requests == requests);
  CHECK_THAT(r.err, contains("20 already done, 0 to run"));

  r = run_kvgate(plus(base_args(tasks, out, s), {"--temperature", "0.7"}));
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.err, contains("another configuration"));
  CHECK_THAT(r.err, contains("sampling"));
  CHECK_THAT(r.err, contains("--force-new"));
  auto args = base_args(tasks, out, s);
  args[8] = "other-model";
  r = run_kvgate(args);
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.err, contains("model: \"fake-model\" -> \"other-model\""));
  write_say_tasks(tasks, 21);  // the tasks file changed
  r = run_kvgate(base_args(tasks, out, s));
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.err, contains("tasks_sha256"));
  CHECK(count_lines(out + "/results.jsonl") == 20);  // nothing was touched

  r = run_kvgate(plus(base_args(tasks, out, s), {"--force-new"}));
  INFO(r.err);
  CHECK(r.exit_code == 0);
  CHECK_THAT(r.err, contains("superseded"));
  CHECK(count_lines(out + "/results.jsonl") == 21);
  std::size_t kept = 0;
  for (const auto& e : fs::directory_iterator(out + "/superseded")) kept += count_lines(e.path().string() + "/results.jsonl");
  CHECK(kept == 20);
}

TEST_CASE("run: --repeats adds repeats on resume with per-repeat seeds", "[e2e][run]") {
  TempDir dir;
  const std::string tasks = dir.file("tasks.jsonl"), out = dir.file("run");
  write_say_tasks(tasks, 15);
  FakeOpenAIServer s;
  s.start();
  REQUIRE(run_kvgate(plus(base_args(tasks, out, s), {"--repeats", "3"})).exit_code == 0);
  auto r = run_kvgate(plus(base_args(tasks, out, s), {"--repeats", "4"}));
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  CHECK_THAT(r.err, contains("45 already done, 15 to run"));
  const Journal j = read_journal(out + "/results.jsonl");
  check_complete_and_scored(j, 15, 4);
  std::set<std::uint64_t> seeds;
  for (int rep = 0; rep < 4; ++rep) seeds.insert(j.lines.at({"say/0002", rep})["seed"].get<std::uint64_t>());
  CHECK(seeds.size() == 4);
}

TEST_CASE("run: 4xx answers are errors at once; --retry-errors runs error lines again", "[e2e][run]") {
  TempDir dir;
  const std::string tasks = dir.file("tasks.jsonl"), out = dir.file("run");
  write_say_tasks(tasks, 10);
  FakeOpenAIServer s;
  s.garbage = "not json at all";
  s.start();
  auto r = run_kvgate(plus(base_args(tasks, out, s), {"--max-retries", "2"}));
  REQUIRE(r.exit_code == 0);
  Journal j = read_journal(out + "/results.jsonl");
  CHECK(j.total == 10);
  CHECK(j.lines.at({"say/0000", 0})["attempts"] == 3);
  CHECK(j.lines.at({"say/0000", 0})["error_kind"] == "bad_json");
  CHECK_THAT(j.lines.at({"say/0000", 0})["error"].get<std::string>(), contains("gave up after 3 attempts"));

  s.garbage.clear();
  r = run_kvgate(plus(base_args(tasks, out, s), {"--max-retries", "2", "--retry-errors"}));
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  CHECK_THAT(r.err, contains("10 error lines removed"));
  check_complete_and_scored(read_journal(out + "/results.jsonl"), 10, 1);

  // A 400 is recorded with the server's message after one attempt.
  std::vector<kvgate::Trial> trials = kvgate::load_tasks(tasks).trials;
  trials[0].input["messages"][0]["content"] = "REJECT this";
  kvgate::write_tasks(dir.file("reject.jsonl"), trials);
  r = run_kvgate(plus(base_args(dir.file("reject.jsonl"), dir.file("rej"), s), {"--max-retries", "5"}));
  REQUIRE(r.exit_code == 0);
  j = read_journal(dir.file("rej/results.jsonl"));
  const json& e = j.lines.at({"say/0000", 0});
  CHECK(e["attempts"] == 1);
  CHECK(e["http_status"] == 400);
  CHECK_THAT(e["error"].get<std::string>(), contains("this prompt is rejected on purpose"));
}

TEST_CASE("run: the API key is sent but never written to run.json, results, stdout or stderr", "[e2e][run][security]") {
  const std::string key = "sk-kvgate-e2e-SECRET-6f1c9a0b7d";
  TempDir dir;
  const std::string tasks = dir.file("tasks.jsonl");
  write_say_tasks(tasks, 10);
  FakeOpenAIServer s;
  s.required_key = key;
  s.faults.r500 = 0.3;
  s.start();
  ::setenv("KVGATE_TEST_KEY", key.c_str(), 1);
  auto r = run_kvgate(plus(base_args(tasks, dir.file("run"), s), {"--api-key-env", "KVGATE_TEST_KEY"}));
  ::unsetenv("KVGATE_TEST_KEY");
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  check_complete_and_scored(read_journal(dir.file("run/results.jsonl")), 10, 1);
  CHECK(s.auth_headers().back() == "Bearer " + key);
  const std::string written = all_text_under(dir.file("run")) + r.out + r.err;
  CHECK(written.find(key) == std::string::npos);
  CHECK(written.find("KVGATE_TEST_KEY") != std::string::npos);  // the variable's name is recorded

  r = run_kvgate(plus(base_args(tasks, dir.file("run2"), s), {"--api-key-env", "KVGATE_NO_SUCH_VARIABLE"}));
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.err, contains("KVGATE_NO_SUCH_VARIABLE"));
}

TEST_CASE("run: shards run slices that merge into the whole run; merge refuses gaps and overlaps", "[e2e][merge]") {
  TempDir dir;
  const std::string tasks = dir.file("tasks.jsonl");
  write_say_tasks(tasks, 31);
  FakeOpenAIServer s;
  s.start();
  for (int i = 0; i < 3; ++i) {
    auto r = run_kvgate(plus(base_args(tasks, dir.file("shard" + std::to_string(i)), s), {"--repeats", "2", "--shard", std::to_string(i) + "/3"}));
    INFO(r.err);
    REQUIRE(r.exit_code == 0);
  }
  CHECK(count_lines(dir.file("shard0/results.jsonl")) == 22);  // trials 0, 3, ..., 30: 11 x 2
  auto r = run_kvgate({"merge", dir.file("shard0"), dir.file("shard1"), dir.file("shard2"), "--out", dir.file("all")});
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  check_complete_and_scored(read_journal(dir.file("all/results.jsonl")), 31, 2);
  const auto m = kvgate::read_manifest(dir.file("all/run.json"));
  CHECK(m.extra["merged_from"].size() == 3);
  CHECK(m.extra["summary"]["complete"] == true);
  CHECK(m.extra["identity"]["shard"].is_null());

  r = run_kvgate({"merge", dir.file("shard0"), dir.file("shard0"), "--out", dir.file("dup")});
  CHECK(r.exit_code == 2);
  r = run_kvgate({"merge", dir.file("shard0"), dir.file("shard2"), "--out", dir.file("gap")});
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.err, contains("shards missing: 1/3"));
  r = run_kvgate({"merge", dir.file("shard0"), dir.file("all"), "--out", dir.file("mixed")});
  CHECK(r.exit_code == 2);

  // A partial merge is resumed by `kvgate run` without --shard.
  r = run_kvgate({"merge", dir.file("shard0"), dir.file("shard2"), "--out", dir.file("partial"), "--allow-partial"});
  REQUIRE(r.exit_code == 0);
  const std::size_t before = s.requests;
  r = run_kvgate(plus(base_args(tasks, dir.file("partial"), s), {"--repeats", "2"}));
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  CHECK(s.requests - before == 20);  // shard 1: 10 trials x 2
  check_complete_and_scored(read_journal(dir.file("partial/results.jsonl")), 31, 2);

  // A shard's directory refuses another shard.
  r = run_kvgate(plus(base_args(tasks, dir.file("shard0"), s), {"--repeats", "2", "--shard", "1/3"}));
  CHECK(r.exit_code == 2);
}

TEST_CASE("run: bad input is refused before anything is sent", "[e2e][run]") {
  TempDir dir;
  FakeOpenAIServer s;
  s.start();
  std::vector<kvgate::Trial> trials(1);
  trials[0].id = "a";
  trials[0].task = "t";
  trials[0].input = {{"prompt", "Say x"}};
  trials[0].target = "x";
  trials[0].grader = {{"name", "no-such-grader"}};
  kvgate::write_tasks(dir.file("t.jsonl"), trials);
  auto r = run_kvgate(base_args(dir.file("t.jsonl"), dir.file("r1"), s));
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.err, contains("unknown grader no-such-grader"));
  trials[0].grader = {{"name", "exact"}};
  kvgate::write_tasks(dir.file("t.jsonl"), trials);
  r = run_kvgate(base_args(dir.file("t.jsonl"), dir.file("r2"), s));  // a prompt, but --api chat
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.err, contains("pass --api completions"));
  r = run_kvgate(plus(base_args(dir.file("t.jsonl"), dir.file("r3"), s), {"--api", "completions"}));
  CHECK(r.exit_code == 0);
  const std::size_t sent = s.requests;
  CHECK(sent == 1);
  r = run_kvgate(plus(base_args(dir.file("t.jsonl"), dir.file("r4"), s), {"--extra-body", "[1]"}));
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.err, contains("--extra-body"));
  r = run_kvgate(plus(base_args(dir.file("t.jsonl"), dir.file("r5"), s), {"--extra-body", R"({"model":"x"})"}));
  CHECK(r.exit_code == 2);
  r = run_kvgate({"run", "--tasks", dir.file("t.jsonl"), "--out", dir.file("r6"), "--endpoint", "localhost:8000", "--model", "m"});
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.err, contains("--endpoint"));
  r = run_kvgate({"run", "--tasks", dir.file("t.jsonl"), "--out", dir.file("r7"), "--backend", "reference", "--model-dir", "m",
                  "--kv-format", "bf16"});
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.err, contains("--model-dir m"));  // a reference run with no checkpoint names the flag
  CHECK_FALSE(std::filesystem::exists(dir.file("r7") + "/results.jsonl"));
  CHECK(s.requests == sent);
}

TEST_CASE("run: one process per run directory; plain http to another host is warned", "[e2e][run]") {
  TempDir dir;
  const std::string tasks = dir.file("tasks.jsonl"), out = dir.file("run");
  write_say_tasks(tasks, 400);
  FakeOpenAIServer s;
  s.answer_delay_ms = 20;
  s.start();
  KvgateProcess first(plus(base_args(tasks, out, s), {"--concurrency", "2"}), dir.file("first"));
  while (count_lines(out + "/results.jsonl") < 1 && first.running()) std::this_thread::sleep_for(std::chrono::milliseconds(2));
  auto r = run_kvgate(base_args(tasks, out, s));
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.err, contains("another kvgate process"));
  first.kill_hard();
  first.wait();

  write_say_tasks(dir.file("one.jsonl"), 1);
  r = run_kvgate({"run", "--tasks", dir.file("one.jsonl"), "--out", dir.file("remote"), "--endpoint", "http://192.0.2.1:9/v1", "--model", "m",
                  "--timeout", "0.2", "--connect-timeout", "0.1", "--max-retries", "0", "--progress", "none"});
  CHECK_THAT(r.err, contains("plain http:// to another host"));
}

TEST_CASE("run: Ctrl-C stops cleanly: in-flight requests are dropped, run.json says interrupted, re-running resumes", "[e2e][run][resume]") {
  TempDir dir;
  const std::string tasks = dir.file("tasks.jsonl"), out = dir.file("run");
  write_say_tasks(tasks, 300);
  FakeOpenAIServer s;
  s.answer_delay_ms = 10;
  s.start();
  const auto args = plus(base_args(tasks, out, s), {"--concurrency", "4"});
  KvgateProcess p(args, dir.file("p"));
  while (count_lines(out + "/results.jsonl") < 20 && p.running()) std::this_thread::sleep_for(std::chrono::milliseconds(2));
  p.send(SIGINT);
  CHECK(p.wait() == 130);
  const auto m = kvgate::read_manifest(out + "/run.json");
  CHECK(m.extra["status"] == "interrupted");
  CHECK(m.extra["sessions"][0]["status"] == "interrupted");
  const Journal partial = read_journal(out + "/results.jsonl");
  CHECK(partial.duplicates == 0);
  CHECK(partial.total < 300);
  for (const auto& [pair, line] : partial.lines) CHECK(line["error"].is_null());  // no "cancelled" lines
  CHECK_THAT(read_text(dir.file("p.err")), contains("re-run the same command to resume"));
  auto r = run_kvgate(args);
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  check_complete_and_scored(read_journal(out + "/results.jsonl"), 300, 1);
}

TEST_CASE("run: two runs made by kvgate run are read by kvgate compare and kvgate validate", "[e2e][run]") {
  TempDir dir;
  const std::string tasks = dir.file("tasks.jsonl");
  write_say_tasks(tasks, 40);
  FakeOpenAIServer s;
  s.start();
  REQUIRE(run_kvgate(base_args(tasks, dir.file("baseline"), s)).exit_code == 0);
  REQUIRE(run_kvgate(plus(base_args(tasks, dir.file("candidate"), s), {"--seed", "1"})).exit_code == 0);
  auto r = run_kvgate({"validate", dir.file("baseline"), tasks});
  INFO(r.err);
  CHECK(r.exit_code == 0);
  CHECK_THAT(r.out, contains("40 results"));
  r = run_kvgate({"compare", dir.file("baseline"), dir.file("candidate")});
  INFO(r.out << r.err);
  CHECK(r.exit_code != 2);  // PASS, FAIL or INCONCLUSIVE: the files were understood
}
