// The HTML reports rendered by a real browser: Debian's chromium, headless, with a fresh profile.
// - A screenshot of the niah comparison page must show the page (not a blank or an error page):
//   enough non-white pixels, the red of the FAIL verdict and the heatmaps, many colours; and the
//   browser must log no console message (an error, a blocked load, a CSP violation).
// - The page's Content-Security-Policy blocks an injected image and script, and the console check
//   above sees it (so that check can fail).
// - No horizontal scrolling in an 800-pixel window (a laptop is wider): a copy of each page without
//   its CSP gets a probe script that records the document's scroll width (a page made too wide on
//   purpose must show as scrolling).
// If chromium cannot run here, the tests FAIL saying how to install it: they never skip.
#include <filesystem>
#include <regex>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "tests/catch_compat.hpp"
#include "tests/report_checks.h"
#include "tests/test_util.h"

using kvtest::contains;
using nlohmann::json;
namespace fs = std::filesystem;

namespace {

const std::string kFix = "tests/fixtures/reports/";

// Runs chromium headless on `html` (a file) with a fresh profile; `action` is --screenshot=F or --dump-dom.
// A run that hangs past its limit is tried once more with a new profile: on a loaded 2-core CI
// machine headless chromium has hung at start-up (45 s, exit 124) on a page that renders in ~1 s,
// which says nothing about the report. A second hang fails the test.
kvtest::CommandResult chromium(const kvtest::TempDir& tmp, const std::string& html, const std::string& action, const std::string& window) {
  const char* env = std::getenv("KVGATE_CHROMIUM");
  const std::string program = env && *env ? env : "chromium";
  static int profiles = 0;
  kvtest::CommandResult r;
  for (int attempt = 0; attempt < 2; ++attempt) {
    r = kvtest::run_program({program, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-extensions",
                             "--disable-background-networking", "--disable-component-update", "--hide-scrollbars",
                             "--enable-logging=stderr", "--v=0", "--user-data-dir=" + tmp.file("profile-" + std::to_string(profiles++)),
                             "--window-size=" + window, action, "file://" + fs::absolute(html).string()},
                            45);
    if (r.exit_code != 124) break;
  }
  INFO("chromium exit " << r.exit_code << "\nstderr (tail): " << r.err.substr(r.err.size() > 2000 ? r.err.size() - 2000 : 0));
  if (r.exit_code == 127)
    FAIL(program + " is not installed: install Debian's chromium package (listed in scripts/packages.txt; scripts/setup installs it), "
         "or point KVGATE_CHROMIUM at a Chromium binary");
  REQUIRE(r.exit_code != 124);  // ran past its time limit
  REQUIRE(r.exit_code == 0);
  return r;
}

// What the page logged to the console (chromium writes "...:INFO:CONSOLE(...)] "message", source: ...").
std::vector<std::string> console_messages(const std::string& err) {
  std::vector<std::string> out;
  std::size_t start = 0;
  while (start < err.size()) {
    std::size_t end = err.find('\n', start);
    if (end == std::string::npos) end = err.size();
    const std::string line = err.substr(start, end - start);
    if (line.find(":CONSOLE") != std::string::npos) out.push_back(line);
    start = end + 1;
  }
  return out;
}

std::string without_csp(const std::string& html) {
  const std::regex csp("<meta http-equiv=\"Content-Security-Policy\"[^>]*/>");
  REQUIRE(std::regex_search(html, csp));
  return std::regex_replace(html, csp, "");
}

}  // namespace

TEST_CASE("the HTML report renders in headless Chromium to a page that is not blank, with nothing logged", "[reports][browser]") {
  kvtest::TempDir tmp;
  const auto c = kvtest::run_kvgate({"compare", kFix + "niah/bf16", kFix + "niah/fp8", kFix + "niah/int4", "--html", tmp.file("report.html")});
  REQUIRE(c.exit_code == 1);
  const std::string png = tmp.file("report.png");
  const auto r = chromium(tmp, tmp.file("report.html"), "--screenshot=" + png, "1024,1400");
  REQUIRE(fs::exists(png));
  CHECK(console_messages(r.err) == std::vector<std::string>{});  // no error, no blocked load, no CSP violation

  const json f = kvtest::report_facts("png", png);
  INFO(f.dump());
  CHECK(f["width"] == 1024);
  CHECK(f["height"] == 1400);
  const double pixels = 1024.0 * 1400.0;
  CHECK(f["non_white"].get<double>() > 0.04 * pixels);  // text, banner, tables, charts
  CHECK(f["red"].get<double>() > 500);                  // the FAIL banner's verdict and badge
  CHECK(f["distinct_colours"].get<int>() > 64);         // anti-aliased text and charts, not a flat error page
}

