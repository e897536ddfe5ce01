// The HTML report rendered by a real browser: Debian's chromium, headless, with a fresh profile, takes
// a screenshot of the niah comparison page; the PNG must show the page (not a blank or an error page):
// enough non-white pixels, the red of the FAIL verdict and the heatmaps, many colours. If chromium
// cannot run here, the test FAILS saying how to install it: it never skips.
#include <filesystem>
#include <string>

#include <nlohmann/json.hpp>

#include "catch_compat.hpp"
#include "report_checks.h"
#include "test_util.h"

using kvtest::contains;
using nlohmann::json;
namespace fs = std::filesystem;

TEST_CASE("the HTML report renders in headless Chromium to a page that is not blank", "[reports][browser]") {
  kvtest::TempDir tmp;
  const std::string fix = "tests/fixtures/reports/niah/";
  const auto c = kvtest::run_kvgate({"compare", fix + "bf16", fix + "fp8", fix + "int4", "--html", tmp.file("report.html")});
  REQUIRE(c.exit_code == 1);

  const char* env = std::getenv("KVGATE_CHROMIUM");
  const std::string chromium = env && *env ? env : "chromium";
  const std::string png = tmp.file("report.png");
  const auto r = kvtest::run_program({chromium, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
                                      "--disable-extensions", "--disable-background-networking", "--disable-component-update",
                                      "--hide-scrollbars", "--user-data-dir=" + tmp.file("profile"), "--window-size=1024,1400",
                                      "--screenshot=" + png, "file://" + fs::absolute(tmp.file("report.html")).string()},
                                     45);
  INFO("chromium exit " << r.exit_code << "\nstderr (tail): " << r.err.substr(r.err.size() > 2000 ? r.err.size() - 2000 : 0));
  if (r.exit_code == 127)
    FAIL(chromium + " is not installed: install Debian's chromium package (listed in scripts/packages.txt; scripts/setup installs it), "
         "or point KVGATE_CHROMIUM at a Chromium binary");
  REQUIRE(r.exit_code != 124);  // ran past its time limit
  REQUIRE(r.exit_code == 0);
  REQUIRE(fs::exists(png));

  const json f = kvtest::report_facts("png", png);
  INFO(f.dump());
  CHECK(f["width"] == 1024);
  CHECK(f["height"] == 1400);
  const double pixels = 1024.0 * 1400.0;
  CHECK(f["non_white"].get<double>() > 0.04 * pixels);  // text, banner, tables, charts
  CHECK(f["red"].get<double>() > 500);                  // the FAIL banner's verdict and badge
  CHECK(f["distinct_colours"].get<int>() > 64);         // anti-aliased text and charts, not a flat error page
}
