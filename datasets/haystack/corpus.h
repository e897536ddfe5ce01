// A user's own haystack text (--haystack-file: e.g. their production documents), split into
// paragraphs and sentences, read as an endless stream from any starting sentence.
#pragma once
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "datasets/haystack/prose_generator.h"
#include "datasets/haystack/sentence_source.h"

namespace kvgate::haystack {

struct Corpus {
  std::vector<Sentence> sentences;
  std::vector<std::string> short_sentences;  // distinct sentences of at most 80 bytes, for filling
  std::vector<std::string> names;            // file names (no directories), as recorded in trial meta
  std::string sha256;                        // of the files' bytes, in order
  std::size_t bytes = 0;                     // rendered size of one pass over the sentences
};

// Reads UTF-8 text files (in order). Errors name the file: unreadable, not UTF-8, or no text.
Corpus load_corpus(const std::vector<std::string>& paths);

// Splits text into sentences: paragraphs at blank lines, whitespace inside a paragraph collapsed to
// single spaces, sentence ends at . ! ? (with closing quotes or brackets) before a space and a
// capital, digit or quote, except after common abbreviations and initials. Sentences longer than
// 600 bytes are cut at a space so that lengths can still be fitted finely.
std::vector<Sentence> split_sentences(std::string_view text);

// Reads a corpus as an endless stream from sentence `start`, going round to the beginning when it
// runs out (each time round repeats the text: the caller records it). Short fill sentences come
// from the corpus, or from generated prose (seeded by `seed`) when it has fewer than 8.
class CorpusCursor final : public SentenceSource {
 public:
  CorpusCursor(const Corpus& corpus, std::size_t start, std::uint64_t seed);
  Sentence next() override;
  std::string next_short() override;

 private:
  const Corpus& corpus_;
  std::size_t pos_;
  std::size_t short_pos_;
  std::size_t shorts_given_ = 0;
  std::unique_ptr<ProseGenerator> prose_;  // short sentences when the corpus has too few
  bool first_ = true;
};

}  // namespace kvgate::haystack
