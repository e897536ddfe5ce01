// The engine-emulation switches of the attention (attention_emulation.h) change results the way
// the engines' kernels do: the Hopper FP8 accumulator (FP22, truncated) loses accuracy as the
// context grows, two-level promotion brings it back, fp8 Q costs at most fp8's precision, fresh
// accumulators per split shrink the error, and q_vec_dot rounds Q value for value as llama.cpp's
// x86 build does (hand-computed q8_0 blocks). CPU twin only (the CUDA kernel matches it in
// test-kernels). References are fp64.
#include <cmath>
#include <vector>

#include "kernels/attention_emulation.h"
#include "kernels/hadamard.h"
#include "tests/catch_compat.hpp"
#include "harness/core/rng.h"
#include "kernels/ops_ref.h"

using namespace kvgate::kernels;

namespace {

struct Inputs {
  int ctx, d;
  std::vector<float> q, k, v;
};

// One query over ctx tokens; q = 0 makes every softmax weight exactly 1 (also in fp8), so the
// output is the mean of V and only the accumulation differs. V has a positive mean: the running
// sum grows with the context, as a long P.V sum does.
Inputs flat_inputs(int ctx, int d, std::uint64_t seed) {
  kvgate::Rng rng(seed);
  Inputs in{ctx, d, std::vector<float>(d, 0.0f), std::vector<float>(static_cast<std::size_t>(ctx) * d),
            std::vector<float>(static_cast<std::size_t>(ctx) * d)};
  for (auto& x : in.k) x = static_cast<float>(rng.normal());
  for (auto& x : in.v) x = static_cast<float>(0.5 + rng.normal());
  return in;
}

Inputs random_inputs(int ctx, int d, std::uint64_t seed) {
  kvgate::Rng rng(seed);
  Inputs in{ctx, d, std::vector<float>(d), std::vector<float>(static_cast<std::size_t>(ctx) * d),
            std::vector<float>(static_cast<std::size_t>(ctx) * d)};
  for (auto& x : in.q) x = static_cast<float>(2.0 * rng.normal());
  for (auto& x : in.k) x = static_cast<float>(rng.normal());
  for (auto& x : in.v) x = static_cast<float>(0.3 + rng.normal());
  return in;
}

std::vector<float> run(const Inputs& in, const AttentionEmulation& e, const std::vector<float>* q = nullptr) {
  std::vector<float> out(in.d, NAN);
  const int pos = in.ctx - 1;
  const AttentionArgs a{.q = q ? q->data() : in.q.data(), .k = in.k.data(), .v = in.v.data(), .out = out.data(), .q_pos = &pos,
                        .rows = 1, .ctx = in.ctx, .first = 0, .head_dim = in.d, .group = 1, .q_stride = in.d,
                        .q_offset = 0, .out_stride = in.d, .window = 0, .scale = static_cast<float>(1.0 / std::sqrt(double(in.d))),
                        .scores = nullptr};
  std::vector<float> scores(in.ctx);
  AttentionArgs b = a;
  b.scores = scores.data();
  if (e.active()) attention_rows_emulated_ref(b, e);
  else attention_rows_ref(b);
  return out;
}

// fp64 attention of query q.
std::vector<double> exact(const Inputs& in, const std::vector<float>& q) {
  std::vector<double> s(in.ctx), out(in.d, 0.0);
  double mx = -INFINITY, sum = 0;
  for (int t = 0; t < in.ctx; ++t) {
    double dot = 0;
    for (int j = 0; j < in.d; ++j) dot += double(q[j]) * in.k[static_cast<std::size_t>(t) * in.d + j];
    s[t] = dot / std::sqrt(double(in.d));
    mx = std::max(mx, s[t]);
  }
  for (double& x : s) sum += (x = std::exp(x - mx));
  for (int t = 0; t < in.ctx; ++t)
    for (int j = 0; j < in.d; ++j) out[j] += s[t] / sum * in.v[static_cast<std::size_t>(t) * in.d + j];
  return out;
}

// ||out - ref|| / ||ref||.
double rel_error(const std::vector<float>& out, const std::vector<double>& ref) {
  double num = 0, den = 0;
  for (std::size_t j = 0; j < ref.size(); ++j) {
    num += (out[j] - ref[j]) * (out[j] - ref[j]);
    den += ref[j] * ref[j];
  }
  return std::sqrt(num / den);
}

double mean(const std::vector<float>& x) {
  double s = 0;
  for (float v : x) s += v;
  return s / x.size();
}

const AttentionEmulation kFp8Exact{.pv_fp8 = true};
const AttentionEmulation kReduced{.pv_fp8 = true, .pv_accum = PvAccum::kReduced};
AttentionEmulation two_level(int every) { return {.pv_fp8 = true, .pv_accum = PvAccum::kTwoLevel, .pv_promote_every = every}; }

}  // namespace

