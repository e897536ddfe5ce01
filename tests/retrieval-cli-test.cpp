// `kvgate gen niah` and `kvgate gen multicode` end to end: byte-identical files from the same seed,
// lengths counted by a server's /tokenize, and clear errors (exit 2) for bad options.
#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>

#include "tests/catch_compat.hpp"
#include "harness/core/sha256.h"
#include "harness/core/trial.h"
#include "tests/fake_token_counter.h"
#include "tests/local_server.h"
#include "tests/test_util.h"

using kvtest::contains;
using kvtest::run_kvgate;

TEST_CASE("gen niah: the same seed gives a byte-identical tasks file, whatever the threads", "[gen][e2e]") {
  kvtest::TempDir dir;
  const std::vector<std::string> common = {"gen", "niah", "--lengths", "2k,8k", "--per-bucket", "4", "--depth-grid", "4"};
  auto args = [&](const std::string& out, const std::string& seed, const std::string& threads) {
    std::vector<std::string> a = common;
    for (const auto& s : {"--out", out.c_str(), "--seed", seed.c_str(), "--threads", threads.c_str()}) a.push_back(s);
    return a;
  };
  auto r = run_kvgate(args(dir.file("a.jsonl"), "5", "1"));
  REQUIRE(r.exit_code == 0);
  CHECK_THAT(r.err, contains("wrote 8 trials"));
  CHECK_THAT(r.err, contains("estimate"));
  REQUIRE(run_kvgate(args(dir.file("b.jsonl"), "5", "2")).exit_code == 0);
  REQUIRE(run_kvgate(args(dir.file("c.jsonl"), "6", "2")).exit_code == 0);
  const std::string a = kvtest::read_text(dir.file("a.jsonl")), b = kvtest::read_text(dir.file("b.jsonl"));
  CHECK(a == b);
  CHECK(a != kvtest::read_text(dir.file("c.jsonl")));
  const auto tasks = kvgate::load_tasks(dir.file("a.jsonl"));  // valid for `kvgate run`
  REQUIRE(tasks.trials.size() == 8);
  CHECK(tasks.trials[0].id == "niah/2048/0000");
  CHECK(tasks.trials[7].id == "niah/8192/0003");
  CHECK(tasks.trials[5].meta.at("depth") == 33.0);
}

TEST_CASE("gen multicode: byte-identical from the seed, with --lines, --ask, --api completions", "[gen][e2e]") {
  kvtest::TempDir dir;
  for (const char* name : {"a.jsonl", "b.jsonl"}) {
    auto r = run_kvgate({"gen", "multicode", "--out", dir.file(name), "--lengths", "4096", "--per-bucket", "3", "--lines", "16",
                         "--ask", "3", "--api", "completions", "--seed", "2"});
    REQUIRE(r.exit_code == 0);
  }
  CHECK(kvtest::read_text(dir.file("a.jsonl")) == kvtest::read_text(dir.file("b.jsonl")));
  const auto tasks = kvgate::load_tasks(dir.file("a.jsonl"));
  REQUIRE(tasks.trials.size() == 3);
  CHECK(tasks.trials[0].input.contains("prompt"));
  CHECK(tasks.trials[0].target.at("codes").size() == 3);
  CHECK(tasks.trials[0].meta.at("lines").size() == 16);
}

TEST_CASE("gen niah / multicode: pinned files: every machine and release writes these bytes for seed 1", "[gen][e2e]") {
  // A change here changes every user's frozen trials: if intended, bump the task's meta "version"
  // and update the hashes.
  kvtest::TempDir dir;
  REQUIRE(run_kvgate({"gen", "niah", "--out", dir.file("n.jsonl"), "--lengths", "2048,8192", "--per-bucket", "2", "--seed", "1"}).exit_code == 0);
  REQUIRE(run_kvgate({"gen", "multicode", "--out", dir.file("m.jsonl"), "--lengths", "4096", "--per-bucket", "2", "--seed", "1"}).exit_code == 0);
  CHECK(kvgate::sha256_hex(kvtest::read_text(dir.file("n.jsonl"))) == "1804e7a1d8a7fc1c60efa821f6a93e9a9173cd51f255e96bb5ec20db6c056068");
  CHECK(kvgate::sha256_hex(kvtest::read_text(dir.file("m.jsonl"))) == "6e4f26010d68c77ea648f0559038577c0c7e38ab1bf774b6644f50dcd0ec1096");
}

