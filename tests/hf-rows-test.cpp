// The Hugging Face dataset viewer /rows client (datasets/common/hf_rows.h) against a local server
// that answers in the API's recorded format.
#include <atomic>
#include <filesystem>
#include <mutex>
#include <vector>

#include <nlohmann/json.hpp>

#include "tests/catch_compat.hpp"
#include "datasets/common/hf_rows.h"
#include "harness/core/error.h"
#include "tests/local_server.h"
#include "tests/test_util.h"

using nlohmann::json;
using kvtest::contains;

namespace {

// Serves a split of `total` rows {"id": i, "text": "row i"} the way datasets-server does.
struct RowsServer : kvtest::LocalServer {
  std::int64_t total = 23;
  int max_rows = 100;             // rows served per request at most (the API may return fewer)
  std::int64_t fail_from = -1;    // offsets >= this answer HTTP 400 with {"error": ...}
  std::int64_t truncate_row = -1; // this row's "text" is truncated unless it is alone in the page
  bool truncate_alone = false;    // ... even when alone
  int fail_500_above = -1;        // from offset 10 on, requests longer than this answer HTTP 500
  std::mutex mu;
  std::vector<std::pair<std::int64_t, int>> requests;  // (offset, length)

  RowsServer() {
    server.Get("/rows", [this](const httplib::Request& req, httplib::Response& res) {
      const std::int64_t offset = std::stoll(req.get_param_value("offset"));
      const int length = std::stoi(req.get_param_value("length"));
      {
        std::lock_guard<std::mutex> lock(mu);
        requests.emplace_back(offset, length);
      }
      if (req.get_param_value("dataset") != "org/name" || req.get_param_value("config") != "default" ||
          req.get_param_value("split") != "train") {
        res.status = 404;
        res.set_content(R"({"error":"Not found."})", "application/json");
        return;
      }
      if (fail_500_above >= 0 && offset >= 10 && length > fail_500_above) {
        res.status = 500;
        res.set_content(R"({"error":"Rows too big."})", "application/json");
        return;
      }
      if (fail_from >= 0 && offset >= fail_from) {
        res.status = 400;
        res.set_content(R"({"error":"Simulated failure."})", "application/json");
        return;
      }
      json rows = json::array();
      for (std::int64_t i = offset; i < std::min<std::int64_t>(total, offset + std::min(length, max_rows)); ++i) {
        json item = {{"row_idx", i}, {"row", {{"id", i}, {"text", "row " + std::to_string(i)}}}, {"truncated_cells", json::array()}};
        if (i == truncate_row && (length > 1 || truncate_alone)) {
          item["row"]["text"] = "ro";
          item["truncated_cells"] = {"text"};
        }
        rows.push_back(item);
      }
      const json body = {{"features", {{{"feature_idx", 0}, {"name", "id"}, {"type", {{"dtype", "int64"}, {"_type", "Value"}}}},
                                       {{"feature_idx", 1}, {"name", "text"}, {"type", {{"dtype", "string"}, {"_type", "Value"}}}}}},
                         {"rows", rows},
                         {"num_rows_total", total},
                         {"num_rows_per_page", 100},
                         {"partial", false}};
      res.set_content(body.dump(), "application/json");
    });
    start();
  }
  std::size_t request_count() {
    std::lock_guard<std::mutex> lock(mu);
    return requests.size();
  }
};

struct Fixture {
  RowsServer server;
  kvtest::TempDir cache;
  kvgate::HfRowsSource source;
  kvgate::HfRowsOptions options;
  Fixture() {
    source.dataset = "org/name";
    source.endpoint = server.url();
    options.page_length = 10;
    options.cache_root = cache.path();
    options.fetch.max_retries = 0;
    options.fetch.timeout_s = 10;
  }
  std::vector<json> all() {
    std::vector<json> rows;
    kvgate::for_each_hf_row(source, options, [&](const json& row, std::int64_t idx) {
      CHECK(row["id"] == idx);
      rows.push_back(row);
      return true;
    });
    return rows;
  }
};

}  // namespace

