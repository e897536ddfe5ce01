// The report writers (reports/) on the fixture runs of tests/fixtures/reports/ (make_fixtures.py):
// Markdown and JUnit golden files, the HTML page (well-formed XML, no script or network reference,
// every SVG with its axes and labels, the verdict first, heatmaps, per-problem flips, structural
// breaks side by side, lost trials with prompts), hostile strings, the single-run page.
#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "tests/catch_compat.hpp"
#include "harness/compare/compare.h"
#include "harness/compare/comparison_json.h"
#include "harness/compare/number_format.h"
#include "harness/compare/text_table.h"
#include "reports/depth_grid.h"
#include "tests/report_checks.h"
#include "reports/report_top.h"
#include "reports/report_writer.h"
#include "reports/run_report.h"
#include "harness/stats/proportion_ci.h"
#include "tests/test_util.h"
#include "reports/trial_texts.h"

using namespace kvgate;
using namespace kvgate::reports;
using compare::Comparison;
using kvtest::contains;
using nlohmann::json;
namespace fs = std::filesystem;

namespace {

const std::string kFix = "tests/fixtures/reports/";
const std::string kWhen = "2026-11-29T06:00:00Z";

Comparison fixture(const std::vector<std::string>& names, const std::vector<compare::TaskCheckEntry>& checks = compare::default_task_checks()) {
  std::vector<std::string> dirs;
  for (const std::string& n : names) dirs.push_back(kFix + n);
  return compare::compare_runs(dirs, {}, checks);
}

std::string render(ReportFormat f, const Comparison& c, const TrialTexts* texts = nullptr) {
  return make_report_writer(f)->render(c, {.generated_at = kWhen, .trials = texts});
}

using kvtest::check_page;
using kvtest::facts_of;

TrialTexts texts_for(const Comparison& c) { return load_trial_texts(c, {}); }

const compare::TaskComparison& task_of(const Comparison& c, std::size_t pair) {
  REQUIRE(c.pairs.size() > pair);
  REQUIRE(c.pairs[pair].tasks.size() == 1);
  return c.pairs[pair].tasks[0];
}

std::string text_of_page(const std::string& html) { return kvtest::visible_text(html); }

}  // namespace

TEST_CASE("reports: one ReportWriter seam, a writer per format; JSON is the compare JSON", "[reports]") {
  const Comparison c = fixture({"gsm8k/base", "gsm8k/cand"});
  for (ReportFormat f : {ReportFormat::json, ReportFormat::markdown, ReportFormat::html, ReportFormat::junit}) {
    const auto w = make_report_writer(f);
    REQUIRE(w);
    CHECK(w->format() == f);
    CHECK(!w->render(c, {.generated_at = kWhen}).empty());
  }
  CHECK(json::parse(render(ReportFormat::json, c)) == compare::to_json(c));
  const json with_pairs = json::parse(make_report_writer(ReportFormat::json)->render(c, {.json_trial_pairs = true}));
  CHECK(with_pairs["pairs"][0]["tasks"][0]["trial_pairs"].size() == 60);
  CHECK(std::string(to_string(ReportFormat::junit)) == "junit");
}

TEST_CASE("Markdown: a verdict line, one table per task, nothing external (golden files)", "[reports][markdown]") {
  const Comparison niah = fixture({"niah/bf16", "niah/fp8", "niah/int4"});
  const std::string md = render(ReportFormat::markdown, niah);
  CHECK(md.rfind("### kvgate: **FAIL**", 0) == 0);
  CHECK_THAT(md, contains("#### niah"));
  CHECK_THAT(md, contains("| fp8 | **AUC** |"));
  CHECK_THAT(md, contains("**regression**"));
  CHECK_THAT(md, contains("upper bound"));
  CHECK_THAT(md, !contains("://"));
  CHECK_THAT(md, !contains("]("));  // no links
  CHECK_THAT(md, !contains("!["));  // no images
  CHECK(std::count(md.begin(), md.end(), '\n') < 60);  // fits a pull-request comment
  CHECK(kvtest::golden_mismatch("reports/niah.md", kvtest::normalize_build(md)) == "");

  const Comparison gsm = fixture({"gsm8k/base", "gsm8k/cand"});
  const std::string g = render(ReportFormat::markdown, gsm);
  CHECK_THAT(g, contains("**INCONCLUSIVE**"));
  CHECK_THAT(g, contains("more paired trials"));  // what would resolve it
  CHECK_THAT(g, contains("vllm 0.6.3, Qwen/Qwen3-8B, KV bf16"));
  CHECK(kvtest::golden_mismatch("reports/gsm8k.md", kvtest::normalize_build(g)) == "");
}

