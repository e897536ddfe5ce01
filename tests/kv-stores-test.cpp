// Every format through make_kv_store: round trips of random K/V within each format's error bound
// (derived from its formula: half a quantization step, plus the stored scale's own rounding), exact
// bf16 where the format keeps bf16, zeros, extreme values, truncation, KIVI's full-precision window,
// and the error order on random data: fp8 per-token-head < fp8 per tensor < int4 < 3-bit.
#include <cmath>
#include <map>
#include <vector>

#include "tests/catch_compat.hpp"
#include "harness/core/rng.h"
#include "kernels/kv_codecs.h"
#include "kernels/kv_format.h"
#include "kernels/kv_store.h"

using namespace kvgate::kernels;
using nlohmann::json;

namespace {

float bf16r(float x) { return bf16_to_f32(f32_to_bf16(x)); }
float f16r(float x) { return f16_to_f32(f32_to_f16(x)); }

// One (token, head) vector the way the tests draw them: N(0, sigma^2) with sigma = base * e^N(0,1)
// (tokens differ in magnitude, as real K/V do) and one outlier channel at 8x.
std::vector<float> draw(kvgate::Rng& rng, int n, double base) {
  const double sigma = base * std::exp(rng.normal());
  std::vector<float> x(n);
  for (auto& v : x) v = static_cast<float>(rng.normal() * sigma);
  x[n / 3] *= 8;
  return x;
}

double l2(const std::vector<double>& e) {
  double s = 0;
  for (double v : e) s += v * v;
  return std::sqrt(s);
}

// The check of one decoded vector `got` against its reference `r` (the input rounded to the
// input dtype), from the format's documented rule. Returns a message on failure, "" when within.
struct Bound {
  std::string format;
  json params;
  bool is_k;
  std::string check(const std::vector<float>& r, const std::vector<float>& got) const {
    const int d = static_cast<int>(r.size());
    std::vector<double> e(d);
    for (int i = 0; i < d; ++i) e[i] = std::fabs(double(r[i]) - got[i]);
    float amax = 0, mn = r[0], mx = r[0];
    for (float v : r) {
      amax = std::max(amax, std::fabs(v));
      mn = std::min(mn, v);
      mx = std::max(mx, v);
    }
    auto elementwise = [&](auto bound) -> std::string {
      for (int i = 0; i < d; ++i)
        if (e[i] > bound(i) * (1 + 1e-5) + 1e-30)
          return "element " + std::to_string(i) + ": |" + std::to_string(r[i]) + " - " + std::to_string(got[i]) +
                 "| > " + std::to_string(bound(i));
      return "";
    };
    const std::string& f = format;
    if (f == "fp8_e4m3") return elementwise([&](int i) { return std::ldexp(std::fabs(r[i]), -4) + std::ldexp(1.0, -10); });
    if (f == "fp8_e5m2") return elementwise([&](int i) { return std::ldexp(std::fabs(r[i]), -3) + std::ldexp(1.0, -17); });
    if (f == "fp8_per_token_head") {
      const double sc = std::max(amax / 448.0f, 1e-6f);
      return elementwise([&](int i) { return std::ldexp(std::fabs(r[i]), -4) + std::ldexp(sc, -10); });
    }
    if (f == "int8_per_token_head") {
      const double sc = std::max(amax / 127.0f, 1e-6f);
      return elementwise([&](int) { return params.value("rounding", "rne") == "rne" ? sc / 2 : sc; });
    }
    if (f == "int4_per_token_head") {
      // In the rotated space y = H D r (rounded to bf16) every element is within one step s of its
      // code (half a step, or a full one where the rounded zero point pushes the extreme past 15);
      // x = D H y / d shrinks the L2 norm of the error by sqrt(d).
      std::vector<float> signs(d, 1.0f);
      const std::string ss = params.value("hadamard_signs", std::string());
      for (int i = 0; i < d && !ss.empty(); ++i) signs[i] = ss[i] == '+' ? 1.0f : -1.0f;
      std::vector<float> y = r;
      rht_forward_inplace(y.data(), signs.data(), d);
      float ymn = bf16r(y[0]), ymx = ymn;
      double err2 = 0;
      for (float v : y) {
        ymn = std::min(ymn, bf16r(v));
        ymx = std::max(ymx, bf16r(v));
      }
      const double s = (ymx - ymn) / 15.0;
      for (float v : y) err2 += std::pow(s + std::fabs(v - bf16r(v)), 2);
      const double bound = std::sqrt(err2) / std::sqrt(double(d)) * (1 + 1e-4);
      return l2(e) <= bound ? "" : "L2 error " + std::to_string(l2(e)) + " > " + std::to_string(bound);
    }
    if (f == "nvfp4") {
      return elementwise([&](int i) {
        const int b = i / 16 * 16;
        float ab = 0;
        for (int j = b; j < b + 16; ++j) ab = std::max(ab, std::fabs(r[j]));
        const double sb = fp8_e4m3_to_f32(f32_to_fp8_e4m3(ab * (1.0f / 6.0f)));
        return sb * 1.0 + std::max(0.0, ab - 6 * sb);  // half the widest E2M1 gap (4..6), or the clamp
      });
    }
    if (f == "q8_0" || f == "q4_0") {
      // Rotated blocks (K: 128, V: 64 at head_dim 128): the bound holds per element of y = H r / sqrt(n)
      // and the orthonormal rotation keeps the L2 norm.
      const int n = !params.value("rotate", true) ? 0 : (is_k ? ggml_k_rotation_block(d) : ggml_v_rotation_block(d));
      std::vector<float> y = r;
      if (n) hadamard_blocks_inplace(y.data(), d, n);
      double err2 = 0;
      for (int b = 0; b < d; b += 32) {
        float ab = 0, mxv = 0;
        for (int j = b; j < b + 32; ++j)
          if (ab < std::fabs(y[j])) {
            ab = std::fabs(y[j]);
            mxv = y[j];
          }
        const double dd = f == "q8_0" ? ab / 127.0f : mxv / -8.0f, d16 = f16r(static_cast<float>(dd));
        const double per = f == "q8_0" ? std::fabs(dd) / 2 + 127 * std::fabs(dd - d16) : std::fabs(dd) + 8 * std::fabs(dd - d16);
        err2 += 32 * per * per;
        if (!n)
          for (int j = b; j < b + 32; ++j)
            if (e[j] > per * (1 + 1e-5) + 1e-30) return "element " + std::to_string(j) + " beyond " + std::to_string(per);
      }
      const double bound = std::sqrt(err2) * (1 + 1e-4) + 1e-6 * amax;
      return l2(e) <= bound ? "" : "L2 error " + std::to_string(l2(e)) + " > " + std::to_string(bound);
    }
    if (f.rfind("turboquant_", 0) == 0) {
      const int kb = f == "turboquant_k8v4" ? 8 : (f == "turboquant_4bit_nc" ? 4 : 3);
      const int vb = f == "turboquant_3bit_nc" ? 3 : 4;
      if (is_k && kb == 8) return elementwise([&](int i) { return std::ldexp(std::fabs(r[i]), -4) + std::ldexp(1.0, -10); });
      if (is_k) {  // Lloyd-Max: relative L2 error of one vector; the mean is checked against theory separately
        double n2 = 0;
        for (float v : r) n2 += double(v) * v;
        const double rel = l2(e) / std::sqrt(n2), limit = kb == 4 ? 0.2 : 0.35;
        return rel <= limit ? "" : "relative key error " + std::to_string(rel) + " > " + std::to_string(limit);
      }
      const double q = (1 << vb) - 1, s = std::max((mx - mn) / float(q), 1e-8f), s16 = f16r(float(s)), m16 = f16r(mn);
      return elementwise([&](int) { return s / 2 + q * std::fabs(s - s16) + std::fabs(mn - m16); });
    }
    return "no bound for " + f;
  }
};

struct Drawn {
  std::vector<std::vector<float>> k, v;  // [token] -> [heads * d]
};

Drawn fill(KvStore& store, kvgate::Rng& rng, int tokens, double k_base, double v_base) {
  const KvShape& s = store.shape();
  Drawn dr;
  for (int t = 0; t < tokens; ++t) {
    std::vector<float> k, v;
    for (int h = 0; h < s.kv_heads; ++h) {
      auto a = draw(rng, s.head_dim, k_base), b = draw(rng, s.head_dim, v_base);
      k.insert(k.end(), a.begin(), a.end());
      v.insert(v.end(), b.begin(), b.end());
    }
    for (int l = 0; l < s.layers; ++l) store.append(l, k.data(), v.data());
    dr.k.push_back(k);
    dr.v.push_back(v);
  }
  return dr;
}

std::vector<float> head_of(const std::vector<float>& row, int h, int d, bool round) {
  std::vector<float> x(row.begin() + h * d, row.begin() + (h + 1) * d);
  if (round)
    for (auto& v : x) v = bf16r(v);
  return x;
}

}  // namespace

