// kvgate grade mrcr and kvgate gen mrcr, end to end.
#include <cstdlib>
#include <filesystem>
#include <map>

#include <nlohmann/json.hpp>

#include "tests/catch_compat.hpp"
#include "harness/core/trial.h"
#include "datasets/graders.h"
#include "tests/local_server.h"
#include "tests/test_util.h"

using nlohmann::json;
using kvtest::contains;
using kvtest::run_kvgate;

namespace {

json official_row(int words, int needles) {
  std::string reply;
  for (int i = 0; i < words; ++i) reply += "lantern ";
  const json messages = json::array({{{"role", "user"}, {"content", "Here are some examples of conversations:"}},
                                     {{"role", "user"}, {"content", "write a poem about tapirs"}},
                                     {{"role", "assistant"}, {"content", reply}},
                                     {{"role", "user"}, {"content", "Prepend abcdefghij to the 1st (1 indexed) poem about tapirs."}}});
  return {{"prompt", messages.dump()},        {"answer", "abcdefghij" + reply}, {"random_string_to_prepend", "abcdefghij"},
          {"n_needles", needles},             {"desired_msg_index", 1},        {"total_messages", 4},
          {"n_chars", 8 * words + 100}};
}

std::vector<json> lines_of(const std::string& path) {
  std::vector<json> out;
  const std::string text = kvtest::read_text(path);
  for (std::size_t pos = 0; pos < text.size();) {
    const std::size_t nl = text.find('\n', pos);
    out.push_back(json::parse(text.substr(pos, nl - pos)));
    pos = nl + 1;
  }
  return out;
}

}  // namespace

TEST_CASE("cli grade mrcr: prints what the official script prints", "[mrcr][cli]") {
  auto r = run_kvgate({"grade", "mrcr", "--response", "PPabxcd", "--answer", "PPabcd", "--prefix", "PP"});
  CHECK(r.exit_code == 0);
  CHECK(r.out == "0.8888888888888888\n");
  r = run_kvgate({"grade", "mrcr", "--response", "PPabcd", "--answer", "PPabcd", "--prefix", "PP"});
  CHECK(r.out == "1.0\n");
  r = run_kvgate({"grade", "mrcr", "--response", " PPabcd", "--answer", "PPabcd", "--prefix", "PP"});
  CHECK(r.out == "0\n");  // grade() returns the int 0 when the prefix is missing
  r = run_kvgate({"grade", "mrcr", "--response", "PP", "--answer", "PPabcd", "--prefix", "PP", "--json"});
  CHECK(json::parse(r.out) == json{{"score", 0.0}, {"prefix_ok", true}});
  r = run_kvgate({"grade", "mrcr", "--response", "x"});
  CHECK(r.exit_code == 2);
}

TEST_CASE("cli gen mrcr: generated trials, byte-identical for the same seed", "[mrcr][cli]") {
  kvtest::TempDir dir;
  const std::vector<std::string> args = {"gen", "mrcr", "--out", dir.file("a.jsonl"), "--lengths", "4k,8k", "--per-bucket", "3", "--seed", "5"};
  auto r = run_kvgate(args);
  REQUIRE(r.exit_code == 0);
  CHECK_THAT(r.err, contains("wrote 6 mrcr trials"));
  CHECK_THAT(r.err, contains("lengths are estimates"));
  const auto trials = lines_of(dir.file("a.jsonl"));
  REQUIRE(trials.size() == 6);
  CHECK(trials[0]["id"] == "mrcr/4096/0000");
  CHECK(trials[5]["id"] == "mrcr/8192/0002");
  CHECK(trials[5]["bucket"] == 8192);
  CHECK(trials[5]["meta"]["prompt_tokens"] == 8192);
  CHECK(trials[5]["grader"]["name"] == "mrcr");
  std::vector<std::string> again = args;
  again[3] = dir.file("b.jsonl");
  REQUIRE(run_kvgate(again).exit_code == 0);
  CHECK(kvtest::read_text(dir.file("a.jsonl")) == kvtest::read_text(dir.file("b.jsonl")));
  r = run_kvgate({"validate", dir.file("a.jsonl")});
  CHECK(r.exit_code == 0);
  r = run_kvgate({"gen", "mrcr", "--out", dir.file("c.jsonl"), "--lengths", "8k", "--needles", "2,x"});
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.err, contains("--needles"));
}

