#include "datasets/common/subset.h"

#include <algorithm>
#include <numeric>

#include "harness/core/rng.h"

namespace kvgate {

std::vector<std::size_t> seeded_subset(std::size_t count, std::size_t limit, std::uint64_t seed, std::string_view key) {
  std::vector<std::size_t> all(count);
  std::iota(all.begin(), all.end(), std::size_t{0});
  if (limit >= count) return all;
  // A forward Fisher-Yates: position i takes a random one of [i, count), so the first `limit`
  // positions of a longer run are the same picks.
  Rng rng(derive_seed(seed, key));
  for (std::size_t i = 0; i < limit; ++i) std::swap(all[i], all[i + rng.below(count - i)]);
  all.resize(limit);
  std::sort(all.begin(), all.end());
  return all;
}

}  // namespace kvgate