TEST_CASE("kv stores: every format round-trips random K/V within its bound", "[kvstore]") {
  const KvShape shape{2, 2, 128};
  const std::vector<std::pair<std::string, json>> cases = {
      {"fp8_e4m3", {{"k_scale", 2.0}, {"v_scale", 0.5}}}, {"fp8_e5m2", json::object()},
      {"fp8_per_token_head", json::object()},              {"int8_per_token_head", json::object()},
      {"int8_per_token_head", {{"rounding", "trunc"}}},    {"int4_per_token_head", json::object()},
      {"int4_per_token_head", {{"hadamard", false}}},      {"nvfp4", json::object()},
      {"q8_0", json::object()},                            {"q8_0", {{"rotate", false}}},
      {"q4_0", json::object()},                            {"q4_0", {{"rotate", false}}},
      {"turboquant_k8v4", {{"skip_layers", json::array()}}}, {"turboquant_4bit_nc", {{"skip_layers", json::array()}}},
      {"turboquant_k3v4_nc", {{"skip_layers", json::array()}}}, {"turboquant_3bit_nc", {{"skip_layers", json::array()}}}};
  for (const auto& [format, params] : cases) {
    INFO(format << " " << params.dump());
    auto store = make_kv_store({format, params}, shape);
    json rec = store->describe();
    kvgate::Rng rng(kvgate::derive_seed(11, format + params.dump()));
    const Drawn dr = fill(*store, rng, 24, 1.0, 0.25);
    CHECK(store->size(0) == 24);
    CHECK(store->bytes_per_token() == resolve_kv_format({format, params}, shape).bytes_per_token());
    // The fp8 per-tensor scales divide the inputs: check against x / scale in units of the scale.
    const double ks = rec.value("k_scale", 1.0), vs = rec.value("v_scale", 1.0);
    std::vector<float> k(24 * 128), v(24 * 128);
    for (int l = 0; l < 2; ++l)
      for (int h = 0; h < 2; ++h) {
        store->read(l, h, 0, 24, k.data(), v.data());
        for (int t = 0; t < 24; ++t) {
          auto rk = head_of(dr.k[t], h, 128, true), rv = head_of(dr.v[t], h, 128, true);
          std::vector<float> gk(k.begin() + t * 128, k.begin() + (t + 1) * 128), gv(v.begin() + t * 128, v.begin() + (t + 1) * 128);
          for (auto& x : rk) x = static_cast<float>(x / ks);
          for (auto& x : gk) x = static_cast<float>(x / ks);
          for (auto& x : rv) x = static_cast<float>(x / vs);
          for (auto& x : gv) x = static_cast<float>(x / vs);
          const std::string ek = Bound{format, rec, true}.check(rk, gk), ev = Bound{format, rec, false}.check(rv, gv);
          if (!ek.empty()) FAIL("K layer " << l << " head " << h << " token " << t << ": " << ek);
          if (!ev.empty()) FAIL("V layer " << l << " head " << h << " token " << t << ": " << ev);
        }
      }
  }
}