TEST_CASE("cli gen mrcr --official: rows from a JSONL export into the card's bins", "[mrcr][cli]") {
  kvtest::TempDir dir;
  // Estimated tokens (bytes / 4) of the contents plus the answer, which repeats the reply:
  // 1500 words of "lantern " ~ 6000 tokens -> 8192; 3000 words -> 16384.
  kvtest::write_text(dir.file("rows.jsonl"), official_row(1500, 2).dump() + "\n" + official_row(3000, 4).dump() + "\n" +
                                                 official_row(1600, 8).dump() + "\n" + official_row(10, 2).dump() + "\n");
  auto r = run_kvgate({"gen", "mrcr", "--official", dir.file("rows.jsonl"), "--out", dir.file("t.jsonl"), "--lengths",
                       "8k,16k", "--needles", "2,4", "--merge-user-turns"});
  REQUIRE(r.exit_code == 0);
  const auto trials = lines_of(dir.file("t.jsonl"));
  REQUIRE(trials.size() == 2);
  CHECK(trials[0]["id"] == "mrcr/8192/0000");
  CHECK(trials[1]["id"] == "mrcr/16384/0001");
  CHECK(trials[0]["input"]["messages"].size() == 3);  // merged
  CHECK(trials[0]["grader"] == json{{"name", "mrcr"}, {"prefix", "abcdefghij"}});
  CHECK_THAT(r.err, contains("fewer than --per-bucket"));

  kvtest::write_text(dir.file("bad.jsonl"), official_row(3000, 2).dump() + "\n{\"prompt\": \"[oops\"}\n");
  r = run_kvgate({"gen", "mrcr", "--official", dir.file("bad.jsonl"), "--out", dir.file("u.jsonl")});
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.err, contains(dir.file("bad.jsonl") + ":2: field \"prompt\" is not valid JSON"));
  r = run_kvgate({"gen", "mrcr", "--official", dir.file("rows.jsonl"), "--out", dir.file("u.jsonl"), "--lengths", "4096"});
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.err, contains("not the upper edge of an official MRCR bin"));
}

TEST_CASE("cli gen mrcr --official-hf: rows from a rows API, cached", "[mrcr][cli]") {
  kvtest::LocalServer s;
  std::vector<json> rows = {official_row(1500, 2), official_row(3000, 4), official_row(1600, 2)};
  int requests = 0;
  s.server.Get("/rows", [&](const httplib::Request& req, httplib::Response& res) {
    ++requests;
    const std::int64_t offset = std::stoll(req.get_param_value("offset"));
    const int length = std::stoi(req.get_param_value("length"));
    json out = json::array();
    for (std::int64_t i = offset; i < std::min<std::int64_t>(3, offset + length); ++i)
      out.push_back({{"row_idx", i}, {"row", rows[static_cast<std::size_t>(i)]}, {"truncated_cells", json::array()}});
    res.set_content(json{{"features", json::array()}, {"rows", out}, {"num_rows_total", 3}, {"num_rows_per_page", 100}, {"partial", false}}.dump(),
                    "application/json");
  });
  s.start();
  kvtest::TempDir dir;
  ::setenv("KVGATE_CACHE", dir.file("cache").c_str(), 1);
  const std::vector<std::string> args = {"gen", "mrcr", "--official-hf", "--hf-endpoint", s.url(), "--hf-page-rows", "2",
                                         "--out", dir.file("t.jsonl"), "--lengths", "8k,16k", "--per-bucket", "5"};
  auto r = run_kvgate(args);
  REQUIRE(r.exit_code == 0);
  auto trials = lines_of(dir.file("t.jsonl"));
  REQUIRE(trials.size() == 3);
  CHECK(trials[0]["id"] == "mrcr/8192/0000");
  CHECK(trials[1]["id"] == "mrcr/8192/0002");
  CHECK(trials[2]["id"] == "mrcr/16384/0001");
  CHECK(trials[0]["meta"]["origin"] == "hf:openai/mrcr/default/train");
  CHECK(requests == 2);
  REQUIRE(run_kvgate(args).exit_code == 0);  // from the cache
  CHECK(requests == 2);
  // The same split named by a rows API URL in --official: the same source, the same cache.
  r = run_kvgate({"gen", "mrcr", "--official", s.url("/rows?dataset=openai/mrcr&config=default&split=train&length=2"), "--out",
                  dir.file("u.jsonl"), "--lengths", "8k,16k", "--per-bucket", "5"});
  REQUIRE(r.exit_code == 0);
  CHECK(requests == 2);
  CHECK(kvtest::read_text(dir.file("u.jsonl")) == kvtest::read_text(dir.file("t.jsonl")));
  r = run_kvgate({"gen", "mrcr", "--official", s.url("/rows?dataset=openai/mrcr&offset=1"), "--out", dir.file("v.jsonl")});
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.err, contains("offset=1: the whole split is read"));
  ::unsetenv("KVGATE_CACHE");
}

