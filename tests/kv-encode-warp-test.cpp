// kv_encode.cuh's warp-parallel encoders of the codec formats (q8_0, q4_0, NVFP4, TurboQuant), run on the
// CPU a lane a thread (tests/warp_emulation.h), against the host codec byte for byte: the bytes
// test-kernels' KV_WRITE cases compare on a GPU, checked where there is none. Head sizes 64, 128 and
// 256 (2, 4 and 8 elements a lane), with and without llama.cpp's rotations, on normal inputs with
// outliers and on coarse ones (a grid of 1/4 plus 1/8: equal magnitudes of either sign, so q4_0's
// "first value of the largest magnitude" is decided by position).
#include "tests/warp_emulation.h"

#include <cmath>
#include <deque>
#include <random>
#include <string>

#include "kernels/kv_encode.cuh"
#include "kernels/kv_format.h"
#include "kernels/kv_head_codec.h"
#include "tests/catch_compat.hpp"

namespace kk = kvgate::kernels;
namespace kc = kvgate::kernels::cuda;

namespace {

// The device codec of layer 0 as PagedKvCache builds it (make_layer_codec), its tables in host
// memory that the struct keeps.
struct DeviceCodec {
  std::deque<std::vector<float>> tables;
  kc::KvLayerCodec c;
  explicit DeviceCodec(const kk::KvFormatSpec& s)
      : c(kc::make_layer_codec(s, 0, [this](const std::vector<float>& v) -> const float* { return tables.emplace_back(v).data(); })) {}
  DeviceCodec(const DeviceCodec&) = delete;
  DeviceCodec& operator=(const DeviceCodec&) = delete;
};

struct Outcome {
  int vectors = 0, mismatched = 0, parallel = 0;
  std::string first;  // the first mismatch
};

// `vectors` K and V vectors of head size d encoded on the emulated warp and by the host codec.
template <int E>
Outcome check(const std::string& format, const nlohmann::json& params, int vectors, bool coarse, unsigned seed) {
  constexpr int d = 32 * E;
  const kk::KvFormatSpec s = kk::resolve_kv_format({format, params}, {.layers = 1, .kv_heads = 1, .head_dim = d});
  const auto host = kk::make_head_codec(s, 0);
  const DeviceCodec dc(s);
  const kc::KvLayerCodec& c = dc.c;
  REQUIRE(c.k_bytes == host->k_bytes());
  REQUIRE(c.v_bytes == host->v_bytes());
  std::mt19937 rng(seed);
  std::vector<std::vector<float>> inputs;
  for (int i = 0; i < 2 * vectors; ++i) {
    std::vector<float> x(d);
    for (int j = 0; j < d; ++j) {  // Box-Muller on the engine's raw bits: the same numbers everywhere
      const double u1 = (rng() + 1.0) / 4294967297.0, u2 = rng() / 4294967296.0;
      x[j] = static_cast<float>(1.5 * std::sqrt(-2.0 * std::log(u1)) * std::cos(6.283185307179586 * u2));
      if (i % 2 == 0 && j % 37 == 0) x[j] *= 8;  // key outliers
      if (coarse) x[j] = (std::round(x[j] * 4.0f) + 0.5f) / 4.0f;
      if (c.round_bf16) x[j] = kk::bf16_to_f32(kk::f32_to_bf16(x[j]));
    }
    inputs.push_back(std::move(x));
  }
  Outcome o;
  std::vector<float> stage(d);
  std::vector<std::uint8_t> got(std::max(c.k_bytes, c.v_bytes)), want(got.size());
  kvtest::warp::run([&](int lane) {
    for (int i = 0; i < 2 * vectors; ++i) {
      const bool is_k = i % 2 == 0;
      const int bytes = is_k ? c.k_bytes : c.v_bytes;
      if (lane == 0) {
        std::fill(got.begin(), got.end(), 0xA5);  // every byte must be written
        std::fill(want.begin(), want.end(), 0);
        if (is_k) host->encode_k(0, inputs[i].data(), want.data());
        else host->encode_v(0, inputs[i].data(), want.data());
      }
      __syncwarp();
      float x[E];
      for (int j = 0; j < E; ++j) x[j] = inputs[i][lane * E + j];
      kc::kv_encode::encode_parallel<E>(c, is_k, 0, x, lane, stage.data(), got.data());
      __syncwarp();
      if (lane == 0) {
        ++o.vectors;
        o.parallel += kc::kv_encode::parallel_family(c);
        if (!std::equal(got.begin(), got.begin() + bytes, want.begin())) {
          int b = 0;
          while (got[b] == want[b]) ++b;
          if (o.mismatched++ == 0)
            o.first = std::string(is_k ? "K" : "V") + " vector " + std::to_string(i / 2) + ", byte " + std::to_string(b) + ": " +
                      std::to_string(got[b]) + " where the host codec wrote " + std::to_string(want[b]);
        }
      }
      __syncwarp();
    }
  });
  return o;
}

Outcome check_d(int d, const std::string& format, const nlohmann::json& params, int vectors, bool coarse, unsigned seed) {
  if (d == 64) return check<2>(format, params, vectors, coarse, seed);
  if (d == 128) return check<4>(format, params, vectors, coarse, seed);
  return check<8>(format, params, vectors, coarse, seed);
}

void check_format(const std::string& format, const nlohmann::json& params) {
  for (const int d : {64, 128, 256})
    for (const bool coarse : {false, true}) {
      const Outcome o = check_d(d, format, params, 12, coarse, static_cast<unsigned>(d + coarse));
      INFO(format << params.dump() << " head_dim " << d << (coarse ? ", coarse inputs" : "") << ": " << o.first);
      CHECK(o.vectors == 24);
      CHECK(o.parallel == o.vectors);  // the parallel path took them
      CHECK(o.mismatched == 0);
    }
}

}  // namespace

