// Pre-tokenization of byte-level BPE tokenizers: Split (a regex or a literal, with HF's five
// delimiter behaviours), Digits, and ByteLevel (optional GPT-2 regex and prefix space), alone or in
// a Sequence. The ByteLevel byte-to-character mapping itself is implicit: pieces stay raw bytes and
// the BPE model works on bytes.
#pragma once
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "tokenizer/split_regex.h"

namespace kvgate::tok {

enum class SplitBehavior { Removed, Isolated, MergedWithPrevious, MergedWithNext, Contiguous };

struct PreTokenizerStep {
  enum class Kind { Split, Digits, ByteLevel } kind = Kind::Split;
  std::shared_ptr<const SplitRegex> regex;  // Split, and ByteLevel with use_regex
  SplitBehavior behavior = SplitBehavior::Isolated;
  bool invert = false;
  bool individual_digits = false;  // Digits
  bool add_prefix_space = false;   // ByteLevel
};

// Pieces of one pre-tokenized text: views of the input or of strings the pipeline had to build
// (a prefix space). Reused between calls to avoid allocation.
struct PreTokenized {
  std::vector<std::string_view> pieces;
  std::vector<std::unique_ptr<std::string>> owned;
  std::vector<std::string_view> tmp;
  std::vector<Span> spans;
  void clear() {
    pieces.clear();
    owned.clear();
  }
};

class PreTokenizer {
 public:
  // From tokenizer.json's "pre_tokenizer". Throws kvgate::Error naming `where` for unsupported
  // types (Metaspace, Whitespace, BertPreTokenizer, ...) and for a pipeline without ByteLevel.
  static PreTokenizer from_json(const nlohmann::json& j, const std::string& where);

  // Splits text (valid UTF-8) into pieces, appended to out.pieces in order; empty pieces dropped.
  void run(std::string_view text, PreTokenized& out) const;

 private:
  std::vector<PreTokenizerStep> steps_;
};

}  // namespace kvgate::tok