TEST_CASE("JUnit: a testcase per gated task and per Holm-flagged bucket, failures with the reason", "[reports][junit]") {
  const Comparison c = fixture({"niah/bf16", "niah/fp8", "niah/int4"});
  std::size_t flagged = 0, failing_tasks = 0;
  for (const auto& p : c.pairs) {
    if (!p.gating) continue;
    for (const auto& t : p.tasks) {
      failing_tasks += t.verdict != compare::Verdict::pass;
      for (const auto& b : t.buckets) flagged += b.regression;
    }
  }
  REQUIRE(flagged >= 1);
  const std::string xml = render(ReportFormat::junit, c);
  const json f = facts_of(xml, "xml");
  CHECK(f["root"] == "testsuites");
  CHECK(f["tag_counts"]["testsuite"] == 2);  // fp8 and int4 against bf16; the candidate pair is not gated
  CHECK(f["tag_counts"]["testcase"] == 2 + flagged);
  CHECK(f["tag_counts"]["failure"] == failing_tasks + flagged);
  CHECK_THAT(xml, contains("type=\"FAIL\" message=\"FAIL: AUC ratio"));
  CHECK_THAT(xml, contains("type=\"regression\""));
  CHECK_THAT(xml, contains("name=\"niah bucket 8k regression\""));
  CHECK(kvtest::golden_mismatch("reports/niah.junit.xml", kvtest::normalize_build(xml)) == "");

  const std::string g = render(ReportFormat::junit, fixture({"gsm8k/base", "gsm8k/cand"}));
  CHECK_THAT(g, contains("type=\"INCONCLUSIVE\""));  // an undecided gate is not a pass
  CHECK(facts_of(g, "xml")["tag_counts"]["failure"] == 1);
}

TEST_CASE("HTML: well-formed, self-contained, every SVG with title, axes, ticks and axis titles", "[reports][html]") {
  for (const std::vector<std::string>& runs : std::vector<std::vector<std::string>>{
           {"niah/bf16", "niah/fp8", "niah/int4"}, {"gsm8k/base", "gsm8k/cand"}, {"golden/base", "golden/cand"}, {"hostile/base", "hostile/cand"}}) {
    INFO(runs[0]);
    const Comparison c = fixture(runs);
    const TrialTexts texts = texts_for(c);
    const json f = check_page(render(ReportFormat::html, c, &texts));
    CHECK(f["svgs"].size() >= 2);  // the forest plot and the accuracy chart at least
  }
}

TEST_CASE("HTML: the verdict comes first, with margin, lower bound and what would resolve it", "[reports][html]") {
  const Comparison c = fixture({"gsm8k/base", "gsm8k/cand"});
  const std::string text = text_of_page(render(ReportFormat::html, c));
  const auto verdict = text.find("INCONCLUSIVE\n");
  REQUIRE(verdict != std::string::npos);
  CHECK(verdict < text.find("Runs"));
  CHECK(verdict < text.find("Flips by bucket"));
  CHECK_THAT(text, contains("lower bound 0.8251 \u2264 margin 0.950 \u2264 upper bound 1.0008 (tang)"));
  CHECK_THAT(text, contains("To resolve: run about 803 more paired trials (863 in all, same bucket mix)"));
  const auto& t = task_of(c, 0);
  REQUIRE(t.power.additional_trials);
  CHECK(static_cast<long>(*t.power.additional_trials + 0.5) == 803);
}

