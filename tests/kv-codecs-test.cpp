// The KV codecs one by one (kernels/codec_*.h): known answers worked by hand from the engines'
// formulas (the working is in each case's comments), packing orders, zero and constant blocks and
// extreme values. Round trips over random data and whole stores are in kv-stores-test.cpp.
#include <cmath>
#include <vector>

#include "tests/catch_compat.hpp"
#include "kernels/kv_codecs.h"
#include "kernels/turboquant_centroids.h"

using namespace kvgate::kernels;
using kvtest::Approx;

TEST_CASE("int8_per_token_head: known answer, rne and trunc", "[codec]") {
  // absmax 7.9375 = 127/16 -> scale = 7.9375/127 = 0.0625 exactly, 1/scale = 16; x*16:
  //   7.9375 -> 127, -1 -> -16, 0.15625 -> 2.5 (rne 2, trunc 2), 0.21875 -> 3.5 (rne 4, trunc 3),
  //   -0.21875 -> -3.5 (rne -4, trunc -3), 0.1171875 -> 1.875 (rne 2, trunc 1)
  const float x[6] = {7.9375f, -1.0f, 0.15625f, 0.21875f, -0.21875f, 0.1171875f};
  std::int8_t q[6];
  CHECK(int8_pth_encode(x, 6, IntRounding::kRne, q) == 0.0625f);
  const std::int8_t rne[6] = {127, -16, 2, 4, -4, 2};
  for (int i = 0; i < 6; ++i) CHECK(q[i] == rne[i]);
  CHECK(int8_pth_encode(x, 6, IntRounding::kTrunc, q) == 0.0625f);
  const std::int8_t trunc[6] = {127, -16, 2, 3, -3, 1};
  for (int i = 0; i < 6; ++i) CHECK(q[i] == trunc[i]);
  float out[6];
  int8_pth_decode(q, 6, 0.0625f, out);
  CHECK(out[3] == 0.1875f);  // 3 * 0.0625: truncation lost a quarter step
  // A zero vector: the scale floor 1e-6 keeps the division finite; everything decodes to 0.
  const float z[4] = {0, 0, 0, 0};
  CHECK(int8_pth_encode(z, 4, IntRounding::kRne, q) == 1e-6f);
  for (int i = 0; i < 4; ++i) CHECK(q[i] == 0);
  // Below the floor: |x| = 4e-7 -> x / 1e-6 = 0.4 -> 0.
  const float tiny[2] = {4e-7f, -4e-7f};
  int8_pth_encode(tiny, 2, IntRounding::kRne, q);
  CHECK((q[0] == 0 && q[1] == 0));
}

TEST_CASE("fp8_per_token_head: known answer", "[codec]") {
  // absmax 56 -> scale = 56/448 = 0.125, 1/scale = 8; x*8 = 448 (0x7E), -8 (0xD0), 1.0625 (a tie
  // between 1.0 and 1.125: even 1.0 = 0x38), 24 = 1.5*2^4 (exponent 4+7 = 11, mantissa 4: 0x5C).
  const float x[4] = {56.0f, -1.0f, 0.1328125f, 3.0f};
  std::uint8_t q[4];
  CHECK(fp8_pth_encode(x, 4, q) == 0.125f);
  CHECK(q[0] == 0x7E);
  CHECK(q[1] == 0xD0);
  CHECK(q[2] == 0x38);
  CHECK(q[3] == 0x5C);
  float out[4];
  fp8_pth_decode(q, 4, 0.125f, out);
  CHECK(out[0] == 56.0f);
  CHECK(out[2] == 0.125f);
}

