// gen gsm8k | golden | custom and grade gsm8k, end to end through the kvgate binary.
#include <cstdlib>
#include <filesystem>
#include <map>

#include "tests/catch_compat.hpp"
#include "harness/core/jsonl.h"
#include "harness/core/trial.h"
#include "tests/local_server.h"
#include "tests/test_util.h"

using kvtest::contains;
using kvtest::run_kvgate;
using nlohmann::json;

namespace {
std::string gsm8k_file(const char* name) { return kvtest::data_dir() + "/gsm8k/" + name; }
}  // namespace

TEST_CASE("e2e: grade gsm8k prints both filters as JSON", "[e2e][gsm8k]") {
  auto r = run_kvgate({"grade", "gsm8k", "--response", "48/2 = 24\n24+48 = 72\n#### 72", "--target", "Natalia sold ... #### 72"});
  CHECK(r.exit_code == 0);
  CHECK(r.out == "{\"strict\": {\"extracted\": \"72\", \"correct\": true}, \"flexible\": {\"extracted\": \"72\", \"correct\": true}}\n");
  r = run_kvgate({"grade", "gsm8k", "--response", "I am not sure.", "--target", "72"});
  CHECK(r.out ==
        "{\"strict\": {\"extracted\": \"[invalid]\", \"correct\": false}, \"flexible\": {\"extracted\": \"[invalid]\", \"correct\": false}}\n");
  r = run_kvgate({"grade", "gsm8k", "--response", "<think>#### 5</think>So $1,000.", "--target", "1000"});
  CHECK(r.out == "{\"strict\": {\"extracted\": \"[invalid]\", \"correct\": false}, \"flexible\": {\"extracted\": \"$1,000.\", \"correct\": true}}\n");
  r = run_kvgate({"grade", "gsm8k", "--style", "gsm8k-cot", "--response", "The answer is 12.", "--target", "12"});
  CHECK_THAT(r.out, contains("\"strict\": {\"extracted\": \"12\", \"correct\": true}"));
  r = run_kvgate({"grade", "gsm8k", "--style", "mmlu", "--response", "x", "--target", "1"});
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.err, contains("gsm8k, gsm8k-cot, chat"));
}

TEST_CASE("e2e: gen gsm8k from files, seeded and byte-identical", "[e2e][gsm8k]") {
  kvtest::TempDir dir;
  const std::vector<std::string> base = {"gen", "gsm8k", "--data", gsm8k_file("test.jsonl"), "--train", gsm8k_file("train.jsonl"),
                                         "--limit", "25", "--seed", "9"};
  auto args = base;
  args.insert(args.end(), {"--out", dir.file("a.jsonl")});
  auto r = run_kvgate(args);
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  CHECK_THAT(r.err, contains("wrote 25 trials"));
  const kvgate::TasksFile tasks = kvgate::load_tasks(dir.file("a.jsonl"));
  REQUIRE(tasks.trials.size() == 25);
  CHECK(tasks.trials[0].id.rfind("gsm8k/", 0) == 0);
  CHECK(tasks.trials[0].grader["name"] == "gsm8k");
  args = base;
  args.insert(args.end(), {"--out", dir.file("b.jsonl")});
  REQUIRE(run_kvgate(args).exit_code == 0);
  CHECK(kvtest::read_text(dir.file("a.jsonl")) == kvtest::read_text(dir.file("b.jsonl")));
  r = run_kvgate({"validate", dir.file("a.jsonl")});
  CHECK(r.exit_code == 0);
  CHECK_THAT(r.out, contains("25 trials (gsm8k 25)"));

  // Chat needs no train file; a malformed data file is exit 2, names the line, writes nothing.
  r = run_kvgate({"gen", "gsm8k", "--style", "chat", "--data", gsm8k_file("test.jsonl"), "--limit", "3", "--out", dir.file("c.jsonl")});
  CHECK(r.exit_code == 0);
  CHECK(kvgate::load_tasks(dir.file("c.jsonl")).trials[0].is_chat());
  kvtest::write_text(dir.file("bad.jsonl"), "{\"question\": \"q\", \"answer\": \"#### 1\"}\n{\"question\": \"q\"}\n");
  r = run_kvgate({"gen", "gsm8k", "--style", "chat", "--data", dir.file("bad.jsonl"), "--out", dir.file("d.jsonl")});
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.err, contains("bad.jsonl:2: field \"answer\" missing"));
  CHECK_FALSE(std::filesystem::exists(dir.file("d.jsonl")));
  kvtest::write_text(dir.file("mine.jsonl"), "{\"question\": \"q\", \"answer\": \"#### 1\"}\n");
  r = run_kvgate({"gen", "gsm8k", "--style", "chat", "--data", dir.file("mine.jsonl"), "--out", dir.file("d.jsonl")});
  CHECK(r.exit_code == 0);
  CHECK_THAT(r.err, contains("not the official GSM8K test split"));
}

