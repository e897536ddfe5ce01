// The nightly history (reports/history.h): rows from compare --json files, appending without loss or
// duplicates, strict reading, and the page that marks the night a regression entered.
#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "tests/catch_compat.hpp"
#include "harness/compare/compare.h"
#include "harness/compare/comparison_json.h"
#include "harness/core/error.h"
#include "reports/history.h"
#include "tests/report_checks.h"
#include "tests/test_util.h"

using namespace kvgate;
using namespace kvgate::reports;
using kvtest::contains;
using nlohmann::json;

namespace {

const std::string kFix = "tests/fixtures/reports/";

json niah_result() {
  return compare::to_json(compare::compare_runs({kFix + "niah/bf16", kFix + "niah/fp8", kFix + "niah/int4"}, {}));
}

HistoryRow night(const std::string& date, const std::string& version, double ratio, bool regression) {
  HistoryRow r;
  r.date = date;
  r.recorded_at = date + "T07:00:00Z";
  r.source = "nightly/" + date + ".json";
  r.source_sha256 = "sha-" + date;
  r.verdict = regression ? "FAIL" : "PASS";
  r.baseline = "last-night";
  r.candidate = "tonight";
  r.engine = "vllm";
  r.engine_version = version;
  r.model = "Qwen/Qwen3-8B";
  r.kv_format = "fp8_e4m3";
  r.baseline_kv_format = "fp8_e4m3";
  HistoryTask t;
  t.task = "niah";
  t.verdict = r.verdict;
  t.metric = "auc";
  t.reference_metric = 0.91;
  t.candidate_metric = 0.91 * ratio;
  t.ratio = ratio;
  t.lcb = ratio - 0.03;
  t.ucb = ratio + 0.03;
  t.trials = 400;
  t.lost = regression ? 120 : 3;
  t.gained = 2;
  if (regression) t.regressed_buckets = {65536, 131072};
  r.tasks.push_back(t);
  return r;
}

}  // namespace

TEST_CASE("history: one row per candidate of a compare JSON, with engine, model, KV format and per-task numbers", "[history]") {
  const std::vector<HistoryRow> rows = rows_from_compare_json(niah_result(), "c.json", "abc", {.recorded_at = "2026-11-29T07:00:00Z"});
  REQUIRE(rows.size() == 2);  // fp8 and int4 against bf16; the candidate pair is not gated
  const HistoryRow& fp8 = rows[0];
  CHECK(fp8.date == "2026-11-28");  // the candidate's started_at
  CHECK(fp8.candidate == "fp8");
  CHECK(fp8.baseline == "bf16");
  CHECK(fp8.engine == "vllm");
  CHECK(fp8.engine_version == "0.6.3");
  CHECK(fp8.model == "Qwen/Qwen3-8B");
  CHECK(fp8.kv_format == "fp8_e4m3");
  CHECK(fp8.baseline_kv_format == "bf16");
  CHECK(fp8.source_sha256 == "abc");
  CHECK(fp8.series() == "Qwen/Qwen3-8B \u00b7 KV fp8_e4m3 vs bf16");
  REQUIRE(fp8.tasks.size() == 1);
  const HistoryRow& int4 = rows[1];
  CHECK(int4.verdict == "FAIL");
  const HistoryTask& t = int4.tasks[0];
  CHECK(t.task == "niah");
  CHECK(t.metric == "auc");
  CHECK(t.verdict == "FAIL");
  REQUIRE(t.ratio);
  CHECK(*t.ratio == kvtest::Approx(0.65 / 0.95));
  CHECK(*t.lcb < *t.ratio);
  CHECK(*t.ucb > *t.ratio);
  CHECK(!t.regressed_buckets.empty());
  CHECK(t.regression());
  // Round trip through a history line.
  const HistoryRow back = history_row_from_json(to_json(int4), "db:1");
  CHECK(to_json(back) == to_json(int4));
}