TEST_CASE("every writer renders the gate's bound from its record, at the task's own margin", "[reports][bound]") {
  // A suite's margin for one task (0.80 here, against the comparison's 0.95): the bound passes it.
  compare::CompareOptions o;
  o.task_margins["gsm8k"] = 0.80;
  const Comparison c = compare::compare_runs({kFix + "gsm8k/base", kFix + "gsm8k/cand"}, o);
  const auto& t = task_of(c, 0);
  REQUIRE(t.bound);
  CHECK(t.bound->side == compare::GateBound::Side::above);
  CHECK(t.bound->margin == 0.80);
  const std::string sentence = "lower bound 0.8251 > margin 0.800";
  CHECK_THAT(text_of_page(render(ReportFormat::html, c)), contains(sentence + " (tang)"));
  CHECK_THAT(compare::format_text(c), contains(sentence + " (tang, one-sided 95.0%)"));
  const json j = json::parse(render(ReportFormat::json, c));
  CHECK(j["pairs"][0]["tasks"][0]["ratio"]["side"] == "above");
  CHECK_THAT(j["pairs"][0]["tasks"][0]["reasons"].back().get<std::string>(), contains(sentence));
  // Failing on the bound: the JUnit failure message and the Markdown list carry the record's numbers.
  const Comparison f = fixture({"niah/bf16", "niah/int4"});
  const auto& ft = task_of(f, 0);
  REQUIRE(ft.bound);
  REQUIRE(ft.bound->side == compare::GateBound::Side::below);
  const std::string below = "upper bound " + compare::fixed(*ft.bound->ucb, 4) + " < margin 0.950";
  const std::string escaped = "upper bound " + compare::fixed(*ft.bound->ucb, 4) + " &lt; margin 0.950";  // both escape "<"
  CHECK_THAT(render(ReportFormat::junit, f), contains(escaped));
  CHECK_THAT(render(ReportFormat::markdown, f), contains(escaped));
  CHECK_THAT(text_of_page(render(ReportFormat::html, f)), contains(below + " (" + ft.bound->method + ")"));
}

TEST_CASE("HTML: accuracy vs length with bands, flip tables with McNemar, NIAH depth x length heatmaps", "[reports][html]") {
  const Comparison c = fixture({"niah/bf16", "niah/fp8", "niah/int4"});
  const std::string html = render(ReportFormat::html, c);
  const json f = check_page(html);
  std::vector<std::string> titles;
  for (const json& s : f["svgs"]) titles.push_back(s["title"]);
  const auto has = [&](const std::string& t) { return std::find(titles.begin(), titles.end(), t) != titles.end(); };
  CHECK(has("niah: fp8 vs bf16, pass rate by context length"));  // small multiples: a panel per candidate
  CHECK(has("niah: int4 vs bf16, pass rate by context length"));
  for (const char* panel : {"bf16", "fp8", "int4", "fp8 \u2212 bf16", "int4 \u2212 bf16"}) CHECK(has(panel));
  for (const json& s : f["svgs"])
    if (s["title"] == "int4") {
      CHECK(s["axes"]["y"]["ticks"] == json({"0%", "25%", "50%", "75%", "100%"}));  // grade.details.depth
      CHECK(s["axes"]["x"]["ticks"] == json({"1k", "2k", "4k", "8k"}));
    }
  const std::string text = text_of_page(html);
  CHECK_THAT(text, contains("Flips by context length: int4 vs bf16"));
  CHECK_THAT(text, contains("McNemar p"));
  CHECK_THAT(text, contains("significant"));  // a Holm-flagged bucket
  CHECK_THAT(html, contains("class=\"band\""));
  CHECK_THAT(text, contains("vllm 0.6.3"));        // run metadata
  CHECK_THAT(text, contains("fp8_e4m3"));
  CHECK_THAT(text, contains("temperature 0"));
  CHECK_THAT(text, contains("tasks sha256"));
  CHECK_THAT(text, contains("2026-11-28T02:41:13Z"));
  CHECK_THAT(text, contains("http://127.0.0.1:8000/v1"));  // the endpoint, as text
  CHECK(kvtest::golden_mismatch("reports/niah.html.txt", kvtest::normalize_build(text)) == "");
}