TEST_CASE("int4_per_token_head: known answer, zero point in the scale's low bits", "[codec]") {
  // min -1, max 2: scale = 3/15 = 0.2f (0x3E4CCCCD); zp = int(1/0.2f + 0.5) = int(5.5) = 5;
  // q = int(fma(x, 5, 5) + 0.5): -1 -> 0, 0 -> 5, 0.5 -> 7.5 -> 8, 2 -> 15.
  // Bytes: element 2i low nibble: 0x50, 0xF8. Word: 0x3E4CCCC0 | 5.
  const float x[4] = {-1.0f, 0.0f, 0.5f, 2.0f};
  std::uint8_t b[2];
  const std::uint32_t w = int4_pth_encode(x, 4, b);
  CHECK(w == 0x3E4CCCC5u);
  CHECK(b[0] == 0x50);
  CHECK(b[1] == 0xF8);
  // Decoding uses the scale with its 4 low bits cleared: 0x3E4CCCC0 = 0.19999980926513672.
  float out[4];
  int4_pth_decode(b, 4, w, out);
  const float s = bits_f32(0x3E4CCCC0u);
  CHECK(out[0] == -5 * s);
  CHECK(out[1] == 0.0f);
  CHECK(out[2] == 3 * s);  // 0.5 came back as 0.6: half a step
  CHECK(out[3] == 10 * s);
  // A constant vector: range 0 -> scale 1e-6, zp = round(-c/1e-6) clamps to 0 or 15.
  const float c[4] = {0.25f, 0.25f, 0.25f, 0.25f};
  const std::uint32_t wc = int4_pth_encode(c, 4, b);
  CHECK((wc & 0xF) == 0);      // -0.25/1e-6 < 0 -> 0
  CHECK(b[0] == 0xFF);         // 0.25e6 + 0 saturates at 15
  int4_pth_decode(b, 4, wc, out);
  CHECK(out[0] == Approx(15 * bits_f32(f32_bits(1e-6f) & ~0xFu)));  // a constant vector far from 0 is lost
}

TEST_CASE("int4_per_token_head: the randomized Hadamard is H * D * x", "[codec]") {
  // signs (+,-,+,-): D x = (1,-2,3,-4); H4 (Sylvester rows ++++, +-+-, ++--, +--+) gives (-2, 10, 0, -4).
  const float signs[4] = {1, -1, 1, -1};
  float y[4] = {1, 2, 3, 4};
  rht_forward_inplace(y, signs, 4);
  CHECK(y[0] == -2.0f);
  CHECK(y[1] == 10.0f);
  CHECK(y[2] == 0.0f);
  CHECK(y[3] == -4.0f);
  // min -4, max 10: scale = 14/15; zp = int(4/scale + 0.5) = int(4.79) = 4; q = (2, 15, 4, 0)
  // (-4 -> 4 - 4.29 = -0.29 -> int(-0.79) = 0).
  std::uint8_t b[2];
  const std::uint32_t w = int4_pth_encode(y, 4, b);
  CHECK((w & 0xF) == 4);
  CHECK(b[0] == (2 | (15 << 4)));
  CHECK(b[1] == (4 | (0 << 4)));
  rht_inverse_inplace(y, signs, 4);
  CHECK(y[0] == 1.0f);
  CHECK(y[3] == 4.0f);
}

TEST_CASE("e2m1: every representable value, ties to even, saturation", "[codec][nvfp4]") {
  const float mags[8] = {0, 0.5f, 1, 1.5f, 2, 3, 4, 6};
  for (int c = 0; c < 8; ++c) {
    CHECK(f32_to_e2m1(mags[c]) == c);
    CHECK(f32_to_e2m1(-mags[c]) == (c | 8));
    CHECK(e2m1_to_f32(static_cast<std::uint8_t>(c)) == mags[c]);
    CHECK(e2m1_to_f32(static_cast<std::uint8_t>(c | 8)) == -mags[c]);
  }
  CHECK(std::signbit(e2m1_to_f32(8)));  // code 8 is -0
  CHECK(!std::signbit(e2m1_to_f32(0)));
  // Ties go to the even code: 0.25 -> 0, 0.75 -> 1.0, 1.25 -> 1.0, 1.75 -> 2, 2.5 -> 2, 3.5 -> 4, 5 -> 4.
  CHECK(f32_to_e2m1(0.25f) == 0);
  CHECK(f32_to_e2m1(0.75f) == 2);
  CHECK(f32_to_e2m1(1.25f) == 2);
  CHECK(f32_to_e2m1(1.75f) == 4);
  CHECK(f32_to_e2m1(2.5f) == 4);
  CHECK(f32_to_e2m1(3.5f) == 6);
  CHECK(f32_to_e2m1(5.0f) == 6);
  CHECK(f32_to_e2m1(5.01f) == 7);
  CHECK(f32_to_e2m1(1e9f) == 7);
  CHECK(f32_to_e2m1(-INFINITY) == 15);
}

