// datasets/haystack: generated prose, user corpora, and haystacks of a byte budget with insertions.
#include <filesystem>
#include <map>
#include <set>
#include <unordered_set>

#include "tests/catch_compat.hpp"
#include "harness/core/error.h"
#include "harness/core/rng.h"
#include "harness/core/sha256.h"
#include "datasets/haystack/corpus.h"
#include "datasets/haystack/haystack.h"
#include "datasets/haystack/prose_generator.h"
#include "tests/test_util.h"

using namespace kvgate::haystack;
using kvtest::contains;

namespace {

std::vector<Sentence> draw(SentenceSource& src, std::size_t n) {
  std::vector<Sentence> out;
  for (std::size_t i = 0; i < n; ++i) out.push_back(src.next());
  return out;
}

std::string join(const std::vector<Sentence>& v) {
  std::string out;
  for (const auto& s : v) out += (out.empty() ? "" : s.paragraph_start ? "\n\n" : " ") + s.text;
  return out;
}

}  // namespace

TEST_CASE("prose: the same seed gives the same text, another seed other text", "[haystack]") {
  ProseGenerator a(7), b(7), c(8);
  const auto ta = draw(a, 400), tb = draw(b, 400), tc = draw(c, 400);
  CHECK(join(ta) == join(tb));
  CHECK(join(ta) != join(tc));
}

TEST_CASE("prose: pinned output: the same on every machine and release (tasks files are frozen by seed)", "[haystack]") {
  // Changing the vocabulary, the templates or the draws changes every generated trial: if that is
  // intended, bump the generators' meta "version" and update these values.
  ProseGenerator g(1);
  CHECK(g.next().text == "Mabel had always been uneasy about the rising water.");
  ProseGenerator h(1);
  std::string all;
  for (int i = 0; i < 200; ++i) {
    const Sentence s = h.next();
    all += s.text + (s.paragraph_start ? "|P\n" : "\n");
  }
  CHECK(kvgate::sha256_hex(all) == "b1e31c7598db5c5a64ede291816be9b6dad72b0d034e42976c1a760b9aeb52e1");
}

TEST_CASE("prose: 128K tokens' worth has no repeated sentence, so no repeated 5-sentence block", "[haystack]") {
  ProseGenerator g(42);
  const auto v = draw(g, 8500);  // ~620 KB, more than a 128K-token haystack
  std::size_t bytes = 0;
  std::unordered_set<std::string> sentences;
  std::set<std::string> blocks;
  for (std::size_t i = 0; i < v.size(); ++i) {
    bytes += v[i].text.size();
    CHECK(sentences.insert(v[i].text).second);
    if (i + 5 <= v.size()) {
      std::string block;
      for (std::size_t k = i; k < i + 5; ++k) block += v[k].text + "|";
      CHECK(blocks.insert(block).second);
    }
  }
  CHECK(bytes > 600000);
}

TEST_CASE("prose: looks like prose: capitalized sentences, paragraphs of 3 to 8, no digits, varied openings", "[haystack]") {
  ProseGenerator g(3);
  const auto v = draw(g, 3000);
  std::map<std::string, int> openings;  // first two words
  int paragraph_len = 0;
  std::vector<int> lengths;
  for (std::size_t i = 0; i < v.size(); ++i) {
    const std::string& s = v[i].text;
    REQUIRE(!s.empty());
    const char first = s[0] == '"' ? s[1] : s[0];
    CHECK((first >= 'A' && first <= 'Z'));
    CHECK((s.back() == '.' || s.back() == '?' || s.back() == '!'));
    CHECK(s.find_first_of("0123456789{}") == std::string::npos);
    CHECK(s.find("  ") == std::string::npos);
    if (v[i].paragraph_start && i > 0) {
      lengths.push_back(paragraph_len);
      paragraph_len = 0;
    }
    ++paragraph_len;
    const std::size_t sp = s.find(' ', s.find(' ') + 1);
    ++openings[s.substr(0, sp)];
  }
  REQUIRE(lengths.size() > 300);
  for (int l : lengths) {
    CHECK(l >= 3);
    CHECK(l <= 8);
  }
  CHECK(openings.size() > 300);
  for (const auto& [opening, n] : openings) CHECK(n < 150);  // no opening dominates (5% of 3000)
}

TEST_CASE("prose: short sentences are short and never repeat the stream", "[haystack]") {
  ProseGenerator g(5);
  std::set<std::string> seen;
  for (int i = 0; i < 200; ++i) seen.insert(g.next().text);
  for (int i = 0; i < 40; ++i) {
    const std::string s = g.next_short();
    CHECK(s.size() <= 40);
    CHECK(seen.insert(s).second);
  }
}