TEST_CASE("HTML: lost trials with the prompt from the tasks file and both answers", "[reports][html]") {
  const Comparison c = fixture({"niah/bf16", "niah/fp8", "niah/int4"});
  const TrialTexts texts = texts_for(c);
  CHECK(texts.note.empty());
  CHECK(texts.source == kFix + "niah/bf16/../tasks.jsonl");  // the baseline run.json names it, beside the run
  const std::string text = text_of_page(render(ReportFormat::html, c, &texts));
  CHECK_THAT(text, contains("Lost trials: bf16 passed, int4 failed"));
  CHECK_THAT(text, contains("A special magic number is hidden within the following text"));
  CHECK_THAT(text, contains("characters left out"));
  CHECK_THAT(text, contains("What is the special magic number for key-8192-"));  // the tail of the prompt
  CHECK_THAT(text, contains("bf16: passed"));
  CHECK_THAT(text, contains("int4: failed"));
  CHECK_THAT(text, contains("<script>alert(\"pwned\")</script> The number is 17."));  // shown as text
  // The drill-down spreads over lengths, longest first.
  const auto first_trial = text.find("niah/8192/");
  CHECK(first_trial < text.find("niah/1024/", text.find("Lost trials: bf16 passed, int4 failed")));
}

TEST_CASE("HTML: without the tasks file, or with a changed one, the page renders and says why", "[reports][html]") {
  kvtest::TempDir tmp;
  for (const char* run : {"gsm8k/base", "gsm8k/cand"}) {
    fs::create_directories(tmp.file(run));
    for (const char* f : {"/run.json", "/results.jsonl"}) fs::copy(kFix + run + f, tmp.file(run) + f);
  }
  const auto cmp = [&] { return compare::compare_runs({tmp.file("gsm8k/base"), tmp.file("gsm8k/cand")}, {}); };
  Comparison c = cmp();
  TrialTexts texts = texts_for(c);
  CHECK_THAT(texts.note, contains("not found"));
  std::string text = text_of_page(render(ReportFormat::html, c, &texts));
  CHECK_THAT(text, contains("Prompts are not shown: the tasks file named in run.json (tasks_path) is not found from here; pass --tasks FILE."));
  CHECK_THAT(text, contains("She sold"));  // the answers still are

  kvtest::write_text(tmp.file("gsm8k/tasks.jsonl"), kvtest::read_text(kFix + "gsm8k/tasks.jsonl") + "\n");
  texts = texts_for(c);
  CHECK_THAT(texts.note, contains("has changed since"));
  CHECK(texts.texts.empty());

  CHECK_THROWS_WITH(load_trial_texts(c, {.tasks_path = tmp.file("gsm8k/tasks.jsonl")}), contains("differs from the"));
  CHECK_THROWS_WITH(load_trial_texts(c, {.tasks_path = tmp.file("none.jsonl")}), contains("--tasks " + tmp.file("none.jsonl") + ": no such file"));
  const TrialTexts named = load_trial_texts(c, {.tasks_path = kFix + "gsm8k/tasks.jsonl"});
  CHECK(named.note.empty());
  REQUIRE(named.find("gsm8k/0003"));
  CHECK_THAT(named.find("gsm8k/0003")->prompt, contains("user: Natalia sold clips to"));
  CHECK(named.find("gsm8k/0000") == nullptr);  // only the trials a report shows are read
}

TEST_CASE("HTML: per-problem flips of a single-bucket task (GSM8K)", "[reports][html]") {
  const Comparison c = fixture({"gsm8k/base", "gsm8k/cand"});
  const TrialTexts texts = texts_for(c);
  const std::string html = render(ReportFormat::html, c, &texts);
  const json f = check_page(html);
  bool grid = false;
  for (const json& s : f["svgs"]) grid = grid || s["title"] == "gsm8k: per-trial outcome, cand vs base";
  CHECK(grid);
  const std::string text = text_of_page(html);
  CHECK_THAT(text, contains("lost (5)"));
  CHECK_THAT(text, contains("gained (1)"));
  CHECK_THAT(text, contains("gsm8k/0014 | lost | 156 | 156 | 163 |"));  // trial, flip, target, both extracted answers
  CHECK_THAT(text, contains("gsm8k/0005 | gained | 81 | 89 | 81 |"));
  CHECK_THAT(text, contains("error: HTTP 503: upstream <b>overloaded</b>"));
  CHECK(kvtest::golden_mismatch("reports/gsm8k.html.txt", kvtest::normalize_build(text)) == "");
}