TEST_CASE("e2m1 as e4m3 x 2^-6, then x 2^6 s in fp16: exact for every code and block scale", "[codec][nvfp4]") {
  // The tensor-core decode kernel's nvfp4 path: every byte of two codes, in every byte of the word.
  for (std::uint32_t b = 0; b < 256; ++b)
    for (int pos = 0; pos < 4; ++pos) {
      const std::uint32_t w = (b << (8 * pos)) | (0xA5u << (8 * ((pos + 1) % 4)));  // a neighbour byte
      std::uint32_t even = 0, odd = 0;
      e2m1x8_to_e4m3(w, even, odd);
      const auto byte = [&](std::uint32_t x) { return static_cast<std::uint8_t>(x >> (8 * pos)); };
      const float lo = fp8_e4m3_to_f32(byte(even)), hi = fp8_e4m3_to_f32(byte(odd));
      INFO("byte " << b << " at " << pos);
      CHECK(lo == std::ldexp(e2m1_to_f32(static_cast<std::uint8_t>(b & 0xFu)), -6));
      CHECK(hi == std::ldexp(e2m1_to_f32(static_cast<std::uint8_t>(b >> 4)), -6));
      CHECK(std::signbit(lo) == ((b & 0x8u) != 0));
      CHECK(std::signbit(hi) == ((b & 0x80u) != 0));
    }
  // Both fp16 factors and their fp16 product are exact: every code against every finite e4m3 scale.
  const auto fp16_exact = [](float x) { return f16_to_f32(f32_to_f16(x)) == x; };
  for (int c = 0; c < 16; ++c)
    for (int sb = 0; sb < 256; ++sb) {
      const float s = fp8_e4m3_to_f32(static_cast<std::uint8_t>(sb));
      if (std::isnan(s)) continue;
      const float e = e2m1_to_f32(static_cast<std::uint8_t>(c));
      INFO("code " << c << " scale byte " << sb);
      CHECK(fp16_exact(std::ldexp(e, -6)));
      CHECK(fp16_exact(std::ldexp(s, 6)));
      CHECK(fp16_exact(e * s));  // e * s is exact in fp32 (2 x 4 significant bits)
    }
}

