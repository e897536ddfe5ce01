#include "tests/catch_compat.hpp"
#include "harness/core/error.h"
#include "harness/core/rng.h"
#include "kernels/float_formats.h"
#include "kernels/kv_store.h"

using namespace kvgate::kernels;

TEST_CASE("kv store: fp32 is exact and bf16 rounds each element", "[kv]") {
  const KvShape shape{2, 3, 8};
  auto f32 = make_kv_store({"fp32", {}}, shape);
  auto b16 = make_kv_store({"bf16", {}}, shape);
  CHECK(f32->bytes_per_token() == 2.0 * 2 * 3 * 8 * 4);
  CHECK(b16->bytes_per_token() == 2.0 * 2 * 3 * 8 * 2);
  kvgate::Rng rng(5);
  std::vector<std::vector<float>> ks, vs;
  for (int t = 0; t < 5; ++t) {
    std::vector<float> k(24), v(24);
    for (auto& x : k) x = static_cast<float>(rng.normal());
    for (auto& x : v) x = static_cast<float>(rng.normal());
    for (int layer = 0; layer < 2; ++layer) {
      f32->append(layer, k.data(), v.data());
      b16->append(layer, k.data(), v.data());
    }
    ks.push_back(k);
    vs.push_back(v);
  }
  CHECK(f32->size(1) == 5);
  std::vector<float> k(3 * 8), v(3 * 8);
  f32->read(1, 2, 1, 4, k.data(), v.data());  // tokens 1..3 of head 2
  for (int t = 0; t < 3; ++t)
    for (int i = 0; i < 8; ++i) {
      REQUIRE(k[t * 8 + i] == ks[t + 1][2 * 8 + i]);
      REQUIRE(v[t * 8 + i] == vs[t + 1][2 * 8 + i]);
    }
  k.resize(5 * 8);
  v.resize(5 * 8);
  b16->read(0, 1, 0, 5, k.data(), v.data());
  for (int t = 0; t < 5; ++t)
    for (int i = 0; i < 8; ++i) REQUIRE(k[t * 8 + i] == bf16_to_f32(f32_to_bf16(ks[t][8 + i])));
  b16->truncate(2);
  CHECK(b16->size(0) == 2);
  CHECK(b16->size(1) == 2);
}

TEST_CASE("kv store: an unknown format names the known ones", "[kv]") {
  REQUIRE_THROWS_WITH(make_kv_store({"fp7", {}}, KvShape{1, 1, 1}), kvtest::contains("--kv-format fp7: unknown"));
}
