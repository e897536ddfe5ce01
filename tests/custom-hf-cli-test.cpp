// kvgate gen custom --data <Hugging Face rows API URL>, end to end against a local server that
// answers in the rows API's format: pagination, the cache, resume after an HTTP error, gated sets.
#include <cstdlib>
#include <filesystem>
#include <mutex>
#include <vector>

#include <nlohmann/json.hpp>

#include "tests/catch_compat.hpp"
#include "harness/core/sha256.h"
#include "harness/core/trial.h"
#include "tests/local_server.h"
#include "tests/test_util.h"

using nlohmann::json;
using kvtest::contains;
using kvtest::run_kvgate;

namespace {

// A split "org/qa" (config default, split test) of `total` question rows; "org/gated" the same rows
// behind a bearer token.
struct RowsServer : kvtest::LocalServer {
  std::int64_t total = 5;
  std::int64_t fail_from = -1;  // offsets >= this answer HTTP 400
  std::mutex mu;
  std::vector<std::pair<std::int64_t, int>> requests;
  std::vector<std::string> auth;  // Authorization headers seen

  static json row(std::int64_t i) {
    return {{"qid", "q" + std::to_string(i)}, {"question", "What is " + std::to_string(i) + " + 1?"}, {"answer", std::to_string(i + 1)}};
  }

  RowsServer() {
    server.Get("/rows", [this](const httplib::Request& req, httplib::Response& res) {
      const std::int64_t offset = std::stoll(req.get_param_value("offset"));
      const int length = std::stoi(req.get_param_value("length"));
      const std::string dataset = req.get_param_value("dataset");
      {
        std::lock_guard<std::mutex> lock(mu);
        requests.emplace_back(offset, length);
        auth.push_back(req.get_header_value("Authorization"));
      }
      const bool known = (dataset == "org/qa" || dataset == "org/gated") && req.get_param_value("config") == "default" &&
                         req.get_param_value("split") == "test";
      if (!known) {
        res.status = 404;
        res.set_content(R"({"error":"The dataset does not exist on the Hub."})", "application/json");
        return;
      }
      if (dataset == "org/gated" && req.get_header_value("Authorization") != "Bearer hf_secret_token_123") {
        res.status = 401;
        res.set_content(R"({"error":"The dataset does not exist, or is not accessible without authentication."})",
                        "application/json");
        return;
      }
      if (fail_from >= 0 && offset >= fail_from) {
        res.status = 400;
        res.set_content(R"({"error":"Simulated failure."})", "application/json");
        return;
      }
      json rows = json::array();
      for (std::int64_t i = offset; i < std::min<std::int64_t>(total, offset + length); ++i)
        rows.push_back({{"row_idx", i}, {"row", row(i)}, {"truncated_cells", json::array()}});
      const json features = json::array({{{"feature_idx", 0}, {"name", "qid"}, {"type", {{"dtype", "string"}, {"_type", "Value"}}}},
                                         {{"feature_idx", 1}, {"name", "question"}, {"type", {{"dtype", "string"}, {"_type", "Value"}}}},
                                         {{"feature_idx", 2}, {"name", "answer"}, {"type", {{"dtype", "string"}, {"_type", "Value"}}}}});
      res.set_content(json{{"features", features}, {"rows", rows}, {"num_rows_total", total}, {"num_rows_per_page", 100},
                           {"partial", false}}.dump(),
                      "application/json");
    });
    start();
  }
  std::vector<std::pair<std::int64_t, int>> take_requests() {
    std::lock_guard<std::mutex> lock(mu);
    return std::exchange(requests, {});
  }
};

// Points the kvgate cache at a temporary directory for the life of a test.
struct CacheDir {
  kvtest::TempDir dir;
  CacheDir() { ::setenv("KVGATE_CACHE", dir.file("cache").c_str(), 1); }
  ~CacheDir() { ::unsetenv("KVGATE_CACHE"); }
};

std::vector<std::string> gen_args(const std::string& url, const std::string& out) {
  return {"gen", "custom", "--data", url, "--input-field", "question", "--target-field", "answer", "--id-field", "qid",
          "--name", "qa", "--grader", "numeric", "--out", out};
}

}  // namespace