TEST_CASE("nvfp4: known answer block, tensor scale, zero and saturated blocks", "[codec][nvfp4]") {
  // amax 6, tensor scale 1: s_b = E4M3(6 * (1/6)) = E4M3(1.0) = 0x38, values / 1:
  //   6 -> 7, 3 -> 5, -1.5 -> 0xB, 0.75 -> 2 (tie), 0.25 -> 0 (tie), 5 -> 6 (tie), 2.5 -> 4, -0.1 -> 0x8.
  float x[16] = {6, 3, -1.5f, 0.75f, 0.25f, 5, 2.5f, -0.1f};
  std::uint8_t d[8];
  CHECK(nvfp4_encode_block(x, 1.0f, d) == 0x38);
  const std::uint8_t want[8] = {0x57, 0x2B, 0x60, 0x84, 0, 0, 0, 0};
  for (int i = 0; i < 8; ++i) CHECK(d[i] == want[i]);
  float out[16];
  nvfp4_decode_block(d, 0x38, 1.0f, out);
  const float back[8] = {6, 3, -1.5f, 1, 0, 4, 2, 0};
  for (int i = 0; i < 8; ++i) CHECK(out[i] == back[i]);
  CHECK(std::signbit(out[7]));  // -0.1 is stored as -0
  // Tensor scale 0.5 (1/s_t = 2): s_b = E4M3(2 * 1.0) = 0x40; same codes; decode multiplies 2 * 0.5.
  CHECK(nvfp4_encode_block(x, 2.0f, d) == 0x40);
  CHECK(d[0] == 0x57);
  // A zero block: s_b = 0, every code 0.
  float zero[16] = {};
  CHECK(nvfp4_encode_block(zero, 1.0f, d) == 0);
  for (int i = 0; i < 8; ++i) CHECK(d[i] == 0);
  // A block beyond the scale range: s_b saturates at 448, values at 6: 6 * 448 = 2688 is the largest.
  float big[16] = {1e6f, -1e6f};
  CHECK(nvfp4_encode_block(big, 1.0f, d) == 0x7E);
  nvfp4_decode_block(d, 0x7E, 1.0f, out);
  CHECK(out[0] == 2688.0f);
  CHECK(out[1] == -2688.0f);
  // Head layout: d/2 data bytes then d/16 scale bytes.
  float head[32];
  for (int i = 0; i < 32; ++i) head[i] = i < 16 ? x[i] : 2 * x[i - 16];
  std::uint8_t hb[18];
  nvfp4_encode_head(head, 32, 1.0f, hb);
  CHECK(hb[16] == 0x38);
  CHECK(hb[17] == 0x40);  // amax 12 -> E4M3(2.0)
  CHECK(hb[8] == 0x57);
}

TEST_CASE("q8_0: known answer block", "[codec][ggml]") {
  // x_j = j - 16: amax 16, d = 16/127 = 0.125984...; fp16(d): 2^-3 * 1.00787 -> mantissa
  // round(0.00787 * 1024) = 8 -> 0x3008 (= 0.1259765625). q = roundf(x * 127/16):
  // x = -16 -> -127, 1 -> 7.94 -> 8, 2 -> 15.875 -> 16, 15 -> 119.06 -> 119.
  float x[32];
  for (int j = 0; j < 32; ++j) x[j] = static_cast<float>(j - 16);
  std::uint8_t b[kQ8_0Bytes];
  q8_0_encode_block(x, b);
  CHECK(load_u16_le(b) == 0x3008);
  CHECK(static_cast<std::int8_t>(b[2 + 0]) == -127);
  CHECK(static_cast<std::int8_t>(b[2 + 16]) == 0);
  CHECK(static_cast<std::int8_t>(b[2 + 17]) == 8);
  CHECK(static_cast<std::int8_t>(b[2 + 18]) == 16);
  CHECK(static_cast<std::int8_t>(b[2 + 31]) == 119);
  float out[32];
  q8_0_decode_block(b, out);
  CHECK(out[0] == -127 * 0.1259765625f);
  // roundf rounds halves away from zero: d = 1 block (amax 127), x = 2.5 -> 3, -2.5 -> -3.
  float h[32] = {127, 2.5f, -2.5f};
  q8_0_encode_block(h, b);
  CHECK(static_cast<std::int8_t>(b[3]) == 3);
  CHECK(static_cast<std::int8_t>(b[4]) == -3);
  float zero[32] = {};
  q8_0_encode_block(zero, b);
  CHECK(load_u16_le(b) == 0);
  q8_0_decode_block(b, out);
  CHECK(out[5] == 0.0f);
}

