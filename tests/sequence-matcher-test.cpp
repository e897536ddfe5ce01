// The difflib port (datasets/mrcr/sequence_matcher.h): the vectors of long-context.md §4, then
// thousands of seeded random pairs against Python's own difflib, which must agree bit for bit.
#include <cstdlib>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "tests/catch_compat.hpp"
#include "harness/core/rng.h"
#include "datasets/mrcr/mrcr_grader.h"
#include "datasets/mrcr/mrcr_text.h"
#include "datasets/mrcr/sequence_matcher.h"
#include "tests/python_check.h"
#include "tests/test_util.h"

using kvgate::SequenceMatcher;
using kvgate::sequence_ratio;

namespace {

std::string repeat(const std::string& s, int n) {
  std::string out;
  for (int i = 0; i < n; ++i) out += s;
  return out;
}

std::vector<SequenceMatcher::Match> blocks(const std::string& a, const std::string& b) {
  const std::u32string ua = kvgate::decode_code_points(a), ub = kvgate::decode_code_points(b);
  return SequenceMatcher(ua, ub).matching_blocks();
}

}  // namespace

TEST_CASE("difflib: ratio vectors of long-context.md section 4", "[difflib]") {
  CHECK(sequence_ratio("abcd", "bcde") == 0.75);
  CHECK(sequence_ratio("abxcd", "abcd") == 0.8888888888888888);
  CHECK(sequence_ratio("cac", "acabccb") == 0.6);
  CHECK(sequence_ratio("acabccb", "cac") == 0.4);  // asymmetric without autojunk
  const std::string a = repeat("the cat sat on the mat. ", 10), b = repeat("the cat sat on a mat! ", 10);
  REQUIRE(a.size() == 240);
  REQUIRE(b.size() == 220);
  CHECK(sequence_ratio(a, b) == 0.06521739130434782);  // autojunk: popular letters of b leave b2j
  {
    const std::u32string ua = kvgate::decode_code_points(a), ub = kvgate::decode_code_points(b);
    CHECK(SequenceMatcher(ua, ub, /*autojunk=*/false).ratio() == 0.8695652173913043);
  }
  CHECK(sequence_ratio("xxxxx", std::string(150, 'x') + std::string(60, 'y')) == 0.046511627906976744);
  CHECK(sequence_ratio("a\xF0\x9F\x98\x80" "b", "a\xF0\x9F\x98\x80" "c") == 0.6666666666666666);  // a😀b / a😀c
  CHECK(sequence_ratio("", "") == 1.0);
  CHECK(sequence_ratio("abc", "") == 0.0);
  CHECK(sequence_ratio("", "abc") == 0.0);
}

TEST_CASE("difflib: matching blocks and tie rules", "[difflib]") {
  using M = SequenceMatcher::Match;
  CHECK(blocks("abcd", "bcde") == std::vector<M>{{1, 0, 3}, {4, 4, 0}});
  CHECK(blocks("abxcd", "abcd") == std::vector<M>{{0, 0, 2}, {3, 2, 2}, {5, 4, 0}});
  const std::string a = repeat("the cat sat on the mat. ", 10), b = repeat("the cat sat on a mat! ", 10);
  CHECK(blocks(a, b) == std::vector<M>{{0, 0, 15}, {240, 220, 0}});
  // Found only by the forward extension: 'x' is popular in b, so the core match is empty.
  CHECK(blocks("xxxxx", std::string(150, 'x') + std::string(60, 'y')) == std::vector<M>{{0, 0, 5}, {5, 210, 0}});
  // The docstring example: the earliest longest match in a, then the earliest in b.
  const std::u32string da = kvgate::decode_code_points(" abcd"), db = kvgate::decode_code_points("abcd abcd");
  CHECK(SequenceMatcher(da, db).find_longest_match(0, 5, 0, 9) == M{0, 4, 5});
  // Ties: "ab" occurs twice in b; the first (smallest j) wins.
  const std::u32string ta = kvgate::decode_code_points("ab"), tb = kvgate::decode_code_points("xabyab");
  CHECK(SequenceMatcher(ta, tb).find_longest_match(0, 2, 0, 6) == M{0, 1, 2});
}

