#include "tests/catch_compat.hpp"
#include "harness/core/error.h"
#include "harness/core/jsonl.h"
#include "tests/test_util.h"

using kvgate::Error;
using kvtest::contains;

TEST_CASE("jsonl: reads records with line numbers and skips blank lines", "[jsonl]") {
  kvtest::TempDir dir;
  kvtest::write_text(dir.file("a.jsonl"), "{\"a\":1}\n\n  \n{\"a\":2}\n");
  std::vector<std::size_t> lines;
  auto stats = kvgate::for_each_jsonl(dir.file("a.jsonl"), [&](nlohmann::json&& v, std::size_t line) {
    lines.push_back(line);
    CHECK(v.contains("a"));
  });
  CHECK(lines == std::vector<std::size_t>{1, 4});
  CHECK(stats.records == 2);
  CHECK(stats.torn_tail_bytes == 0);
}

TEST_CASE("jsonl: a malformed line names the file and line", "[jsonl]") {
  kvtest::TempDir dir;
  const std::string p = dir.file("bad.jsonl");
  kvtest::write_text(p, "{\"a\":1}\n{\"a\":\n");
  REQUIRE_THROWS_WITH(kvgate::read_jsonl(p), contains(p + ":2: not valid JSON"));
}

TEST_CASE("jsonl: invalid UTF-8 is rejected with the line", "[jsonl]") {
  kvtest::TempDir dir;
  const std::string p = dir.file("utf8.jsonl");
  kvtest::write_text(p, "{\"a\":\"ok\"}\n{\"a\":\"\xff\xfe\"}\n");
  REQUIRE_THROWS_WITH(kvgate::read_jsonl(p), contains(":2: not valid JSON") && contains("UTF-8"));
}

TEST_CASE("jsonl: a torn last line is an error unless allowed", "[jsonl]") {
  kvtest::TempDir dir;
  const std::string p = dir.file("torn.jsonl");
  kvtest::write_text(p, "{\"a\":1}\n{\"a\":2, \"b\"");
  REQUIRE_THROWS_WITH(kvgate::read_jsonl(p), contains("cut short"));
  kvgate::JsonlReadOptions opts;
  opts.allow_torn_tail = true;
  std::size_t n = 0;
  auto stats = kvgate::for_each_jsonl(p, [&](nlohmann::json&&, std::size_t) { ++n; }, opts);
  CHECK(n == 1);
  CHECK(stats.torn_tail_bytes == 11);
  CHECK(stats.valid_bytes == 8);
}

TEST_CASE("jsonl: a missing file says so", "[jsonl]") {
  REQUIRE_THROWS_WITH(kvgate::read_jsonl("/nonexistent/x.jsonl"), contains("/nonexistent/x.jsonl: cannot open"));
}

TEST_CASE("jsonl: lines are one line each and survive invalid UTF-8 in values", "[jsonl]") {
  nlohmann::json j = {{"text", "line1\nline2"}, {"bad", std::string("a\xc3")}};
  std::string line = kvgate::to_jsonl_line(j);
  CHECK(line.back() == '\n');
  CHECK(line.find('\n') == line.size() - 1);
  CHECK(nlohmann::json::parse(line)["bad"] == "a\xef\xbf\xbd");
}