TEST_CASE("history: bad input names the file and the fix", "[history]") {
  CHECK_THROWS_WITH(rows_from_compare_json(json{{"schema", "other"}}, "x.json", "s", {}), contains("x.json: field \"schema\""));
  CHECK_THROWS_WITH(rows_from_compare_json(json{{"schema", "other"}}, "x.json", "s", {}), contains("kvgate compare --json F"));
  json no_dates = compare::to_json(compare::compare_runs({"tests/fixtures/compare/small/base", "tests/fixtures/compare/small/cand"}, {}));
  CHECK_THROWS_WITH(rows_from_compare_json(no_dates, "n.json", "s", {}), contains("pass --date YYYY-MM-DD"));
  CHECK(rows_from_compare_json(no_dates, "n.json", "s", {.date = "2026-12-01"})[0].date == "2026-12-01");
  CHECK_THROWS_WITH(rows_from_compare_json(no_dates, "n.json", "s", {.date = "yesterday"}), contains("--date yesterday: not a date"));
  CHECK_THROWS_WITH(history_row_from_json(json{{"schema", "kvgate-history/1"}}, "h.jsonl:3"), contains("h.jsonl:3"));
}

TEST_CASE("history add: appends each comparison once, never to a malformed history", "[history]") {
  kvtest::TempDir tmp;
  const std::string result = tmp.file("night.json"), db = tmp.file("history.jsonl");
  kvtest::write_text(result, niah_result().dump(2));
  AddOutcome a = add_to_history(db, result, {});
  CHECK(a.added == 2);
  CHECK(a.already_present == 0);
  a = add_to_history(db, result, {});
  CHECK(a.added == 0);
  CHECK(a.already_present == 2);
  std::vector<HistoryRow> rows = read_history(db);
  CHECK(rows.size() == 2);
  // Another night: a different file.
  json other = niah_result();
  other["kvgate_commit"] = "another-build";
  kvtest::write_text(tmp.file("night2.json"), other.dump());
  CHECK(add_to_history(db, tmp.file("night2.json"), {.date = "2026-11-29"}).added == 2);
  rows = read_history(db);
  REQUIRE(rows.size() == 4);
  CHECK(rows[2].date == "2026-11-29");
  CHECK(!std::filesystem::exists(db + ".tmp." + std::to_string(::getpid())));

  const std::string before = kvtest::read_text(db);
  kvtest::write_text(db, before + "{\"schema\":\"kvgate-history/1\"}\n");
  CHECK_THROWS_WITH(add_to_history(db, tmp.file("night2.json"), {.date = "2026-11-30"}), contains(db + ":5"));
  CHECK_THROWS_AS(read_history(db), Error);
  kvtest::write_text(tmp.file("bad.json"), "{not json");
  CHECK_THROWS_WITH(add_to_history(tmp.file("fresh.jsonl"), tmp.file("bad.json"), {}), contains("not valid JSON"));
  CHECK(!std::filesystem::exists(tmp.file("fresh.jsonl")));
}

TEST_CASE("history report: each metric over the nights per engine version, the night a regression entered", "[history]") {
  std::vector<HistoryRow> rows = {night("2026-11-01", "0.6.3", 1.00, false), night("2026-11-02", "0.6.3", 0.99, false),
                                  night("2026-11-03", "0.6.4", 1.01, false), night("2026-11-04", "0.6.5", 0.14, true),
                                  night("2026-11-05", "0.6.5", 0.15, true)};
  std::swap(rows[0], rows[3]);  // file order is not night order
  const std::string html = render_history_html(rows, "history.jsonl", "2026-11-06T00:00:00Z");
  const json f = kvtest::check_page(html);
  REQUIRE(f["svgs"].size() == 2);  // the metric and the ratio of niah
  for (const json& s : f["svgs"]) CHECK(s["axes"]["x"]["ticks"][0] == "2026-11-01");
  const std::string text = kvtest::visible_text(html);
  CHECK_THAT(text, contains("regression entered 2026-11-04 (vllm 0.6.5)"));
  CHECK_THAT(text, contains("2026-11-04 (regression entered) | vllm 0.6.5"));
  CHECK_THAT(text, contains("niah regressed since 2026-11-04 (vllm 0.6.5)"));
  CHECK_THAT(text, contains("engine versions: vllm 0.6.3, vllm 0.6.4, vllm 0.6.5"));
  CHECK_THAT(text, contains("64k, 128k"));
  CHECK_THAT(html, contains("class=\"marker\""));
  // Points per engine version: three colours in the legend of each chart.
  CHECK(std::count(text.begin(), text.end(), '\n') > 10);
  CHECK_THAT(text, contains("vllm 0.6.3 vllm 0.6.4 vllm 0.6.5"));
}