TEST_CASE("q4_0: known answer block, nibble order j / j+16", "[codec][ggml]") {
  // max (signed, largest magnitude) = -8 -> d = -8/-8 = 1 (fp16 0x3C00), id = 1;
  // q = min(15, int8(x + 8.5)): -8 -> 0, 4 -> 12, 1 -> 9, 0.4 -> 8, 7.9 -> 16 -> 15 (clamped).
  float x[32] = {};
  x[0] = -8;
  x[16] = 4;
  x[1] = 1;
  x[17] = 0.4f;
  x[2] = 7.9f;
  std::uint8_t b[kQ4_0Bytes];
  q4_0_encode_block(x, b);
  CHECK(load_u16_le(b) == 0x3C00);
  CHECK(b[2] == (0 | (12 << 4)));  // element 0 low nibble, element 16 high nibble
  CHECK(b[3] == (9 | (8 << 4)));
  CHECK(b[4] == (15 | (8 << 4)));
  float out[32];
  q4_0_decode_block(b, out);
  CHECK(out[0] == -8.0f);
  CHECK(out[16] == 4.0f);
  CHECK(out[2] == 7.0f);  // the positive side ends at +7d
  // Equal magnitudes: the first one wins (strict <), so d = 3/-8.
  float t[32] = {3, -3};
  q4_0_encode_block(t, b);
  CHECK(f16_to_f32(load_u16_le(b)) == -0.375f);
  float zero[32] = {};
  q4_0_encode_block(zero, b);
  q4_0_decode_block(b, out);
  CHECK(b[2] == 0x88);
  CHECK(out[0] == 0.0f);
}

TEST_CASE("hadamard: Sylvester order, orthonormal, llama.cpp's block sizes", "[codec][rotation]") {
  // H4 x for x = e_1 is the second column: (1, -1, 1, -1).
  float e1[4] = {0, 1, 0, 0};
  fwht_inplace(e1, 4);
  CHECK(e1[0] == 1.0f);
  CHECK(e1[1] == -1.0f);
  CHECK(e1[2] == 1.0f);
  CHECK(e1[3] == -1.0f);
  float v[128], w[128];
  for (int i = 0; i < 128; ++i) v[i] = w[i] = std::sin(0.37f * i) + 0.01f * i;
  hadamard_orthonormal_inplace(w, 128);
  double n0 = 0, n1 = 0;
  for (int i = 0; i < 128; ++i) {
    n0 += double(v[i]) * v[i];
    n1 += double(w[i]) * w[i];
  }
  CHECK(n1 == Approx(n0).epsilon(1e-6));
  hadamard_orthonormal_inplace(w, 128);
  for (int i = 0; i < 128; ++i) CHECK(w[i] == Approx(v[i]).margin(1e-5));
  CHECK(ggml_k_rotation_block(128) == 128);
  CHECK(ggml_k_rotation_block(64) == 64);
  CHECK(ggml_k_rotation_block(192) == 64);
  CHECK(ggml_k_rotation_block(256) == 256);
  CHECK(ggml_k_rotation_block(96) == 0);
  CHECK(ggml_v_rotation_block(256) == 64);
  CHECK(ggml_v_rotation_block(80) == 0);
}

TEST_CASE("code packing: 3-bit codes 0..7 fill 3 bytes little-endian", "[codec][turboquant]") {
  // sum_i i << 3i = 0xFAC688 -> bytes 88 C6 FA.
  std::uint8_t b[3] = {};
  for (int i = 0; i < 8; ++i) pack_code_le(b, i, 3, static_cast<unsigned>(i));
  CHECK(b[0] == 0x88);
  CHECK(b[1] == 0xC6);
  CHECK(b[2] == 0xFA);
  for (int i = 0; i < 8; ++i) CHECK(unpack_code_le(b, i, 3) == static_cast<unsigned>(i));
}