TEST_CASE("e2e: gen gsm8k downloads into the cache when no file is given", "[e2e][gsm8k]") {
  const std::string test = kvtest::read_text(gsm8k_file("test.jsonl")), train = kvtest::read_text(gsm8k_file("train.jsonl"));
  kvtest::LocalServer server;
  server.server.Get("/gsm/test.jsonl", [&](const httplib::Request&, httplib::Response& res) { res.set_content(test, "text/plain"); });
  server.server.Get("/gsm/train.jsonl", [&](const httplib::Request&, httplib::Response& res) { res.set_content(train, "text/plain"); });
  server.start();
  kvtest::TempDir cache, dir;
  ::setenv("KVGATE_CACHE", cache.path().c_str(), 1);
  auto r = run_kvgate({"gen", "gsm8k", "--mirror", server.url("/gsm"), "--limit", "4", "--out", dir.file("t.jsonl")});
  ::unsetenv("KVGATE_CACHE");
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  CHECK(std::filesystem::exists(cache.path() + "/gsm8k/test.jsonl"));
  CHECK(std::filesystem::exists(cache.path() + "/gsm8k/train.jsonl"));
  CHECK(kvgate::load_tasks(dir.file("t.jsonl")).trials.size() == 4);
}

TEST_CASE("e2e: gen golden", "[e2e][golden]") {
  kvtest::TempDir dir;
  kvtest::write_text(dir.file("prompts.jsonl"),
                     R"({"id": "p1", "model": "prod", "temperature": 0.8, "messages": [{"role": "user", "content": "Hi"}]})" "\n"
                     R"({"messages": [{"role": "user", "content": "JSON please"}], "response_format": {"type": "json_object"}})" "\n");
  auto r = run_kvgate({"gen", "golden", "--prompts", dir.file("prompts.jsonl"), "--out", dir.file("tasks.jsonl")});
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  CHECK_THAT(r.err, contains("not carried into the trials: model, temperature"));
  const auto trials = kvgate::load_tasks(dir.file("tasks.jsonl")).trials;
  REQUIRE(trials.size() == 2);
  CHECK(trials[0].id == "golden/p1");
  CHECK(trials[0].input["temperature"] == 0);
  CHECK(trials[1].grader["name"] == "golden");
  kvtest::write_text(dir.file("bad.jsonl"), "{\"messages\": \"hi\"}\n");
  r = run_kvgate({"gen", "golden", "--prompts", dir.file("bad.jsonl"), "--out", dir.file("x.jsonl")});
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.err, contains("bad.jsonl:1: field \"messages\" must be an array"));
  CHECK(run_kvgate({"gen", "golden", "--out", dir.file("x.jsonl")}).exit_code == 2);  // --prompts required
}

TEST_CASE("e2e: gen custom", "[e2e][custom]") {
  kvtest::TempDir dir;
  kvtest::write_text(dir.file("aime.jsonl"),
                     R"({"id": "2025-I-1", "problem": "Find x.", "answer": "33"})" "\n"
                     R"({"id": "2025-I-2", "problem": "Find y.", "answer": "510"})" "\n");
  auto r = run_kvgate({"gen", "custom", "--data", dir.file("aime.jsonl"), "--input-field", "problem", "--target-field", "answer",
                       "--id-field", "id", "--name", "aime25", "--grader", "numeric", "--grader-params", "{\"require_boxed\": true}",
                       "--template", "{problem}\n\nPut the final answer in \\boxed{{}}.", "--out", dir.file("tasks.jsonl")});
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  const auto trials = kvgate::load_tasks(dir.file("tasks.jsonl")).trials;
  REQUIRE(trials.size() == 2);
  CHECK(trials[1].id == "aime25/2025-I-2");
  CHECK(trials[1].task == "aime25");
  CHECK(trials[0].input["messages"][0]["content"] == "Find x.\n\nPut the final answer in \\boxed{}.");
  CHECK(trials[0].grader == json({{"name", "numeric"}, {"require_boxed", true}}));

  r = run_kvgate({"gen", "custom", "--data", dir.file("aime.jsonl"), "--input-field", "question", "--target-field", "answer",
                  "--out", dir.file("x.jsonl")});
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.err, contains("aime.jsonl:1: field \"question\" missing (--input-field); this line has: answer, id, problem"));
  r = run_kvgate({"gen", "custom", "--data", dir.file("aime.jsonl"), "--input-field", "problem", "--target-field", "answer",
                  "--grader-params", "{tolerance: 1}", "--out", dir.file("x.jsonl")});
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.err, contains("--grader-params {tolerance: 1}: not valid JSON"));
  CHECK_FALSE(std::filesystem::exists(dir.file("x.jsonl")));
}