TEST_CASE("HTML, Markdown, JUnit: golden structural breaks with the two outputs side by side", "[reports][html]") {
  const Comparison c = fixture({"golden/base", "golden/cand"});  // compare's default task checks: golden's
  const auto& t = task_of(c, 0);
  CHECK(t.verdict == compare::Verdict::fail);
  std::vector<std::string> checks;
  for (const compare::Finding& f : t.findings) checks.push_back(f.check);
  CHECK(checks == std::vector<std::string>{"golden.truncated", "golden.invalid_json", "golden.tool_call_dropped", "golden.similarity"});
  const TrialTexts texts = texts_for(c);
  const std::string html = render(ReportFormat::html, c, &texts);
  check_page(html);
  const std::string text = text_of_page(html);
  CHECK_THAT(text, contains("Structural checks: cand vs base"));
  CHECK_THAT(text, contains("fail golden.truncated\n1 candidate output is truncated (finish_reason \"length\")"));
  CHECK_THAT(text, contains("info golden.similarity\nexact match 62.5% (5 of 8 outputs)"));
  // Side by side: the baseline's full JSON and the candidate's cut one, with finish reasons.
  CHECK_THAT(text, contains("golden/0002\nprompt\nuser: Return the order 2 as JSON with fields id and items.\n"
                            "base: passed (score 1.000), finish stop, 14 tokens\n{\"id\": 2, \"items\": [\"apple\"]}\nstructurally sound\n"
                            "cand: failed (score 0.000), finish length, 14 tokens\n{\"id\": 2, \"i\n"));
  CHECK_THAT(text, contains("Sure! <b>Here</b> is the order"));
  // A dropped tool call: the baseline's call, the candidate's prose.
  CHECK_THAT(text, contains("tool calls\nget_order({\"id\": 6})"));
  CHECK_THAT(text, contains("I cannot look that up right now."));
  CHECK_THAT(html, contains("<div class=\"side\">"));
  CHECK_THAT(text, contains("2 of them are shown above, under the structural checks."));
  const std::string md = render(ReportFormat::markdown, c);
  CHECK_THAT(md, contains("- golden.truncated: 1 candidate output is truncated"));
  CHECK_THAT(md, contains("- info golden.similarity: exact match 62.5%"));
  CHECK_THAT(render(ReportFormat::junit, c), contains("message=\"FAIL: golden.truncated: 1 candidate output is truncated"));
  CHECK(kvtest::golden_mismatch("reports/golden.md", kvtest::normalize_build(md)) == "");
}

TEST_CASE("HTML: hostile labels, task names and answers stay text; invalid UTF-8 keeps the page well-formed", "[reports][html]") {
  const Comparison c = fixture({"hostile/base", "hostile/cand"});
  const TrialTexts texts = texts_for(c);
  const std::string html = render(ReportFormat::html, c, &texts);
  check_page(html);
  const std::string text = text_of_page(html);
  CHECK_THAT(text, contains("bf16 <script>alert('label')</script>"));
  CHECK_THAT(text, contains("niah<img src=x onerror=alert(\"task\")>"));
  CHECK_THAT(text, contains("\u27e8U+202E\u27e9evil reversed text"));
  CHECK_THAT(text, contains("\u27e8U+001B\u27e9[31mred"));
  CHECK_THAT(html, contains("href=\"#task-niah-img-src-x-onerror-alert-task--0\""));

  // In memory (a results file cannot hold invalid UTF-8): cut multi-byte characters, NUL, bidi.
  auto make = [](const std::string& label, bool bad) {
    auto run = std::make_shared<RunDir>();
    run->path = "/mem/" + label;
    run->manifest.label = label;
    for (int i = 0; i < 30; ++i) {
      ResultRecord r;
      r.id = "t/" + std::to_string(i);
      r.task = "t";
      r.passed = !(bad && i % 4 == 0);
      r.score = r.passed ? 1.0 : 0.0;
      r.response = r.passed ? "ok" : std::string("cut \xe2\x82 nul \0 end \xff\xfe </pre><script>x()</script>", 47);
      run->results.records.push_back(r);
    }
    return std::shared_ptr<const RunDir>(run);
  };
  const Comparison m = compare::compare_loaded({make("a", false), make("b", true)}, {});
  const std::string page = render(ReportFormat::html, m);
  check_page(page);
  CHECK_THAT(text_of_page(page), contains("cut \ufffd\ufffd nul \u27e8U+0000\u27e9 end \ufffd\ufffd </pre><script>x()</script>"));
  CHECK_NOTHROW(facts_of(render(ReportFormat::junit, m), "xml"));
}