TEST_CASE("emulation: FP22 truncation and the k-step sum", "[emulation]") {
  CHECK(emu_trunc_fp22(1.0) == 1.0f);
  CHECK(emu_trunc_fp22(1.0 + std::ldexp(1.0, -13)) == 1.0f + std::ldexp(1.0f, -13));  // 13 mantissa bits kept
  CHECK(emu_trunc_fp22(1.0 + std::ldexp(1.0, -14)) == 1.0f);                          // the 14th dropped
  CHECK(emu_trunc_fp22(1.0 + std::ldexp(1.0, -13) - 1e-12) == 1.0f);                   // toward zero, not nearest
  CHECK(emu_trunc_fp22(-(1.0 + std::ldexp(1.0, -14))) == -1.0f);
  CHECK(emu_trunc_fp22(4096.0 + 0.4) == 4096.0f);  // at 4096 an FP22 ulp is 0.5: adding 0.4 is lost
  float acc = 4096.0f, mma = 0.0f;
  emu_accumulate(PvAccum::kReduced, 0.4, acc, mma);
  CHECK(acc == 4096.0f);
  emu_accumulate(PvAccum::kFp32, 0.4, acc, mma);
  CHECK(acc == 4096.4f);
  emu_accumulate(PvAccum::kTwoLevel, 0.4, acc, mma);
  CHECK(mma == emu_trunc_fp22(0.4));
  CHECK(emu_round_p(0.3f) == 0.3125f);   // e4m3: 3 mantissa bits
  CHECK(emu_round_p(1e-4f) == 0.0f);     // below half the smallest subnormal (2^-10): flushed
  CHECK(emu_round_q(1000.0f, 1.0f) == 448.0f);  // saturates at e4m3's max
  CHECK(emu_round_q(1000.0f, 4.0f) == 1024.0f);  // the scale moves the range
}

TEST_CASE("emulation: reduced accumulation error grows with context; two-level promotion brings it back", "[emulation]") {
  const int d = 64;
  double prev_reduced = 0;
  for (int ctx : {512, 4096, 32768}) {
    const Inputs in = flat_inputs(ctx, d, 11 + ctx);
    const std::vector<double> ref = exact(in, in.q);
    const double fp32 = rel_error(run(in, kFp8Exact), ref);
    const std::vector<float> reduced_out = run(in, kReduced);
    const double reduced = rel_error(reduced_out, ref);
    const double fixed = rel_error(run(in, two_level(128)), ref);
    INFO("ctx " << ctx << ": fp32 " << fp32 << ", reduced " << reduced << ", two_level(128) " << fixed);
    CHECK(fp32 < 1e-6);                       // weights of exactly 1: fp8 P changes nothing
    CHECK(fixed < 3e-4);                      // about one FP22 ulp of a 128-token partial, whatever the context
    CHECK(reduced > fixed);
    if (ctx >= 4096) CHECK(reduced > 10 * fixed);
    CHECK(mean(reduced_out) < mean(std::vector<float>(ref.begin(), ref.end())));  // truncation toward zero: biased low
    if (prev_reduced > 0) CHECK(reduced > 4 * prev_reduced);  // 8x the context: the error grows about linearly
    prev_reduced = reduced;
  }
  CHECK(prev_reduced > 5e-3);  // at 32K tokens the mean of V is off by more than half a percent
}

