// The parts of a loaded tokenizer (internal to the tokenizer module).
#pragma once
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "harness/tokenizer/added_tokens.h"
#include "harness/tokenizer/bpe_model.h"
#include "harness/tokenizer/chat_template.h"
#include "harness/tokenizer/normalizer.h"
#include "harness/tokenizer/pre_tokenizer.h"
#include "harness/tokenizer/tokenizer.h"

namespace kvgate {

namespace tok {
struct StringHash {
  using is_transparent = void;
  std::size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
};
using StringIdMap = std::unordered_map<std::string, std::int32_t, StringHash, std::equal_to<>>;
}  // namespace tok

struct Tokenizer::Impl {
  std::string path;
  std::unique_ptr<tok::BpeModel> model;
  tok::Normalizer normalizer;
  tok::PreTokenizer pre_tokenizer;
  tok::AddedTokenMatcher raw_matcher;         // added tokens with normalized=false
  tok::AddedTokenMatcher normalized_matcher;  // normalized=true, matched after normalization
  std::vector<tok::AddedToken> added;         // all added tokens
  std::unordered_map<std::int32_t, std::size_t> added_by_id;
  tok::StringIdMap added_by_content;
  std::vector<std::int32_t> prefix_ids, suffix_ids;  // the post-processor's single-sequence template
  enum class Decoder { ByteLevel, JoinWithSpaces } decoder = Decoder::ByteLevel;
  SpecialTokens specials;
  std::map<std::string, std::unique_ptr<ChatTemplate>> templates;  // by name; "default" for a lone one
  std::size_t vocab_size = 0;

  void encode_into(std::string_view text, bool add_special_tokens, std::vector<std::int32_t>& ids) const;
  void encode_normalized(std::string_view text, std::vector<std::int32_t>& ids) const;
  void encode_model(std::string_view text, std::vector<std::int32_t>& ids) const;
  std::optional<std::string_view> token_of(std::int32_t id) const;
  bool special(std::int32_t id) const;
};

// tokenizer_loader.cpp
std::shared_ptr<Tokenizer::Impl> load_tokenizer_impl(std::string_view tokenizer_json, std::string_view config_json,
                                                     std::string_view chat_template_file, const std::string& name);

}  // namespace kvgate