TEST_CASE("kv stores: bf16, fp16 and skipped layers store exactly the rounded inputs", "[kvstore]") {
  const KvShape shape{3, 2, 64};
  for (const std::string f : {"bf16", "fp16", "fp32"}) {
    auto store = make_kv_store({f, {}}, shape);
    kvgate::Rng rng(3);
    const Drawn dr = fill(*store, rng, 5, 1.0, 1.0);
    std::vector<float> k(5 * 64), v(5 * 64);
    store->read(2, 1, 0, 5, k.data(), v.data());
    for (int t = 0; t < 5; ++t)
      for (int i = 0; i < 64; ++i) {
        const float x = dr.k[t][64 + i];
        const float want = f == "bf16" ? bf16r(x) : f == "fp16" ? f16r(bf16r(x)) : x;
        REQUIRE(f32_bits(k[t * 64 + i]) == f32_bits(want));
      }
  }
  // A quantized format's skipped layers are bf16, bit for bit; the others are not.
  auto q = make_kv_store({"int4_per_token_head", {{"skip_layers", "-1"}}}, shape);
  kvgate::Rng rng(4);
  const Drawn dr = fill(*q, rng, 3, 1.0, 1.0);
  std::vector<float> k(3 * 64), v(3 * 64);
  q->read(2, 0, 0, 3, k.data(), v.data());
  for (int i = 0; i < 64; ++i) REQUIRE(v[64 + i] == bf16r(dr.v[1][i]));
  q->read(1, 0, 0, 3, k.data(), v.data());
  int differ = 0;
  for (int i = 0; i < 64; ++i) differ += v[64 + i] != bf16r(dr.v[1][i]);
  CHECK(differ > 32);
  // fp32 with a skipped layer: that layer in bf16, the others exact.
  auto f32s = make_kv_store({"fp32", {{"skip_layers", "0"}}}, shape);
  kvgate::Rng rng2(8);
  const Drawn d2 = fill(*f32s, rng2, 2, 1.0, 1.0);
  f32s->read(0, 1, 0, 2, k.data(), v.data());
  CHECK(k[3] == bf16r(d2.k[0][64 + 3]));
  f32s->read(1, 1, 0, 2, k.data(), v.data());
  CHECK(k[3] == d2.k[0][64 + 3]);
  CHECK(f32s->describe()["skip_layers"] == json::array({0}));
  // input_dtype fp32 quantizes the decoder's values without the bf16 rounding.
  auto f8 = make_kv_store({"fp8_e4m3", {{"input_dtype", "fp32"}}}, KvShape{1, 1, 32});
  std::vector<float> x(32, 1.0f + std::ldexp(1.0f, -4) + std::ldexp(1.0f, -9));  // just above a tie; bf16 would drop the 2^-9
  f8->append(0, x.data(), x.data());
  std::vector<float> ko(32), vo(32);
  f8->read(0, 0, 0, 1, ko.data(), vo.data());
  CHECK(ko[0] == 1.125f);
  auto f8b = make_kv_store({"fp8_e4m3", {}}, KvShape{1, 1, 32});
  f8b->append(0, x.data(), x.data());
  f8b->read(0, 0, 0, 1, ko.data(), vo.data());
  CHECK(ko[0] == 1.0f);  // bf16(1.0625 + 2^-9) = 1.0625, a tie -> 1.0
}

