// harness/runner/progress: plain progress lines on a clock the test drives: at most one every 10 s,
// at the latest every 30 s, sooner after another 10% of the work; rate and ETA averaged over the
// whole session (a burst does not swing the ETA); a last line with the elapsed time.
#include <string>

#include "tests/catch_compat.hpp"
#include "harness/core/error.h"
#include "harness/runner/progress.h"

using namespace kvgate;
using runner::ProgressLines;

namespace {
bool has(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }
}  // namespace

TEST_CASE("Progress lines: not before 10 s, then every 10% of the work or every 30 s") {
  ProgressLines p(100.0, 1000, 0);  // the clock starts at 100 s
  CHECK(p.poll(105, 200, 0, 0, 8).empty());  // 20% done, but only 5 s in
  const std::string first = p.poll(110, 200, 0, 0, 8);
  CHECK(has(first, "200/1000 20.0%"));
  CHECK(has(first, "20.0/s"));
  CHECK(has(first, "ETA 40s"));
  CHECK(p.poll(115, 400, 0, 0, 8).empty());  // 20% more, but 5 s after the last line
  CHECK(p.poll(121, 290, 0, 0, 8).empty());  // 11 s later, 9% more: not yet
  const std::string second = p.poll(125, 500, 1, 2, 8);  // 30% more, 15 s after the last line
  CHECK(has(second, "500/1000 50.0%"));
  CHECK(has(second, "ETA 25s"));  // 500 left at the session's 20/s
  CHECK(has(second, "errors 1 (0.20%)"));
  CHECK(has(second, "retries 2"));
  CHECK(p.poll(140, 510, 1, 2, 8).empty());   // 15 s, 1%
  CHECK(p.poll(154, 520, 1, 2, 8).empty());   // 29 s, 2%
  CHECK_FALSE(p.poll(155, 520, 1, 2, 8).empty());  // 30 s: a line even without progress
}

TEST_CASE("Progress lines: the ETA is the session's average, not the last interval's burst") {
  ProgressLines p(0.0, 1000, 100);  // 100 pairs were in the journal already
  CHECK(has(p.poll(30, 100, 0, 0, 0), "200/1000"));  // 100 in 30 s: 3.33/s, 800 left
  // 300 more in the next 10 s (a burst at 30/s): the rate is 400 / 40 s = 10/s, ETA 50 s, not 16 s.
  const std::string line = p.poll(40, 400, 0, 0, 0);
  CHECK(has(line, "500/1000"));
  CHECK(has(line, "10.0/s"));
  CHECK(has(line, "ETA 50s"));
  CHECK(p.rate(40, 400) == kvtest::Approx(10.0));
}

TEST_CASE("Progress lines: the last line says done, with the elapsed time; durations read as a person writes them") {
  const ProgressLines p(10.0, 48, 0);
  const std::string last = p.final_line(102.0, 48, 0, 3);
  CHECK(has(last, "done 48/48 100.0%"));
  CHECK(has(last, "elapsed 1m32s"));
  CHECK_FALSE(has(last, "ETA"));
  CHECK(runner::format_duration(42.4) == "42s");
  CHECK(runner::format_duration(3725) == "1h02m");
  CHECK(runner::format_duration(-1) == "?");
  CHECK(runner::parse_progress_mode("auto", false) == runner::ProgressMode::lines);
  CHECK_THROWS_AS(runner::parse_progress_mode("loud", false), Error);
}