TEST_CASE("emulation: promoting more often is more exact; fresh split accumulators shrink the error", "[emulation]") {
  const Inputs in = flat_inputs(32768, 64, 3);
  const std::vector<double> ref = exact(in, in.q);
  const double every32 = rel_error(run(in, two_level(32)), ref);
  const double every1024 = rel_error(run(in, two_level(1024)), ref);
  const double never = rel_error(run(in, kReduced), ref);
  INFO("two_level 32: " << every32 << ", 1024: " << every1024 << ", reduced: " << never);
  CHECK(every32 < every1024);
  CHECK(every1024 < never);
  AttentionEmulation split8 = kReduced;
  split8.splits = 8;  // flash-decoding's splits: each a fresh (shorter) accumulator, merged in fp32
  const double split = rel_error(run(in, split8), ref);
  INFO("reduced, 8 splits: " << split);
  CHECK(split < never / 3);
}

TEST_CASE("emulation: fp8 Q costs at most fp8's precision; fp8 P is bounded too", "[emulation]") {
  const Inputs in = random_inputs(2048, 128, 7);
  const std::vector<double> ref = exact(in, in.q);
  // Q rounding alone is exactly attention over the rounded Q.
  std::vector<float> qr(in.q);
  double max_rel_q = 0;
  for (float& x : qr) {
    const float r = emu_round_q(x, 1.0f);
    if (std::fabs(x) >= 0.015625f) max_rel_q = std::max(max_rel_q, std::fabs(double(r) - x) / std::fabs(x));
    x = r;
  }
  CHECK(max_rel_q <= 0.0625);  // e4m3: half an ulp of 3 mantissa bits is 2^-4 relative (normal range)
  const std::vector<float> q8 = run(in, {.q_fp8 = true});
  CHECK(rel_error(q8, exact(in, qr)) < 1e-6);
  // Against the exact Q: each score moves by at most 2^-4 * sum |q_j k_j| * scale (plus the
  // subnormal range's absolute 2^-10), so every weight by at most exp(2 * that).
  double max_shift = 0;
  for (int t = 0; t < in.ctx; ++t) {
    double bound = 0;
    for (int j = 0; j < in.d; ++j)
      bound += (0.0625 * std::fabs(in.q[j]) + 0.001) * std::fabs(in.k[static_cast<std::size_t>(t) * in.d + j]);
    max_shift = std::max(max_shift, bound / std::sqrt(128.0));
  }
  double max_v = 0;
  for (float v : in.v) max_v = std::max(max_v, double(std::fabs(v)));
  double max_diff = 0;
  for (int j = 0; j < in.d; ++j) max_diff = std::max(max_diff, std::fabs(q8[j] - ref[j]));
  INFO("fp8 Q: max |diff| " << max_diff << ", bound " << (std::exp(2 * max_shift) - 1) * max_v);
  CHECK(max_diff > 0);
  CHECK(max_diff <= (std::exp(2 * max_shift) - 1) * max_v);
  const double q8_rel = rel_error(q8, ref);
  INFO("fp8 Q: relative error " << q8_rel);
  CHECK(q8_rel > 1e-5);    // the effect is there
  CHECK(q8_rel < 0.0625);  // and below fp8's own relative precision
  // A scale that pushes Q past 448 saturates it: much worse than the default.
  CHECK(rel_error(run(in, {.q_fp8 = true, .q_scale = 0.002f}), ref) > 3 * rel_error(q8, ref));
  // fp8 P: each weight within 2^-4 relative (or flushed below 2^-10 of the running max), so the
  // output stays within 2^-4 of max |V| plus the flushed mass.
  const std::vector<float> p8 = run(in, kFp8Exact);
  double max_p8 = 0;
  for (int j = 0; j < in.d; ++j) max_p8 = std::max(max_p8, std::fabs(p8[j] - ref[j]));
  INFO("fp8 P: max |diff| " << max_p8);
  CHECK(max_p8 > 0);
  CHECK(max_p8 <= (0.0625 + 0.001 * in.ctx) * max_v);
}