TEST_CASE("kv stores: zero K/V read back as exact zeros in every format", "[kvstore]") {
  const KvShape shape{1, 2, 128};
  for (const auto& f : kv_format_names()) {
    INFO(f);
    auto store = make_kv_store({f, {}}, shape);
    std::vector<float> z(256, 0.0f), k(128 * 3, 1.0f), v(128 * 3, 1.0f);
    for (int t = 0; t < 3; ++t) store->append(0, z.data(), z.data());
    store->read(0, 1, 0, 3, k.data(), v.data());
    for (int i = 0; i < 128 * 3; ++i) {
      REQUIRE(k[i] == 0.0f);
      REQUIRE(v[i] == 0.0f);
    }
  }
}

TEST_CASE("kv stores: extreme values saturate or overflow as the engines do", "[kvstore]") {
  const KvShape shape{1, 1, 32};
  std::vector<float> x(32, 0.5f), k(32), v(32);
  x[0] = 1e5f;
  x[1] = -1e5f;
  auto run = [&](const std::string& f, json p = json::object()) {
    auto s = make_kv_store({f, p}, shape);
    s->append(0, x.data(), x.data());
    s->read(0, 0, 0, 1, k.data(), v.data());
  };
  run("fp8_e4m3");  // per tensor, scale 1: saturates at +-448
  CHECK(k[0] == 448.0f);
  CHECK(k[1] == -448.0f);
  run("fp8_e4m3", {{"k_scale", 250.0}});  // calibrated: 1e5/250 = 400 fits
  CHECK(k[0] == Approx(1e5f).epsilon(0.07));
  run("fp16");  // bf16(1e5) = 99840 > 65504: IEEE half overflows to infinity
  CHECK(std::isinf(k[0]));
  run("fp8_per_token_head");  // the per-vector scale follows the range: exact at the extreme, small values coarse
  CHECK(k[0] == bf16r(1e5f));
  // 0.5 * 448 / 99840 = 0.00224 rounds to E4M3's smallest subnormal 2^-9: 0.435 comes back.
  CHECK(k[5] == Approx(std::ldexp(1.0f, -9) * (bf16r(1e5f) / 448.0f)).epsilon(1e-6));
  run("int8_per_token_head");
  CHECK(k[1] == Approx(-1e5f).epsilon(0.01));
  run("q8_0", {{"rotate", false}});
  CHECK(k[0] == Approx(1e5f).epsilon(0.01));
}

