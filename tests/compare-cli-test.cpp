// `kvgate compare` and `kvgate stats` end to end on the fixture run directories
// (tests/fixtures/compare/, made by make_fixtures.py): verdicts, exit codes, the JSON file, and bad
// input (a clear message, exit 2, never a crash, NaN or PASS).
#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "tests/catch_compat.hpp"
#include "tests/test_util.h"

using kvtest::Approx;
using kvtest::contains;
using kvtest::run_kvgate;
using nlohmann::json;
namespace fs = std::filesystem;

namespace {

const std::string kFix = "tests/fixtures/compare/";

// A copy of a fixture run directory that a test may break.
std::string copy_run(const kvtest::TempDir& tmp, const std::string& fixture, const std::string& name) {
  const std::string dst = tmp.file(name);
  fs::create_directories(dst);
  fs::copy(kFix + fixture + "/run.json", dst + "/run.json");
  fs::copy(kFix + fixture + "/results.jsonl", dst + "/results.jsonl");
  return dst;
}

// Keeps the lines of results.jsonl for which keep(line) is true; transform may rewrite a line.
template <class Keep>
void filter_results(const std::string& dir, Keep keep) {
  const std::string text = kvtest::read_text(dir + "/results.jsonl");
  std::string out, line;
  for (char ch : text) {
    if (ch != '\n') {
      line += ch;
      continue;
    }
    std::string l = line;
    if (keep(l)) out += l + "\n";
    line.clear();
  }
  kvtest::write_text(dir + "/results.jsonl", out);
}

void check_bad_input(const kvtest::CommandResult& r, const std::string& message) {
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.err, contains(message));
  CHECK_THAT(r.out, !contains("PASS"));
  CHECK_THAT(r.err, !contains("internal error"));
}

}  // namespace

TEST_CASE("compare e2e: the LLM example PASSes with Tang's bound, the JSON holds every number", "[compare][e2e]") {
  kvtest::TempDir tmp;
  const std::string out = tmp.file("c.json");
  auto r = run_kvgate({"compare", kFix + "llm/base", kFix + "llm/cand", "--json", out});
  CHECK(r.exit_code == 0);
  CHECK_THAT(r.out, contains("gsm8k: PASS"));
  CHECK_THAT(r.out, contains("point estimate >= 0.95"));
  CHECK_THAT(r.out, contains("verdict: PASS"));
  const json j = json::parse(kvtest::read_text(out));
  CHECK(j["verdict"] == "PASS");
  const json& t = j["pairs"][0]["tasks"][0];
  CHECK(t["ratio"]["method"] == "tang");
  CHECK(t["ratio"]["lcb"].get<double>() == Approx(0.95859251981726887).epsilon(1e-9));  // stats.md 0.958593
  CHECK(t["flips"]["mcnemar"]["exact"].get<double>() == Approx(0.01348929373119186).epsilon(1e-9));
  CHECK(t["flips"]["lost"] == 40);
  CHECK(t["flips"]["lost_results"].size() == 40);
  CHECK(t["accounting"]["paired_results"] == 1000);
  CHECK(r.out.find("nan") == std::string::npos);
}

TEST_CASE("compare e2e: small n is INCONCLUSIVE (exit 3) with the trials that would decide it", "[compare][e2e]") {
  auto r = run_kvgate({"compare", kFix + "small/base", kFix + "small/cand"});
  CHECK(r.exit_code == 3);
  CHECK_THAT(r.out, contains("INCONCLUSIVE"));
  CHECK_THAT(r.out, contains("0.934"));  // Tang LCB 0.934347
  CHECK_THAT(r.out, contains("more paired trials"));
}

