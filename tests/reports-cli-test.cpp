// The report commands end to end: `kvgate compare --json/--markdown/--html/--junit`, `kvgate report`
// (one run, several runs), `kvgate history add|report`; bad input exits 2 and writes nothing.
#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "tests/catch_compat.hpp"
#include "tests/report_checks.h"
#include "tests/test_util.h"

using kvtest::contains;
using kvtest::run_kvgate;
using nlohmann::json;
namespace fs = std::filesystem;

namespace {

const std::string kFix = "tests/fixtures/reports/";

// Files in a directory, for "nothing else was left behind" (temporaries of atomic writes).
std::vector<std::string> files_in(const std::string& dir) {
  std::vector<std::string> out;
  for (const auto& e : fs::directory_iterator(dir)) out.push_back(e.path().filename().string());
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace

TEST_CASE("compare e2e: every report format from one decision, the exit code still the verdict's", "[reports][e2e]") {
  kvtest::TempDir tmp;
  const auto r = run_kvgate({"compare", kFix + "niah/bf16", kFix + "niah/fp8", kFix + "niah/int4", "--json", tmp.file("c.json"),
                             "--markdown", tmp.file("c.md"), "--html", tmp.file("c.html"), "--junit", tmp.file("c.xml")});
  CHECK(r.exit_code == 1);  // int4 FAILs
  CHECK_THAT(r.out, contains("verdict: FAIL"));
  CHECK(files_in(tmp.path()) == std::vector<std::string>{"c.html", "c.json", "c.md", "c.xml"});
  const json j = json::parse(kvtest::read_text(tmp.file("c.json")));
  CHECK(j["verdict"] == "FAIL");
  CHECK_THAT(kvtest::read_text(tmp.file("c.md")), contains("### kvgate: **FAIL**"));
  const std::string html = kvtest::read_text(tmp.file("c.html"));
  const json f = kvtest::check_page(html);
  CHECK(f["svgs"].size() == 8);  // forest, accuracy by length (a panel per candidate), 3 run heatmaps, 2 difference heatmaps
  const std::string text = kvtest::visible_text(html);
  CHECK_THAT(text, contains("A special magic number is hidden"));  // prompts from run.json's tasks_path
  CHECK_THAT(text, contains("command: kvgate compare " + kFix + "niah/bf16"));
  CHECK(kvtest::facts_of(kvtest::read_text(tmp.file("c.xml")), "xml")["root"] == "testsuites");
}

TEST_CASE("compare e2e: --tasks names the tasks file; a wrong one is refused before any file is written", "[reports][e2e]") {
  kvtest::TempDir tmp;
  auto r = run_kvgate({"compare", kFix + "gsm8k/base", kFix + "gsm8k/cand", "--html", tmp.file("a.html"), "--tasks",
                       kFix + "gsm8k/tasks.jsonl"});
  CHECK(r.exit_code == 3);
  CHECK_THAT(kvtest::read_text(tmp.file("a.html")), contains("Natalia sold clips"));
  r = run_kvgate({"compare", kFix + "gsm8k/base", kFix + "gsm8k/cand", "--json", tmp.file("b.json"), "--html", tmp.file("b.html"),
                  "--tasks", kFix + "niah/tasks.jsonl"});
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.err, contains("--tasks " + kFix + "niah/tasks.jsonl: sha256"));
  CHECK_THAT(r.err, contains("name the tasks file that run was made from"));
  CHECK_FALSE(fs::exists(tmp.file("b.json")));
  CHECK_FALSE(fs::exists(tmp.file("b.html")));
  r = run_kvgate({"compare", kFix + "gsm8k/base", kFix + "gsm8k/cand", "--markdown", tmp.path()});
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.err, contains("not a file name"));
}

TEST_CASE("report e2e: one run shows its rates; several runs the comparison; exit 0 either way", "[reports][e2e]") {
  kvtest::TempDir tmp;
  auto r = run_kvgate({"report", kFix + "niah/int4", "--html", tmp.file("one.html")});
  REQUIRE(r.exit_code == 0);
  CHECK_THAT(r.out, contains("wrote " + tmp.file("one.html")));
  std::string html = kvtest::read_text(tmp.file("one.html"));
  kvtest::check_page(html);
  CHECK_THAT(kvtest::visible_text(html), contains("kvgate: run int4"));
  CHECK_THAT(kvtest::visible_text(html), contains("niah | 80 | 80 |"));

  r = run_kvgate({"report", kFix + "niah/bf16", kFix + "niah/int4", "--html", tmp.file("two.html")});
  CHECK(r.exit_code == 0);
  CHECK_THAT(r.out, contains("(FAIL)"));
  html = kvtest::read_text(tmp.file("two.html"));
  kvtest::check_page(html);
  CHECK_THAT(kvtest::visible_text(html), contains("int4 fails against bf16"));

  r = run_kvgate({"report", tmp.file("missing"), "--html", tmp.file("x.html")});
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.err, contains(tmp.file("missing")));
  CHECK_FALSE(fs::exists(tmp.file("x.html")));
}

TEST_CASE("history e2e: add nights, skip a repeated add, draw the history", "[reports][e2e]") {
  kvtest::TempDir tmp;
  const std::string db = tmp.file("history.jsonl");
  const std::vector<std::pair<std::string, std::string>> nights = {{"2026-11-01", "fp8"}, {"2026-11-02", "fp8"}, {"2026-11-03", "int4"}};
  for (const auto& [date, cand] : nights) {
    const std::string out = tmp.file(date + ".json");
    REQUIRE(run_kvgate({"compare", kFix + "niah/bf16", kFix + "niah/" + cand, "--json", out, "--seed", date.substr(8)}).exit_code != 2);
    const auto r = run_kvgate({"history", "add", out, "--db", db, "--date", date});
    CHECK(r.exit_code == 0);
    CHECK_THAT(r.out, contains("1 row added"));
  }
  auto r = run_kvgate({"history", "add", tmp.file("2026-11-01.json"), "--db", db});
  CHECK(r.exit_code == 0);
  CHECK_THAT(r.out, contains("0 rows added"));
  CHECK_THAT(r.out, contains("1 already there"));
  CHECK(kvtest::read_text(db).size() > 0);

  r = run_kvgate({"history", "report", "--db", db, "--html", tmp.file("h.html")});
  REQUIRE(r.exit_code == 0);
  const std::string html = kvtest::read_text(tmp.file("h.html"));
  const json f = kvtest::check_page(html);
  CHECK(f["svgs"].size() == 4);  // two series (KV fp8_e4m3, int4), metric and ratio each
  CHECK_THAT(kvtest::visible_text(html), contains("Qwen/Qwen3-8B \u00b7 KV int4 vs bf16"));

  // Bad input: not a compare JSON, a missing history, a bad date.
  kvtest::write_text(tmp.file("other.json"), "{\"schema\": \"something-else\"}");
  r = run_kvgate({"history", "add", tmp.file("other.json"), "--db", db});
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.err, contains("kvgate compare --json F"));
  r = run_kvgate({"history", "report", "--db", tmp.file("none.jsonl"), "--html", tmp.file("n.html")});
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.err, contains(tmp.file("none.jsonl")));
  CHECK_FALSE(fs::exists(tmp.file("n.html")));
  r = run_kvgate({"history", "add", tmp.file("2026-11-01.json"), "--db", db, "--date", "11/01"});
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.err, contains("--date 11/01: not a date"));
}
