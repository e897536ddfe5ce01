#include <filesystem>
#include <thread>

#include "tests/catch_compat.hpp"
#include "harness/core/jsonl.h"
#include "harness/core/result.h"
#include "harness/core/results_writer.h"
#include "tests/test_util.h"

static kvgate::ResultRecord record(const std::string& id, int repeat) {
  kvgate::ResultRecord r;
  r.id = id;
  r.task = "niah";
  r.bucket = 4096;
  r.repeat = repeat;
  r.score = 1.0;
  r.passed = true;
  r.response = "The special magic number is 4721.\n";
  return r;
}

TEST_CASE("results writer: appends whole lines that read back", "[writer]") {
  kvtest::TempDir dir;
  const std::string p = dir.file("results.jsonl");
  {
    kvgate::ResultsWriter w(p);
    w.append(record("a", 0));
    w.append(record("b", 0));
  }
  {
    kvgate::ResultsWriter w(p);  // reopen appends
    w.append(record("c", 1));
  }
  auto f = kvgate::read_results(p);
  REQUIRE(f.records.size() == 3);
  CHECK(f.records[2].id == "c");
  CHECK(f.records[2].repeat == 1);
}

TEST_CASE("results writer: a torn last line is discarded on reopen and the run resumes", "[writer]") {
  kvtest::TempDir dir;
  const std::string p = dir.file("results.jsonl");
  {
    kvgate::ResultsWriter w(p);
    w.append(record("a", 0));
    w.append(record("b", 0));
  }
  // Simulate a process killed in the middle of writing the third line.
  std::string text = kvtest::read_text(p);
  std::string third = kvgate::to_jsonl_line(kvgate::to_json(record("c", 0)));
  kvtest::write_text(p, text + third.substr(0, third.size() / 2));
  CHECK(kvgate::read_results(p).torn_tail_bytes == third.size() / 2);  // readers skip it too
  {
    kvgate::ResultsWriter w(p);
    CHECK(w.discarded_bytes() == third.size() / 2);
    w.append(record("c", 0));
  }
  auto f = kvgate::read_results(p);
  REQUIRE(f.records.size() == 3);
  CHECK(f.records[0].id == "a");
  CHECK(f.records[2].id == "c");
  CHECK(f.torn_tail_bytes == 0);
  CHECK(kvtest::read_text(p).back() == '\n');
}

TEST_CASE("results writer: a complete last line missing only its newline is kept", "[writer]") {
  kvtest::TempDir dir;
  const std::string p = dir.file("results.jsonl");
  std::string one = kvgate::to_jsonl_line(kvgate::to_json(record("a", 0)));
  kvtest::write_text(p, one.substr(0, one.size() - 1));
  {
    kvgate::ResultsWriter w(p);
    CHECK(w.discarded_bytes() == 0);
    w.append(record("b", 0));
  }
  auto f = kvgate::read_results(p);
  REQUIRE(f.records.size() == 2);
  CHECK(f.records[0].id == "a");
}

TEST_CASE("results writer: concurrent appends never interleave", "[writer]") {
  kvtest::TempDir dir;
  const std::string p = dir.file("results.jsonl");
  {
    kvgate::ResultsWriter w(p);
    std::vector<std::thread> threads;
    for (int t = 0; t < 4; ++t)
      threads.emplace_back([&, t] {
        for (int i = 0; i < 250; ++i) w.append(record("t" + std::to_string(t) + "/" + std::to_string(i), 0));
      });
    for (auto& th : threads) th.join();
  }
  auto f = kvgate::read_results(p);
  CHECK(f.records.size() == 1000);
}

TEST_CASE("results writer: an unwritable path is an error naming it", "[writer]") {
  REQUIRE_THROWS_WITH(kvgate::ResultsWriter("/nonexistent/dir/results.jsonl"),
                      kvtest::contains("/nonexistent/dir/results.jsonl: cannot open for appending"));
}
