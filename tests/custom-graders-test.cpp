// datasets/custom: each grader on a table of hand-written responses (correct, wrong, malformed,
// thinking, boxed, multiple answers), and the checks of grader parameters.
#include "tests/catch_compat.hpp"
#include "harness/core/error.h"
#include "datasets/custom/answer_extract.h"
#include "datasets/custom/grader_params.h"
#include "datasets/graders.h"

using kvtest::contains;
using nlohmann::json;

namespace {

kvgate::Trial trial(const std::string& grader, json target, json params = json::object()) {
  kvgate::Trial t;
  t.id = "custom/0001";
  t.task = "custom";
  t.input = {{"prompt", "?"}};
  t.target = std::move(target);
  t.grader = params;
  t.grader["name"] = grader;
  return t;
}

struct Case {
  const char* why;
  const char* response;
  json target;
  json params;
  bool pass;
  const char* extracted;  // nullptr: not checked
};

void run_table(const char* grader, const std::vector<Case>& cases) {
  for (const Case& c : cases) {
    INFO(grader << ": " << c.why << ": response=\"" << c.response << "\" target=" << c.target.dump() << " params=" << c.params.dump());
    const kvgate::Trial t = trial(grader, c.target, c.params);
    kvgate::check_grader_params(t.grader, "test");  // every table's parameters are valid ones
    const kvgate::Grade g = kvgate::grade_trial({t, c.response});
    CHECK(g.passed == c.pass);
    CHECK(g.score == (c.pass ? 1.0 : 0.0));
    if (c.extracted) CHECK(g.extracted == c.extracted);
  }
}

const json none = json::object();

}  // namespace

TEST_CASE("graders: exact", "[graders][exact]") {
  run_table("exact", {
      {"case folded", "Paris", "paris", none, true, "paris"},
      {"whitespace collapsed", "  New   York \n", "new york", none, true, nullptr},
      {"case kept", "Paris", "paris", {{"case_sensitive", true}}, false, "Paris"},
      {"extra words", "Paris, France", "Paris", none, false, nullptr},
      {"punctuation ignored", "Paris!", "paris", {{"ignore_punctuation", true}}, true, nullptr},
      {"regexes_to_ignore", "The answer: Paris", "paris", {{"regexes_to_ignore", {"^The answer: "}}}, true, nullptr},
      {"thinking removed", "<think>Maybe Lyon</think>Paris", "Paris", none, true, "paris"},
      {"only thinking", "<think>Paris</think>", "Paris", none, false, ""},
      {"several acceptable answers", "NYC", json::array({"New York", "NYC"}), none, true, nullptr},
      {"a number target", "42", 42, none, true, nullptr},
      {"Unicode case", "\xC3\x89" "COLE", "\xC3\xA9" "cole", none, true, nullptr},
      {"empty", "", "Paris", none, false, ""},
  });
  CHECK(kvgate::grade_trial({trial("exact", "x"), ""}).value == kvgate::GradeValue::no_answer);
  CHECK(kvgate::grade_trial({trial("exact", "x"), "y"}).value == kvgate::GradeValue::incorrect);
  REQUIRE_THROWS_WITH(kvgate::grade_trial({trial("exact", json::object()), "x"}), contains("trial custom/0001") && contains("target"));
}

TEST_CASE("graders: contains", "[graders][contains]") {
  run_table("contains", {
      {"found", "It is Paris.", "paris", none, true, "paris"},
      {"case kept", "It is Paris.", "paris", {{"case_sensitive", true}}, false, nullptr},
      {"absent", "It is London.", "Paris", none, false, nullptr},
      {"an empty target never matches", "anything", "", none, false, nullptr},
      {"only in the thinking", "<think>Paris?</think>London", "Paris", none, false, nullptr},
      {"any of several", "It is Lutetia.", json::array({"Paris", "Lutetia"}), none, true, nullptr},
  });
}

TEST_CASE("graders: regex", "[graders][regex]") {
  const json p = {{"pattern", R"(ANSWER:\s*(\w+))"}};
  run_table("regex", {
      {"extracted and equal", "Reasoning...\nANSWER: Paris", "paris", p, true, "Paris"},
      {"extracted and different", "ANSWER: Lyon", "Paris", p, false, "Lyon"},
      {"no match", "I think Paris", "Paris", p, false, "[invalid]"},
      {"match only in thinking", "<think>ANSWER: Paris</think>I am unsure", "Paris", p, false, "[invalid]"},
      {"first match by default", "ANSWER: Lyon ... ANSWER: Paris", "Paris", p, false, "Lyon"},
      {"last match on request", "ANSWER: Lyon ... ANSWER: Paris", "Paris", {{"pattern", p["pattern"]}, {"select", "last"}}, true, "Paris"},
      {"group 0 is the whole match", "ANSWER: Paris", "answer: paris", {{"pattern", p["pattern"]}, {"group", 0}}, true, nullptr},
      {"pattern case-insensitive", "answer: Paris", "Paris", {{"pattern", p["pattern"]}, {"pattern_ignore_case", true}}, true, nullptr},
      {"then exact options", "ANSWER: PARIS", "paris", {{"pattern", p["pattern"]}, {"case_sensitive", true}}, false, nullptr},
  });
  REQUIRE_THROWS_WITH(kvgate::grade_trial({trial("regex", "x", {{"pattern", "(open"}}), "x"}),
                      contains("trial custom/0001: grader regex") && contains("(open"));
  REQUIRE_THROWS_WITH(kvgate::grade_trial({trial("regex", "x"), "x"}), contains("\"pattern\" is required"));
}

