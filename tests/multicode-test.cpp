// datasets/multicode: generation (lines where meta says, asked codes, lengths) and the grader.
#include <regex>
#include <set>

#include "tests/catch_compat.hpp"
#include "harness/core/error.h"
#include "tests/fake_token_counter.h"
#include "datasets/graders.h"
#include "datasets/haystack/haystack_input.h"
#include "datasets/multicode/multicode.h"
#include "tests/test_util.h"

using kvgate::Trial;
using kvgate::multicode::MulticodeOptions;
using kvtest::contains;

namespace {

kvgate::Grade grade(const Trial& t, const std::string& response) {
  return kvgate::grade_trial({.trial = t, .response = response});
}

Trial hand_made() {
  Trial t;
  t.id = "multicode/32768/0003";
  t.task = "multicode";
  t.bucket = 32768;
  t.input = {{"prompt", "x"}};
  t.target = {{"codes",
               {{{"name", "Juniper-24"}, {"code", "951936"}},
                {{"name", "Juniper-7"}, {"code", "120455"}},
                {{"name", "Juniper-61"}, {"code", "300817"}},
                {{"name", "Juniper-2"}, {"code", "777001"}}}}};
  t.grader = {{"name", "multicode"}};
  t.meta = {{"depths", {12.5, 40.0, 77.25, 99.0}}, {"prompt_tokens", 32700}};
  return t;
}

}  // namespace

TEST_CASE("multicode: 64 lines at their offsets, one base name, four distinct codes asked after the text", "[multicode]") {
  kvtest::WordTokenCounter counter;
  MulticodeOptions o{.seed = 11, .lengths = {4096, 16384}, .per_bucket = 3};
  const auto trials = kvgate::multicode::generate_multicode(o, counter);
  REQUIRE(trials.size() == 6);
  CHECK(trials[4].id == "multicode/16384/0001");
  for (const Trial& t : trials) {
    INFO(t.id);
    const auto& m = t.meta;
    const std::string& text = kvgate::haystack::input_text(t.input);
    const std::int64_t tokens = m.at("prompt_tokens");
    CHECK(tokens <= t.bucket);
    CHECK(tokens >= t.bucket - t.bucket / 200);
    CHECK(tokens == static_cast<std::int64_t>(kvgate::count_input(counter, t.input)));
    const std::string base = m.at("base_name");
    REQUIRE(m.at("lines").size() == 64);
    std::set<std::string> names, codes;
    std::size_t question_at = text.rfind("\nWhat are the access codes for ");
    REQUIRE(question_at != std::string::npos);
    for (const auto& line : m.at("lines")) {
      const std::string name = line.at("name"), code = line.at("code"), sentence = line.at("text");
      CHECK(sentence == "The access code for " + name + " is " + code + ".");
      CHECK(text.compare(line.at("offset").get<std::size_t>(), sentence.size(), sentence) == 0);
      CHECK(line.at("offset").get<std::size_t>() < question_at);
      CHECK(std::regex_match(name, std::regex(base + "-[1-9][0-9]*")));
      CHECK(std::regex_match(code, std::regex("[1-9][0-9]{5}")));
      names.insert(name);
      codes.insert(code);
    }
    CHECK(names.size() == 64);
    CHECK(codes.size() == 64);
    REQUIRE(t.target.at("codes").size() == 4);
    std::set<std::string> asked;
    for (const auto& c : t.target.at("codes")) {
      asked.insert(c.at("name").get<std::string>());
      CHECK(names.count(c.at("name").get<std::string>()) == 1);
      CHECK_THAT(text.substr(question_at), contains(c.at("name").get<std::string>()));
    }
    CHECK(asked.size() == 4);
    CHECK(m.at("depths").size() == 4);
    CHECK(t.input.at("max_tokens") == 256);
    // Its own correct answer passes; the same codes shifted by one name fail.
    std::string right, shifted;
    const auto& cs = t.target.at("codes");
    for (std::size_t i = 0; i < cs.size(); ++i) {
      right += cs[i].at("name").get<std::string>() + ": " + cs[i].at("code").get<std::string>() + "\n";
      shifted += cs[i].at("name").get<std::string>() + ": " + cs[(i + 1) % cs.size()].at("code").get<std::string>() + "\n";
    }
    CHECK(grade(t, right).passed);
    const auto g = grade(t, shifted);
    CHECK_FALSE(g.passed);
    CHECK(g.details.at("fraction_right") == 0.0);
    CHECK(g.details.at("ruler_string_match_all") == 1.0);
  }
}

TEST_CASE("multicode: with the Qwen3 tokenizer every trial is within 0.5% and never above", "[multicode][qwen3]") {
  const auto qwen3 = kvgate::make_hf_token_counter(kvtest::data_dir() + "/tokenizers/qwen3/tokenizer.json");
  MulticodeOptions o{.seed = 8, .lengths = {4096, 32768}, .per_bucket = 3};
  for (const Trial& t : kvgate::multicode::generate_multicode(o, *qwen3)) {
    INFO(t.id);
    const std::int64_t tokens = t.meta.at("prompt_tokens");
    CHECK(tokens <= t.bucket);
    CHECK(tokens >= t.bucket - t.bucket / 200);
    CHECK(tokens == static_cast<std::int64_t>(kvgate::count_input(*qwen3, t.input)));
  }
}

