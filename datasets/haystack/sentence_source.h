// Where haystack text comes from: an endless stream of sentences, grouped into paragraphs.
// ProseGenerator makes English prose from a seed; CorpusCursor reads a user's own documents.
#pragma once
#include <cstdint>
#include <string>

namespace kvgate::haystack {

struct Sentence {
  std::string text;              // one sentence, no surrounding whitespace
  bool paragraph_start = false;  // rendered after a blank line rather than a space
};

class SentenceSource {
 public:
  virtual ~SentenceSource() = default;
  // The next sentence of the stream; the stream never ends.
  virtual Sentence next() = 0;
  // A short sentence (a few words) for filling the last bytes of a haystack, distinct from every
  // sentence the stream has given.
  virtual std::string next_short() = 0;
};

}  // namespace kvgate::haystack
