// Engine numerics of the CPU attention (AttentionNumerics::kEngine, attention_ref.cpp): Q and the
// softmax weights p = exp(s - max) rounded to bf16 before the products, the row sum from the
// unrounded p, fp32 sums. Checked against a hand-rolled fp64 model of those steps, against exact
// numerics within the bf16 tolerance of the engine tests (relative L2 error 1e-2, cuda-engine-test's
// bound for bf16 logits), and through the emulating twin.
#include <cmath>
#include <vector>

#include "harness/core/rng.h"
#include "kernels/attention_emulation.h"
#include "kernels/float_formats.h"
#include "kernels/kv_store.h"
#include "kernels/ops_ref.h"
#include "tests/catch_compat.hpp"

using namespace kvgate::kernels;

namespace {

float bf16(float x) { return bf16_to_f32(f32_to_bf16(x)); }

// One KV head's attention problem: `rows` query rows of `group` heads at the last positions.
struct Problem {
  int ctx, rows, group, d;
  std::vector<float> q, k, v;  // q [rows][group * d], k/v [ctx][d]
  std::vector<int> pos;
};

Problem random_problem(int ctx, int rows, int group, int d, std::uint64_t seed) {
  kvgate::Rng rng(seed);
  Problem p{ctx, rows, group, d, std::vector<float>(static_cast<std::size_t>(rows) * group * d),
            std::vector<float>(static_cast<std::size_t>(ctx) * d), std::vector<float>(static_cast<std::size_t>(ctx) * d), {}};
  for (auto& x : p.q) x = static_cast<float>(2.0 * rng.normal());
  for (auto& x : p.k) x = static_cast<float>(rng.normal());
  for (auto& x : p.v) x = static_cast<float>(0.3 + rng.normal());
  for (int r = 0; r < rows; ++r) p.pos.push_back(ctx - rows + r);
  return p;
}

std::vector<float> run(const Problem& p, bool engine) {
  std::vector<float> out(p.q.size(), NAN), scores(static_cast<std::size_t>(p.rows) * p.ctx);
  const int w = p.group * p.d;
  attention_rows_ref({.q = p.q.data(), .k = p.k.data(), .v = p.v.data(), .out = out.data(), .q_pos = p.pos.data(),
                      .rows = p.rows, .ctx = p.ctx, .first = 0, .head_dim = p.d, .group = p.group, .q_stride = w,
                      .q_offset = 0, .out_stride = w, .window = 0,
                      .scale = static_cast<float>(1.0 / std::sqrt(double(p.d))), .scores = scores.data(),
                      .bf16_q = engine, .bf16_p = engine});
  return out;
}

// fp64 attention; `engine`: Q rounded to bf16, each weight exp(s - max) rounded to bf16 (through
// fp32) in the P.V sum, the row sum from the unrounded weights: FlashAttention's steps.
std::vector<double> model(const Problem& p, bool engine) {
  std::vector<double> out;
  const double scale = 1.0 / std::sqrt(double(p.d));
  for (int r = 0; r < p.rows; ++r)
    for (int h = 0; h < p.group; ++h) {
      const float* q = p.q.data() + (static_cast<std::size_t>(r) * p.group + h) * p.d;
      const int n = p.pos[r] + 1;
      std::vector<double> s(n);
      double mx = -INFINITY;
      for (int t = 0; t < n; ++t) {
        double dot = 0;
        for (int j = 0; j < p.d; ++j) dot += double(engine ? bf16(q[j]) : q[j]) * p.k[static_cast<std::size_t>(t) * p.d + j];
        s[t] = dot * scale;
        mx = std::max(mx, s[t]);
      }
      double l = 0;
      std::vector<double> w(n);
      for (int t = 0; t < n; ++t) {
        const double e = std::exp(s[t] - mx);
        l += e;
        w[t] = engine ? bf16(static_cast<float>(e)) : e;
      }
      for (int j = 0; j < p.d; ++j) {
        double acc = 0;
        for (int t = 0; t < n; ++t) acc += w[t] * p.v[static_cast<std::size_t>(t) * p.d + j];
        out.push_back(acc / l);
      }
    }
  return out;
}

// ||a - b|| / ||b||.
template <class A, class B>
double rel_error(const std::vector<A>& a, const std::vector<B>& b) {
  double num = 0, den = 0;
  for (std::size_t i = 0; i < b.size(); ++i) {
    num += (double(a[i]) - double(b[i])) * (double(a[i]) - double(b[i]));
    den += double(b[i]) * double(b[i]);
  }
  return std::sqrt(num / den);
}

int differing(const std::vector<float>& a, const std::vector<float>& b) {
  int n = 0;
  for (std::size_t i = 0; i < a.size(); ++i) n += a[i] != b[i];
  return n;
}

}  // namespace

