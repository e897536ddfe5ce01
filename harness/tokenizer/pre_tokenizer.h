// Pre-tokenization of byte-level BPE tokenizers: Split (a regex or a literal, with HF's five
// delimiter behaviours), Digits, and ByteLevel (optional GPT-2 regex and prefix space), alone or in
// a Sequence. The ByteLevel byte-to-character mapping itself is implicit: pieces stay raw bytes and
// the BPE model works on bytes.
#pragma once
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "harness/tokenizer/split_regex.h"

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

class PreTokenizer {
 public:
  // From tokenizer.json's "pre_tokenizer". Throws kvgate::Error naming `where` for unsupported
  // types (Metaspace, Whitespace, BertPreTokenizer, ...) and for a pipeline without ByteLevel.
  static PreTokenizer from_json(const nlohmann::json& j, const std::string& where);

  // Calls sink(piece) for each piece of text (valid UTF-8), in order; empty pieces are dropped.
  // A piece is only valid during the call. Nothing is buffered: a text streams through.
  template <typename Sink>
  void run(std::string_view text, Sink&& sink) const {
    if (text.empty()) return;
    const PieceFn fn = [&sink](std::string_view piece) { sink(piece); };
    run_step(0, text, fn);
  }
  std::vector<std::string_view> split(std::string_view text) const {
    std::vector<std::string_view> out;
    run(text, [&](std::string_view p) { out.push_back(p); });
    return out;
  }

 private:
  using PieceFn = std::function<void(std::string_view)>;
  void run_step(std::size_t step, std::string_view piece, const PieceFn& sink) const;
  std::vector<PreTokenizerStep> steps_;
};

}  // namespace kvgate::tok