TEST_CASE("compare e2e: PASS, FAIL, and several candidates", "[compare][e2e]") {
  CHECK(run_kvgate({"compare", kFix + "gsm8k/base", kFix + "gsm8k/good"}).exit_code == 0);
  auto bad = run_kvgate({"compare", kFix + "gsm8k/base", kFix + "gsm8k/bad"});
  CHECK(bad.exit_code == 1);
  CHECK_THAT(bad.out, contains("upper bound"));
  kvtest::TempDir tmp;
  auto both = run_kvgate({"compare", kFix + "gsm8k/base", kFix + "gsm8k/good", kFix + "gsm8k/bad", "--json", tmp.file("j")});
  CHECK(both.exit_code == 1);
  CHECK_THAT(both.out, contains("int4 vs fp8 (candidates compared, not gated)"));
  const json j = json::parse(kvtest::read_text(tmp.file("j")));
  REQUIRE(j["pairs"].size() == 3);
  CHECK(j["pairs"][0]["verdict"] == "PASS");
  CHECK(j["pairs"][1]["verdict"] == "FAIL");
  CHECK(j["pairs"][2]["gating"] == false);
}

TEST_CASE("compare e2e: NIAH length buckets gate on the AUC; the axis is an option", "[compare][e2e]") {
  kvtest::TempDir tmp;
  auto r = run_kvgate({"compare", kFix + "niah/bf16", kFix + "niah/fp8", kFix + "niah/int4", "--json", tmp.file("lin")});
  CHECK(r.exit_code == 1);
  CHECK_THAT(r.out, contains("niah  AUC"));
  CHECK_THAT(r.out, contains("significant regression (Holm over all buckets of the pair) in buckets 8k 16k 32k"));
  const json lin = json::parse(kvtest::read_text(tmp.file("lin")));
  const json& fp8 = lin["pairs"][0]["tasks"][0];
  CHECK(fp8["metric"] == "auc");
  CHECK(fp8["ratio"]["method"] == "stratified_score");
  CHECK(fp8["verdict"] == "PASS");
  CHECK(fp8["auc"]["axis"] == "linear");
  CHECK(fp8["buckets"].size() == 4);
  CHECK(lin["pairs"][1]["tasks"][0]["verdict"] == "FAIL");
  // 4k..32k: weights [2, 6, 12, 8] / 28 on the linear axis.
  CHECK(fp8["auc"]["weights"][2].get<double>() == Approx(12.0 / 28));
  REQUIRE(run_kvgate({"compare", kFix + "niah/bf16", kFix + "niah/fp8", "--auc-axis", "log2", "--json", tmp.file("log")}).exit_code == 0);
  const json log = json::parse(kvtest::read_text(tmp.file("log")));
  CHECK(log["pairs"][0]["tasks"][0]["auc"]["axis"] == "log2");
  CHECK(log["pairs"][0]["tasks"][0]["auc"]["weights"][0].get<double>() == Approx(1.0 / 6));
}

TEST_CASE("compare e2e: MRCR fractional scores with repeats and clusters use the stratified score bound", "[compare][e2e]") {
  kvtest::TempDir tmp;
  auto r = run_kvgate({"compare", kFix + "mrcr/base", kFix + "mrcr/cand", "--json", tmp.file("j"), "--json-trials"});
  CHECK(r.exit_code == 3);
  const json t = json::parse(kvtest::read_text(tmp.file("j")))["pairs"][0]["tasks"][0];
  CHECK(t["binary"] == false);
  CHECK(t["max_repeats"] == 3);
  CHECK(t["cluster_field"] == true);
  CHECK(t["clusters"] == 30);
  CHECK(t["ratio"]["method"] == "stratified_score");
  CHECK(t["trial_pairs"].size() == 60);
  REQUIRE(t["cross_checks"].size() == 3);  // fieller, wald_log, bootstrap
  CHECK(t["cross_checks"][0]["method"] == "fieller");
}