TEST_CASE("depth_grid: a row per fixed depth, tenths for random depths, errors score 0", "[reports]") {
  auto run_with = [](const std::vector<std::pair<double, bool>>& cells, std::int64_t bucket, bool error_last) {
    RunDir r;
    int i = 0;
    for (const auto& [depth, passed] : cells) {
      ResultRecord rec;
      rec.id = "n/" + std::to_string(i++);
      rec.task = "niah";
      rec.bucket = bucket;
      rec.score = passed ? 1.0 : 0.0;
      rec.passed = passed;
      rec.grade = {{"details", {{"depth", depth}}}};
      rec.error = error_last && i == static_cast<int>(cells.size()) ? std::optional<std::string>("timeout") : std::nullopt;
      r.results.records.push_back(rec);
    }
    return r;
  };
  const RunDir fixed = run_with({{0, true}, {50, false}, {50, true}, {100, true}}, 4096, true);
  const DepthGrid g = depth_grid({&fixed}, "niah");
  CHECK(g.row_labels == std::vector<std::string>{"0%", "50%", "100%"});
  CHECK(g.buckets == std::vector<std::int64_t>{4096});
  REQUIRE(g.runs.size() == 1);
  CHECK(*g.runs[0].mean[0] == 1.0);
  CHECK(*g.runs[0].mean[1] == 0.5);
  CHECK(*g.runs[0].mean[2] == 0.0);  // passed, but the result has an error
  CHECK(g.runs[0].results[1] == 2);

  std::vector<std::pair<double, bool>> random;
  for (int i = 0; i < 40; ++i) random.push_back({i * 2.5 + 0.1, i % 2 == 0});
  const RunDir r = run_with(random, 8192, false);
  const DepthGrid b = depth_grid({&r}, "niah");
  REQUIRE(b.row_labels.size() == 10);
  CHECK(b.row_labels[0] == "0\u201310%");
  CHECK(b.runs[0].results[0] == 4);
  CHECK(*b.runs[0].mean[9] == 0.5);
  CHECK(depth_grid({&r}, "gsm8k").empty());
}

TEST_CASE("kvgate report with one run: rates with Wilson intervals per task and length; a labelled page", "[reports][html]") {
  const auto run = std::make_shared<const RunDir>(load_run_dir(kFix + "niah/int4"));
  const RunSummary s = summarize_run(run, 0.05);
  REQUIRE(s.tasks.size() == 1);
  const RunTaskSummary& t = s.tasks[0];
  CHECK(t.task == "niah");
  CHECK(t.all.results == 80);
  REQUIRE(t.buckets.size() == 4);
  std::size_t passes = 0;
  for (const RunRates& b : t.buckets) {
    CHECK(b.results == 20);
    passes += b.passes;
    const stats::Interval w = stats::wilson(static_cast<std::int64_t>(b.passes), 20, 0.05);
    CHECK(b.wilson.lo == kvtest::Approx(w.lo));
    CHECK(b.wilson.hi == kvtest::Approx(w.hi));
    CHECK(b.score_mean == kvtest::Approx(b.passes / 20.0));
  }
  CHECK(t.all.passes == passes);
  REQUIRE(t.auc);
  const std::string html = render_run_html(*run, s, {.generated_at = kWhen}, 0.05);
  const json f = check_page(html);
  CHECK(f["svgs"].size() == 2);  // rates by length, the depth x length heatmap
  const std::string text = text_of_page(html);
  CHECK_THAT(text, contains("kvgate: run int4"));
  CHECK_THAT(text, contains("80 results over 1 task; 0 errors"));
  CHECK_THAT(text, contains("No verdict"));
}