TEST_CASE("difflib: autojunk counts code points and needs len(b) >= 200", "[difflib]") {
  // 199 elements: no autojunk even though 'a' is everywhere.
  const std::u32string b199 = kvgate::decode_code_points(std::string(199, 'a'));
  const std::u32string b200 = kvgate::decode_code_points(std::string(200, 'a'));
  const std::u32string a = kvgate::decode_code_points("aaa");
  CHECK(SequenceMatcher(a, b199).popular_count() == 0);
  CHECK(SequenceMatcher(a, b200).popular_count() == 1);
  // 200 emoji are 800 bytes but 200 elements: the threshold counts code points.
  std::string emoji;
  for (int i = 0; i < 150; ++i) emoji += "\xF0\x9F\x98\x80";
  const std::u32string e150 = kvgate::decode_code_points(emoji);
  CHECK(e150.size() == 150);
  CHECK(SequenceMatcher(a, e150).popular_count() == 0);
  // Popular means more than n // 100 + 1 occurrences: with n = 200, 3 is not popular, 4 is.
  std::string b = std::string(196, 'z') + "qqq" + "w";
  std::u32string ub = kvgate::decode_code_points(b);
  CHECK(SequenceMatcher(a, ub).popular_count() == 1);  // only 'z'
  b = std::string(195, 'z') + "qqqq" + "w";
  ub = kvgate::decode_code_points(b);
  CHECK(SequenceMatcher(a, ub).popular_count() == 2);  // 'z' and 'q'
}

TEST_CASE("difflib: UTF-8 decoding keeps bad bytes distinct (surrogateescape)", "[difflib]") {
  CHECK(kvgate::decode_code_points("a\xC3\xA9") == U"a\u00e9");
  CHECK(kvgate::decode_code_points("\xE2\x82") == std::u32string{0xDCE2, 0xDC82});  // cut short
  CHECK(kvgate::decode_code_points("\xC0\xAF") == std::u32string{0xDCC0, 0xDCAF});  // overlong
  CHECK(kvgate::decode_code_points("\xED\xA0\x80") == std::u32string{0xDCED, 0xDCA0, 0xDC80});  // surrogate
  CHECK(kvgate::decode_code_points("\xF4\x90\x80\x80") == std::u32string{0xDCF4, 0xDC90, 0xDC80, 0xDC80});  // > U+10FFFF
}

TEST_CASE("python repr of floats", "[difflib]") {
  using kvgate::python_float_repr;
  CHECK(python_float_repr(1.0) == "1.0");
  CHECK(python_float_repr(0.0) == "0.0");
  CHECK(python_float_repr(0.75) == "0.75");
  CHECK(python_float_repr(0.8888888888888888) == "0.8888888888888888");
  CHECK(python_float_repr(2e-06) == "2e-06");
  CHECK(python_float_repr(0.0001) == "0.0001");
  CHECK(python_float_repr(1.5e-05) == "1.5e-05");
  CHECK(python_float_repr(1e16) == "1e+16");
  CHECK(python_float_repr(123456789012345.0) == "123456789012345.0");
  CHECK(python_float_repr(-0.5) == "-0.5");
}

namespace {

// Seeded random pairs of every kind the grader meets.
struct PairMaker {
  kvgate::Rng rng{20261129};

  std::string from_alphabet(const std::vector<std::string>& alphabet, std::size_t n) {
    std::string s;
    for (std::size_t i = 0; i < n; ++i) s += alphabet[rng.below(alphabet.size())];
    return s;
  }
  std::string words(std::size_t min_chars, std::size_t max_chars) {
    static const std::vector<std::string> vocab = {"the", "cat", "sat", "on", "a", "mat", "and", "then", "river",
                                                   "quiet", "lantern", "of", "in", "is", "was", "light", "tapir", "poem"};
    const std::size_t want = min_chars + rng.below(max_chars - min_chars + 1);
    std::string s;
    while (s.size() < want) s += vocab[rng.below(vocab.size())] + (rng.bernoulli(0.1) ? ". " : " ");
    return s.substr(0, want);
  }
  // Word-level edits: delete, insert, substitute, swap.
  std::string mutate(const std::string& s, int edits) {
    std::vector<std::string> w;
    std::size_t start = 0;
    for (std::size_t i = 0; i <= s.size(); ++i)
      if (i == s.size() || s[i] == ' ') {
        w.push_back(s.substr(start, i - start));
        start = i + 1;
      }
    for (int e = 0; e < edits && !w.empty(); ++e) {
      const std::size_t i = rng.below(w.size());
      switch (rng.below(4)) {
        case 0: w.erase(w.begin() + static_cast<long>(i)); break;
        case 1: w.insert(w.begin() + static_cast<long>(i), "inserted"); break;
        case 2: w[i] = "changed"; break;
        default: std::swap(w[i], w[rng.below(w.size())]); break;
      }
    }
    std::string out;
    for (std::size_t i = 0; i < w.size(); ++i) out += (i ? " " : "") + w[i];
    return out;
  }
  std::string periodic(std::size_t n) {
    const std::string unit = from_alphabet({"a", "b", "c", " "}, 1 + rng.below(6));
    std::string s;
    while (s.size() < n) s += unit;
    s.resize(n);
    for (int k = static_cast<int>(rng.below(4)); k > 0; --k) s[rng.below(n)] = "xyz"[rng.below(3)];
    return s;
  }
};

}  // namespace