TEST_CASE("compare e2e: errors above --max-error-rate FAIL with the reason", "[compare][e2e]") {
  kvtest::TempDir tmp;
  const std::string base = copy_run(tmp, "gsm8k/base", "base"), cand = copy_run(tmp, "gsm8k/good", "cand");
  int n = 0;
  filter_results(cand, [&](std::string& line) {
    if (n++ < 12) {  // 12 of 400 = 3% errors
      const auto at = line.find("\"error\":null");
      line.replace(at, 12, "\"error\":\"HTTP 503 after 5 retries\"");
    }
    return true;
  });
  auto r = run_kvgate({"compare", base, cand});
  CHECK(r.exit_code == 1);
  CHECK_THAT(r.out, contains("error rate 3.0% (12 of 400 results)"));
  // Allowed errors still count as failures unless left out.
  CHECK(run_kvgate({"compare", base, cand, "--max-error-rate", "0.05"}).exit_code == 3);
  CHECK(run_kvgate({"compare", base, cand, "--max-error-rate", "0.05", "--errors", "exclude"}).exit_code == 0);
}

TEST_CASE("compare e2e: missing and duplicated results are reported as warnings", "[compare][e2e]") {
  kvtest::TempDir tmp;
  const std::string base = copy_run(tmp, "gsm8k/base", "base"), cand = copy_run(tmp, "gsm8k/good", "cand");
  int n = 0;
  filter_results(cand, [&](std::string&) { return n++ % 50 != 10; });  // drop 8 candidate results
  const std::string lines = kvtest::read_text(base + "/results.jsonl");
  kvtest::write_text(base + "/results.jsonl", lines + lines.substr(0, lines.find('\n') + 1));  // line 1 twice
  auto r = run_kvgate({"compare", base, cand, "--json", tmp.file("j")});
  CHECK(r.exit_code == 0);
  CHECK_THAT(r.out, contains("warning: fp8 vs bf16, task gsm8k: 8 results of bf16 have no counterpart in fp8"));
  CHECK_THAT(r.out, contains("repeat an earlier line"));
  const json a = json::parse(kvtest::read_text(tmp.file("j")))["pairs"][0]["tasks"][0]["accounting"];
  CHECK(a["missing_in_candidate"].size() == 8);
  CHECK(a["duplicates_reference"].size() == 1);
  CHECK(a["paired_results"] == 392);
}