TEST_CASE("turboquant: value codes, scale and min as fp16", "[codec][turboquant]") {
  // v_i = i/2: min 0, max 7.5, scale 7.5/15 = 0.5, q_i = int(v_i/0.5 + 0.5) = i; 4-bit pairs low first:
  // 0x10, 0x32, ...; fp16(0.5) = 0x3800, fp16(0) = 0.
  float v[16];
  for (int i = 0; i < 16; ++i) v[i] = 0.5f * i;
  std::uint8_t b[12] = {};
  tq_value_encode(v, 16, 4, b);
  for (int i = 0; i < 8; ++i) CHECK(b[i] == ((2 * i) | ((2 * i + 1) << 4)));
  CHECK(load_u16_le(b + 8) == 0x3800);
  CHECK(load_u16_le(b + 10) == 0);
  float out[16];
  tq_value_decode(b, 16, 4, out);
  for (int i = 0; i < 16; ++i) CHECK(out[i] == v[i]);
  // A constant vector: scale floor 1e-8 (fp16 stores 0), every code 0, decodes to min16.
  float c[16];
  for (auto& x : c) x = -1.5f;
  std::uint8_t cb[12] = {};
  tq_value_encode(c, 16, 4, cb);
  tq_value_decode(cb, 16, 4, out);
  CHECK(out[3] == -1.5f);
}

TEST_CASE("turboquant: MSE key by hand with a 2-bit table", "[codec][turboquant]") {
  // k = (3,1,1,1): n = sqrt(12) = 3.4641; k/n = (0.866, 0.2887, 0.2887, 0.2887) is fixed by H4/2.
  // Midpoints (-0.5, 0, 0.5): codes (3, 2, 2, 2) -> one byte 3 | 2<<2 | 2<<4 | 2<<6 = 0xAB;
  // fp16(3.4641) = 2 * 1.732 -> mantissa round(0.732 * 1024) = 750 -> 0x42EE.
  const float k[4] = {3, 1, 1, 1}, mid[3] = {-0.5f, 0.0f, 0.5f}, cent[4] = {-0.75f, -0.25f, 0.25f, 0.75f};
  float scratch[4];
  std::uint8_t b[3] = {};
  tq_key_encode_mse(k, 4, 2, mid, scratch, b);
  CHECK(b[0] == 0xAB);
  CHECK(load_u16_le(b + 1) == 0x42EE);
  // Read with norm correction: c = (0.75, 0.25, 0.25, 0.25) / sqrt(0.75) = k/n exactly, so k comes
  // back up to the fp16 norm; without it the vector keeps the centroids' norm sqrt(0.75).
  float out[4];
  tq_key_decode_mse(b, 4, 2, cent, true, out);
  const float n16 = f16_to_f32(0x42EE);
  CHECK(out[0] == Approx(3.0f * n16 / std::sqrt(12.0f)).epsilon(1e-5));
  CHECK(out[1] == Approx(1.0f * n16 / std::sqrt(12.0f)).epsilon(1e-5));
  tq_key_decode_mse(b, 4, 2, cent, false, out);
  CHECK(out[0] == Approx(3.0f * n16 / std::sqrt(12.0f) * std::sqrt(0.75f)).epsilon(1e-5));
  // A zero key: n = 0, every y = 0 -> the code of the first midpoint above 0; it decodes to 0 * ... = 0.
  const float z[4] = {0, 0, 0, 0};
  std::uint8_t zb[3] = {};
  tq_key_encode_mse(z, 4, 2, mid, scratch, zb);
  tq_key_decode_mse(zb, 4, 2, cent, true, out);
  CHECK(out[0] == 0.0f);
}