TEST_CASE("the places compare fills: pinning differences and gains beside losses, at the top of every format", "[reports][html]") {
  const Comparison c = fixture({"niah/bf16", "niah/fp8", "niah/int4"});
  const ReportContext ctx{.generated_at = kWhen,
                          .pinning_differences = {"attention backend differs: bf16 FLASH_ATTN, fp8 TRITON_ATTN"},
                          .gains = {{.candidate = "fp8", .what = "KV capacity", .factor = 1.94, .detail = "engine logs"},
                                    {.candidate = "int4", .what = "KV capacity", .factor = 3.5, .detail = "estimate (kvgate capacity)"},
                                    {.what = "inter-token latency p50", .factor = 1.12, .lo = 1.08, .hi = 1.15, .detail = "80 paired trials"}}};
  REQUIRE(pinning_differences(c, ctx) == std::vector<std::string>{"attention backend differs: bf16 FLASH_ATTN, fp8 TRITON_ATTN"});
  const auto trade = tradeoffs(c, ctx);
  REQUIRE(trade.size() == 2);  // the gating candidates; the candidate pair is not gated
  CHECK(trade[0].label == "fp8");
  // Its own and the one naming no candidate, then what compare measured: end-to-end latency and
  // output tokens/s (the fixtures carry latency_ms and completion_tokens, no streaming, no engine log).
  REQUIRE(trade[0].gains.size() == 4);
  CHECK(trade[1].gains[0].factor == 3.5);
  CHECK(gain_text(trade[0].gains[1]) == "\u00d71.12 [1.08, 1.15]");
  CHECK(trade[0].gains[2].what == "end-to-end latency");
  CHECK(trade[0].gains[3].what == "output tokens/s");

  const std::string html = make_report_writer(ReportFormat::html)->render(c, ctx);
  check_page(html);
  const std::string text = text_of_page(html);
  const auto top = text.find("attention backend differs");
  const auto gains = text.find("What the candidate gains, what it loses");
  REQUIRE(top != std::string::npos);
  REQUIRE(gains != std::string::npos);
  CHECK(text.find("FAIL\n") < top);  // under the verdict
  CHECK(top < gains);
  CHECK(gains < text.find("\nRuns\n"));  // before any detail
  CHECK_THAT(text, contains("fp8 | gains: KV capacity | \u00d71.94 | \u2013 | engine logs"));
  CHECK_THAT(text, contains("fp8 | gains: inter-token latency p50 | \u00d71.12 | [1.08, 1.15] | 80 paired trials"));
  CHECK_THAT(text, contains("int4 | loses: niah accuracy (AUC over lengths) | \u00d70.684 | [0.582, 0.777] | FAIL margin 0.950"));
  CHECK_THAT(html, contains("href=\"#tradeoff\""));

  const std::string md = make_report_writer(ReportFormat::markdown)->render(c, ctx);
  CHECK_THAT(md, contains("- \u26a0 attention backend differs"));
  CHECK_THAT(md, contains("- **fp8** gains KV capacity \u00d71.94 (engine logs), inter-token latency p50 \u00d71.12 [1.08, 1.15] (80 paired trials), "
                          "end-to-end latency \u00d7"));  // then what compare measured
  CHECK_THAT(md, contains("; loses niah \u00d70.951 (lower 0.892)"));
  CHECK(md.find("attention backend") < md.find("#### niah"));

  const std::string xml = make_report_writer(ReportFormat::junit)->render(c, ctx);
  const json f = facts_of(xml, "xml");
  CHECK(f["tag_counts"]["testsuite"] == 2);
  CHECK_THAT(xml, contains("<property name=\"pinning_difference\" value=\"attention backend differs: bf16 FLASH_ATTN, fp8 TRITON_ATTN\"/>"));
  CHECK_THAT(xml, contains("<property name=\"gain: KV capacity\" value=\"\u00d73.50\"/>"));

  // Without them, what compare measured still shows (latencies from the results); no pinning
  // difference among these runs, so no callout; the differences compare finds show below.
  const std::string plain = text_of_page(render(ReportFormat::html, c));
  CHECK_THAT(plain, contains("fp8 | gains: end-to-end latency"));
  CHECK_THAT(plain, !contains("gains: KV capacity"));
  CHECK_THAT(plain, !contains("Check these differences"));
  kvtest::TempDir tmp;  // a candidate on another model: hostile labels, a model name with markup
  for (const char* run : {"hostile/base", "hostile/cand"}) {
    fs::create_directories(tmp.file(run));
    for (const char* f : {"/run.json", "/results.jsonl"}) fs::copy(kFix + run + f, tmp.file(run) + f);
  }
  json manifest = json::parse(kvtest::read_text(tmp.file("hostile/cand/run.json")));
  manifest["model"] = "Qwen/Qwen3-4B <b>";
  kvtest::write_text(tmp.file("hostile/cand/run.json"), manifest.dump());
  const Comparison other = compare::compare_runs({tmp.file("hostile/base"), tmp.file("hostile/cand")}, {});
  const std::vector<std::string> found = pinning_differences(other, {});
  REQUIRE(found.size() == 1);
  CHECK_THAT(found[0], contains("model differs: bf16 <script>alert('label')</script> has"));
  CHECK_THAT(found[0], contains("has \u201cQwen/Qwen3-4B <b>\u201d"));
  const std::string page = render(ReportFormat::html, other);
  check_page(page);
  const std::string other_text = text_of_page(page);
  CHECK(other_text.find("model differs") < other_text.find("\nRuns\n"));
  CHECK_THAT(render(ReportFormat::markdown, other), contains("- \u26a0 model differs"));
  CHECK_THAT(render(ReportFormat::junit, other), contains("name=\"pinning_difference\" value=\"model differs"));
}

