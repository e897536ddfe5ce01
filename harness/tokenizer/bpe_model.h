// The byte-level BPE model: vocabulary, merges by rank, and a word cache. Words are raw bytes; each
// byte starts as the id of its byte-level character and pairs merge lowest rank first, leftmost on
// ties, which is Hugging Face's heap order. Thread-safe.
#pragma once
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "harness/tokenizer/token_table.h"
#include "harness/tokenizer/word_cache.h"

namespace kvgate::tok {

// The vocabulary and merges of tokenizer.json's "model", as read (streamed by the loader, or taken
// from a parsed document).
struct BpeTables {
  std::vector<std::pair<std::string, std::int64_t>> vocab;
  std::vector<std::pair<std::string, std::string>> merges;
  std::string error;  // the first malformed entry, if any
  bool have_vocab = false, have_merges = false;
};

// Reads vocab and merges out of a parsed "model" object (when the loader did not stream them).
BpeTables bpe_tables_from_json(const nlohmann::json& model, const std::string& where);
// Validates one merge given as "a b" or [a, b]; on error sets tables.error (naming the rank).
void add_merge(BpeTables& tables, const nlohmann::json& merge);
void add_merge_string(BpeTables& tables, std::string_view merge);

class BpeModel {
 public:
  // From the "model" object's other fields (type, unk_token, ignore_merges, ...) and its tables.
  // Throws kvgate::Error naming `where`: Unigram, WordPiece, WordLevel and malformed models.
  static std::unique_ptr<BpeModel> build(const nlohmann::json& model, BpeTables tables, const std::string& where);

  // Appends the ids of one pre-tokenized word (raw bytes).
  void encode_word(std::string_view word, std::vector<std::int32_t>& out) const;

  std::optional<std::int32_t> token_to_id(std::string_view token) const;
  std::optional<std::string_view> id_to_token(std::int32_t id) const;
  std::size_t vocab_size() const { return vocab_.size(); }

 private:
  struct MergeEntry {
    std::uint64_t key = ~0ULL;  // (left << 32) | right; ~0 = empty
    std::uint32_t rank = 0;
    std::int32_t merged = 0;
  };
  const MergeEntry* find_merge(std::int32_t left, std::int32_t right) const {
    const std::uint64_t key = (static_cast<std::uint64_t>(static_cast<std::uint32_t>(left)) << 32) |
                              static_cast<std::uint32_t>(right);
    std::size_t h = (key * 0x9E3779B97F4A7C15ULL) >> shift_;
    for (;;) {
      const MergeEntry& e = merges_[h];
      if (e.key == key) return &e;
      if (e.key == ~0ULL) return nullptr;
      h = (h + 1) & (merges_.size() - 1);
    }
  }
  void insert_merge(std::int32_t left, std::int32_t right, std::uint32_t rank, std::int32_t merged);
  void merge_small(std::vector<std::int32_t>& symbols) const;
  void merge_large(std::vector<std::int32_t>& symbols) const;
  void encode_uncached(std::string_view word, std::vector<std::int32_t>& out) const;

  TokenTable vocab_;                                   // vocabulary strings (byte-level alphabet)
  std::vector<std::pair<std::uint32_t, std::uint32_t>> id_to_token_;  // (offset, length) in tokens_; length ~0: none
  std::string tokens_;
  TokenTable bytes_vocab_;  // raw bytes -> id, only for ignore_merges
  std::int32_t byte_id_[256];
  std::vector<MergeEntry> merges_;  // open addressing, power of two
  int shift_ = 64;
  std::optional<std::int32_t> unk_id_;
  bool fuse_unk_ = false;
  bool ignore_merges_ = false;
  mutable WordCache cache_;
};

}  // namespace kvgate::tok