TEST_CASE("gen custom --data URL: every page of the split, in order, then from the cache", "[e2e][custom][hf_rows]") {
  RowsServer s;
  CacheDir cache;
  kvtest::TempDir dir;
  const std::string url = s.url("/rows?dataset=org%2Fqa&config=default&split=test&offset=0&length=2");
  auto r = run_kvgate(gen_args(url, dir.file("tasks.jsonl")));
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  CHECK(s.take_requests() == std::vector<std::pair<std::int64_t, int>>{{0, 2}, {2, 2}, {4, 2}});  // length= is the page size
  const std::vector<kvgate::Trial> trials = kvgate::load_tasks(dir.file("tasks.jsonl")).trials;
  REQUIRE(trials.size() == 5);
  std::string rows_text;
  for (std::int64_t i = 0; i < 5; ++i) {
    const kvgate::Trial& t = trials[static_cast<std::size_t>(i)];
    CHECK(t.id == "qa/q" + std::to_string(i));
    CHECK(t.input["messages"][0]["content"] == RowsServer::row(i)["question"]);
    CHECK(t.target == RowsServer::row(i)["answer"]);
    CHECK(t.grader["name"] == "numeric");
    CHECK(t.meta["source_line"] == i + 1);
    rows_text += RowsServer::row(i).dump() + "\n";
  }
  CHECK(trials[0].meta["data_sha256"] == kvgate::sha256_hex(rows_text));  // the rows as read, one JSON line each

  // Again: nothing fetched, the same bytes. --offline reads the cache; --refresh fetches anew.
  REQUIRE(run_kvgate(gen_args(url, dir.file("again.jsonl"))).exit_code == 0);
  CHECK(s.take_requests().empty());
  CHECK(kvtest::read_text(dir.file("again.jsonl")) == kvtest::read_text(dir.file("tasks.jsonl")));
  std::vector<std::string> args = gen_args(url, dir.file("offline.jsonl"));
  args.push_back("--offline");
  REQUIRE(run_kvgate(args).exit_code == 0);
  CHECK(s.take_requests().empty());
  args = gen_args(url, dir.file("refresh.jsonl"));
  args.push_back("--refresh");
  REQUIRE(run_kvgate(args).exit_code == 0);
  CHECK(s.take_requests().size() == 3);
  CHECK(kvtest::read_text(dir.file("refresh.jsonl")) == kvtest::read_text(dir.file("tasks.jsonl")));

  // Without length= the client pages 100 rows a request; the same split, the same cache.
  REQUIRE(run_kvgate(gen_args(s.url("/rows?dataset=org/qa&config=default&split=test"), dir.file("p100.jsonl"))).exit_code == 0);
  CHECK(s.take_requests().empty());
}

TEST_CASE("gen custom --data URL: an HTTP error fails cleanly, the next run resumes", "[e2e][custom][hf_rows]") {
  RowsServer s;
  CacheDir cache;
  kvtest::TempDir dir;
  const std::string url = s.url("/rows?dataset=org/qa&config=default&split=test&length=2");
  s.fail_from = 2;
  auto r = run_kvgate(gen_args(url, dir.file("tasks.jsonl")));
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.err, contains("/rows?dataset=org/qa&config=default&split=test&offset=2&length=2: HTTP 400: Simulated failure."));
  CHECK_FALSE(std::filesystem::exists(dir.file("tasks.jsonl")));  // nothing half-written
  CHECK(s.take_requests() == std::vector<std::pair<std::int64_t, int>>{{0, 2}, {2, 2}});
  s.fail_from = -1;
  r = run_kvgate(gen_args(url, dir.file("tasks.jsonl")));
  REQUIRE(r.exit_code == 0);
  CHECK(s.take_requests() == std::vector<std::pair<std::int64_t, int>>{{2, 2}, {4, 2}});  // the first page came from the cache
  CHECK(kvgate::load_tasks(dir.file("tasks.jsonl")).trials.size() == 5);

  // A dataset that does not exist: the URL, the status, the server's words and the fix.
  r = run_kvgate(gen_args(s.url("/rows?dataset=org/nope&config=default&split=test"), dir.file("x.jsonl")));
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.err, contains("dataset=org/nope") && contains("HTTP 404: The dataset does not exist on the Hub.") &&
                        contains("check the dataset, config and split"));
  // Not a rows API URL, and a field the rows lack: errors that name the input.
  r = run_kvgate(gen_args(s.url("/datasets/org/qa"), dir.file("x.jsonl")));
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.err, contains("expected a Hugging Face rows API URL"));
  std::vector<std::string> args = gen_args(url, dir.file("x.jsonl"));
  args[5] = "problem";  // --input-field
  r = run_kvgate(args);
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.err, contains("org/qa/default/test row 0: field \"problem\" missing (--input-field); this line has: answer, qid, question"));
  CHECK_FALSE(std::filesystem::exists(dir.file("x.jsonl")));
  args = gen_args(url, dir.file("x.jsonl"));
  args[3] = dir.file("local.jsonl");
  args.push_back("--offline");
  kvtest::write_text(dir.file("local.jsonl"), RowsServer::row(0).dump() + "\n");
  r = run_kvgate(args);
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.err, contains("--refresh and --offline apply to a rows API URL"));
}

TEST_CASE("gen custom --data URL: a gated split needs HF_TOKEN, which never reaches the output", "[e2e][custom][hf_rows]") {
  RowsServer s;
  CacheDir cache;
  kvtest::TempDir dir;
  const std::string url = s.url("/rows?dataset=org/gated&config=default&split=test");
  ::unsetenv("HF_TOKEN");
  auto r = run_kvgate(gen_args(url, dir.file("tasks.jsonl")));
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.err, contains("HTTP 401") && contains("set HF_TOKEN"));
  ::setenv("HF_TOKEN", "hf_secret_token_123", 1);
  r = run_kvgate(gen_args(url, dir.file("tasks.jsonl")));
  ::unsetenv("HF_TOKEN");
  REQUIRE(r.exit_code == 0);
  CHECK(s.auth.back() == "Bearer hf_secret_token_123");
  CHECK(r.err.find("hf_secret") == std::string::npos);
  CHECK(r.out.find("hf_secret") == std::string::npos);
  CHECK(kvtest::read_text(dir.file("tasks.jsonl")).find("hf_secret") == std::string::npos);
  for (const auto& e : std::filesystem::recursive_directory_iterator(cache.dir.path()))
    if (e.is_regular_file()) CHECK(kvtest::read_text(e.path().string()).find("hf_secret") == std::string::npos);
}