TEST_CASE("gen niah --tokenize-url: lengths measured by the server, recorded as exact", "[gen][e2e]") {
  kvtest::LocalServer s;
  kvtest::WordTokenCounter words;
  s.server.Post("/tokenize", [&](const httplib::Request& req, httplib::Response& res) {
    const auto body = nlohmann::json::parse(req.body);
    const std::size_t n = body.contains("messages") ? words.count_chat(body["messages"]) : words.count_text(body["prompt"].get<std::string>());
    res.set_content(nlohmann::json{{"count", n}, {"tokens", nlohmann::json::array()}, {"max_model_len", 32768}}.dump(), "application/json");
  });
  s.start();
  kvtest::TempDir dir;
  auto r = run_kvgate({"gen", "niah", "--out", dir.file("t.jsonl"), "--lengths", "4096", "--per-bucket", "3", "--tokenize-url",
                       s.url(), "--tokenize-model", "m"});
  REQUIRE(r.exit_code == 0);
  for (const auto& t : kvgate::load_tasks(dir.file("t.jsonl")).trials) {
    const auto tokens = t.meta.at("prompt_tokens").get<std::int64_t>();
    CHECK(tokens == static_cast<std::int64_t>(words.count_chat(t.input.at("messages"))));
    CHECK(tokens <= 4096);
    CHECK(tokens >= 4096 - 20);
    CHECK(t.meta.at("length_exact") == true);
    CHECK(t.meta.at("token_counter") == "tokenize-url:" + s.url("/tokenize") + " model:m");
  }
}

TEST_CASE("gen niah / multicode: bad options exit 2 naming the input and the fix, and write nothing", "[gen][e2e]") {
  kvtest::TempDir dir;
  const std::string out = dir.file("t.jsonl");
  struct Case {
    std::vector<std::string> args;
    std::vector<std::string> says;
  };
  const std::vector<Case> cases = {
      {{"gen", "niah", "--lengths", "64"}, {"niah/64/0000", "cannot fit the input to 64 tokens", "use a larger length"}},
      {{"gen", "multicode", "--lengths", "300"}, {"multicode/300/0000", "use a larger length"}},
      {{"gen", "niah", "--tokenizer", dir.file("no-such-tokenizer.json")}, {"--tokenizer", "no-such-tokenizer.json"}},
      {{"gen", "niah", "--depths", "0,50", "--depth-grid", "3"}, {"--depths and --depth-grid"}},
      {{"gen", "niah", "--depths", "0,150"}, {"--depths", "\"150\""}},
      {{"gen", "niah", "--depths", "10,20", "--depth-spacing", "sigmoid"}, {"--depth-spacing applies to --depth-grid"}},
      {{"gen", "niah", "--depth-spacing", "cubic"}, {"--depth-spacing cubic", "linear or sigmoid"}},
      {{"gen", "niah", "--api", "responses"}, {"--api responses", "chat or completions"}},
      {{"gen", "niah", "--value-type", "emoji"}, {"--value-type emoji"}},
      {{"gen", "niah", "--lengths", "4k,4096"}, {"4096 is given twice"}},
      {{"gen", "niah", "--lengths", "4k,x"}, {"--lengths", "\"x\""}},
      {{"gen", "niah", "--haystack-file", dir.file("missing.txt")}, {"--haystack-file", "missing.txt", "cannot read"}},
      {{"gen", "multicode", "--lines", "4", "--ask", "5"}, {"--ask 5", "--lines (4)"}},
      {{"gen", "niah", "--tokenize-url", "http://127.0.0.1:1"}, {"--tokenize-url http://127.0.0.1:1/tokenize", "start the server"}},
  };
  for (const Case& c : cases) {
    std::vector<std::string> a = c.args;
    a.push_back("--out");
    a.push_back(out);
    a.push_back("--per-bucket");
    a.push_back("2");
    const auto r = run_kvgate(a);
    std::ostringstream cmd;
    for (const auto& x : a) cmd << x << " ";
    INFO(cmd.str() << "\n" << r.err);
    CHECK(r.exit_code == 2);
    for (const auto& s : c.says) CHECK_THAT(r.err, contains(s));
    CHECK_FALSE(std::filesystem::exists(out));
  }
}

TEST_CASE("gen niah --haystack-file: the user's text is the haystack", "[gen][e2e]") {
  kvtest::TempDir dir;
  std::string text;
  for (int i = 0; i < 300; ++i) text += "Report line " + std::to_string(i) + " says the quarterly numbers were fine. Nobody objected.\n\n";
  kvtest::write_text(dir.file("corpus.txt"), text);
  auto r = run_kvgate({"gen", "niah", "--out", dir.file("t.jsonl"), "--lengths", "2048,16384", "--per-bucket", "2",
                       "--haystack-file", dir.file("corpus.txt")});
  REQUIRE(r.exit_code == 0);
  CHECK_THAT(r.err, contains("repeat it"));  // 16K tokens needs more than the file
  const auto tasks = kvgate::load_tasks(dir.file("t.jsonl"));
  for (const auto& t : tasks.trials) {
    CHECK(t.meta.at("haystack").at("source") == "file");
    CHECK_THAT(t.input.at("messages")[0].at("content").get<std::string>(), contains("quarterly numbers were fine."));
  }
}