TEST_CASE("difflib: identical to Python's difflib on thousands of seeded pairs", "[difflib][python]") {
  const std::string python = kvtest::find_python();
  if (python.empty())
    FAIL("python3 not found: run scripts/setup (it installs python3; this cross-check runs Python's difflib)");
  PairMaker m;
  struct Item {
    std::string a, b;
    std::string prefix = {};
    bool grade = false;
  };
  std::vector<Item> items;
  const std::vector<std::string> small = {"a", "b", "c", "d"};
  const std::vector<std::string> uni = {"a", "b", " ", "\xC3\xA9", "\xC3\x9F", "\xE4\xB8\xAD", "\xE6\x96\x87",
                                        "\xF0\x9F\x98\x80", "\xF0\x9F\x8E\x89", "e\xCC\x81", "\xE2\x80\x94", "\n"};
  for (int i = 0; i < 1500; ++i) {  // short, small alphabets: ties everywhere
    const auto& alpha = i % 2 ? small : std::vector<std::string>{"a", "b", "c", "d", "e", "f", "g", "h"};
    items.push_back({m.from_alphabet(alpha, m.rng.below(31)), m.from_alphabet(alpha, m.rng.below(31))});
  }
  for (int i = 0; i < 900; ++i) {  // long (b >= 200: autojunk), related and unrelated
    std::string a = m.words(200, 1500);
    std::string b = i % 3 == 0 ? m.words(200, 1500) : m.mutate(a, 1 + static_cast<int>(m.rng.below(20)));
    if (b.size() < 200) b += m.words(200 - b.size(), 200 - b.size() + 20);
    if (i % 2) std::swap(a, b);
    items.push_back({a, b});
  }
  for (int i = 0; i < 800; ++i) {  // repetitive, around the 200-element threshold and beyond
    const std::size_t n = i % 4 == 0 ? 195 + m.rng.below(10) : 100 + m.rng.below(600);
    items.push_back({m.periodic(n / 2 + m.rng.below(n)), m.periodic(n)});
  }
  for (int i = 0; i < 700; ++i) {  // unicode, short and long (b counted in code points)
    const std::size_t n = i % 2 ? m.rng.below(40) : 190 + m.rng.below(200);
    std::string a = m.from_alphabet(uni, n);
    items.push_back({i % 3 ? m.from_alphabet(uni, n / 2 + m.rng.below(n + 1)) : a + m.from_alphabet(uni, 5), a});
  }
  for (int i = 0; i < 600; ++i) {  // MRCR-like: a reply and a model's imperfect copy, through grade()
    kvgate::Rng r(kvgate::derive_seed(7, std::to_string(i)));
    const std::size_t fmt = r.below(kvgate::mrcr::formats().size());
    const std::string reply = kvgate::mrcr::write_reply(fmt, r.pick(kvgate::mrcr::topics()), 30 + static_cast<int>(r.below(400)), r);
    const std::string prefix = "aYooSG8CQg";
    std::string response = prefix + m.mutate(reply, static_cast<int>(m.rng.below(30)));
    switch (i % 6) {
      case 0: response = " " + response; break;  // leading space: 0
      case 1: response = prefix; break;          // prefix only
      case 2: response = reply; break;           // prefix missing
      default: break;
    }
    items.push_back({response, prefix + reply, prefix, true});
  }
  REQUIRE(items.size() >= 4000);

  kvtest::TempDir dir;
  std::string lines;
  for (const Item& it : items) {
    nlohmann::json j = {{"a", it.a}, {"b", it.b}};
    if (it.grade) j["p"] = it.prefix;
    lines += j.dump() + "\n";
  }
  kvtest::write_text(dir.file("pairs.jsonl"), lines);
  const std::string script = R"PY(
import json, sys
from difflib import SequenceMatcher
def grade(response, answer, random_string_to_prepend) -> float:
    if not response.startswith(random_string_to_prepend):
        return 0
    response = response.removeprefix(random_string_to_prepend)
    answer = answer.removeprefix(random_string_to_prepend)
    return float(SequenceMatcher(None, response, answer).ratio())
out = []
for line in open(sys.argv[1], encoding="utf-8"):
    j = json.loads(line)
    r = SequenceMatcher(None, j["a"], j["b"]).ratio()
    g = grade(j["a"], j["b"], j["p"]) if "p" in j else r
    out.append(f"{float(r).hex()} {repr(r)} {float(g).hex()}")
print("\n".join(out))
)PY";
  const std::string out = kvtest::run_python(python, script, dir.file("pairs.jsonl"));
  std::vector<std::string> rows;
  for (std::size_t pos = 0; pos < out.size();) {
    const std::size_t nl = out.find('\n', pos);
    rows.push_back(out.substr(pos, nl - pos));
    pos = nl == std::string::npos ? out.size() : nl + 1;
  }
  REQUIRE(rows.size() == items.size());
  int mismatches = 0;
  for (std::size_t i = 0; i < items.size(); ++i) {
    char hex_r[64], repr_r[64], hex_g[64];
    REQUIRE(std::sscanf(rows[i].c_str(), "%63s %63s %63s", hex_r, repr_r, hex_g) == 3);
    const double want = std::strtod(hex_r, nullptr), want_grade = std::strtod(hex_g, nullptr);
    const double got = sequence_ratio(items[i].a, items[i].b);
    const double got_grade = items[i].grade ? kvgate::mrcr_score(items[i].a, items[i].b, items[i].prefix).score : got;
    if (got != want || got_grade != want_grade || kvgate::python_float_repr(got) != repr_r) {
      if (++mismatches <= 5) {
        INFO("pair " << i << ": a=" << nlohmann::json(items[i].a).dump().substr(0, 200)
                     << " b=" << nlohmann::json(items[i].b).dump().substr(0, 200));
        CHECK(got == want);
        CHECK(got_grade == want_grade);
        CHECK(kvgate::python_float_repr(got) == std::string(repr_r));
      }
    }
  }
  CHECK(mismatches == 0);
}