TEST_CASE("compare e2e: bad input exits 2 with a clear message and writes no JSON", "[compare][e2e]") {
  kvtest::TempDir tmp;
  const std::string json_out = tmp.file("never.json");
  SECTION("a directory that does not exist") {
    check_bad_input(run_kvgate({"compare", kFix + "gsm8k/base", tmp.file("nope"), "--json", json_out}), "not a run directory");
  }
  SECTION("results.jsonl missing") {
    const std::string cand = copy_run(tmp, "gsm8k/good", "cand");
    fs::remove(cand + "/results.jsonl");
    check_bad_input(run_kvgate({"compare", kFix + "gsm8k/base", cand, "--json", json_out}), "results.jsonl missing");
  }
  SECTION("run.json missing") {
    const std::string cand = copy_run(tmp, "gsm8k/good", "cand");
    fs::remove(cand + "/run.json");
    check_bad_input(run_kvgate({"compare", kFix + "gsm8k/base", cand, "--json", json_out}), "run.json missing");
  }
  SECTION("a malformed results line") {
    const std::string cand = copy_run(tmp, "gsm8k/good", "cand");
    filter_results(cand, [n = 0](std::string& line) mutable {
      if (n++ == 3) line = "{\"id\":\"gsm8k/0003\",\"task\":\"gsm8k\",\"bucket\":0,\"repeat\":0,\"score\":7,\"passed\":true,\"error\":null}";
      return true;
    });
    check_bad_input(run_kvgate({"compare", kFix + "gsm8k/base", cand, "--json", json_out}), "results.jsonl:4: field \"score\"");
  }
  SECTION("mismatched task sets") {
    check_bad_input(run_kvgate({"compare", kFix + "gsm8k/base", kFix + "niah/fp8", "--json", json_out}),
                    "the runs hold different tasks");
  }
  SECTION("zero baseline passes") {
    const std::string base = copy_run(tmp, "gsm8k/base", "base");
    filter_results(base, [](std::string& line) {
      if (const auto at = line.find("\"score\":1.0"); at != std::string::npos) line.replace(at, 11, "\"score\":0.0");
      if (const auto at = line.find("\"passed\":true"); at != std::string::npos) line.replace(at, 13, "\"passed\":false");
      return true;
    });
    check_bad_input(run_kvgate({"compare", base, kFix + "gsm8k/good", "--json", json_out}), "never scores");
  }
  SECTION("an empty bucket") {
    const std::string cand = copy_run(tmp, "niah/fp8", "cand");
    filter_results(cand, [](std::string& line) { return line.find("\"bucket\":32768") == std::string::npos; });
    check_bad_input(run_kvgate({"compare", kFix + "niah/bf16", cand, "--json", json_out}),
                    "task niah bucket 32768 is empty after pairing: 100 results only in");
  }
  SECTION("only one run") {
    check_bad_input(run_kvgate({"compare", kFix + "gsm8k/base", "--json", json_out}), "at least one candidate");
  }
  SECTION("an empty results file") {
    const std::string cand = copy_run(tmp, "gsm8k/good", "cand");
    kvtest::write_text(cand + "/results.jsonl", "");
    check_bad_input(run_kvgate({"compare", kFix + "gsm8k/base", cand, "--json", json_out}), "no results");
  }
  SECTION("usage") {
    CHECK(run_kvgate({"compare", kFix + "gsm8k/base", kFix + "gsm8k/good", "--alpha", "0.9"}).exit_code == 2);
    CHECK(run_kvgate({"compare", kFix + "gsm8k/base", kFix + "gsm8k/good", "--errors", "ignore"}).exit_code == 2);
  }
  CHECK_FALSE(fs::exists(json_out));
}

TEST_CASE("compare e2e: --markdown, --html, --junit write their files beside --json", "[compare][e2e]") {
  kvtest::TempDir tmp;
  auto r = run_kvgate({"compare", kFix + "gsm8k/base", kFix + "gsm8k/good", "--json", tmp.file("c.json"), "--markdown",
                       tmp.file("c.md"), "--html", tmp.file("c.html"), "--junit", tmp.file("c.xml")});
  CHECK(r.exit_code == 0);
  for (const char* f : {"c.json", "c.md", "c.html", "c.xml"}) CHECK(fs::exists(tmp.file(f)));
  CHECK_THAT(kvtest::read_text(tmp.file("c.md")), contains("### kvgate: **PASS**"));
  // An output that cannot be written is refused before any work: no file at all.
  r = run_kvgate({"compare", kFix + "gsm8k/base", kFix + "gsm8k/good", "--json", tmp.file("d.json"), "--html", tmp.file("no/d.html")});
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.err, contains("--html " + tmp.file("no/d.html") + ": the directory"));
  CHECK_FALSE(fs::exists(tmp.file("d.json")));
}

TEST_CASE("stats mcnemar prints exact, midp, chi2, chi2_cc as JSON", "[stats][e2e]") {
  auto r = run_kvgate({"stats", "mcnemar", "10", "1"});
  REQUIRE(r.exit_code == 0);
  const json j = json::parse(r.out);
  CHECK(j["b"] == 10);
  CHECK(j["c"] == 1);
  CHECK(j["exact"].get<double>() == Approx(0.01171875).epsilon(1e-12));
  CHECK(j["midp"].get<double>() == Approx(0.00634765625).epsilon(1e-12));
  CHECK(j["chi2"].get<double>() == Approx(7.3636363636363636).epsilon(1e-12));
  CHECK(j["chi2_p"].get<double>() == Approx(0.0066556054829493843).epsilon(1e-9));
  CHECK(j["chi2_cc"].get<double>() == Approx(5.8181818181818182).epsilon(1e-12));
  CHECK(j["chi2_cc_p"].get<double>() == Approx(0.01586133273977302).epsilon(1e-9));
  CHECK(j["one_sided_exact"].get<double>() == Approx(0.005859375).epsilon(1e-12));
  const json none = json::parse(run_kvgate({"stats", "mcnemar", "0", "0"}).out);
  CHECK(none["exact"] == 1.0);
  CHECK(run_kvgate({"stats", "mcnemar", "-1", "3"}).exit_code == 2);
  CHECK(run_kvgate({"stats", "mcnemar", "x", "3"}).exit_code == 2);
}