TEST_CASE("hf rows: pages a split in order and serves it again from the cache", "[hf_rows]") {
  Fixture f;
  const std::vector<json> rows = f.all();
  REQUIRE(rows.size() == 23);
  CHECK(rows[22]["text"] == "row 22");
  CHECK(f.server.requests == std::vector<std::pair<std::int64_t, int>>{{0, 10}, {10, 10}, {20, 10}});
  const std::string dir = kvgate::hf_rows_cache_dir(f.source, f.options);
  CHECK(std::filesystem::exists(dir + "/rows-000000000-0010.jsonl"));
  CHECK(std::filesystem::exists(dir + "/rows-000000020-0003.jsonl"));
  CHECK(json::parse(kvtest::read_text(dir + "/info.json"))["complete"] == true);
  // Second pass: no requests at all.
  CHECK(f.all().size() == 23);
  CHECK(f.server.request_count() == 3);
  f.options.offline = true;
  CHECK(f.all().size() == 23);
}

TEST_CASE("hf rows: the URL carries dataset, config, split, offset and length", "[hf_rows]") {
  kvgate::HfRowsSource s;
  s.dataset = "openai/mrcr";
  CHECK(kvgate::hf_rows_url(s, 200, 10) ==
        "https://datasets-server.huggingface.co/rows?dataset=openai/mrcr&config=default&split=train&offset=200&length=10");
  s.config = "a b&c";
  CHECK_THAT(kvgate::hf_rows_url(s, 0, 1), contains("config=a%20b%26c"));
}

TEST_CASE("hf rows: a failed download resumes where it stopped", "[hf_rows]") {
  Fixture f;
  f.server.fail_from = 10;
  std::vector<std::int64_t> seen;
  REQUIRE_THROWS_WITH(kvgate::for_each_hf_row(f.source, f.options,
                                              [&](const json&, std::int64_t i) {
                                                seen.push_back(i);
                                                return true;
                                              }),
                      contains("HTTP 400: Simulated failure."));
  CHECK(seen.size() == 10);
  f.server.fail_from = -1;
  f.server.requests.clear();
  CHECK(f.all().size() == 23);
  CHECK(f.server.requests == std::vector<std::pair<std::int64_t, int>>{{10, 10}, {20, 10}});  // page 0 from the cache
}

TEST_CASE("hf rows: stopping early fetches nothing more", "[hf_rows]") {
  Fixture f;
  int n = 0;
  const kvgate::HfRowsInfo info = kvgate::for_each_hf_row(f.source, f.options, [&](const json&, std::int64_t) { return ++n < 12; });
  CHECK(n == 12);
  CHECK(info.rows_seen == 12);
  CHECK_FALSE(info.complete);
  CHECK(f.server.request_count() == 2);
}

TEST_CASE("hf rows: short pages continue at the next row", "[hf_rows]") {
  Fixture f;
  f.server.max_rows = 7;
  CHECK(f.all().size() == 23);
  CHECK(f.server.requests == std::vector<std::pair<std::int64_t, int>>{{0, 10}, {7, 10}, {14, 10}, {21, 10}});
}

TEST_CASE("hf rows: truncated cells are never kept: the whole rows before them are, then smaller pages", "[hf_rows]") {
  Fixture f;
  f.server.truncate_row = 13;
  const std::vector<json> rows = f.all();
  REQUIRE(rows.size() == 23);
  CHECK(rows[13]["text"] == "row 13");  // fetched alone, whole
  CHECK(f.server.requests ==
        std::vector<std::pair<std::int64_t, int>>{{0, 10}, {10, 10}, {13, 3}, {13, 1}, {14, 1}, {15, 1}, {16, 1},
                                                  {17, 1}, {18, 1}, {19, 1}, {20, 1}, {21, 1}, {22, 1}});
}

TEST_CASE("hf rows: server errors once it has answered shrink the pages", "[hf_rows]") {
  Fixture f;
  f.server.fail_500_above = 2;
  CHECK(f.all().size() == 23);
  CHECK(f.server.requests == std::vector<std::pair<std::int64_t, int>>{
                                 {0, 10}, {10, 10}, {10, 5}, {10, 2}, {12, 2}, {14, 2}, {16, 2}, {18, 2}, {20, 2}, {22, 2}});
  // Before the server has answered at all, a failure is final (offline, wrong endpoint).
  Fixture g;
  g.source.endpoint = "http://127.0.0.1:1";
  REQUIRE_THROWS_WITH(g.all(), contains("127.0.0.1:1/rows?dataset=org/name"));
}

TEST_CASE("hf rows: a row too large even alone is an error saying to use a local export", "[hf_rows]") {
  Fixture f;
  f.server.truncate_row = 4;
  f.server.truncate_alone = true;
  REQUIRE_THROWS_WITH(f.all(), contains("row 4 is too large for the rows API (cells text truncated)") &&
                                   contains("local export"));
}

