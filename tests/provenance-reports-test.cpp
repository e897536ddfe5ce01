// Pinning provenance in the reports: every format (HTML, Markdown, JUnit) carries the pinning differences at
// the top, with the Hopper warning, and "what the candidate gains" beside what it loses, from what
// compare measured (tests/fixtures/pinning: engine logs, streamed latencies); the nightly history
// rows carry the gains and the pinning differences.
#include <string>

#include "tests/catch_compat.hpp"
#include "harness/compare/compare.h"
#include "harness/compare/comparison_json.h"
#include "reports/history.h"
#include "tests/report_checks.h"
#include "reports/report_top.h"
#include "reports/report_writer.h"

using namespace kvgate;
using namespace kvgate::reports;
using compare::Comparison;
using kvtest::contains;
using nlohmann::json;

namespace {
const std::string kDir = "tests/fixtures/pinning/";
const std::string kWhen = "2026-11-29T06:00:00Z";
Comparison pair(const std::string& candidate) { return compare::compare_runs({kDir + "bf16", kDir + candidate}, {}); }
std::string render(ReportFormat f, const Comparison& c) { return make_report_writer(f)->render(c, {.generated_at = kWhen}); }
}  // namespace

TEST_CASE("HTML: pinning differences and the Hopper warning at the top, then what fp8 gains beside what it loses", "[reports][html]") {
  const Comparison c = pair("fp8");
  const std::string html = render(ReportFormat::html, c);
  kvtest::check_page(html);
  const std::string text = kvtest::visible_text(html);
  const auto top = text.find("attention backend differs: bf16 has \u201cFLASH_ATTN\u201d, fp8 has \u201cFLASHINFER\u201d");
  const auto gains = text.find("What the candidate gains, what it loses");
  REQUIRE(top != std::string::npos);
  REQUIRE(gains != std::string::npos);
  CHECK(top < gains);
  CHECK(gains < text.find("\nRuns\n"));
  CHECK_THAT(text, contains("max tokens differs: bf16 has \u201c1024\u201d, fp8 has \u201c2048\u201d"));
  CHECK_THAT(text, contains("Hopper FP8 attention bug"));
  CHECK_THAT(text, contains("fp8 | gains: KV capacity | \u00d72.00 | \u2013 | engine logs: 1,519,744 vs 759,872 tokens"));
  CHECK_THAT(text, contains("fp8 | gains: inter-token latency | \u00d71.33 | [1.33, 1.33] | baseline / candidate, above 1 is faster; 10 paired trials"));
  CHECK_THAT(text, contains("fp8 | gains: time to first token | \u00d72.04 | [1.75, 2.38]"));
  CHECK_THAT(text, contains("fp8 | gains: output tokens/s | \u00d71.70 | [1.57, 1.85] | candidate / baseline"));
  CHECK_THAT(text, contains("fp8 | loses: custom accuracy | \u00d70.900"));
  CHECK_THAT(html, contains("href=\"#tradeoff\""));
}

TEST_CASE("Markdown and JUnit: the same pinning and gains; a pinned pair says nothing to check", "[reports]") {
  const Comparison c = pair("fp8");
  const std::string md = render(ReportFormat::markdown, c);
  CHECK_THAT(md, contains("- \u26a0 attention backend differs: bf16 has \u201cFLASH\\_ATTN\u201d"));
  CHECK_THAT(md, contains("- **fp8** gains KV capacity \u00d72.00 (engine logs: 1,519,744 vs 759,872 tokens), inter-token latency \u00d71.33 [1.33, 1.33]"));
  CHECK_THAT(md, contains("loses custom \u00d70.900"));
  CHECK(md.find("attention backend differs") < md.find("#### custom"));

  const std::string xml = render(ReportFormat::junit, c);
  kvtest::facts_of(xml, "xml");  // well-formed
  CHECK_THAT(xml, contains("<property name=\"pinned\" value=\"false\"/>"));
  CHECK_THAT(xml, contains("<property name=\"pinning_difference\" value=\"attention backend differs: bf16 has \u201cFLASH_ATTN\u201d"));
  CHECK_THAT(xml, contains("<property name=\"gain: KV capacity\" value=\"\u00d72.00\"/>"));
  CHECK_THAT(xml, contains("<property name=\"gain: inter-token latency\" value=\"\u00d71.33 [1.33, 1.33]\"/>"));

  const Comparison pinned = pair("fp8-pinned");
  CHECK(pinning_differences(pinned, {}).empty());
  CHECK_THAT(render(ReportFormat::junit, pinned), contains("<property name=\"pinned\" value=\"true\"/>"));
  CHECK_THAT(kvtest::visible_text(render(ReportFormat::html, pinned)), !contains("Check these differences"));
}