TEST_CASE("kv stores: truncate then append stores what a fresh store stores", "[kvstore]") {
  const KvShape shape{2, 2, 64};
  for (const std::string f : {"int8_per_token_head", "q4_0", "kivi2", "bf16"}) {
    INFO(f);
    json p = f == "kivi2" ? json{{"group_size", 16}, {"residual", 32}} : json::object();
    auto a = make_kv_store({f, p}, shape), b = make_kv_store({f, p}, shape);
    kvgate::Rng r1(9), r2(9), r3(10);
    fill(*a, r1, 70, 1, 1);
    fill(*b, r2, 40, 1, 1);
    a->truncate(40);
    CHECK(a->size(1) == 40);
    kvgate::Rng r3b(10);
    fill(*a, r3, 50, 1, 1);
    fill(*b, r3b, 50, 1, 1);
    std::vector<float> ka(90 * 64), va(90 * 64), kb(90 * 64), vb(90 * 64);
    for (int l = 0; l < 2; ++l)
      for (int h = 0; h < 2; ++h) {
        a->read(l, h, 0, 90, ka.data(), va.data());
        b->read(l, h, 0, 90, kb.data(), vb.data());
        REQUIRE(ka == kb);
        REQUIRE(va == vb);
      }
    a->truncate(0);
    CHECK(a->size(0) == 0);
  }
}

