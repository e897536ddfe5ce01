// The byte-level BPE model: vocabulary, merges by rank, and a word cache. Words are raw bytes; each
// byte starts as the id of its byte-level character and pairs merge lowest rank first, leftmost on
// ties, which is Hugging Face's heap order. Thread-safe; the cache is sharded behind mutexes.
#pragma once
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include <nlohmann/json.hpp>

namespace kvgate::tok {

struct StringHash {
  using is_transparent = void;
  std::size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
};
using StringIdMap = std::unordered_map<std::string, std::int32_t, StringHash, std::equal_to<>>;

class BpeModel {
 public:
  // From tokenizer.json's "model" (type BPE; merges as "a b" strings or [a, b] pairs). Throws
  // kvgate::Error naming `where`: Unigram, WordPiece, WordLevel and malformed models.
  static std::unique_ptr<BpeModel> from_json(const nlohmann::json& model, const std::string& where);

  // Appends the ids of one pre-tokenized word (raw bytes).
  void encode_word(std::string_view word, std::vector<std::int32_t>& out) const;

  std::optional<std::int32_t> token_to_id(std::string_view token) const;
  // The vocabulary string of an id, or nullptr.
  const std::string* id_to_token(std::int32_t id) const;
  std::size_t vocab_size() const { return vocab_.size(); }
  std::int32_t max_id() const { return static_cast<std::int32_t>(id_to_token_.size()) - 1; }

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

  StringIdMap vocab_;                      // vocabulary strings (byte-level alphabet)
  std::vector<std::string> id_to_token_;   // by id; empty where no token
  std::vector<char> has_id_;
  StringIdMap bytes_vocab_;                // raw bytes -> id, for ignore_merges
  std::int32_t byte_id_[256];              // -1 where the byte's character is missing
  std::vector<MergeEntry> merges_;         // open addressing, power of two
  int shift_ = 64;
  std::optional<std::int32_t> unk_id_;
  bool fuse_unk_ = false;
  bool ignore_merges_ = false;

  // Word cache: raw bytes -> ids; words longer than kMaxCachedWord are not cached, and a full shard
  // stops taking new words (results never depend on the cache).
  static constexpr std::size_t kShards = 16;
  static constexpr std::size_t kMaxCachedWord = 256;
  static constexpr std::size_t kMaxEntriesPerShard = 1 << 16;
  struct Shard {
    std::mutex mu;
    std::unordered_map<std::string, std::vector<std::int32_t>, StringHash, std::equal_to<>> map;
  };
  mutable std::unique_ptr<Shard[]> cache_ = std::make_unique<Shard[]>(kShards);
};

}  // namespace kvgate::tok
