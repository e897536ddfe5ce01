#include <algorithm>
#include <set>

#include "tests/catch_compat.hpp"
#include "harness/core/rng.h"

TEST_CASE("rng: the sequence is fixed by kvgate's code (same on every platform)", "[rng]") {
  // Pinned outputs: if these change, every tasks file generated before changes too.
  kvgate::Rng rng(1);
  const std::uint64_t first = rng.next();
  kvgate::Rng again(1);
  CHECK(again.next() == first);
  CHECK(kvgate::mix64(0) == 0xe220a8397b1dcdafULL);  // splitmix64's first output for state 0
  CHECK(kvgate::hash64("") == kvgate::mix64(0xcbf29ce484222325ULL));
  CHECK(kvgate::derive_seed(7, "a") != kvgate::derive_seed(7, "b"));
  CHECK(kvgate::derive_seed(7, "a") == kvgate::derive_seed(7, "a"));
}

TEST_CASE("rng: below() is in range and roughly uniform", "[rng]") {
  kvgate::Rng rng(42);
  std::vector<int> counts(10, 0);
  for (int i = 0; i < 100000; ++i) {
    std::uint64_t v = rng.below(10);
    REQUIRE(v < 10);
    ++counts[v];
  }
  for (int c : counts) CHECK(std::abs(c - 10000) < 500);  // > 5 sigma away would be a bug
  for (int i = 0; i < 1000; ++i) {
    auto v = rng.range(-3, 3);
    REQUIRE(v >= -3);
    REQUIRE(v <= 3);
  }
}

TEST_CASE("rng: uniform() in [0,1), normal() has mean 0 and variance 1", "[rng]") {
  kvgate::Rng rng(3);
  double sum = 0, sum2 = 0;
  const int n = 200000;
  for (int i = 0; i < n; ++i) {
    double u = rng.uniform();
    REQUIRE(u >= 0.0);
    REQUIRE(u < 1.0);
    double z = rng.normal();
    sum += z;
    sum2 += z * z;
  }
  CHECK(std::abs(sum / n) < 0.02);
  CHECK(std::abs(sum2 / n - 1.0) < 0.02);
}

TEST_CASE("rng: shuffle is a permutation and deterministic", "[rng]") {
  std::vector<int> a(100), b;
  for (int i = 0; i < 100; ++i) a[i] = i;
  b = a;
  kvgate::Rng r1(9), r2(9);
  r1.shuffle(a);
  r2.shuffle(b);
  CHECK(a == b);
  CHECK(std::set<int>(a.begin(), a.end()).size() == 100);
  CHECK_FALSE(std::is_sorted(a.begin(), a.end()));
}
