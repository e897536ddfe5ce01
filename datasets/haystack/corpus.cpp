#include "datasets/haystack/corpus.h"

#include <utf8proc.h>

#include <array>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <unordered_set>

#include "harness/core/error.h"
#include "harness/core/rng.h"
#include "harness/core/sha256.h"

namespace kvgate::haystack {

namespace {

constexpr std::size_t kMaxSentenceBytes = 600;
constexpr std::size_t kShortSentenceBytes = 80;
constexpr std::size_t kMinShortSentences = 8;

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'; }

// The byte offset of the first invalid UTF-8 sequence, or npos.
std::size_t invalid_utf8_at(std::string_view s) {
  std::size_t i = 0;
  while (i < s.size()) {
    utf8proc_int32_t cp = 0;
    const auto n = utf8proc_iterate(reinterpret_cast<const utf8proc_uint8_t*>(s.data() + i),
                                    static_cast<utf8proc_ssize_t>(s.size() - i), &cp);
    if (n <= 0) return i;
    i += static_cast<std::size_t>(n);
  }
  return std::string_view::npos;
}

// Closing characters allowed between a sentence's final mark and the space: quotes and brackets,
// ASCII or the typographic ’ ” (UTF-8 E2 80 99 / E2 80 9D). Returns the index after them.
std::size_t skip_closers(std::string_view t, std::size_t j) {
  for (;;) {
    if (j < t.size() && (t[j] == '"' || t[j] == '\'' || t[j] == ')' || t[j] == ']')) {
      ++j;
    } else if (j + 2 < t.size() && static_cast<unsigned char>(t[j]) == 0xE2 &&
               static_cast<unsigned char>(t[j + 1]) == 0x80 &&
               (static_cast<unsigned char>(t[j + 2]) == 0x99 || static_cast<unsigned char>(t[j + 2]) == 0x9D)) {
      j += 3;
    } else {
      return j;
    }
  }
}

bool starts_sentence(unsigned char c) {
  return (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '"' || c == '\'' || c == '(' || c == '[' ||
         c >= 0x80;
}

// True when the word ending at t[i] (the '.') is an abbreviation or an initial: "Dr." "e.g." "J."
bool abbreviation_before(std::string_view t, std::size_t i) {
  std::size_t b = i;
  while (b > 0 && !is_space(t[b - 1])) --b;
  std::string word(t.substr(b, i - b));
  while (!word.empty() && (word.front() == '(' || word.front() == '"')) word.erase(word.begin());
  if (word.size() == 1 && word[0] >= 'A' && word[0] <= 'Z') return true;  // an initial
  static const std::array<const char*, 24> kAbbrev = {"Mr",  "Mrs", "Ms",  "Dr",   "Prof", "St",  "Jr",  "Sr",
                                                      "vs",  "etc", "e.g", "i.e",  "No",   "Fig", "Vol", "pp",
                                                      "cf",  "al",  "Inc", "Ltd",  "Co",   "Gen", "Mt",  "approx"};
  for (const char* a : kAbbrev)
    if (word == a) return true;
  return false;
}

void add_sentence(std::vector<Sentence>& out, std::string_view s, bool& paragraph_start) {
  while (!s.empty()) {
    std::string_view piece = s;
    if (piece.size() > kMaxSentenceBytes) {
      std::size_t cut = piece.rfind(' ', kMaxSentenceBytes);
      if (cut == std::string_view::npos || cut == 0) cut = kMaxSentenceBytes;
      // Never cut inside a UTF-8 sequence.
      while (cut < piece.size() && (static_cast<unsigned char>(piece[cut]) & 0xC0) == 0x80) ++cut;
      piece = piece.substr(0, cut);
    }
    std::string_view rest = s.substr(piece.size());
    while (!piece.empty() && piece.back() == ' ') piece.remove_suffix(1);
    while (!rest.empty() && rest.front() == ' ') rest.remove_prefix(1);
    if (!piece.empty()) {
      out.push_back({std::string(piece), paragraph_start});
      paragraph_start = false;
    }
    s = rest;
  }
}

void split_paragraph(std::vector<Sentence>& out, const std::string& t, bool& paragraph_start) {
  std::size_t start = 0;
  for (std::size_t i = 0; i < t.size(); ++i) {
    const char c = t[i];
    if (c != '.' && c != '!' && c != '?') continue;
    const std::size_t j = skip_closers(t, i + 1);
    if (j < t.size() && !(t[j] == ' ' && j + 1 < t.size() && starts_sentence(static_cast<unsigned char>(t[j + 1]))))
      continue;
    if (c == '.' && abbreviation_before(t, i)) continue;
    add_sentence(out, std::string_view(t).substr(start, j - start), paragraph_start);
    start = j + 1;
    i = j;
  }
  if (start < t.size()) add_sentence(out, std::string_view(t).substr(start), paragraph_start);
}

}  // namespace

std::vector<Sentence> split_sentences(std::string_view text) {
  std::vector<Sentence> out;
  std::string paragraph;  // whitespace collapsed
  bool paragraph_start = true;
  auto flush = [&] {
    while (!paragraph.empty() && paragraph.back() == ' ') paragraph.pop_back();
    if (!paragraph.empty()) {
      paragraph_start = true;
      split_paragraph(out, paragraph, paragraph_start);
    }
    paragraph.clear();
  };
  std::size_t pos = 0;
  while (pos <= text.size()) {
    std::size_t eol = text.find('\n', pos);
    if (eol == std::string_view::npos) eol = text.size();
    std::string_view line = text.substr(pos, eol - pos);
    bool blank = true;
    for (char c : line) blank = blank && is_space(c);
    if (blank) {
      flush();
    } else {
      for (char c : line) {
        if (is_space(c)) {
          if (!paragraph.empty() && paragraph.back() != ' ') paragraph.push_back(' ');
        } else {
          paragraph.push_back(c);
        }
      }
      if (!paragraph.empty() && paragraph.back() != ' ') paragraph.push_back(' ');
    }
    pos = eol + 1;
  }
  flush();
  if (!out.empty()) out.front().paragraph_start = false;
  return out;
}

Corpus load_corpus(const std::vector<std::string>& paths) {
  Corpus c;
  std::string all;
  for (const std::string& path : paths) {
    std::ifstream in(path, std::ios::binary);
    if (!in) throw Error("--haystack-file " + path + ": cannot read the file: check the path and its permissions");
    std::ostringstream ss;
    ss << in.rdbuf();
    std::string text = ss.str();
    if (const std::size_t bad = invalid_utf8_at(text); bad != std::string::npos)
      throw Error("--haystack-file " + path + ": not UTF-8 text (invalid byte sequence at byte " + std::to_string(bad) +
                  "): convert it to UTF-8, e.g. with iconv");
    if (!all.empty()) all += "\n\n";  // files never run into each other's paragraphs
    all += text;
    c.names.push_back(std::filesystem::path(path).filename().string());
  }
  c.sha256 = sha256_hex(all);
  c.sentences = split_sentences(all);
  if (c.sentences.empty())
    throw Error("--haystack-file: the files hold no text: pass files with prose in them, or omit the flag for generated prose");
  std::unordered_set<std::string_view> seen;
  for (std::size_t i = 0; i < c.sentences.size(); ++i) {
    const std::string& s = c.sentences[i].text;
    c.bytes += s.size() + (i == 0 ? 0 : c.sentences[i].paragraph_start ? 2 : 1);
    if (s.size() <= kShortSentenceBytes && seen.insert(s).second) c.short_sentences.push_back(s);
  }
  return c;
}

CorpusCursor::CorpusCursor(const Corpus& corpus, std::size_t start, std::uint64_t seed)
    : corpus_(corpus), pos_(start % corpus.sentences.size()), short_pos_(0) {
  Rng rng(seed);
  if (!corpus_.short_sentences.empty()) short_pos_ = rng.below(corpus_.short_sentences.size());
  if (corpus_.short_sentences.size() < kMinShortSentences) prose_ = std::make_unique<ProseGenerator>(rng.next());
}

Sentence CorpusCursor::next() {
  Sentence s = corpus_.sentences[pos_];
  // Going round to the start of the corpus begins a new paragraph.
  if (pos_ == 0 && !first_) s.paragraph_start = true;
  if (first_) s.paragraph_start = false;
  first_ = false;
  pos_ = (pos_ + 1) % corpus_.sentences.size();
  return s;
}

std::string CorpusCursor::next_short() {
  if (prose_) return prose_->next_short();
  const auto& shorts = corpus_.short_sentences;
  // Cycle through the corpus's own short sentences; after a full round they repeat (rare: a
  // haystack takes at most a few dozen).
  std::string s = shorts[(short_pos_ + shorts_given_) % shorts.size()];
  ++shorts_given_;
  return s;
}

}  // namespace kvgate::haystack