TEST_CASE("kv stores: kivi2 keeps its full-precision window and groups", "[kvstore][kivi]") {
  // G = 16, R = 32: after 80 tokens, keys 0..63 are quantized (two windows of 32), 64..79 bf16;
  // values 0..47 quantized, the last 32 bf16.
  const KvShape shape{1, 1, 64};
  auto s = make_kv_store({"kivi2", {{"group_size", 16}, {"residual", 32}}}, shape);
  kvgate::Rng rng(21);
  const Drawn dr = fill(*s, rng, 80, 1.0, 1.0);
  std::vector<float> k(80 * 64), v(80 * 64);
  s->read(0, 0, 0, 80, k.data(), v.data());
  auto exact = [&](const std::vector<float>& got, const std::vector<std::vector<float>>& in, int t) {
    for (int i = 0; i < 64; ++i)
      if (got[t * 64 + i] != bf16r(in[t][i])) return false;
    return true;
  };
  for (int t = 0; t < 80; ++t) {
    INFO("token " << t);
    CHECK(exact(k, dr.k, t) == (t >= 64));
    CHECK(exact(v, dr.v, t) == (t >= 48));
  }
  // Quantized keys: every channel of a 16-token group holds at most 4 distinct values (2 bits).
  for (int c = 0; c < 64; ++c) {
    std::vector<float> vals;
    for (int t = 16; t < 32; ++t) vals.push_back(k[t * 64 + c]);
    std::sort(vals.begin(), vals.end());
    CHECK(std::unique(vals.begin(), vals.end()) - vals.begin() <= 4);
  }
  // Errors within half a step (plus the fp16 rounding of the scale and minimum) of each group.
  for (int t = 0; t < 48; ++t)
    for (int g = 0; g < 64; g += 16) {
      float mn = 1e30f, mx = -1e30f;
      for (int i = g; i < g + 16; ++i) {
        mn = std::min(mn, bf16r(dr.v[t][i]));
        mx = std::max(mx, bf16r(dr.v[t][i]));
      }
      const double s16 = f16r((mx - mn) / 3.0f), m16 = f16r(mn);
      for (int i = g; i < g + 16; ++i)
        REQUIRE(std::fabs(v[t * 64 + i] - bf16r(dr.v[t][i])) <= s16 / 2 + std::fabs(mn - m16) + 3 * std::fabs((mx - mn) / 3.0 - s16) + 1e-6);
    }
  auto spec = resolve_kv_format({"kivi2", {{"group_size", 16}, {"residual", 32}}}, shape);
  // 80 tokens: 16 bf16 keys and 32 bf16 values on top of the steady state.
  CHECK(spec.bytes_for_sequence(80) == 80 * spec.bytes_per_token() + 16 * (128 - spec.layers[0].k) + 32 * (128 - spec.layers[0].v));
}

TEST_CASE("kv stores: TurboQuant keys lose what Lloyd-Max predicts", "[kvstore][turboquant]") {
  // Lloyd-Max distortion of a unit Gaussian: 0.03455 (3 bits), 0.009497 (4 bits). After the
  // rotation each coordinate of a unit vector is ~N(0, 1/d), so the mean relative squared error of
  // the keys is about that (norm correction changes it slightly).
  for (const auto& [f, theory] : std::vector<std::pair<std::string, double>>{{"turboquant_3bit_nc", 0.03455}, {"turboquant_4bit_nc", 0.009497}}) {
    auto s = make_kv_store({f, {{"skip_layers", json::array()}, {"input_dtype", "fp32"}}}, KvShape{1, 4, 128});
    kvgate::Rng rng(5);
    const Drawn dr = fill(*s, rng, 64, 1.0, 1.0);
    std::vector<float> k(64 * 128), v(64 * 128);
    double sum = 0;
    for (int h = 0; h < 4; ++h) {
      s->read(0, h, 0, 64, k.data(), v.data());
      for (int t = 0; t < 64; ++t) {
        double e2 = 0, n2 = 0;
        for (int i = 0; i < 128; ++i) {
          const double x = dr.k[t][h * 128 + i];
          e2 += (x - k[t * 128 + i]) * (x - k[t * 128 + i]);
          n2 += x * x;
        }
        sum += e2 / n2;
      }
    }
    const double mean = sum / 256;
    INFO(f << " mean relative squared error " << mean);
    CHECK(mean > theory * 0.6);
    CHECK(mean < theory * 1.4);
  }
}