TEST_CASE("multicode: deterministic from the seed; --lines and --ask are honoured and checked", "[multicode]") {
  auto counter = kvgate::make_estimating_token_counter();
  MulticodeOptions o{.seed = 4, .lengths = {8192}, .per_bucket = 2, .lines = 10, .ask = 1, .api = kvgate::InputApi::completions};
  const auto a = kvgate::multicode::generate_multicode(o, *counter);
  const auto b = kvgate::multicode::generate_multicode(o, *counter);
  for (std::size_t i = 0; i < a.size(); ++i) CHECK(kvgate::to_json(a[i]).dump() == kvgate::to_json(b[i]).dump());
  CHECK(a[0].meta.at("lines").size() == 10);
  CHECK(a[0].target.at("codes").size() == 1);
  const std::string& p = a[0].input.at("prompt").get_ref<const std::string&>();
  CHECK_THAT(p, contains("\nWhat is the access code for "));
  CHECK(p.size() > 8);
  CHECK(p.compare(p.size() - 9, 9, "\nAnswer:\n") == 0);

  REQUIRE_THROWS_WITH(kvgate::multicode::generate_multicode({.lengths = {4096}, .lines = 4, .ask = 5}, *counter),
                      contains("--ask 5") && contains("--lines (4)"));
  REQUIRE_THROWS_WITH(kvgate::multicode::generate_multicode({.lengths = {4096}, .lines = 0}, *counter), contains("--lines 0"));
  REQUIRE_THROWS_WITH(kvgate::multicode::generate_multicode({.lengths = {512}, .per_bucket = 1, .lines = 64}, *counter),
                      contains("multicode/512/0000: cannot fit") && contains("use a larger length"));
}

TEST_CASE("multicode grader: correct, reordered, partial, swapped, extra text, empty", "[multicode][grader]") {
  const Trial t = hand_made();
  auto g = grade(t, "Juniper-24: 951936\nJuniper-7: 120455\nJuniper-61: 300817\nJuniper-2: 777001");
  CHECK(g.passed);
  CHECK(g.score == 1.0);
  CHECK(g.value == kvgate::GradeValue::correct);
  CHECK(g.details.at("codes_right") == 4);
  CHECK(g.details.at("fraction_right") == 1.0);
  CHECK(g.details.at("depths") == nlohmann::json({12.5, 40.0, 77.25, 99.0}));
  CHECK(g.details.at("bucket") == 32768);

  // Reordered, in prose, with the question repeated first.
  g = grade(t, "Sure! The codes for Juniper-24, Juniper-7, Juniper-61 and Juniper-2 are:\n"
               "- Juniper-2 - 777001\n- Juniper-61 is 300817\n- Juniper-24: 951936.\n- juniper-7 => 120455\nHope this helps.");
  CHECK(g.passed);

  // Three of four: partial credit in details, no pass.
  g = grade(t, "Juniper-24: 951936\nJuniper-7: 120455\nJuniper-61: 300871\nJuniper-2: 777001");
  CHECK_FALSE(g.passed);
  CHECK(g.score == 0.0);
  CHECK(g.value == kvgate::GradeValue::partial);
  CHECK(g.details.at("fraction_right") == 0.75);
  CHECK(g.details.at("ruler_string_match_all") == 0.75);
  CHECK(g.details.at("given").at("Juniper-61") == "300871");
  CHECK(g.extracted == "Juniper-24: 951936; Juniper-7: 120455; Juniper-61: 300871; Juniper-2: 777001");

  // Right codes, wrong names: RULER's substring score is full, ours is not.
  g = grade(t, "Juniper-24: 120455\nJuniper-7: 951936\nJuniper-61: 300817\nJuniper-2: 777001");
  CHECK_FALSE(g.passed);
  CHECK(g.details.at("fraction_right") == 0.5);
  CHECK(g.details.at("ruler_string_match_all") == 1.0);

  // Juniper-2 is not Juniper-24; a missing name gives nothing.
  g = grade(t, "Juniper-24: 777001\nJuniper-7: 120455\nJuniper-61: 300817");
  CHECK(g.details.at("given").at("Juniper-2").is_null());
  CHECK(g.details.at("codes_right") == 2);

  // Codes without names are not attributed.
  g = grade(t, "951936, 120455, 300817, 777001");
  CHECK_FALSE(g.passed);
  CHECK(g.value == kvgate::GradeValue::incorrect);
  CHECK(g.details.at("ruler_string_match_all") == 1.0);

  g = grade(t, "");
  CHECK(g.value == kvgate::GradeValue::no_answer);
  CHECK(g.extracted == "[invalid]");

  // Reasoning before </think> does not count.
  CHECK_FALSE(grade(t, "<think>Juniper-24: 951936 Juniper-7: 120455 Juniper-61: 300817 Juniper-2: 777001</think>I am not sure.").passed);
  CHECK(grade(t, "<think>hmm</think>Juniper-24: 951936, Juniper-7: 120455, Juniper-61: 300817, Juniper-2: 777001").passed);
}

TEST_CASE("multicode grader: reading codes, attribution rules and bad targets", "[multicode][grader]") {
  using kvgate::multicode::read_codes;
  const std::vector<std::string> asked = {"Cedar-5", "Cedar-50"};
  auto r = read_codes("Cedar-50: 123456 and Cedar-05: 654321", "Cedar", asked);
  CHECK(r.given == std::vector<std::string>{"654321", "123456"});
  r = read_codes("Cedar-5: 1234567 Cedar-50: 12345", "Cedar", asked);  // not six digits
  CHECK(r.given == std::vector<std::string>{"", ""});
  r = read_codes("Cedar-5 (no code yet), then Cedar-5: 111222", "Cedar", asked);  // the first mention with a code
  CHECK(r.given[0] == "111222");
  r = read_codes("XCedar-5: 111222 Cedar-5x: 333444", "Cedar", asked);  // not mentions
  CHECK(r.given[0].empty());

  Trial t = hand_made();
  t.target = {{"codes", "951936"}};
  CHECK_THROWS_WITH(grade(t, "x"), contains("multicode/32768/0003") && contains("regenerate"));
}
