// --limit N: a seeded random subset, never the first N (lm-eval takes the first N: #2598).
#pragma once
#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

namespace kvgate {

// `limit` distinct indices of [0, count), chosen with Rng(derive_seed(seed, key)) and returned in
// increasing order; all of them when limit >= count. The same (count, limit, seed, key) always gives
// the same subset, and a larger limit keeps every index of a smaller one (a prefix of one shuffle).
std::vector<std::size_t> seeded_subset(std::size_t count, std::size_t limit, std::uint64_t seed, std::string_view key);

}  // namespace kvgate