TEST_CASE("the report's Content-Security-Policy blocks anything injected, and the console shows it", "[reports][browser]") {
  kvtest::TempDir tmp;
  REQUIRE(kvtest::run_kvgate({"compare", kFix + "gsm8k/base", kFix + "gsm8k/cand", "--html", tmp.file("report.html")}).exit_code == 3);
  // As if a model's answer had slipped past the escaping: an image from elsewhere and a script.
  std::string html = kvtest::read_text(tmp.file("report.html"));
  const auto body_end = html.rfind("</body>");
  REQUIRE(body_end != std::string::npos);
  html.insert(body_end, "<img src=\"http://127.0.0.1:9/pixel.png\" alt=\"\"/><script>document.body.setAttribute('data-ran', 'yes')</script>");
  kvtest::write_text(tmp.file("injected.html"), html);
  const auto r = chromium(tmp, tmp.file("injected.html"), "--dump-dom", "1024,800");
  const std::vector<std::string> logged = console_messages(r.err);
  INFO(r.err.substr(r.err.size() > 3000 ? r.err.size() - 3000 : 0));
  REQUIRE(logged.size() >= 2);
  bool image = false, script = false;
  for (const std::string& line : logged) {
    image = image || (line.find("http://127.0.0.1:9/pixel.png") != std::string::npos && line.find("Content Security Policy") != std::string::npos);
    script = script || line.find("inline script violates the following Content Security Policy") != std::string::npos;
  }
  CHECK(image);
  CHECK(script);
  CHECK_THAT(r.out, contains("</html>"));       // the DOM after load
  CHECK_THAT(r.out, !contains("data-ran=\"yes\""));  // the script never ran
}

TEST_CASE("no horizontal scrolling in an 800-pixel window: comparison, hostile labels, one run", "[reports][browser]") {
  kvtest::TempDir tmp;
  REQUIRE(kvtest::run_kvgate({"compare", kFix + "niah/bf16", kFix + "niah/fp8", kFix + "niah/int4", "--html", tmp.file("niah.html")}).exit_code == 1);
  REQUIRE(kvtest::run_kvgate({"compare", kFix + "hostile/base", kFix + "hostile/cand", "--html", tmp.file("hostile.html")}).exit_code != 2);
  REQUIRE(kvtest::run_kvgate({"report", kFix + "niah/int4", "--html", tmp.file("run.html")}).exit_code == 0);
  const std::string probe =
      "<script>window.addEventListener('load', function () { var d = document.documentElement;"
      " document.body.setAttribute('data-widths', d.clientWidth + ' ' + d.scrollWidth); });</script>";
  // The control: a page with a wide element must show as scrolling, or the probe measures nothing.
  kvtest::write_text(tmp.file("wide.html"), std::regex_replace(kvtest::read_text(tmp.file("run.html")), std::regex("</main>"),
                                                               "<div style=\"width: 1500px\">wide</div></main>"));
  for (const char* page : {"niah", "hostile", "run", "wide"}) {
    INFO(page);
    std::string html = without_csp(kvtest::read_text(tmp.file(std::string(page) + ".html")));
    html.insert(html.rfind("</body>"), probe);
    kvtest::write_text(tmp.file(std::string(page) + "-probe.html"), html);
    const auto r = chromium(tmp, tmp.file(std::string(page) + "-probe.html"), "--dump-dom", "800,1000");
    std::smatch m;
    REQUIRE(std::regex_search(r.out, m, std::regex("data-widths=\"([0-9]+) ([0-9]+)\"")));
    const int client = std::stoi(m[1]), scroll = std::stoi(m[2]);
    CHECK(client > 700);
    if (std::string(page) == "wide") CHECK(scroll > 1500);
    else CHECK(scroll <= client);
  }
}