TEST_CASE("numerics: engine attention on a tiny input equals a hand-rolled bf16 model", "[numerics]") {
  // Q entries and weights that bf16 cannot hold: its rounding moves them by up to 2^-9 relative.
  Problem p{3, 1, 1, 4, {1.0030f, -0.7003f, 0.3337f, 2.0021f}, {0.5f, -1.25f, 0.75f, 0.1f, -0.3f, 0.9f, 1.1f, -0.6f, 0.2f, 0.4f, -0.8f, 1.3f},
            {1.0f, 2.0f, -1.0f, 0.5f, -0.5f, 1.5f, 0.25f, -2.0f, 0.75f, -1.0f, 1.25f, 0.3f}, {2}};
  const std::vector<float> engine = run(p, true), exact = run(p, false);
  const std::vector<double> engine_model = model(p, true), exact_model = model(p, false);
  INFO("engine " << engine[0] << " " << engine[1] << " " << engine[2] << " " << engine[3]);
  CHECK(rel_error(engine, engine_model) < 1e-6);  // fp32 sums against fp64
  CHECK(rel_error(exact, exact_model) < 1e-6);
  CHECK(rel_error(engine_model, exact_model) > 1e-4);  // the rounding is there, well above fp32's error
  CHECK(differing(engine, exact) == 4);
}

TEST_CASE("numerics: engine against exact within the bf16 tolerance; every row and head rounded", "[numerics]") {
  // Prefill rows of a GQA group of 4 over 300 keys: the bf16 Q is kept in each head's output slot
  // while its scores are computed, so heads and rows must not disturb one another.
  const Problem p = random_problem(300, 24, 4, 128, 11);
  const std::vector<float> engine = run(p, true), exact = run(p, false);
  const double err = rel_error(engine, exact);
  INFO("engine vs exact: relative L2 error " << err);
  CHECK(err < 1e-2);   // cuda-engine-test's bf16 tolerance
  CHECK(err > 1e-5);   // and the rounding is not a no-op
  CHECK(differing(engine, exact) > static_cast<int>(engine.size()) / 2);
  // fp32 against fp64 scores: the odd weight next to a bf16 rounding boundary rounds the other way
  // (2^-8 of that weight), so engine numerics meet their model to 1e-5, still 100x below the
  // rounding's own effect; exact numerics to fp32's error.
  CHECK(rel_error(engine, model(p, true)) < 1e-5);
  CHECK(rel_error(exact, model(p, false)) < 1e-6);
}