TEST_CASE("graders: numeric", "[graders][numeric]") {
  run_table("numeric", {
      {"answer is", "The answer is 42.", "42", none, true, "42"},
      {"boxed", "So we get \\boxed{42}.", "42", none, true, "42"},
      {"boxed fraction", "$\\boxed{\\frac{1}{2}}$", "0.5", none, true, "\\frac{1}{2}"},
      {"slash fraction", "so x = 1/2", "\\frac{1}{2}", none, true, "1/2"},
      {"####", "work...\n#### 1,000", 1000, none, true, nullptr},
      {"AIME leading zeros", "Final: $\\boxed{033}$", "33", none, true, nullptr},
      {"negative fraction", "\\boxed{-\\frac{1}{8}}", "-0.125", none, true, nullptr},
      {"wrong", "It's 41", 42, none, false, "41"},
      {"no number", "I cannot tell.", 42, none, false, "[invalid]"},
      {"thinking removed", "<think>42</think>It is 41", 42, none, false, "41"},
      {"thinking removed, boxed after", "<think>41?</think>\\boxed{42}", 42, none, true, nullptr},
      {"last of several boxes", "first \\boxed{12}, corrected: \\boxed{15}", 15, none, true, "15"},
      {"answer is beats a later number", "The answer is 12. (That took 7 steps.)", 12, none, true, "12"},
      {"last number otherwise", "3 apples and 4 pears make 7", 7, none, true, "7"},
      {"within tolerance", "3.14159", "3.1416", {{"tolerance", 1e-4}}, true, nullptr},
      {"outside the default tolerance", "3.14159", "3.1416", none, false, nullptr},
      {"relative tolerance", "1010", 1000, {{"relative_tolerance", 0.02}}, true, nullptr},
      {"boxed required", "The answer is 42", 42, {{"require_boxed", true}}, false, "[invalid]"},
      {"unclosed box", "\\boxed{42", 42, none, true, nullptr},
      {"LaTeX expression target", "\\boxed{\\left( 3, \\dfrac{\\pi}{2} \\right)}", "(3,\\frac{\\pi}{2})", none, true, nullptr},
      {"LaTeX expression wrong", "\\boxed{(3, \\pi)}", "(3,\\frac{\\pi}{2})", none, false, nullptr},
      {"several acceptable", "\\boxed{0.5}", json::array({"1/3", "1/2"}), none, true, nullptr},
      {"percent and dollars", "The answer is $1,250.", "1250", none, true, nullptr},
  });
}

TEST_CASE("graders: choice", "[graders][choice]") {
  const json abcd = {{"choices", "ABCD"}};
  run_table("choice", {
      {"answer is (C)", "The answer is (C)", "C", none, true, "C"},
      {"bold", "After checking, **C**", "C", none, true, "C"},
      {"bold lower case in parentheses", "so **(c)**", "C", none, true, "C"},
      {"Answer: B", "Reasoning.\nAnswer: B", "B", none, true, "B"},
      {"bold Answer:", "**Answer:** D", "D", none, true, "D"},
      {"correct option is", "The correct option is D.", "D", none, true, "D"},
      {"boxed", "$\\boxed{C}$", "C", none, true, "C"},
      {"boxed text", "\\boxed{\\text{C}}", "C", none, true, "C"},
      {"only the letter", "C", "C", none, true, "C"},
      {"only the letter in parentheses", "(C).", "C", none, true, "C"},
      {"letter and option text", "C) Paris", "C", none, true, "C"},
      {"earlier letters discussed", "I think A is wrong. The answer is (B).", "B", none, true, "B"},
      {"self-correction", "The answer is (B). Wait, actually the answer is (C).", "C", none, true, "C"},
      {"several options named", "The answer is (B) or (C)", "B", none, false, "B"},
      {"several options, and", "The answer is B and C", "B", none, false, nullptr},
      {"wrong", "The answer is (A)", "C", none, false, "A"},
      {"thinking removed", "<think>The answer is (C)</think>The answer is (A)", "C", none, false, "A"},
      {"thinking removed, right", "<think>The answer is (A)</think>The answer is (C)", "C", none, true, "C"},
      {"no letter", "I don't know", "C", none, false, "[invalid]"},
      {"a sentence is not a letter", "A man walks into a bar.", "A", none, false, "[invalid]"},
      {"unless the last-letter fallback is on", "A man walks into a bar.", "A", {{"fallback_last_letter", true}}, true, "A"},
      {"out of the choices", "The answer is (E)", "D", abcd, false, "[invalid]"},
      {"target in parentheses", "Answer: C", "(c)", none, true, nullptr},
      {"J with ten options", "The answer is J", "J", none, true, nullptr},
      {"article after answer is", "The answer is a prime number, so (D)", "D", none, true, "D"},
  });
  REQUIRE_THROWS_WITH(kvgate::grade_trial({trial("choice", "K", abcd), "K"}), contains("not one of the choices ABCD"));
  const kvgate::ExtractedAnswer a = kvgate::extract_choice("The answer is (B) or (C)", "ABCDEFGHIJ", false);
  CHECK(a.ambiguous);
  CHECK(a.via == "answer_is");
}

