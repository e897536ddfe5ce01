// kvgate calibrate's library: the K/V maxima the engine records equal maxima computed by hand from
// the checkpoint's weights; scales are amax / format max; both files round-trip through the
// --kv-scales reader.
#include <cmath>

#include "harness/calibrate/calibrate.h"
#include "tests/catch_compat.hpp"
#include "harness/core/error.h"
#include "harness/core/rng.h"
#include "tests/decoder_fixtures.h"
#include "kernels/float_formats.h"

using namespace kvgate;
using namespace kvgate::calibrate;

namespace {

// llama: no q/k norm, no bias: layer 0's K and V are a few lines of arithmetic.
decoder::MakeModelOptions llama() { return {.arch = "llama", .seed = 21, .merges = 64}; }

// Layer 0's K (after RoPE) and V maxima per KV head over `windows` (each starting at position 0),
// in double from the weights, then rounded to bf16 as a bf16 cache holds them.
decoder::KvAbsmax layer0_by_hand(const decoder::Model& m, const std::vector<std::vector<int>>& windows) {
  const auto& c = m.config();
  const int h = c.hidden_size, d = c.head_dim, kvh = c.num_kv_heads;
  const decoder::LayerWeights& L = m.layer(0);
  decoder::KvAbsmax a;
  a.k.assign(1, std::vector<float>(kvh, 0.0f));
  a.v = a.k;
  std::vector<double> x(h), k(kvh * d), v(kvh * d);
  for (const auto& w : windows)
    for (std::size_t pos = 0; pos < w.size(); ++pos) {
      double ss = 0;
      for (int i = 0; i < h; ++i) {
        x[i] = m.embed()[static_cast<std::size_t>(w[pos]) * h + i];
        ss += x[i] * x[i];
      }
      const double inv = 1.0 / std::sqrt(ss / h + c.rms_norm_eps);
      for (int i = 0; i < h; ++i) x[i] = x[i] * inv * L.input_norm[i];
      for (int o = 0; o < kvh * d; ++o) {
        double sk = 0, sv = 0;
        for (int i = 0; i < h; ++i) {
          sk += L.k[static_cast<std::size_t>(o) * h + i] * x[i];
          sv += L.v[static_cast<std::size_t>(o) * h + i] * x[i];
        }
        k[o] = sk;
        v[o] = sv;
      }
      for (int head = 0; head < kvh; ++head) {
        double* kh = k.data() + head * d;
        for (int i = 0; i < d / 2; ++i) {  // rotate_half RoPE: pairs (i, i + d/2)
          const double ang = static_cast<double>(pos) * m.inv_freq()[i];
          const double a0 = kh[i], a1 = kh[i + d / 2];
          kh[i] = a0 * std::cos(ang) - a1 * std::sin(ang);
          kh[i + d / 2] = a1 * std::cos(ang) + a0 * std::sin(ang);
        }
        for (int i = 0; i < d; ++i) {
          a.k[0][head] = std::max(a.k[0][head], std::fabs(kernels::bf16_to_f32(kernels::f32_to_bf16(static_cast<float>(kh[i])))));
          a.v[0][head] = std::max(a.v[0][head],
                                  std::fabs(kernels::bf16_to_f32(kernels::f32_to_bf16(static_cast<float>(v[head * d + i])))));
        }
      }
    }
  return a;
}

}  // namespace

TEST_CASE("calibrate: the maxima match layer 0's K and V computed by hand; scales are amax / 448", "[calibrate]") {
  kvtest::TempDir tmp;
  auto model = kvtest::make_and_load(tmp, "m", llama());
  const int vocab = model->config().vocab_size;
  Rng rng(9);
  std::vector<std::vector<int>> windows = {std::vector<int>(40), std::vector<int>(17)};
  for (auto& w : windows)
    for (int& t : w) t = static_cast<int>(rng.below(static_cast<std::uint64_t>(vocab)));
  auto engine = decoder::make_engine(model, {.device = "cpu", .kv = {.format = "bf16"}});
  const Calibration c = calibrate::calibrate(*engine, windows, {.kv_format = "fp8_e4m3", .granularity = "head", .parallel = 2});
  CHECK(c.tokens == 57);
  CHECK(c.windows == 2);
  REQUIRE(c.amax.k.size() == 2);
  const decoder::KvAbsmax hand = layer0_by_hand(*model, windows);
  for (int head = 0; head < 2; ++head) {
    INFO("KV head " << head);
    CHECK(hand.k[0][head] > 0.0f);
    CHECK(c.amax.k[0][head] == kvtest::Approx(hand.k[0][head]).epsilon(8e-3));  // within a bf16 step
    CHECK(c.amax.v[0][head] == kvtest::Approx(hand.v[0][head]).epsilon(8e-3));
    CHECK(c.scales.k[0][head] == kvtest::Approx(c.amax.k[0][head] / 448.0));
    CHECK(c.scales.v[1][head] == kvtest::Approx(c.amax.v[1][head] / 448.0));
  }
  CHECK(c.amax.k[1][0] > 0.0f);  // layer 1 was recorded too
  // Per tensor: the largest over the heads, for every head.
  const kernels::KvScaleTable t = scales_from_absmax(c.amax, 448.0, "tensor");
  CHECK(t.granularity == "tensor");
  CHECK(t.k[0][0] == t.k[0][1]);
  CHECK(t.k[0][0] == kvtest::Approx(std::max(c.amax.k[0][0], c.amax.k[0][1]) / 448.0));
}