TEST_CASE("History: a row carries the gains and the pinning differences; the page draws speed over the nights", "[reports][history]") {
  const Comparison c = pair("fp8");
  const json result = compare::to_json(c);
  const std::vector<HistoryRow> rows = rows_from_compare_json(result, "c.json", "00", {.date = "2026-11-29", .recorded_at = kWhen});
  REQUIRE(rows.size() == 1);
  const HistoryRow& r = rows[0];
  REQUIRE(r.gains.kv_capacity_ratio);
  CHECK(*r.gains.kv_capacity_ratio == kvtest::Approx(2.0));
  CHECK_FALSE(r.gains.kv_capacity_estimate);
  REQUIRE(r.gains.itl_ratio);
  CHECK(*r.gains.itl_ratio == kvtest::Approx(0.75));
  REQUIRE(r.gains.ttft_ratio);
  CHECK(*r.gains.ttft_lo == kvtest::Approx(0.42045).epsilon(1e-4));
  CHECK(r.pinning_differences.size() == 2);
  // Round trip through the history file's JSON.
  const HistoryRow back = history_row_from_json(to_json(r), "db:1");
  CHECK(*back.gains.itl_ratio == kvtest::Approx(0.75));
  CHECK(back.pinning_differences == r.pinning_differences);
  // A row written before gains were recorded (no gains) still reads.
  json old = to_json(r);
  old.erase("gains");
  old.erase("pinning_differences");
  CHECK_FALSE(history_row_from_json(old, "db:2").gains.itl_ratio);

  const std::string html = render_history_html(rows, "db.jsonl", kWhen);
  kvtest::check_page(html);
  const std::string text = kvtest::visible_text(html);
  CHECK_THAT(text, contains("Speed and capacity"));
  CHECK_THAT(text, contains("2026-11-29 | vllm 0.19.1 | \u00d72.00 | \u00d70.75 [0.75, 0.75] | \u00d70.49 [0.42, 0.57]"));
  CHECK_THAT(text, contains("attention backend FLASH_ATTN -> FLASHINFER; max tokens 1024 -> 2048"));
}

TEST_CASE("A slowdown is a loss in every report: '3.33× slower' under what the candidate loses, never 'gains ... ×0.30'", "[reports]") {
  const Comparison c = pair("fp8");
  ReportContext ctx{.generated_at = kWhen};
  ctx.gains.push_back({.candidate = "fp8", .what = "end-to-end latency p50", .factor = 0.3, .lo = 0.28, .hi = 0.32, .detail = "ops dashboard"});
  const std::string md = make_report_writer(ReportFormat::markdown)->render(c, ctx);
  CHECK_THAT(md, contains("; loses end-to-end latency p50 3.33\u00d7 slower [3.12, 3.57] (ops dashboard)"));
  CHECK_THAT(md, !contains("\u00d70.30"));
  const std::string text = kvtest::visible_text(make_report_writer(ReportFormat::html)->render(c, ctx));
  CHECK_THAT(text, contains("fp8 | loses: end-to-end latency p50 | 3.33\u00d7 slower | [3.12, 3.57] | ops dashboard"));
  CHECK_THAT(text, !contains("gains: end-to-end latency p50"));
  const std::string xml = make_report_writer(ReportFormat::junit)->render(c, ctx);
  CHECK_THAT(xml, contains("<property name=\"loss: end-to-end latency p50\" value=\"3.33\u00d7 slower [3.12, 3.57]\"/>"));
}