TEST_CASE("warp-parallel q8_0 and q4_0 encoders write the host codec's bytes", "[kv_encode]") {
  for (const char* f : {"q8_0", "q4_0"})
    for (const bool rotate : {true, false}) check_format(f, rotate ? nlohmann::json::object() : nlohmann::json{{"rotate", false}});
}

TEST_CASE("warp-parallel NVFP4 encoder writes the host codec's bytes", "[kv_encode]") {
  check_format("nvfp4", nlohmann::json::object());
  check_format("nvfp4", nlohmann::json{{"k_tensor_scale", 0.01}, {"v_tensor_scale", 0.02}});
}

TEST_CASE("warp-parallel TurboQuant encoders write the host codec's bytes", "[kv_encode]") {
  for (const char* f : {"turboquant_k8v4", "turboquant_4bit_nc", "turboquant_k3v4_nc", "turboquant_3bit_nc"})
    check_format(f, nlohmann::json::object());
}

// The coarse inputs do what they are for: blocks whose largest magnitude comes with both signs, where
// q4_0's scale depends on which comes first (a sign flip of every code if the order were lost).
TEST_CASE("coarse inputs tie magnitudes of opposite sign within q4_0 blocks", "[kv_encode]") {
  std::mt19937 rng(128 + 1);
  int ties = 0;
  for (int block = 0; block < 24 * 4; ++block) {
    float best = 0;
    bool pos = false, neg = false;
    for (int j = 0; j < kk::kGgmlBlock; ++j) {
      const double u1 = (rng() + 1.0) / 4294967297.0, u2 = rng() / 4294967296.0;
      const float x = (std::round(static_cast<float>(1.5 * std::sqrt(-2.0 * std::log(u1)) * std::cos(6.283185307179586 * u2)) * 4.0f) + 0.5f) / 4.0f;
      if (std::fabs(x) > best) best = std::fabs(x), pos = neg = false;
      if (std::fabs(x) == best) (x > 0 ? pos : neg) = true;
    }
    ties += pos && neg;
  }
  CHECK(ties >= 5);
}