TEST_CASE("graders: json_field", "[graders][json_field]") {
  const json answer = {{"field", "answer"}};
  run_table("json_field", {
      {"number", R"({"answer": 42})", 42, answer, true, "42"},
      {"number and numeric string", R"({"answer": 42})", "42", answer, true, nullptr},
      {"numeric string and number", R"({"answer": "42.0"})", 42, answer, true, nullptr},
      {"wrong value", R"({"answer": 41})", 42, answer, false, "41"},
      {"nested, case folded", R"({"result": {"city": "Paris"}})", "paris", {{"field", "result.city"}}, true, "Paris"},
      {"case kept", R"({"result": {"city": "Paris"}})", "paris", {{"field", "result.city"}, {"case_sensitive", true}}, false, nullptr},
      {"JSON pointer into an array", R"({"items": ["a", "b"]})", "b", {{"field", "/items/1"}}, true, nullptr},
      {"dotted path into an array", R"({"items": ["a", "b"]})", "b", {{"field", "items.1"}}, true, nullptr},
      {"not JSON", "answer: 42", 42, answer, false, "[invalid json]"},
      {"truncated JSON", R"({"answer": 4)", 42, answer, false, "[invalid json]"},
      {"fenced, strict by default", "```json\n{\"answer\": 42}\n```", 42, answer, false, "[invalid json]"},
      {"fenced, allowed", "```json\n{\"answer\": 42}\n```", 42, {{"field", "answer"}, {"allow_code_fence", true}}, true, nullptr},
      {"missing field", R"({"result": 42})", 42, answer, false, "[missing field]"},
      {"thinking removed", "<think>{\"answer\": 1}</think>\n{\"answer\": 42}", 42, answer, true, nullptr},
      {"boolean", R"({"ok": true})", true, {{"field", "ok"}}, true, nullptr},
      {"object target", R"({"pos": {"x": 1, "y": 2}})", json({{"y", 2}, {"x", 1}}), {{"field", "pos"}}, true, nullptr},
  });
  CHECK(kvgate::grade_trial({trial("json_field", 1, answer), ""}).value == kvgate::GradeValue::no_answer);
}

TEST_CASE("graders: parameters are checked before a run", "[graders][params]") {
  struct Bad {
    json grader;
    const char* message;
  };
  const Bad bad[] = {
      {{{"name", "exact"}, {"case_sensitve", true}}, "unknown parameter \"case_sensitve\" (known: case_sensitive"},
      {{{"name", "exact"}, {"case_sensitive", "yes"}}, "\"case_sensitive\" must be true or false"},
      {{{"name", "regex"}}, "parameter \"pattern\" is required"},
      {{{"name", "regex"}, {"pattern", "(a"}}, "parameter \"pattern\": regex \"(a\""},
      {{{"name", "regex"}, {"pattern", "(a)"}, {"group", 2}}, "\"group\" is 2 but the pattern has 1 group"},
      {{{"name", "regex"}, {"pattern", "a"}, {"select", "middle"}}, "\"select\" must be \"first\" or \"last\""},
      {{{"name", "numeric"}, {"tolerance", -1}}, "\"tolerance\" must be 0 or more"},
      {{{"name", "choice"}, {"choices", "AAB"}}, "2 to 26 distinct capital letters"},
      {{{"name", "json_field"}}, "parameter \"field\" is required"},
      {{{"name", "exact"}, {"regexes_to_ignore", {"[a"}}}, "regexes_to_ignore"},
  };
  for (const Bad& b : bad) {
    INFO(b.grader.dump());
    REQUIRE_THROWS_WITH(kvgate::check_grader_params(b.grader, "--grader-params"), contains(b.message) && contains("--grader-params"));
  }
  CHECK_NOTHROW(kvgate::check_grader_params({{"name", "gsm8k"}, {"anything", 1}}, "x"));  // not a custom grader
}

TEST_CASE("graders: an unknown grader names the known ones", "[graders]") {
  kvgate::Trial t = trial("telepathy", "x");
  REQUIRE_THROWS_WITH(kvgate::grade_trial({t, "x"}), contains("unknown grader \"telepathy\"") && contains("exact"));
  for (const char* name : {"exact", "contains", "regex", "numeric", "choice", "json_field", "gsm8k", "golden"})
    CHECK(kvgate::find_grader(name) != nullptr);
}
