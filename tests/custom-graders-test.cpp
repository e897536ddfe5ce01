#include "catch_compat.hpp"
#include "core/error.h"
#include "graders.h"

using nlohmann::json;

static kvgate::Trial trial(const std::string& grader, json target, json params = json::object()) {
  kvgate::Trial t;
  t.id = "custom/0001";
  t.task = "custom";
  t.input = {{"prompt", "?"}};
  t.target = std::move(target);
  t.grader = params;
  t.grader["name"] = grader;
  return t;
}

TEST_CASE("graders: exact and contains on hand-made responses", "[graders]") {
  struct Case {
    const char* grader;
    const char* response;
    const char* target;
    bool case_sensitive;
    bool pass;
  };
  const Case cases[] = {
      {"exact", "Paris", "paris", false, true},     {"exact", "  Paris \n", "Paris", true, true},
      {"exact", "Paris", "paris", true, false},     {"exact", "Paris, France", "Paris", false, false},
      {"exact", "", "Paris", false, false},         {"exact", "New   York", "new york", false, true},
      {"contains", "It is Paris.", "paris", false, true}, {"contains", "It is Paris.", "paris", true, false},
      {"contains", "It is London.", "Paris", false, false}, {"contains", "anything", "", false, false},
  };
  for (const Case& c : cases) {
    INFO(c.grader << " response=\"" << c.response << "\" target=\"" << c.target << "\"");
    kvgate::Trial t = trial(c.grader, c.target, {{"case_sensitive", c.case_sensitive}});
    kvgate::Grade g = kvgate::grade_trial({t, c.response});
    CHECK(g.passed == c.pass);
    CHECK(g.score == (c.pass ? 1.0 : 0.0));
  }
  kvgate::Trial t = trial("exact", "x");
  CHECK(kvgate::grade_trial({t, ""}).value == kvgate::GradeValue::no_answer);
}

TEST_CASE("graders: an unknown grader names the known ones", "[graders]") {
  kvgate::Trial t = trial("telepathy", "x");
  REQUIRE_THROWS_WITH(kvgate::grade_trial({t, "x"}), kvtest::contains("unknown grader \"telepathy\"") && kvtest::contains("exact"));
  CHECK(kvgate::find_grader("exact") != nullptr);
}