TEST_CASE("emulation: q_vec_dot rounds Q as llama.cpp's x86 build converts it (q8_0 blocks, f16)", "[emulation]") {
  const AttentionEmulation q8{.q_vec_dot = QVecDot::kQ8_0}, f16{.q_vec_dot = QVecDot::kF16};
  auto rounded = [](const AttentionEmulation& e, std::vector<float> x) {
    std::vector<float> out(x.size(), NAN);
    emu_q_row(e, x.data(), out.data(), static_cast<int>(x.size()));
    return out;
  };
  // amax 127 x 2^-4: d = 2^-4 exactly (fp16 too), 127 / amax = 16, so the codes are x * 16. Ties go
  // to the even code (vroundps), not away from zero (roundf): 2.5 -> 2, -2.5 -> -2, 3.5 -> 4.
  std::vector<float> a(32, 0.0f);
  const float step = 0.0625f;
  a[0] = 127 * step, a[1] = 5 * step, a[2] = 2.5f * step, a[3] = -2.5f * step, a[4] = 3.5f * step, a[5] = -1.3f * step;
  const std::vector<float> ra = rounded(q8, a);
  CHECK(ra[0] == 127 * step);
  CHECK(ra[1] == 5 * step);
  CHECK(ra[2] == 2 * step);
  CHECK(ra[3] == -2 * step);
  CHECK(ra[4] == 4 * step);
  CHECK(ra[5] == -1 * step);
  CHECK(ra[6] == 0.0f);
  // A block of zeros: d = 0, the inverse taken as 0 (no NaN).
  for (float x : rounded(q8, std::vector<float>(32, 0.0f))) CHECK(x == 0.0f);
  // The largest magnitude negative: amax = 12.7, d = fp16(0.1) = 1638 x 2^-14 = 0.0999755859375;
  // -12.7 -> code -127, 5 -> 50, each times the fp16 d.
  std::vector<float> b(32, 0.0f);
  b[7] = -12.7f, b[8] = 5.0f, b[9] = 1.0f;
  const std::vector<float> rb = rounded(q8, b);
  CHECK(rb[7] == -127 * 0.0999755859375f);
  CHECK(rb[7] == -12.6968994140625f);
  CHECK(rb[8] == 4.998779296875f);
  CHECK(rb[9] == 0.999755859375f);  // code 10
  // d's fp16 rounding: amax 1 gives d = 1/127 = 0.0078740..., in fp16 1032 x 2^-17, so the largest
  // value comes back as 127 x 1032 x 2^-17 = 0.99993896484375, not 1; 0.25 -> 31.75 -> code 32.
  std::vector<float> c(32, 0.0f);
  c[31] = 1.0f, c[30] = 0.25f;
  const std::vector<float> rc = rounded(q8, c);
  CHECK(rc[31] == 0.99993896484375f);
  CHECK(rc[30] == 32 * 1032 * 0x1p-17f);
  // Blocks of 32 from the row's start, each with its own scale: the row a | c rounds as a and c do,
  // and a span that starts on a block boundary rounds as the whole row does (the CUDA kernel's use).
  std::vector<float> ac(a);
  ac.insert(ac.end(), c.begin(), c.end());
  std::vector<float> rac = rounded(q8, ac), expect(ra);
  expect.insert(expect.end(), rc.begin(), rc.end());
  CHECK(rac == expect);
  std::vector<float> second(32);
  emu_q_row(q8, ac.data() + 32, second.data(), 32);
  CHECK(second == rc);
  // A row of 48: the last 16 values are a block of their own (amax 1 there, 7.9375 in the first).
  std::vector<float> r48(a);
  r48.insert(r48.end(), c.begin() + 16, c.end());
  const std::vector<float> rr48 = rounded(q8, r48);
  CHECK(rr48[47] == 0.99993896484375f);
  CHECK(rr48[46] == rc[30]);
  CHECK(rr48[2] == 2 * step);
  // A rotated cache (llama.cpp's attn_rot, H_64 / 8 here): Q is rounded in the rotated basis and
  // rotated back. q = H (a | c) rounds to H (round(a) | round(c)); H's sums of these dyadic values
  // are exact in fp32.
  AttentionEmulation q8rot = q8;
  q8rot.q_vec_dot_rot = 64;
  CHECK(emu_q_span(q8rot) == 64);
  CHECK(emu_q_span(q8) == 32);
  std::vector<float> hq(ac), hexpect(expect);
  hadamard_blocks_inplace(hq.data(), 64, 64);
  hadamard_blocks_inplace(hexpect.data(), 64, 64);
  const std::vector<float> rhq = rounded(q8rot, hq);
  for (int j = 0; j < 64; ++j) CHECK(rhq[j] == kvtest::Approx(hexpect[j]).margin(1e-6));
  CHECK(rounded(q8, hq) != rhq);  // without the rotation the blocks and their scales differ
  // In place, as the CUDA kernel rounds shared memory.
  std::vector<float> in_place(b);
  emu_q_row(q8, in_place.data(), in_place.data(), 32);
  CHECK(in_place == rb);
  // f16: round to nearest even, subnormals kept, below 2^-25 zero.
  const std::vector<float> rf = rounded(f16, {1.0f / 3.0f, -2049.0f, 1e-5f, 1e-8f});
  CHECK(rf[0] == 0.333251953125f);
  CHECK(rf[1] == -2048.0f);  // a tie at 2048's ulp of 2: to the even mantissa
  CHECK(rf[2] == 168 * 0x1p-24f);  // 1e-5 is a half subnormal: 167.77 x 2^-24 -> 168
  CHECK(rf[3] == 0.0f);
  // The other Q roundings of the same function: fp8 (q_fp8), bf16 (engine numerics), none.
  CHECK(rounded({.q_fp8 = true}, {1000.0f})[0] == 448.0f);
  CHECK(rounded({.numerics = AttentionNumerics::kEngine}, {1.0f / 3.0f})[0] == 0.333984375f);
  CHECK(rounded({}, {1.0f / 3.0f})[0] == 1.0f / 3.0f);
}