TEST_CASE("numerics: attention_kv_ref takes the numerics from the emulation record", "[numerics]") {
  const int heads = 8, kv_heads = 2, d = 64, ctx = 150, rows = 5;
  kvgate::Rng rng(5);
  auto store = make_kv_store({.format = "bf16"}, {.layers = 1, .kv_heads = kv_heads, .head_dim = d});
  std::vector<float> kv(static_cast<std::size_t>(kv_heads) * d), vv(kv.size());
  for (int t = 0; t < ctx; ++t) {
    for (auto& x : kv) x = static_cast<float>(rng.normal());
    for (auto& x : vv) x = static_cast<float>(rng.normal());
    store->append(0, kv.data(), vv.data());
  }
  std::vector<float> q(static_cast<std::size_t>(rows) * heads * d);
  for (auto& x : q) x = static_cast<float>(2.0 * rng.normal());
  std::vector<int> pos;
  for (int r = 0; r < rows; ++r) pos.push_back(ctx - rows + r);
  const auto attend = [&](AttentionNumerics n) {
    std::vector<float> out(q.size(), NAN);
    AttentionWorkspace ws;
    attention_kv_ref({.q = q.data(), .out = out.data(), .q_pos = pos.data(), .rows = rows, .heads = heads, .kv_heads = kv_heads,
                      .head_dim = d, .layer = 0, .scale = 0.125f, .emulation = {.numerics = n}},
                     *store, ws);
    return out;
  };
  const std::vector<float> engine = attend(AttentionNumerics::kEngine), exact = attend(AttentionNumerics::kExact);
  CHECK(differing(engine, exact) > 0);
  CHECK(rel_error(engine, exact) < 1e-2);
  // The same as the rows of each KV head with both roundings on.
  std::vector<float> k(static_cast<std::size_t>(ctx) * d), v(k.size()), by_rows(q.size(), NAN), scores(rows * ctx);
  for (int h = 0; h < kv_heads; ++h) {
    store->read(0, h, 0, ctx, k.data(), v.data());
    attention_rows_ref({.q = q.data(), .k = k.data(), .v = v.data(), .out = by_rows.data(), .q_pos = pos.data(), .rows = rows,
                        .ctx = ctx, .first = 0, .head_dim = d, .group = heads / kv_heads, .q_stride = heads * d,
                        .q_offset = h * (heads / kv_heads) * d, .out_stride = heads * d, .window = 0, .scale = 0.125f,
                        .scores = scores.data(), .bf16_q = true, .bf16_p = true});
  }
  CHECK(differing(engine, by_rows) == 0);
}

TEST_CASE("numerics: the emulating twin rounds P to bf16 in engine numerics, over the emulation's own Q", "[numerics]") {
  Problem p = random_problem(200, 3, 2, 64, 7);
  const float scale = static_cast<float>(1.0 / std::sqrt(64.0));
  const auto emulated = [&](const AttentionEmulation& e) {
    std::vector<float> out(p.q.size(), NAN), scores(static_cast<std::size_t>(p.rows) * p.ctx);
    attention_rows_emulated_ref({.q = p.q.data(), .k = p.k.data(), .v = p.v.data(), .out = out.data(), .q_pos = p.pos.data(),
                                 .rows = p.rows, .ctx = p.ctx, .first = 0, .head_dim = p.d, .group = p.group,
                                 .q_stride = p.group * p.d, .q_offset = 0, .out_stride = p.group * p.d, .window = 0,
                                 .scale = scale, .scores = scores.data()},
                                e);
    return out;
  };
  // fp8 Q (a scale that makes its values no bf16 value) with engine numerics: Q stays the fp8
  // operand, P goes through bf16.
  const AttentionEmulation e{.q_fp8 = true, .q_scale = 0.3f, .numerics = AttentionNumerics::kEngine};
  const std::vector<float> engine = emulated(e);
  const std::vector<float> fp8_only = emulated({.q_fp8 = true, .q_scale = 0.3f});
  CHECK(differing(engine, fp8_only) > 0);
  Problem fp8_q = p;
  for (float& x : fp8_q.q) x = emu_round_q(x, 0.3f);
  std::vector<float> expected(p.q.size(), NAN), scores(static_cast<std::size_t>(p.rows) * p.ctx);
  attention_rows_ref({.q = fp8_q.q.data(), .k = p.k.data(), .v = p.v.data(), .out = expected.data(), .q_pos = p.pos.data(),
                      .rows = p.rows, .ctx = p.ctx, .first = 0, .head_dim = p.d, .group = p.group, .q_stride = p.group * p.d,
                      .q_offset = 0, .out_stride = p.group * p.d, .window = 0, .scale = scale, .scores = scores.data(),
                      .bf16_q = false, .bf16_p = true});
  CHECK(differing(engine, expected) == 0);
}