TEST_CASE("difflib: identical to Python on bytes that are not UTF-8", "[difflib][python]") {
  const std::string python = kvtest::find_python();
  if (python.empty()) FAIL("python3 not found: run scripts/setup (this cross-check runs Python's difflib)");
  kvgate::Rng rng(5);
  std::vector<std::pair<std::string, std::string>> pairs;
  for (int i = 0; i < 300; ++i) {
    auto bytes = [&](std::size_t n) {
      std::string s;
      for (std::size_t k = 0; k < n; ++k) s.push_back(static_cast<char>(rng.bernoulli(0.7) ? "ab\xC3\xE2\x82\xA9\xF0\x9F\x98"[rng.below(9)] : rng.below(256)));
      return s;
    };
    pairs.emplace_back(bytes(rng.below(60)), bytes(i % 2 ? rng.below(60) : 200 + rng.below(100)));
  }
  auto hex = [](const std::string& s) {
    std::string h;
    char buf[3];
    for (unsigned char c : s) std::snprintf(buf, sizeof buf, "%02x", c), h += buf;
    return h;
  };
  kvtest::TempDir dir;
  std::string lines;
  for (const auto& [a, b] : pairs) lines += hex(a) + "|" + hex(b) + "\n";
  kvtest::write_text(dir.file("pairs.txt"), lines);
  const std::string script = R"PY(
import sys
from difflib import SequenceMatcher
for line in open(sys.argv[1]):
    a, b = (bytes.fromhex(x).decode("utf-8", "surrogateescape") for x in line.rstrip("\n").split("|"))
    print(SequenceMatcher(None, a, b).ratio().hex())
)PY";
  const std::string out = kvtest::run_python(python, script, dir.file("pairs.txt"));
  std::size_t pos = 0;
  int mismatches = 0;
  for (const auto& [a, b] : pairs) {
    const std::size_t nl = out.find('\n', pos);
    REQUIRE(nl != std::string::npos);
    const double want = std::strtod(out.substr(pos, nl - pos).c_str(), nullptr);
    pos = nl + 1;
    mismatches += sequence_ratio(a, b) != want;
  }
  CHECK(mismatches == 0);
}
