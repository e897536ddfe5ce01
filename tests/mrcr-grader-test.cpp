// The official MRCR grade() and the "mrcr" grader of the registry.
#include "tests/catch_compat.hpp"
#include "harness/core/error.h"
#include "datasets/graders.h"
#include "datasets/mrcr/mrcr_grader.h"

using kvgate::mrcr_score;
using kvtest::contains;

namespace {
kvgate::Trial mrcr_trial(const std::string& answer, const std::string& prefix) {
  kvgate::Trial t;
  t.id = "mrcr/8192/0001";
  t.task = "mrcr";
  t.bucket = 8192;
  t.input = {{"messages", nlohmann::json::array({{{"role", "user"}, {"content", "x"}}})}};
  t.target = answer;
  t.grader = {{"name", "mrcr"}, {"prefix", prefix}};
  return t;
}
}  // namespace

TEST_CASE("mrcr grade: the prefix decides, then the ratio of what follows it", "[mrcr]") {
  CHECK(mrcr_score("PPabcd", "PPabcd", "PP").score == 1.0);
  CHECK(mrcr_score("PPabxcd", "PPabcd", "PP").score == 0.8888888888888888);
  // Only the answer's own copy of the prefix is removed; an answer without it is compared whole.
  CHECK(mrcr_score("PPbcde", "abcd", "PP").score == 0.75);
}

TEST_CASE("mrcr grade: edge cases", "[mrcr]") {
  // A leading space or newline: startswith fails, no stripping.
  auto s = mrcr_score(" PPabcd", "PPabcd", "PP");
  CHECK(s.score == 0.0);
  CHECK_FALSE(s.prefix_ok);
  CHECK(mrcr_score("\nPPabcd", "PPabcd", "PP").score == 0.0);
  // The prefix is case sensitive.
  CHECK(mrcr_score("ppabcd", "PPabcd", "PP").score == 0.0);
  // Prefix only: nothing left of the response, the answer's text is not.
  s = mrcr_score("PP", "PPabcd", "PP");
  CHECK(s.prefix_ok);
  CHECK(s.score == 0.0);
  // Empty answer: the prefix alone is a perfect answer, anything more scores 0.
  CHECK(mrcr_score("PP", "PP", "PP").score == 1.0);
  CHECK(mrcr_score("PP", "", "PP").score == 1.0);
  CHECK(mrcr_score("PPx", "PP", "PP").score == 0.0);
  // An empty response never starts with a non-empty prefix.
  CHECK(mrcr_score("", "PPabcd", "PP").score == 0.0);
  // Code points, not bytes: a😀b vs a😀c.
  CHECK(mrcr_score("PPa\xF0\x9F\x98\x80" "b", "PPa\xF0\x9F\x98\x80" "c", "PP").score == 0.6666666666666666);
}

TEST_CASE("mrcr grader: registered, structured grade, passed only at 1.0", "[mrcr]") {
  REQUIRE(kvgate::find_grader("mrcr") != nullptr);
  const kvgate::Trial t = mrcr_trial("PPabcd", "PP");
  kvgate::Grade g = kvgate::grade_trial({.trial = t, .response = "PPabcd"});
  CHECK(g.score == 1.0);
  CHECK(g.passed);
  CHECK(g.value == kvgate::GradeValue::correct);
  g = kvgate::grade_trial({.trial = t, .response = "PPabxcd"});
  CHECK(g.score == 0.8888888888888888);
  CHECK_FALSE(g.passed);
  CHECK(g.value == kvgate::GradeValue::partial);
  CHECK(g.details["prefix_ok"] == true);
  g = kvgate::grade_trial({.trial = t, .response = " PPabcd"});
  CHECK(g.score == 0.0);
  CHECK(g.value == kvgate::GradeValue::incorrect);
  CHECK_THAT(g.explanation, contains("does not start with the prefix"));
  g = kvgate::grade_trial({.trial = t, .response = ""});
  CHECK(g.value == kvgate::GradeValue::no_answer);
}

TEST_CASE("mrcr grader: a trial without its prefix is an error naming the trial", "[mrcr]") {
  kvgate::Trial t = mrcr_trial("PPabcd", "PP");
  t.grader = {{"name", "mrcr"}};
  REQUIRE_THROWS_WITH(kvgate::grade_trial({.trial = t, .response = "PPabcd"}),
                      contains("mrcr/8192/0001") && contains("\"prefix\""));
  t = mrcr_trial("PPabcd", "PP");
  t.target = 3;
  REQUIRE_THROWS_AS(kvgate::grade_trial({.trial = t, .response = "PPabcd"}), kvgate::Error);
}