namespace {

// A results line as the runner writes it for a golden trial graded by `golden`.
json golden_result(const std::string& id, const std::string& response, const std::string& finish, json tool_calls,
                   bool json_requested) {
  json j = {{"id", id},           {"task", "golden"},        {"bucket", 0},     {"repeat", 0},
            {"score", 1.0},       {"passed", true},          {"error", nullptr}, {"response", response},
            {"finish_reason", finish}};
  if (!tool_calls.is_null()) j["tool_calls"] = tool_calls;
  j["grade"] = {{"value", "correct"},
                {"extracted", ""},
                {"explanation", ""},
                {"details", {{"problems", json::array()}, {"request", {{"json_requested", json_requested}, {"tools", {"get_weather"}}}}}}};
  return j;
}

void write_run(const std::string& dir, const std::string& label, const std::vector<json>& lines) {
  std::filesystem::create_directories(dir);
  kvtest::write_text(dir + "/run.json", json{{"label", label}}.dump());
  std::string text;
  for (const json& l : lines) text += l.dump() + "\n";
  kvtest::write_text(dir + "/results.jsonl", text);
}

}  // namespace

TEST_CASE("e2e: compare flags golden structural breaks and fails the gate", "[e2e][golden]") {
  kvtest::TempDir dir;
  const json call = json::array({{{"id", "c1"}, {"type", "function"},
                                  {"function", {{"name", "get_weather"}, {"arguments", "{\"city\": \"Paris\"}"}}}}});
  std::vector<json> base, same, broken;
  for (int i = 0; i < 40; ++i) {
    const std::string id = "golden/p" + std::to_string(i);
    base.push_back(golden_result(id, "{\"n\": " + std::to_string(i) + "}", "stop", nullptr, true));
  }
  base.push_back(golden_result("golden/tool", "", "tool_calls", call, false));
  same = base;
  broken = base;
  broken[3] = golden_result("golden/p3", "{\"n\": ", "length", nullptr, true);  // truncated, and no longer JSON
  broken[40] = golden_result("golden/tool", "", "tool_calls",
                             json::array({{{"id", "c9"}, {"type", "function"}, {"function", {{"name", "get_wether"}, {"arguments", "{}"}}}}}),
                             false);
  write_run(dir.file("base"), "bf16", base);
  write_run(dir.file("same"), "fp8-same", same);
  write_run(dir.file("broken"), "fp8-broken", broken);

  auto r = run_kvgate({"compare", dir.file("base"), dir.file("broken"), "--json", dir.file("broken.json")});
  INFO(r.out << r.err);
  CHECK(r.exit_code == 1);
  const json j = json::parse(kvtest::read_text(dir.file("broken.json")));
  const json& task = j["pairs"][0]["tasks"][0];
  std::map<std::string, json> findings;
  for (const json& f : task["findings"]) findings[f["check"]] = f;
  REQUIRE(findings.count("golden.truncated"));
  CHECK(findings["golden.truncated"]["severity"] == "fail");
  CHECK(findings["golden.truncated"]["trials"][0]["id"] == "golden/p3");
  CHECK(findings.count("golden.invalid_json"));
  CHECK(findings.count("golden.tool_call_unknown_tool"));
  CHECK_THAT(findings["golden.similarity"]["message"].get<std::string>(), contains("exact match 95.1% (39 of 41 outputs)"));
  CHECK_THAT(r.out, contains("golden.truncated"));

  r = run_kvgate({"compare", dir.file("base"), dir.file("same"), "--json", dir.file("same.json")});
  CHECK(r.exit_code != 1);  // no break: the ratio decides (PASS, or INCONCLUSIVE at this n)
  const json s = json::parse(kvtest::read_text(dir.file("same.json")));
  for (const json& f : s["pairs"][0]["tasks"][0]["findings"]) CHECK(f["severity"] != "fail");
}