TEST_CASE("turboquant: Lloyd-Max centroids match Max's Gaussian quantizer scaled by 1/sqrt(d)", "[codec][turboquant]") {
  // Max (1960), N(0,1): 8 levels +-0.2451 0.7560 1.3440 2.1520; 16 levels +-0.1284 0.3881 0.6568
  // 0.9423 1.2562 1.6180 2.0690 2.7326. vLLM's trapezoid solver lands within 2e-3 of them.
  const double max8[4] = {0.2451, 0.7560, 1.3440, 2.1520};
  const double max16[8] = {0.1284, 0.3881, 0.6568, 0.9423, 1.2562, 1.6180, 2.0690, 2.7326};
  const auto t3 = turboquant_lloyd_max(128, 3), t4 = turboquant_lloyd_max(128, 4);
  REQUIRE(t3.centroids.size() == 8);
  REQUIRE(t4.centroids.size() == 16);
  const double s = std::sqrt(128.0);
  for (int i = 0; i < 4; ++i) {
    CHECK(t3.centroids[4 + i] * s == Approx(max8[i]).margin(2e-3));
    CHECK(t3.centroids[3 - i] == -t3.centroids[4 + i]);
  }
  for (int i = 0; i < 8; ++i) CHECK(t4.centroids[8 + i] * s == Approx(max16[i]).margin(2e-3));
  for (int i = 0; i < 7; ++i) CHECK(t3.midpoints[i] == (t3.centroids[i] + t3.centroids[i + 1]) / 2.0f);
  CHECK(&turboquant_table(128, 3) == &turboquant_table(128, 3));  // cached
}

TEST_CASE("kivi: 2-bit group, round half to even, fp16 scale and min", "[codec][kivi]") {
  // min 0, max 3 -> scale 1: q = rint(x): 1.5 -> 2, 0.5 -> 0, 2.5 -> 2; code i at bits 2i.
  float x[16] = {0, 1, 2, 3, 1.5f, 0.5f, 2.5f};
  std::uint8_t b[4] = {};
  std::uint16_t sc, mn;
  kivi_encode_group(x, 1, 16, 2, b, &sc, &mn);
  CHECK(sc == 0x3C00);
  CHECK(mn == 0);
  CHECK(b[0] == (0 | 1 << 2 | 2 << 4 | 3 << 6));
  CHECK(b[1] == (2 | 0 << 2 | 2 << 4 | 0 << 6));
  float out[16];
  kivi_decode_group(b, 16, 2, sc, mn, out, 1);
  CHECK(out[4] == 2.0f);
  CHECK(out[5] == 0.0f);
  // A strided group (a key channel across tokens) and a constant group.
  float strided[32];
  for (int i = 0; i < 16; ++i) {
    strided[2 * i] = 7.0f;
    strided[2 * i + 1] = -100.0f;
  }
  std::uint8_t cb[4] = {};
  kivi_encode_group(strided, 2, 16, 2, cb, &sc, &mn);
  CHECK(sc == 0);
  CHECK(f16_to_f32(mn) == 7.0f);
  kivi_decode_group(cb, 16, 2, sc, mn, out, 1);
  CHECK(out[9] == 7.0f);
}

TEST_CASE("fp8 per tensor: x / scale then RNE, times scale back", "[codec][fp8]") {
  // scale 2: 1.5/2 = 0.75 = 1.5 * 2^-1 (exponent -1+7 = 6, mantissa 4) = 0x34 -> 1.5;
  // 900/2 = 450 saturates to 448 -> 896.
  CHECK(fp8_tensor_encode(1.5f, 2.0f, Fp8Kind::kE4M3) == 0x34);
  CHECK(fp8_tensor_decode(0x34, 2.0f, Fp8Kind::kE4M3) == 1.5f);
  CHECK(fp8_tensor_decode(fp8_tensor_encode(900.0f, 2.0f, Fp8Kind::kE4M3), 2.0f, Fp8Kind::kE4M3) == 896.0f);
  // E5M2 keeps 2 mantissa bits: 1.125 is a tie between 1.0 and 1.25 -> 1.0.
  CHECK(fp8_tensor_decode(fp8_tensor_encode(1.125f, 1.0f, Fp8Kind::kE5M2), 1.0f, Fp8Kind::kE5M2) == 1.0f);
}