TEST_CASE("kv stores: error order on random data: fp8 per-token-head < fp8 per tensor < int4 < 3-bit", "[kvstore]") {
  // Keys ~ N(0, 1) and values ~ N(0, 0.1^2), each vector's scale spread by e^N(0,1) with an outlier
  // channel: per-tensor FP8 at scale 1.0 spends its range badly on the small vectors (subnormals),
  // per-token-head scales do not. The measure is the mean over vectors of |e|^2 / |x|^2, K and V.
  const KvShape shape{1, 4, 128};
  std::map<std::string, double> err;
  for (const std::string f : {"fp8_per_token_head", "fp8_e4m3", "int4_per_token_head", "turboquant_3bit_nc"}) {
    json p = f == "turboquant_3bit_nc" ? json{{"skip_layers", json::array()}} : json::object();
    auto s = make_kv_store({f, p}, shape);
    kvgate::Rng rng(17);
    const Drawn dr = fill(*s, rng, 128, 1.0, 0.1);
    std::vector<float> k(128 * 128), v(128 * 128);
    double sum = 0;
    for (int h = 0; h < 4; ++h) {
      s->read(0, h, 0, 128, k.data(), v.data());
      for (int t = 0; t < 128; ++t)
        for (int which = 0; which < 2; ++which) {
          const auto& in = which ? dr.v[t] : dr.k[t];
          const auto& got = which ? v : k;
          double e2 = 0, n2 = 0;
          for (int i = 0; i < 128; ++i) {
            const double x = bf16r(in[h * 128 + i]), g = got[t * 128 + i];
            e2 += (x - g) * (x - g);
            n2 += x * x;
          }
          sum += e2 / n2;
        }
    }
    err[f] = sum / (4 * 128 * 2);
    UNSCOPED_INFO(f << ": mean relative squared error " << err[f]);
  }
  CHECK(err["fp8_per_token_head"] * 1.2 < err["fp8_e4m3"]);
  CHECK(err["fp8_e4m3"] * 1.2 < err["int4_per_token_head"]);
  CHECK(err["int4_per_token_head"] * 1.2 < err["turboquant_3bit_nc"]);
}

// The deliberately broken format end-to-end tests use to show a gate FAILs.
TEST_CASE("kv store: test_broken_zero_v keeps K as bf16 and reads V back as zeros; it is never listed", "[kv]") {
  const KvShape shape{.layers = 2, .kv_heads = 2, .head_dim = 8};
  auto store = make_kv_store({.format = kTestBrokenZeroV}, shape);
  CHECK(store->format() == kTestBrokenZeroV);
  CHECK(store->describe()["format"] == kTestBrokenZeroV);
  CHECK(store->bytes_per_token() == make_kv_store({.format = "bf16"}, shape)->bytes_per_token());
  std::vector<float> k(16), v(16);
  for (int i = 0; i < 16; ++i) k[i] = 0.1f * static_cast<float>(i) + 0.013f, v[i] = 1.0f + static_cast<float>(i);
  store->append(1, k.data(), v.data());
  std::vector<float> ko(8), vo(8, 7.0f);
  store->read(1, 1, 0, 1, ko.data(), vo.data());
  for (int i = 0; i < 8; ++i) {
    CHECK(ko[i] == bf16r(k[8 + i]));
    CHECK(vo[i] == 0.0f);
  }
  const auto& names = kv_format_names();
  CHECK(std::find(names.begin(), names.end(), kTestBrokenZeroV) == names.end());
}