TEST_CASE("hf rows: API errors and upstream changes are errors naming the URL", "[hf_rows]") {
  Fixture f;
  f.source.dataset = "org/missing";
  REQUIRE_THROWS_WITH(f.all(), contains("/rows?dataset=org/missing") && contains("HTTP 404: Not found.") &&
                                   contains("check the dataset, config and split"));
  Fixture g;
  int n = 0;
  kvgate::for_each_hf_row(g.source, g.options, [&](const json&, std::int64_t) { return ++n < 5; });
  g.server.total = 30;  // the split grew upstream
  REQUIRE_THROWS_WITH(g.all(), contains("the split now has 30 rows, the cache 23") &&
                                   contains("the dataset changed upstream; run again with --refresh"));
  g.options.refresh = true;
  CHECK(g.all().size() == 30);
}

TEST_CASE("hf rows: a damaged cache page is an error naming the file", "[hf_rows]") {
  Fixture f;
  f.all();
  const std::string page = kvgate::hf_rows_cache_dir(f.source, f.options) + "/rows-000000010-0010.jsonl";
  kvtest::write_text(page, "{\"row_idx\": 10, \"row\": {\"id\": 10}}\n");
  REQUIRE_THROWS_WITH(f.all(), contains(page) && contains("holds 1 rows, its name says 10"));
  f.options.offline = true;
  std::filesystem::remove(page);
  REQUIRE_THROWS_WITH(f.all(), contains("rows from 10 are not cached (offline)"));
}

TEST_CASE("hf rows: a rows API URL names the split; errors show the expected form", "[hf_rows]") {
  kvgate::HfRowsUrl u = kvgate::parse_hf_rows_url(
      "https://datasets-server.huggingface.co/rows?dataset=openai%2Fgsm8k&config=main&split=test&offset=0&length=100");
  CHECK(u.source.endpoint == "https://datasets-server.huggingface.co");
  CHECK(u.source.dataset == "openai/gsm8k");
  CHECK(u.source.config == "main");
  CHECK(u.source.split == "test");
  CHECK(u.page_length == 100);
  // Defaults for config and split; the URL of a request round-trips.
  u = kvgate::parse_hf_rows_url("http://127.0.0.1:8080/api/rows?dataset=org/name");
  CHECK(u.source.endpoint == "http://127.0.0.1:8080/api");
  CHECK(u.source.config == "default");
  CHECK(u.source.split == "train");
  CHECK(u.page_length == 0);
  const kvgate::HfRowsUrl back = kvgate::parse_hf_rows_url(kvgate::hf_rows_url(u.source, 0, 7));
  CHECK(back.source.dataset == u.source.dataset);
  CHECK(back.source.endpoint == u.source.endpoint);
  CHECK(back.page_length == 7);
  CHECK(kvgate::parse_hf_rows_url("https://h/rows?dataset=a+b%20c").source.dataset == "a b c");

  const char* form = "/rows?dataset=ORG/NAME&config=CONFIG&split=SPLIT";
  REQUIRE_THROWS_WITH(kvgate::parse_hf_rows_url("https://huggingface.co/datasets/openai/gsm8k"), contains(form));
  REQUIRE_THROWS_WITH(kvgate::parse_hf_rows_url("https://h/rows?config=main"), contains("no dataset=") && contains(form));
  REQUIRE_THROWS_WITH(kvgate::parse_hf_rows_url("https://h/rows?dataset=a&offset=100"),
                      contains("offset=100: the whole split is read"));
  REQUIRE_THROWS_WITH(kvgate::parse_hf_rows_url("https://h/rows?dataset=a&length=500"), contains("length=500") && contains("1..100"));
  REQUIRE_THROWS_WITH(kvgate::parse_hf_rows_url("https://h/rows?dataset=a&where=x"), contains("unknown parameter \"where\""));
  REQUIRE_THROWS_WITH(kvgate::parse_hf_rows_url("https://h/rows?dataset=a&dataset=b"), contains("\"dataset\" is given twice"));
  REQUIRE_THROWS_WITH(kvgate::parse_hf_rows_url("https://h/rows?dataset=a%2"), contains("bad %-escape"));
  REQUIRE_THROWS_WITH(kvgate::parse_hf_rows_url("https://h/rows?dataset=a&split="), contains("empty config= or split="));
  CHECK(kvgate::is_http_url("https://x"));
  CHECK_FALSE(kvgate::is_http_url("data/https.jsonl"));
}