TEST_CASE("write_reports: every named file, whole; kvgate gate's directory layout", "[reports]") {
  const Comparison c = fixture({"gsm8k/base", "gsm8k/cand"});
  kvtest::TempDir tmp;
  const ReportFiles files = ReportFiles::in_directory(tmp.path());
  CHECK(files.html == (fs::path(tmp.path()) / "report.html").string());
  CHECK(files.markdown == (fs::path(tmp.path()) / "report.md").string());
  CHECK(files.json == (fs::path(tmp.path()) / "compare.json").string());
  CHECK(files.junit == (fs::path(tmp.path()) / "junit.xml").string());
  check_output_paths(files);
  write_reports(files, c, {.generated_at = kWhen});
  CHECK(kvtest::read_text(files.html) == render(ReportFormat::html, c));
  CHECK(kvtest::read_text(files.markdown) == render(ReportFormat::markdown, c));
  CHECK(json::parse(kvtest::read_text(files.json)) == compare::to_json(c));
  CHECK(kvtest::read_text(files.junit) == render(ReportFormat::junit, c));
  // Only the named ones; a missing directory is refused before anything is written.
  write_reports({.markdown = tmp.file("only.md")}, c, {.generated_at = kWhen});
  CHECK(fs::exists(tmp.file("only.md")));
  CHECK_THROWS_WITH(check_output_paths({.json = tmp.file("ok.json"), .junit = tmp.file("missing/junit.xml")}),
                    contains("--junit " + tmp.file("missing/junit.xml") + ": the directory"));
}

TEST_CASE("trial texts: the ids a report shows; chat and completion inputs as text", "[reports]") {
  const Comparison c = fixture({"gsm8k/base", "gsm8k/cand"});
  const std::set<std::string> ids = report_trial_ids(c);
  CHECK(ids.size() == 6);  // 5 lost, 1 gained
  CHECK(ids.count("gsm8k/0005") == 1);
  CHECK(render_input({{"messages", {{{"role", "system"}, {"content", "be brief"}},
                                    {{"role", "user"}, {"content", {{{"type", "text"}, {"text", "hi"}}}}}}}}) ==
        "system: be brief\n\nuser: hi");
  CHECK(render_input({{"prompt", "complete this"}}) == "complete this");
}
