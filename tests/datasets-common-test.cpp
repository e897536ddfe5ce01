// datasets/common: thinking removal, Python-compatible regexes, answer numbers, edit distance, subsets.
#include <algorithm>
#include <set>
#include <string>
#include <vector>

#include "tests/catch_compat.hpp"
#include "datasets/common/edit_distance.h"
#include "datasets/common/numbers.h"
#include "datasets/common/pcre_regex.h"
#include "datasets/common/subset.h"
#include "datasets/common/thinking.h"
#include "harness/core/error.h"
#include "harness/core/rng.h"

using kvtest::Approx;
using kvtest::contains;

TEST_CASE("thinking: blocks, a template-opened block, an unclosed block, none", "[thinking]") {
  struct Case {
    const char* text;
    const char* answer;
    bool found, unterminated;
  };
  const Case cases[] = {
      {"<think>2+2=4</think>\n\nThe answer is 4.", "The answer is 4.", true, false},
      {"reasoning here...</think>The answer is 4.", "The answer is 4.", true, false},  // <think> was in the prompt
      {"<think>still thinking when the tokens ran out", "", true, true},
      {"Before <think>a</think>middle <think>b</think> after", "Before middle  after", true, false},
      {"No thinking at all.", "No thinking at all.", false, false},
      {"", "", false, false},
      {"<think></think>", "", true, false},
      {"The answer is 4.</think>", "", true, false},  // everything before a lone closing tag is thinking
  };
  for (const Case& c : cases) {
    INFO(c.text);
    const kvgate::ThinkingSplit s = kvgate::split_thinking(c.text);
    CHECK(s.answer == c.answer);
    CHECK(s.found == c.found);
    CHECK(s.unterminated == c.unterminated);
    CHECK(kvgate::strip_thinking(c.text) == c.answer);
  }
  CHECK(kvgate::split_thinking("<think>2+2=4</think>4").thinking == "2+2=4");
}

TEST_CASE("regex: findall and filter follow Python's re", "[regex]") {
  using kvgate::Regex;
  // Empty matches: re.findall(r'\d*', 'a12b') == ['', '12', '', ''].
  std::vector<std::string> got;
  for (const auto& m : Regex(R"(\d*)").find_all("a12b")) got.push_back(m.text);
  CHECK(got == std::vector<std::string>{"", "12", "", ""});
  // re.findall(r'x*|b', 'ab') == ['', '', 'b', '']: after an empty match, a non-empty one may start there.
  got.clear();
  for (const auto& m : Regex(R"(x*|b)").find_all("ab")) got.push_back(m.text);
  CHECK(got == std::vector<std::string>{"", "", "b", ""});
  // re.sub(r'\.$', '', 'a.\n') == 'a\n': `$` matches before a final newline, as in Python.
  CHECK(Regex(R"(\.$)").remove_all("a.\n") == "a\n");
  CHECK(Regex(R"(\.$)").remove_all("a.b") == "a.b");
  // UTF-8: `.` is one character, and invalid bytes are matched around, never an error.
  CHECK(Regex("^.$").find_all("\xC3\xA9").size() == 1);
  CHECK(Regex("[0-9]+").find_all("\xFF 12 \xC3").size() == 1);
  // Groups: one group -> the group; several -> the first non-empty; none -> the whole match.
  CHECK(kvgate::regex_filter(Regex(R"(#### (\d+))"), "#### 12 #### 13", 0) == "12");
  CHECK(kvgate::regex_filter(Regex(R"((a)|(b))"), "xb", -1) == "b");
  CHECK(kvgate::regex_filter(Regex(R"(\d+)"), "1 2 3", -1) == "3");
  CHECK(kvgate::regex_filter(Regex(R"(\d+)"), "none", 0) == "[invalid]");
  CHECK(kvgate::regex_filter(Regex(R"(\d+)"), "1 2", 5) == "[invalid]");  // out of range: the fallback
  REQUIRE_THROWS_WITH(Regex("(unclosed"), contains("regex \"(unclosed\"") && contains("offset"));
}