TEST_CASE("cli: MRCR grades feed compare: mean score per bucket, AUC over bucket upper edges", "[mrcr][cli]") {
  kvtest::TempDir dir;
  REQUIRE(run_kvgate({"gen", "mrcr", "--out", dir.file("tasks.jsonl"), "--lengths", "8k,16k,32k", "--per-bucket", "12"}).exit_code == 0);
  const kvgate::TasksFile tasks = kvgate::load_tasks(dir.file("tasks.jsonl"));
  // Baseline reproduces every answer; the candidate loses the second half of each answer at 32k
  // and misses the prefix on one 16k trial. 12 trials a bucket: with 6 the score bound cannot yet
  // exclude unseen gains at 32k (upper bound 0.99, INCONCLUSIVE with 46 trials to decide).
  std::map<std::int64_t, std::pair<double, int>> cand_sum;
  for (const char* label : {"base", "cand"}) {
    std::filesystem::create_directories(dir.file(label));
    kvtest::write_text(dir.file(std::string(label) + "/run.json"), json{{"label", label}}.dump());
    std::string lines;
    int n16 = 0;
    for (const kvgate::Trial& t : tasks.trials) {
      std::string response = t.target.get<std::string>();
      if (std::string(label) == "cand" && t.bucket == 32768) response.resize(response.size() / 2);
      if (std::string(label) == "cand" && t.bucket == 16384 && n16++ == 0) response = " " + response;
      const kvgate::Grade g = kvgate::grade_trial({.trial = t, .response = response});
      if (std::string(label) == "cand") cand_sum[t.bucket].first += g.score, ++cand_sum[t.bucket].second;
      lines += json{{"id", t.id}, {"task", t.task}, {"bucket", t.bucket}, {"repeat", 0}, {"score", g.score},
                    {"passed", g.passed}, {"error", nullptr}}.dump() + "\n";
    }
    kvtest::write_text(dir.file(std::string(label) + "/results.jsonl"), lines);
  }
  auto r = run_kvgate({"compare", dir.file("base"), dir.file("cand"), "--json", dir.file("cmp.json")});
  CHECK(r.exit_code == 1);  // a clear regression
  const json t = json::parse(kvtest::read_text(dir.file("cmp.json")))["pairs"][0]["tasks"][0];
  CHECK(t["task"] == "mrcr");
  CHECK(t["metric"] == "auc");
  CHECK(t["auc"]["x"] == json{8192.0, 16384.0, 32768.0});
  CHECK(t["auc"]["reference"].get<double>() == kvtest::Approx(1.0));
  double want = 0;
  const json w = t["auc"]["weights"];
  int k = 0;
  for (const auto& [bucket, sum] : cand_sum) want += w[k++].get<double>() * sum.first / sum.second;
  CHECK(t["auc"]["candidate"].get<double>() == kvtest::Approx(want).epsilon(1e-12));
  CHECK(want < 0.9);
}

namespace {
// A model that answers MRCR perfectly: it reads the final ask ("Prepend P to the 2nd (1 indexed)
// poem about tapirs. ..."), finds the k-th identical ask and returns P + the reply that followed it.
std::string perfect_mrcr_answer(const json& messages) {
  const std::string last = messages.back()["content"];
  const std::size_t to = last.find(" to the "), idx = last.find(" (1 indexed) "), about = last.find(" about "),
                    dot = last.find(". Do not include");
  const std::string prefix = last.substr(8, to - 8);
  const int k = std::stoi(last.substr(to + 8, idx - to - 8));
  const std::string format = last.substr(idx + 13, about - idx - 13), topic = last.substr(about + 7, dot - about - 7);
  const std::string ask = std::string("write ") + (std::string("aeiou").find(format[0]) != std::string::npos ? "an " : "a ") +
                          format + " about " + topic;
  int seen = 0;
  for (std::size_t i = 0; i + 1 < messages.size(); ++i) {
    const std::string c = messages[i]["content"];
    if (messages[i]["role"] == "user" && (c == ask || c.ends_with("\n" + ask)) && ++seen == k)
      return prefix + messages[i + 1]["content"].get<std::string>();
  }
  return "not found";
}
}  // namespace

TEST_CASE("cli: gen mrcr, run through an endpoint, every perfect answer scores 1.0", "[mrcr][cli]") {
  kvtest::LocalServer s;
  s.server.set_payload_max_length(64u << 20);
  s.server.Post("/v1/chat/completions", [](const httplib::Request& req, httplib::Response& res) {
    const json body = json::parse(req.body);
    const json answer = {{"id", "x"}, {"object", "chat.completion"}, {"model", body["model"]},
                         {"choices", {{{"index", 0}, {"message", {{"role", "assistant"}, {"content", perfect_mrcr_answer(body["messages"])}}},
                                       {"finish_reason", "stop"}}}},
                         {"usage", {{"prompt_tokens", 1}, {"completion_tokens", 1}, {"total_tokens", 2}}}};
    res.set_content(answer.dump(), "application/json");
  });
  s.start();
  kvtest::TempDir dir;
  REQUIRE(run_kvgate({"gen", "mrcr", "--out", dir.file("tasks.jsonl"), "--lengths", "4k,16k", "--per-bucket", "4",
                      "--merge-user-turns"}).exit_code == 0);
  auto r = run_kvgate({"run", "--tasks", dir.file("tasks.jsonl"), "--out", dir.file("run"), "--endpoint", s.url("/v1"),
                       "--model", "m", "--max-tokens", "4096", "--max-retries", "0"});
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  const auto results = lines_of(dir.file("run/results.jsonl"));
  REQUIRE(results.size() == 8);
  for (const json& x : results) {
    INFO(x.dump().substr(0, 300));
    CHECK(x["error"].is_null());
    CHECK(x["score"] == 1.0);
    CHECK(x["passed"] == true);
  }
}