TEST_CASE("corpus: paragraphs, sentences, abbreviations, quotes and long sentences", "[haystack]") {
  const std::string text =
      "Dr. Smith met J. R. Jones at 5 p.m. near the dock. \"Is it late?\" she asked.\r\n"
      "It was.  The end (mostly). Then 3 ships came!\n"
      "   \n"
      "Second paragraph, one sentence e.g. like this one. Another.\n\n\n" +
      std::string(700, 'a') + " tail words here.";
  const auto v = split_sentences(text);
  std::vector<std::string> texts;
  for (const auto& s : v) texts.push_back(s.text);
  REQUIRE(texts.size() >= 9);
  CHECK(texts[0] == "Dr. Smith met J. R. Jones at 5 p.m. near the dock.");
  CHECK(texts[1] == "\"Is it late?\" she asked.");
  CHECK(texts[2] == "It was.");
  CHECK(texts[3] == "The end (mostly).");
  CHECK(texts[4] == "Then 3 ships came!");
  CHECK(texts[5] == "Second paragraph, one sentence e.g. like this one.");
  CHECK(texts[6] == "Another.");
  CHECK_FALSE(v[0].paragraph_start);
  CHECK_FALSE(v[2].paragraph_start);  // a single line break is not a paragraph
  CHECK(v[5].paragraph_start);
  CHECK(v[7].paragraph_start);
  for (const auto& t : texts) CHECK(t.size() <= 600);
  // Cuts never split a UTF-8 sequence.
  const auto u = split_sentences(std::string(599, 'b') + "\xc3\xa9" + std::string(50, 'c'));
  REQUIRE(u.size() == 2);
  CHECK(u[0].text.size() == 601);
  CHECK(texts[texts.size() - 2] == std::string(600, 'a'));  // no space to cut at: cut at 600 bytes
  CHECK(texts.back() == std::string(100, 'a') + " tail words here.");
}

TEST_CASE("corpus: files load in order with names and sha256; bad files are clear errors", "[haystack]") {
  kvtest::TempDir dir;
  kvtest::write_text(dir.file("a.txt"), "One short line. Two short lines.\n");
  kvtest::write_text(dir.file("b.txt"), "Third sentence here.");
  const Corpus c = load_corpus({dir.file("a.txt"), dir.file("b.txt")});
  REQUIRE(c.sentences.size() == 3);
  CHECK(c.sentences[2].paragraph_start);  // files never run into each other
  CHECK(c.names == std::vector<std::string>{"a.txt", "b.txt"});
  CHECK(c.sha256.size() == 64);
  CHECK(c.short_sentences.size() == 3);

  REQUIRE_THROWS_WITH(load_corpus({dir.file("missing.txt")}), contains("missing.txt: cannot read"));
  kvtest::write_text(dir.file("latin1.txt"), "caf\xe9 au lait.");
  REQUIRE_THROWS_WITH(load_corpus({dir.file("latin1.txt")}), contains("not UTF-8") && contains("byte 3"));
  kvtest::write_text(dir.file("blank.txt"), "  \n\n \n");
  REQUIRE_THROWS_WITH(load_corpus({dir.file("blank.txt")}), contains("no text"));
}

TEST_CASE("corpus: a cursor goes round the corpus, starting a paragraph when it does", "[haystack]") {
  kvtest::TempDir dir;
  kvtest::write_text(dir.file("c.txt"), "A one. A two. A three.");
  const Corpus c = load_corpus({dir.file("c.txt")});
  CorpusCursor cur(c, 1, 9);
  const auto v = draw(cur, 5);
  CHECK(v[0].text == "A two.");
  CHECK_FALSE(v[0].paragraph_start);
  CHECK(v[1].text == "A three.");
  CHECK(v[2].text == "A one.");
  CHECK(v[2].paragraph_start);
  CHECK(v[4].text == "A three.");
  // Fewer than 8 short sentences: fill sentences come from generated prose.
  CHECK_FALSE(cur.next_short().empty());
}

TEST_CASE("haystack: a selection fits its budget within a few bytes and renders to its size", "[haystack]") {
  ProseGenerator g(11);
  HaystackBuilder b(g);
  std::string out;
  for (std::int64_t budget : {0, 5, 30, 200, 1000, 4097, 50000, 600000}) {
    const HaystackSelection sel = b.select(budget);
    INFO(budget);
    CHECK(sel.bytes <= budget);
    if (budget >= 200) CHECK(budget - sel.bytes <= 12);  // top-up sentences close the gap
    out.clear();
    b.render(sel, {}, out);
    CHECK(static_cast<std::int64_t>(out.size()) == sel.bytes);
  }
  // Budgets only grow the stream's prefix: a larger budget keeps the smaller one's sentences.
  CHECK(b.select(50000).sentences <= b.select(60000).sentences);
}

TEST_CASE("haystack: insertions go to the nearest sentence boundary, at the offsets and depths reported", "[haystack]") {
  ProseGenerator g(12);
  HaystackBuilder b(g);
  const HaystackSelection sel = b.select(20000);
  const std::vector<Insertion> ins = {{0.5, "NEEDLE-HALF."}, {0.0, "NEEDLE-START."}, {1.0, "NEEDLE-END."}, {0.5, "NEEDLE-HALF-2."}};
  std::string out = "PREFIX\n";
  const auto placed = b.render(sel, ins, out);
  REQUIRE(placed.size() == 4);
  for (std::size_t i = 0; i < ins.size(); ++i) {
    INFO(i);
    CHECK(out.compare(placed[i].offset, ins[i].text.size(), ins[i].text) == 0);
  }
  CHECK(placed[1].offset == 7);
  CHECK(placed[1].depth == 0.0);
  CHECK(placed[2].offset + ins[2].text.size() == out.size());
  CHECK(placed[2].depth == 1.0);
  CHECK(placed[0].depth == kvtest::Approx(0.5).margin(0.01));
  CHECK(placed[3].offset == placed[0].offset + ins[0].text.size() + 1);  // same boundary, in the given order
  // A needle sits between sentences: what precedes it ends a sentence.
  const char before = out[placed[0].offset - 2];
  CHECK((before == '.' || before == '?' || before == '!' || before == '"'));
  const std::size_t extra = 7 + ins[0].text.size() + ins[1].text.size() + ins[2].text.size() + ins[3].text.size() + 4;
  CHECK(out.size() == static_cast<std::size_t>(sel.bytes) + extra);
}