TEST_CASE("numbers: answers as numbers", "[numbers]") {
  struct Case {
    const char* text;
    bool ok;
    double value;
  };
  const Case cases[] = {
      {"72", true, 72},         {"-72", true, -72},          {"1,234.50", true, 1234.5}, {"$12", true, 12},
      {"50%", true, 50},        {"3/4", true, 0.75},         {"\\frac{3}{4}", true, 0.75}, {"\\dfrac{-1}{2}", true, -0.5},
      {"-\\frac{1}{8}", true, -0.125}, {"\\frac34", true, 0.75}, {"\\boxed{033}", true, 33}, {"1e-3", true, 0.001},
      {"\xE2\x88\x92" "5", true, -5},   {"x = 5", true, 5},   {"5.", true, 5},             {"$\\$1{,}000$", true, 1000},
      {"12^\\circ", true, 12},  {"\\text{(A) } 5", false, 0}, {"5 apples", false, 0},   {"x+1", false, 0},
      {"", false, 0},           {"1/0", false, 0},           {"\\sqrt{2}", false, 0},    {".5", true, 0.5},
  };
  for (const Case& c : cases) {
    INFO(c.text);
    const auto v = kvgate::parse_answer_number(c.text);
    REQUIRE(v.has_value() == c.ok);
    if (c.ok) CHECK(*v == Approx(c.value));
  }
  CHECK(kvgate::canonical_decimal("-0072.50") == std::optional<std::string>("-72.5"));
  CHECK(kvgate::canonical_decimal("1,000") == std::optional<std::string>("1000"));
  CHECK(kvgate::canonical_decimal(".5") == std::optional<std::string>("0.5"));
  CHECK(kvgate::canonical_decimal("-0.0") == std::optional<std::string>("0"));
  CHECK(kvgate::canonical_decimal("72.") == std::optional<std::string>("72"));
  CHECK_FALSE(kvgate::canonical_decimal("1.2.3"));
  CHECK_FALSE(kvgate::canonical_decimal("[invalid]"));
  CHECK_FALSE(kvgate::canonical_decimal("."));

  CHECK(kvgate::last_boxed("so \\boxed{1} then \\boxed{\\frac{1}{2}} done") == std::optional<std::string>("\\frac{1}{2}"));
  CHECK(kvgate::last_boxed("\\fbox{7}") == std::optional<std::string>("7"));
  CHECK(kvgate::last_boxed("\\boxed 5$") == std::optional<std::string>("5"));
  CHECK_FALSE(kvgate::last_boxed("no box"));
  CHECK(kvgate::last_number_in("first 12, then 1,500.25 apples") == std::optional<std::string>("1,500.25"));
  CHECK(kvgate::last_number_in("costs $18.") == std::optional<std::string>("18"));
  CHECK(kvgate::last_number_in("ratio 3/4") == std::optional<std::string>("3/4"));
  CHECK(kvgate::last_number_in("so -7 it is") == std::optional<std::string>("-7"));
  CHECK_FALSE(kvgate::last_number_in("H2O and CO2 are molecules named with letters"));
  CHECK(kvgate::normalize_latex_answer("\\left( 3, \\dfrac{\\pi}{2} \\right).") == "(3,\\frac{\\pi}{2})");
}

static std::size_t dp_levenshtein(const std::vector<int>& a, const std::vector<int>& b) {
  std::vector<std::size_t> row(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diag = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t up = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diag + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diag = up;
    }
  }
  return row[b.size()];
}

TEST_CASE("edit distance: the bit-parallel algorithm equals the textbook DP", "[edit-distance]") {
  CHECK(kvgate::levenshtein_distance("kitten", "sitting") == 3);
  CHECK(kvgate::levenshtein_distance("", "abc") == 3);
  CHECK(kvgate::levenshtein_distance("abc", "") == 3);
  CHECK(kvgate::levenshtein_distance("same", "same") == 0);
  CHECK(kvgate::levenshtein_distance("caf\xC3\xA9", "cafe") == 1);  // one code point, two bytes
  CHECK(kvgate::normalized_edit_distance("", "") == 0.0);
  CHECK(kvgate::normalized_edit_distance("abcd", "wxyz") == 1.0);
  CHECK(kvgate::normalized_edit_distance("abcd", "abcx") == Approx(0.25));
  // Random strings over a small alphabet, across the 64-row block boundaries.
  kvgate::Rng rng(7);
  for (int trial = 0; trial < 300; ++trial) {
    const std::size_t la = rng.below(200), lb = rng.below(200);
    const int alphabet = 2 + static_cast<int>(rng.below(5));
    std::string a, b;
    std::vector<int> va, vb;
    for (std::size_t i = 0; i < la; ++i) va.push_back(static_cast<int>(rng.below(alphabet))), a.push_back(static_cast<char>('a' + va.back()));
    for (std::size_t i = 0; i < lb; ++i) vb.push_back(static_cast<int>(rng.below(alphabet))), b.push_back(static_cast<char>('a' + vb.back()));
    INFO(a << " | " << b);
    REQUIRE(kvgate::levenshtein_distance(a, b) == dp_levenshtein(va, vb));
  }
}

TEST_CASE("subset: seeded, sorted, distinct, and growing with the limit", "[subset]") {
  const auto a = kvgate::seeded_subset(1319, 50, 1, "gsm8k/limit");
  CHECK(a == kvgate::seeded_subset(1319, 50, 1, "gsm8k/limit"));
  CHECK(a != kvgate::seeded_subset(1319, 50, 2, "gsm8k/limit"));
  CHECK(a.size() == 50);
  CHECK(std::is_sorted(a.begin(), a.end()));
  CHECK(std::set<std::size_t>(a.begin(), a.end()).size() == 50);
  CHECK(a.back() > 49);  // not the first 50
  const auto bigger = kvgate::seeded_subset(1319, 100, 1, "gsm8k/limit");
  for (std::size_t i : a) CHECK(std::binary_search(bigger.begin(), bigger.end(), i));
  CHECK(kvgate::seeded_subset(5, 10, 1, "k").size() == 5);
}
