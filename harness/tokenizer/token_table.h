// A flat string -> id hash table for vocabularies: keys live in one arena, slots are open-addressed,
// so loading 150K tokens is one allocation and a lookup touches one slot and one key.
#pragma once
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace kvgate::tok {

class TokenTable {
 public:
  void reserve(std::size_t n) {
    std::size_t cap = 16;
    while (cap < n * 2) cap <<= 1;
    slots_.assign(cap, Slot{});
    mask_ = cap - 1;
    size_ = 0;
  }
  // Adds or replaces (a later duplicate wins, as JSON parsers keep the last key).
  void insert(std::string_view key, std::int32_t id) {
    if ((size_ + 1) * 2 > slots_.size()) grow();
    const std::uint64_t h = hash(key);
    for (std::size_t i = h & mask_;; i = (i + 1) & mask_) {
      Slot& s = slots_[i];
      if (s.id < 0) {
        s = {static_cast<std::uint32_t>(arena_.size()), static_cast<std::uint32_t>(key.size()), id, static_cast<std::uint32_t>(h >> 32)};
        arena_.append(key);
        ++size_;
        return;
      }
      if (s.tag == static_cast<std::uint32_t>(h >> 32) && view(s) == key) {
        s.id = id;
        return;
      }
    }
  }
  // The id of key, or -1.
  std::int32_t find(std::string_view key) const {
    if (slots_.empty()) return -1;
    const std::uint64_t h = hash(key);
    for (std::size_t i = h & mask_;; i = (i + 1) & mask_) {
      const Slot& s = slots_[i];
      if (s.id < 0) return -1;
      if (s.tag == static_cast<std::uint32_t>(h >> 32) && view(s) == key) return s.id;
    }
  }
  std::size_t size() const { return size_; }
  // Calls fn(key, id) for every entry.
  template <typename Fn>
  void for_each(Fn&& fn) const {
    for (const Slot& s : slots_)
      if (s.id >= 0) fn(view(s), s.id);
  }

  static std::uint64_t hash(std::string_view s) { return std::hash<std::string_view>{}(s) * 0x9E3779B97F4A7C15ULL; }

 private:
  struct Slot {
    std::uint32_t off = 0, len = 0;
    std::int32_t id = -1;
    std::uint32_t tag = 0;
  };
  std::string_view view(const Slot& s) const { return std::string_view(arena_).substr(s.off, s.len); }
  void grow() {
    std::vector<Slot> old = std::move(slots_);
    slots_.assign(old.empty() ? 16 : old.size() * 2, Slot{});
    mask_ = slots_.size() - 1;
    for (const Slot& s : old) {
      if (s.id < 0) continue;
      const std::uint64_t h = hash(view(s));
      std::size_t i = h & mask_;
      while (slots_[i].id >= 0) i = (i + 1) & mask_;
      slots_[i] = s;
    }
  }

  std::string arena_;
  std::vector<Slot> slots_;
  std::size_t mask_ = 0, size_ = 0;
};

}  // namespace kvgate::tok
