// The BPE word cache: pre-tokenized word (raw bytes) -> ids, shared by all threads. Sharded, each
// shard an open-addressed table over arenas behind its own mutex. Full shards stop taking words;
// results never depend on what is cached.
#pragma once
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

namespace kvgate::tok {

class WordCache {
 public:
  static constexpr std::size_t kMaxWordBytes = 255;

  WordCache() : shards_(std::make_unique<Shard[]>(kShards)) {}

  // Appends the cached ids of word to out; false when not cached.
  bool lookup(std::string_view word, std::uint64_t hash, std::vector<std::int32_t>& out) const {
    Shard& sh = shards_[shard_of(hash)];
    std::lock_guard<std::mutex> lock(sh.mu);
    if (sh.slots.empty()) return false;
    for (std::size_t i = (hash >> 8) & (sh.slots.size() - 1);; i = (i + 1) & (sh.slots.size() - 1)) {
      const Slot& s = sh.slots[i];
      if (s.hash == 0) return false;
      if (s.hash == hash && s.key_len == word.size() && std::string_view(sh.keys).substr(s.key_off, s.key_len) == word) {
        out.insert(out.end(), sh.ids.begin() + s.ids_off, sh.ids.begin() + s.ids_off + s.n_ids);
        return true;
      }
    }
  }

  void insert(std::string_view word, std::uint64_t hash, const std::int32_t* ids, std::size_t n) {
    if (word.size() > kMaxWordBytes || n > 0xFFFF) return;
    Shard& sh = shards_[shard_of(hash)];
    std::lock_guard<std::mutex> lock(sh.mu);
    if (sh.slots.empty()) sh.slots.assign(1024, Slot{});
    if (sh.used * 4 >= sh.slots.size() * 3) {
      if (sh.slots.size() >= kMaxSlotsPerShard) return;  // full: results stay exact, just uncached
      grow(sh);
    }
    for (std::size_t i = (hash >> 8) & (sh.slots.size() - 1);; i = (i + 1) & (sh.slots.size() - 1)) {
      Slot& s = sh.slots[i];
      if (s.hash == hash && s.key_len == word.size() && std::string_view(sh.keys).substr(s.key_off, s.key_len) == word) return;
      if (s.hash != 0) continue;
      s.hash = hash;
      s.key_off = static_cast<std::uint32_t>(sh.keys.size());
      s.key_len = static_cast<std::uint16_t>(word.size());
      s.ids_off = static_cast<std::uint32_t>(sh.ids.size());
      s.n_ids = static_cast<std::uint16_t>(n);
      sh.keys.append(word);
      sh.ids.insert(sh.ids.end(), ids, ids + n);
      ++sh.used;
      return;
    }
  }

  // Never 0 (0 marks an empty slot).
  static std::uint64_t hash(std::string_view word) {
    const std::uint64_t h = std::hash<std::string_view>{}(word) * 0x9E3779B97F4A7C15ULL;
    return h ? h : 1;
  }

 private:
  static constexpr std::size_t kShards = 16;
  static constexpr std::size_t kMaxSlotsPerShard = std::size_t{1} << 16;  // ~49K words per shard, ~780K in all
  struct Slot {
    std::uint64_t hash = 0;
    std::uint32_t key_off = 0, ids_off = 0;
    std::uint16_t key_len = 0, n_ids = 0;
  };
  struct Shard {
    std::mutex mu;
    std::vector<Slot> slots;
    std::string keys;
    std::vector<std::int32_t> ids;
    std::size_t used = 0;
  };
  static std::size_t shard_of(std::uint64_t hash) { return hash >> 60; }
  static void grow(Shard& sh) {
    std::vector<Slot> old = std::move(sh.slots);
    sh.slots.assign(old.size() * 2, Slot{});
    for (const Slot& s : old) {
      if (s.hash == 0) continue;
      std::size_t i = (s.hash >> 8) & (sh.slots.size() - 1);
      while (sh.slots[i].hash != 0) i = (i + 1) & (sh.slots.size() - 1);
      sh.slots[i] = s;
    }
  }
  std::unique_ptr<Shard[]> shards_;
};

}  // namespace kvgate::tok
