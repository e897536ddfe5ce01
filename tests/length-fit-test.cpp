// datasets/common/length_fit: the exact-length search, on its own and through fit_length.
#include <cmath>
#include <functional>

#include "tests/catch_compat.hpp"
#include "datasets/common/length_fit.h"
#include "harness/core/error.h"
#include "harness/core/rng.h"

using kvgate::LengthFitSearch;
using kvgate::LengthFitSpec;
using kvtest::contains;

namespace {

// Runs the search on tokens = f(budget), with body bytes = budget.
LengthFitSearch run(const LengthFitSpec& spec, const std::function<std::int64_t(std::int64_t)>& f) {
  LengthFitSearch s(spec);
  while (!s.done()) {
    const std::int64_t b = s.next_budget();
    REQUIRE(b >= 0);
    s.observe({b, b, f(b)});
  }
  return s;
}

}  // namespace

TEST_CASE("length fit: the window is [target - floor(0.5% of target), target - reserve]", "[length_fit]") {
  LengthFitSearch a({.target = 4096});
  CHECK(a.lowest() == 4076);
  CHECK(a.highest() == 4096);
  LengthFitSearch b({.target = 131072, .tolerance = 0.005, .reserve = 1});
  CHECK(b.lowest() == 131072 - 655);
  CHECK(b.highest() == 131071);
  LengthFitSearch c({.target = 100, .tolerance = 0.005, .reserve = 1});  // 0.5% of 100 is no token: one count left
  CHECK(c.lowest() == 99);
  CHECK(c.highest() == 99);
  CHECK_THROWS_AS(LengthFitSearch({.target = 0}), kvgate::Error);
  CHECK_THROWS_AS(LengthFitSearch({.target = 10, .tolerance = 0.7}), kvgate::Error);
}

TEST_CASE("length fit: first the fixed part, then two full-size counts for a density close to the guess", "[length_fit]") {
  for (std::int64_t target : {1024, 4096, 32768, 131072}) {
    // 137 fixed tokens, 4.4 bytes a token (the guess says 4.0).
    auto s = run({.target = target, .bytes_per_token = 4.0}, [](std::int64_t b) { return 137 + b * 10 / 44; });
    INFO(target);
    REQUIRE(s.found());
    const auto& last = s.probes().back();
    CHECK(last.tokens >= s.lowest());
    CHECK(last.tokens <= s.highest());
    CHECK(s.probes().front().budget == 0);
    CHECK(s.probes().size() <= 4);
  }
}

TEST_CASE("length fit: steps, noise and a bad density guess still land in the window", "[length_fit]") {
  // Tokens jump in steps of 7 (whole sentences), with deterministic noise of +-3 tokens.
  auto f = [](std::int64_t b) {
    const std::int64_t steps = b / 31;
    return 50 + steps * 7 + static_cast<std::int64_t>(kvgate::mix64(static_cast<std::uint64_t>(steps)) % 7) - 3;
  };
  for (double guess : {0.5, 4.0, 40.0}) {
    auto s = run({.target = 8192, .bytes_per_token = guess}, f);
    INFO(guess);
    REQUIRE(s.found());
    CHECK(s.probes().back().tokens <= 8192);
    CHECK(s.probes().back().tokens >= 8192 - 40);
    CHECK(s.probes().size() <= 12);
  }
}

TEST_CASE("length fit: an input whose fixed part exceeds the target is infeasible at once", "[length_fit]") {
  auto s = run({.target = 64}, [](std::int64_t b) { return 93 + b / 4; });
  CHECK_FALSE(s.found());
  CHECK(s.probes().size() == 1);
  CHECK_THAT(s.failure(), contains("without any filler already has 93 tokens"));
}

TEST_CASE("length fit: counts that jump over the window fail with the reason, in few counts", "[length_fit]") {
  // 100 tokens per 400 bytes, in one jump: nothing lands in [4076, 4096].
  auto s = run({.target = 4096}, [](std::int64_t b) { return 10 + (b / 400) * 100; });
  CHECK_FALSE(s.found());
  CHECK_THAT(s.failure(), contains("jumps"));
  CHECK(s.probes().size() < 24);
}

TEST_CASE("length fit: fit_length keeps the candidate that landed and counts the counts", "[length_fit]") {
  struct Candidate {
    std::int64_t body_bytes = 0;
    std::string text;
  };
  int builds = 0;
  auto fit = kvgate::fit_length<Candidate>(
      {.target = 2000, .bytes_per_token = 3.0},
      [&](std::int64_t budget) {
        ++builds;
        return Candidate{budget, std::string(static_cast<std::size_t>(budget), 'x')};
      },
      [](const Candidate& c) { return 20 + c.text.size() / 5; });
  REQUIRE(fit.found);
  CHECK(fit.tokens == static_cast<std::int64_t>(20 + fit.candidate.text.size() / 5));
  CHECK(fit.tokens >= 1990);
  CHECK(fit.tokens <= 2000);
  CHECK(fit.counts == builds);
  CHECK(fit.lowest == 1990);
}