TEST_CASE("compare e2e: no paired difference at 4K/8K is INCONCLUSIVE with the score bound, in every report",
          "[compare][e2e][floor]") {
  // The demo model's case: 20 trials at 4K and 4 at 8K, all passing with bf16 and fp8. On the
  // observed variance alone: AUC ratio 1.000 [1.000], PASS; the score bound says 0.798 (the 4-trial
  // bucket can hide a loss) and 147 trials without a loss would pass; Fieller's floor said 0.831.
  kvtest::TempDir tmp;
  for (const char* label : {"bf16", "fp8"}) {
    fs::create_directories(tmp.file(label));
    kvtest::write_text(tmp.file(std::string(label) + "/run.json"), std::string("{\"label\":\"") + label + "\"}\n");
    std::string lines;
    for (int bucket : {4096, 8192})
      for (int i = 0; i < (bucket == 4096 ? 20 : 4); ++i)
        lines += "{\"id\":\"m/" + std::to_string(bucket) + "/" + std::to_string(i) + "\",\"task\":\"multicode\",\"bucket\":" +
                 std::to_string(bucket) + ",\"repeat\":0,\"score\":1.0,\"passed\":true,\"error\":null}\n";
    kvtest::write_text(tmp.file(std::string(label) + "/results.jsonl"), lines);
  }
  auto r = run_kvgate({"compare", tmp.file("bf16"), tmp.file("fp8"), "--json", tmp.file("c.json"), "--markdown", tmp.file("c.md"),
                       "--html", tmp.file("c.html"), "--junit", tmp.file("c.xml")});
  CHECK(r.exit_code == 3);
  CHECK_THAT(r.out, contains("INCONCLUSIVE"));
  CHECK_THAT(r.out, contains("0.798"));
  CHECK_THAT(r.out, contains("about 123 more paired trials (147 in all"));
  const json t = json::parse(kvtest::read_text(tmp.file("c.json")))["pairs"][0]["tasks"][0];
  // The gate's bound (compare-test derives 0.798261 in closed form); Fieller's floor beside it.
  CHECK(t["ratio"]["method"] == "stratified_score");
  CHECK(t["ratio"]["lcb"].get<double>() == Approx(0.79826068739864758).epsilon(1e-9));
  const json& f = t["cross_checks"][0];
  CHECK(f["method"] == "fieller_floor");
  CHECK(f["lcb"].get<double>() == Approx(0.83131340866612204).epsilon(1e-9));
  CHECK(f["floor"]["observed_lcb"].get<double>() == Approx(1.0));
  CHECK(f["floor"]["loss_bound"].get<double>() == Approx(0.16868659133387796).epsilon(1e-6));
  CHECK(f["floor"]["differing_units"].get<double>() == 0.0);
  CHECK(t["power"]["trials_needed"] == 147);
  const std::string md = kvtest::read_text(tmp.file("c.md")), html = kvtest::read_text(tmp.file("c.html"));
  CHECK_THAT(md, contains("stratified\\_score"));  // Markdown escapes the underscore
  CHECK_THAT(md, contains("0.798"));
  CHECK_THAT(html, contains("stratified_score"));
  CHECK_THAT(html, contains("0.7983"));
  CHECK_THAT(kvtest::read_text(tmp.file("c.xml")), contains("INCONCLUSIVE"));
}