TEST_CASE("calibrate: format maxima, the floor, and formats without scales", "[calibrate]") {
  CHECK(format_max("fp8_e4m3") == 448.0);
  CHECK(format_max("fp8_e5m2") == 57344.0);
  CHECK(format_max("nvfp4") == 2688.0);
  CHECK_THROWS_AS(format_max("int8_per_token_head"), Error);
  decoder::KvAbsmax zero{.k = {{0.0f, 2.0f}}, .v = {{0.0f, 0.0f}}};
  const kernels::KvScaleTable t = scales_from_absmax(zero, 448.0, "head");
  CHECK(t.k[0][0] == kvtest::Approx(1.0 / (448.0 * 512.0)));  // positive even for an all-zero head
  CHECK(t.k[0][1] == kvtest::Approx(2.0 / 448.0));
  CHECK_THROWS_AS(scales_from_absmax(zero, 448.0, "token"), Error);
}

TEST_CASE("calibrate: kvgate's file and the SGLang export round-trip through the --kv-scales reader", "[calibrate]") {
  Calibration c;
  c.format_max = 448.0;
  c.amax = {.k = {{448.0f, 224.0f}, {44.8f, 4.48f}}, .v = {{8.96f, 89.6f}, {0.448f, 1.0f}}};
  c.scales = scales_from_absmax(c.amax, 448.0, "head");
  c.tokens = 10;
  c.windows = 1;
  const kernels::KvShape shape{.layers = 2, .kv_heads = 2, .head_dim = 16};
  const nlohmann::json j = kvgate_scales_json(c, {.kv_format = "fp8_e4m3", .granularity = "head"}, {{"model_dir", "m"}});
  CHECK(j["calibration"]["model_dir"] == "m");
  CHECK(j["calibration"]["format_max"] == 448.0);
  CHECK(j["amax"]["layers"][1]["v"][1] == 1.0f);
  const kernels::KvScaleTable back = kernels::parse_kv_scales(nlohmann::json::parse(j.dump()), shape, "scales.json");
  CHECK(back.granularity == "head");
  CHECK(back.k == c.scales.k);
  CHECK(back.v == c.scales.v);
  CHECK(back.k[0][0] == 1.0f);

  // SGLang: one scale per layer for K and V (the larger), per rank the largest over its heads.
  const nlohmann::json s1 = sglang_scales_json(c.scales, "fp8_e4m3", "llama", 1);
  CHECK(s1["model_type"] == "llama");
  CHECK(s1["kv_cache"]["dtype"] == "float8_e4m3fn");
  CHECK(s1["kv_cache"]["scaling_factor"].size() == 1);
  CHECK(s1["kv_cache"]["scaling_factor"]["0"]["0"].get<double>() == kvtest::Approx(1.0));
  CHECK(s1["kv_cache"]["scaling_factor"]["0"]["1"].get<double>() == kvtest::Approx(0.1));
  const kernels::KvScaleTable sg = kernels::parse_kv_scales(nlohmann::json::parse(s1.dump()), shape, "sglang.json");
  CHECK(sg.k[1][0] == kvtest::Approx(0.1));
  CHECK(sg.v[1][1] == kvtest::Approx(0.1));
  const nlohmann::json s2 = sglang_scales_json(c.scales, "fp8_e4m3", "llama", 2);  // a head per rank
  CHECK(s2["kv_cache"]["scaling_factor"]["0"]["0"].get<double>() == kvtest::Approx(1.0));
  CHECK(s2["kv_cache"]["scaling_factor"]["1"]["0"].get<double>() == kvtest::Approx(0.5));
  CHECK(s2["kv_cache"]["scaling_factor"]["1"]["1"].get<double>() == kvtest::Approx(0.01));
  const nlohmann::json s4 = sglang_scales_json(c.scales, "fp8_e4m3", "llama", 4);  // heads replicated
  CHECK(s4["kv_cache"]["scaling_factor"].size() == 4);
  CHECK(s4["kv_cache"]["scaling_factor"]["3"]["0"] == s2["kv_cache"]["scaling_factor"]["1"]["0"]);
  CHECK_THROWS_AS(sglang_scales_json(c.scales, "fp8_e4m3", "llama", 3), Error);
  CHECK_THROWS_AS(sglang_scales_json(c.scales, "fp8_e5m2", "llama", 1), Error);
}
