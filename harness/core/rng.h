// Deterministic random numbers, identical on every platform and compiler: xoshiro256** seeded by
// splitmix64, with our own integer and real mappings (std:: distributions are implementation-defined).
#pragma once
#include <cstdint>
#include <string_view>
#include <utility>
#include <vector>

namespace kvgate {

// splitmix64 finalizer: a good 64-bit mix, used to seed and to derive seeds.
constexpr std::uint64_t mix64(std::uint64_t z) {
  z += 0x9e3779b97f4a7c15ULL;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

// FNV-1a over bytes, then mixed: a stable hash of a string (e.g. a trial id) for derived seeds.
std::uint64_t hash64(std::string_view s);
// A seed for a named sub-stream: derive_seed(seed, "niah/4096/0003").
std::uint64_t derive_seed(std::uint64_t seed, std::string_view key);

class Rng {
 public:
  explicit Rng(std::uint64_t seed);
  std::uint64_t next();                        // 64 random bits
  std::uint64_t below(std::uint64_t n);        // uniform in [0, n), n > 0, unbiased
  std::int64_t range(std::int64_t lo, std::int64_t hi);  // uniform in [lo, hi], inclusive
  double uniform();                            // uniform in [0, 1), 53 bits
  bool bernoulli(double p) { return uniform() < p; }
  double normal();                             // standard normal (Box-Muller, one value per call)

  template <class T>
  void shuffle(std::vector<T>& v) {  // Fisher-Yates
    for (std::size_t i = v.size(); i > 1; --i) std::swap(v[i - 1], v[below(i)]);
  }
  template <class T>
  const T& pick(const std::vector<T>& v) { return v[below(v.size())]; }

 private:
  std::uint64_t s_[4];
};

}  // namespace kvgate