namespace {

// An OpenAI-compatible server that reads the haystack like a perfect model: it finds the needle
// for the asked key (niah) or the code lines of the asked names (multicode) and answers, except
// that it gets the last asked code wrong when `miss_last` is set.
struct OracleServer : kvtest::LocalServer {
  bool miss_last = false;
  OracleServer() {
    server.set_keep_alive_max_count(1);
    server.set_payload_max_length(64u << 20);
    auto handle = [this](const httplib::Request& req, httplib::Response& res, bool chat) {
      const auto body = nlohmann::json::parse(req.body);
      const std::string prompt = chat ? body["messages"].back()["content"].get<std::string>() : body["prompt"].get<std::string>();
      std::string answer;
      std::smatch m;
      if (std::regex_search(prompt, m, std::regex("special magic (\\w+) for (\\S+) mentioned in the provided text\\?"))) {
        std::smatch v;
        const std::string key = m[2];
        std::regex_search(prompt, v, std::regex("special magic \\w+ for " + key + " is: (\\S+)\\."));
        answer = "The special magic " + m[1].str() + " for " + key + " is " + v[1].str() + ".";
      } else {
        const std::size_t q = prompt.rfind("What ");
        const std::string question = prompt.substr(q);
        std::vector<std::string> names;
        static const std::regex name_re("[A-Z][a-z]+-[0-9]+");
        for (std::sregex_iterator it(question.begin(), question.end(), name_re), end; it != end; ++it)
          names.push_back(it->str());
        for (std::size_t i = 0; i < names.size(); ++i) {
          std::smatch c;
          std::regex_search(prompt, c, std::regex("The access code for " + names[i] + " is ([0-9]{6})\\."));
          answer += names[i] + ": " + (miss_last && i + 1 == names.size() ? std::string("000000") : c[1].str()) + "\n";
        }
      }
      const nlohmann::json choice = chat ? nlohmann::json{{"index", 0}, {"message", {{"role", "assistant"}, {"content", answer}}}, {"finish_reason", "stop"}}
                                         : nlohmann::json{{"index", 0}, {"text", answer}, {"finish_reason", "stop"}};
      res.set_content(nlohmann::json{{"id", "x"}, {"object", "x"}, {"model", "oracle"}, {"choices", {choice}},
                                     {"usage", {{"prompt_tokens", 1}, {"completion_tokens", 1}, {"total_tokens", 2}}}}.dump(),
                      "application/json");
    };
    server.Post("/v1/chat/completions", [handle](const httplib::Request& q, httplib::Response& r) { handle(q, r, true); });
    server.Post("/v1/completions", [handle](const httplib::Request& q, httplib::Response& r) { handle(q, r, false); });
    start();
  }
};

std::vector<nlohmann::json> read_results(const std::string& dir) {
  std::vector<nlohmann::json> out;
  std::ifstream in(dir + "/results.jsonl");
  for (std::string line; std::getline(in, line);)
    if (!line.empty()) out.push_back(nlohmann::json::parse(line));
  return out;
}

}  // namespace

TEST_CASE("gen then run: a perfect reader passes every trial; results carry depth and length for heatmaps", "[gen][e2e]") {
  OracleServer oracle;
  kvtest::TempDir dir;
  REQUIRE(run_kvgate({"gen", "niah", "--out", dir.file("n.jsonl"), "--lengths", "2048,4096", "--per-bucket", "3", "--depth-grid", "3"}).exit_code == 0);
  auto r = run_kvgate({"run", "--tasks", dir.file("n.jsonl"), "--out", dir.file("run-n"), "--endpoint", oracle.url("/v1"), "--model", "oracle"});
  REQUIRE(r.exit_code == 0);
  const auto niah = read_results(dir.file("run-n"));
  REQUIRE(niah.size() == 6);
  for (const auto& res : niah) {
    INFO(res.dump());
    CHECK(res.at("passed") == true);
    CHECK(res.at("score") == 1.0);
    const auto& d = res.at("grade").at("details");
    CHECK(d.at("bucket") == res.at("bucket"));
    CHECK(d.contains("depth"));
    CHECK(d.contains("depth_actual"));
    CHECK(d.at("ruler_substring") == 1.0);
  }

  oracle.miss_last = true;  // three of four codes right: partial credit, no pass
  REQUIRE(run_kvgate({"gen", "multicode", "--out", dir.file("m.jsonl"), "--lengths", "4096", "--per-bucket", "2", "--api", "completions"}).exit_code == 0);
  r = run_kvgate({"run", "--tasks", dir.file("m.jsonl"), "--out", dir.file("run-m"), "--endpoint", oracle.url("/v1"), "--model", "oracle",
                  "--api", "completions"});
  REQUIRE(r.exit_code == 0);
  const auto mc = read_results(dir.file("run-m"));
  REQUIRE(mc.size() == 2);
  for (const auto& res : mc) {
    INFO(res.dump());
    CHECK(res.at("passed") == false);
    CHECK(res.at("score") == 0.0);
    const auto& d = res.at("grade").at("details");
    CHECK(d.at("fraction_right") == 0.75);
    CHECK(d.at("depths").size() == 4);
    CHECK(d.at("bucket") == 4096);
  }
}
