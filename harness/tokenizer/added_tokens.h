// Added tokens (special and not) are cut out of the text before the model sees it, leftmost-longest
// as Hugging Face's Aho-Corasick matcher does, honouring lstrip/rstrip (absorb the whitespace
// beside the token) and single_word (only when not inside a word). Tokens with normalized=true are
// matched on the normalized text, the others on the raw input.
#pragma once
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace kvgate::tok {

struct AddedToken {
  std::int32_t id = 0;
  std::string content;
  bool special = false, lstrip = false, rstrip = false, normalized = false, single_word = false;
};

// One piece of input: either a matched added token (id >= 0) or text for the model (id < 0).
struct Segment {
  std::size_t begin = 0, end = 0;
  std::int32_t id = -1;
};

class AddedTokenMatcher {
 public:
  AddedTokenMatcher() = default;
  // `patterns[i]` is what token `tokens[i]` matches (its content, normalized when required).
  AddedTokenMatcher(std::vector<AddedToken> tokens, std::vector<std::string> patterns);

  bool empty() const { return tokens_.empty(); }
  // Splits text into segments covering it; appends to out.
  void split(std::string_view text, std::vector<Segment>& out) const;

 private:
  struct Node {
    std::vector<std::pair<unsigned char, std::int32_t>> next;  // sorted by byte
    std::int32_t token = -1;                                   // index into tokens_ ending here
  };
  std::int32_t child(std::int32_t node, unsigned char b) const;
  // Longest token starting at text[pos] (index into tokens_), or -1; *len receives its length.
  std::int32_t longest_at(std::string_view text, std::size_t pos, std::size_t* len) const;

  std::vector<AddedToken> tokens_;
  std::vector<Node> trie_;
  bool first_byte_[256] = {};
  int single_first_byte_ = -1;  // when every token starts with the same byte: memchr
};

}  // namespace kvgate::tok