TEST_CASE("emulation: q_vec_dot q8_0 is exact attention over the rounded Q, within q8_0's precision", "[emulation]") {
  const Inputs in = random_inputs(1024, 128, 19);
  const std::vector<double> ref = exact(in, in.q);
  std::vector<float> qr(in.q.size());
  emu_q_row({.q_vec_dot = QVecDot::kQ8_0}, in.q.data(), qr.data(), in.d);
  double max_err = 0;  // half a code of each block's d (d within 2^-11 of amax / 127)
  for (int b = 0; b < in.d; b += 32) {
    double amax = 0;
    for (int j = b; j < b + 32; ++j) amax = std::max(amax, double(std::fabs(in.q[j])));
    for (int j = b; j < b + 32; ++j) max_err = std::max(max_err, std::fabs(double(qr[j]) - in.q[j]) / (amax / 127));
  }
  CHECK(max_err <= 0.5 + 128 * 0x1p-11);
  const std::vector<float> out = run(in, {.q_vec_dot = QVecDot::kQ8_0});
  CHECK(rel_error(out, exact(in, qr)) < 1e-6);
  const double rel = rel_error(out, ref);
  INFO("q8_0 Q: relative error " << rel);
  CHECK(rel > 1e-6);  // the effect is there
  CHECK(rel < rel_error(run(in, {.q_fp8 = true}), ref));  // 8 bits a value beat e4m3's 3 mantissa bits
  CHECK(rel_error(run(in, {.q_vec_dot = QVecDot::kF16}), ref) < rel / 4);  // f16's 11 bits beat q8_0
}
