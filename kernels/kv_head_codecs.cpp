// Host wrappers of the __host__ __device__ codecs, one class per format family (kv_head_codec.h).
#include <cstring>
#include <vector>

#include "kernels/codec_bytes.h"
#include "kernels/codec_fp8_per_tensor.h"
#include "kernels/codec_ggml.h"
#include "kernels/codec_nvfp4.h"
#include "kernels/codec_per_token_head.h"
#include "kernels/codec_turboquant.h"
#include "harness/core/error.h"
#include "kernels/hadamard.h"
#include "kernels/kv_head_codec.h"
#include "kernels/turboquant_centroids.h"

namespace kvgate::kernels {

namespace {

// A per-thread work vector (reads may run on several threads at once).
float* scratch(std::size_t n) {
  thread_local std::vector<float> buf;
  if (buf.size() < n) buf.resize(n);
  return buf.data();
}

// The same codec for K and V (every format but TurboQuant and the rotated ggml blocks).
class SymmetricCodec : public HeadCodec {
 public:
  void encode_k(int head, const float* x, std::uint8_t* out) const override { encode(head, x, out, true); }
  void encode_v(int head, const float* x, std::uint8_t* out) const override { encode(head, x, out, false); }
  void decode_k(int head, const std::uint8_t* in, float* out) const override { decode(head, in, out, true); }
  void decode_v(int head, const std::uint8_t* in, float* out) const override { decode(head, in, out, false); }
  int k_bytes() const override { return bytes(); }
  int v_bytes() const override { return bytes(); }

 protected:
  virtual int bytes() const = 0;
  virtual void encode(int head, const float* x, std::uint8_t* out, bool is_k) const = 0;
  virtual void decode(int head, const std::uint8_t* in, float* out, bool is_k) const = 0;
};

enum class Plain { kF32, kBf16, kF16 };

class PlainCodec final : public SymmetricCodec {
 public:
  PlainCodec(Plain type, int d) : type_(type), d_(d) {}

 private:
  int bytes() const override { return d_ * (type_ == Plain::kF32 ? 4 : 2); }
  void encode(int, const float* x, std::uint8_t* out, bool) const override {
    for (int i = 0; i < d_; ++i) {
      if (type_ == Plain::kF32) store_f32_le(out + 4 * i, x[i]);
      else store_u16_le(out + 2 * i, type_ == Plain::kBf16 ? f32_to_bf16(x[i]) : f32_to_f16(x[i]));
    }
  }
  void decode(int, const std::uint8_t* in, float* out, bool) const override {
    for (int i = 0; i < d_; ++i) {
      if (type_ == Plain::kF32) out[i] = load_f32_le(in + 4 * i);
      else out[i] = type_ == Plain::kBf16 ? bf16_to_f32(load_u16_le(in + 2 * i)) : f16_to_f32(load_u16_le(in + 2 * i));
    }
  }
  Plain type_;
  int d_;
};

class Fp8TensorCodec final : public SymmetricCodec {
 public:
  Fp8TensorCodec(Fp8Kind kind, int d, std::vector<float> k_scales, std::vector<float> v_scales)
      : kind_(kind), d_(d), k_(std::move(k_scales)), v_(std::move(v_scales)) {}

 private:
  int bytes() const override { return d_; }
  void encode(int head, const float* x, std::uint8_t* out, bool is_k) const override {
    fp8_tensor_encode_row(x, d_, (is_k ? k_ : v_)[head], kind_, out);
  }
  void decode(int head, const std::uint8_t* in, float* out, bool is_k) const override {
    fp8_tensor_decode_row(in, d_, (is_k ? k_ : v_)[head], kind_, out);
  }
  Fp8Kind kind_;
  int d_;
  std::vector<float> k_, v_;
};

// int8 / fp8 per token-head: [d data bytes | fp32 scale].
class PerTokenHeadCodec final : public SymmetricCodec {
 public:
  PerTokenHeadCodec(bool is_int8, IntRounding rounding, int d) : int8_(is_int8), rounding_(rounding), d_(d) {}

 private:
  int bytes() const override { return d_ + 4; }
  void encode(int, const float* x, std::uint8_t* out, bool) const override {
    const float scale = int8_ ? int8_pth_encode(x, d_, rounding_, reinterpret_cast<std::int8_t*>(out))
                              : fp8_pth_encode(x, d_, out);
    store_f32_le(out + d_, scale);
  }
  void decode(int, const std::uint8_t* in, float* out, bool) const override {
    const float scale = load_f32_le(in + d_);
    if (int8_) int8_pth_decode(reinterpret_cast<const std::int8_t*>(in), d_, scale, out);
    else fp8_pth_decode(in, d_, scale, out);
  }
  bool int8_;
  IntRounding rounding_;
  int d_;
};

// int4 per token-head: [d/2 packed bytes | fp32 scale word with the zero point in its low 4 bits].
class Int4Codec final : public SymmetricCodec {
 public:
  Int4Codec(int d, std::vector<float> signs, bool round_bf16) : d_(d), signs_(std::move(signs)), round_bf16_(round_bf16) {}

 private:
  int bytes() const override { return d_ / 2 + 4; }
  void encode(int, const float* x, std::uint8_t* out, bool) const override {
    float* y = scratch(d_);
    std::memcpy(y, x, sizeof(float) * d_);
    if (!signs_.empty()) {
      rht_forward_inplace(y, signs_.data(), d_);
      if (round_bf16_)  // vLLM casts the rotated K/V back to the model dtype before quantizing
        for (int i = 0; i < d_; ++i) y[i] = bf16_to_f32(f32_to_bf16(y[i]));
    }
    store_u32_le(out + d_ / 2, int4_pth_encode(y, d_, out));
  }
  void decode(int, const std::uint8_t* in, float* out, bool) const override {
    int4_pth_decode(in, d_, load_u32_le(in + d_ / 2), out);
    if (!signs_.empty()) rht_inverse_inplace(out, signs_.data(), d_);
  }
  int d_;
  std::vector<float> signs_;
  bool round_bf16_;
};

class Nvfp4Codec final : public SymmetricCodec {
 public:
  Nvfp4Codec(int d, std::vector<float> k_scales, std::vector<float> v_scales)
      : d_(d), k_(std::move(k_scales)), v_(std::move(v_scales)) {}

 private:
  int bytes() const override { return d_ / 2 + d_ / kNvfp4Block; }
  void encode(int head, const float* x, std::uint8_t* out, bool is_k) const override {
    nvfp4_encode_head(x, d_, (is_k ? k_ : v_)[head], out);
  }
  void decode(int head, const std::uint8_t* in, float* out, bool is_k) const override {
    nvfp4_decode_head(in, d_, (is_k ? k_ : v_)[head], out);
  }
  int d_;
  std::vector<float> k_, v_;
};

// q8_0 / q4_0 blocks along head_dim, after llama.cpp's optional block Hadamard rotation.
class GgmlCodec final : public SymmetricCodec {
 public:
  GgmlCodec(bool q8, int d, int k_rot, int v_rot) : q8_(q8), d_(d), k_rot_(k_rot), v_rot_(v_rot) {}

 private:
  int block_bytes() const { return q8_ ? kQ8_0Bytes : kQ4_0Bytes; }
  int bytes() const override { return d_ / kGgmlBlock * block_bytes(); }
  void encode(int, const float* x, std::uint8_t* out, bool is_k) const override {
    float* y = scratch(d_);
    std::memcpy(y, x, sizeof(float) * d_);
    const int rot = is_k ? k_rot_ : v_rot_;
    if (rot) hadamard_blocks_inplace(y, d_, rot);
    for (int b = 0; b < d_ / kGgmlBlock; ++b) {
      if (q8_) q8_0_encode_block(y + b * kGgmlBlock, out + b * block_bytes());
      else q4_0_encode_block(y + b * kGgmlBlock, out + b * block_bytes());
    }
  }
  void decode(int, const std::uint8_t* in, float* out, bool is_k) const override {
    for (int b = 0; b < d_ / kGgmlBlock; ++b) {
      if (q8_) q8_0_decode_block(in + b * block_bytes(), out + b * kGgmlBlock);
      else q4_0_decode_block(in + b * block_bytes(), out + b * kGgmlBlock);
    }
    const int rot = is_k ? k_rot_ : v_rot_;
    if (rot) hadamard_blocks_inplace(out, d_, rot);  // H/sqrt(n) is its own inverse
  }
  bool q8_;
  int d_, k_rot_, v_rot_;
};

// TurboQuant: K slot [key_packed], V slot [value codes | scale | min | pad to an even slot].
class TurboQuantCodec final : public HeadCodec {
 public:
  TurboQuantCodec(TurboQuantPreset preset, int d) : p_(preset), d_(d) {
    if (p_.key_bits != 8) table_ = &turboquant_table(d, p_.key_bits);
  }
  int k_bytes() const override { return tq_key_bytes(d_, p_.key_bits); }
  int v_bytes() const override { return tq_slot_bytes(d_, p_) - k_bytes(); }
  void encode_k(int, const float* x, std::uint8_t* out) const override {
    std::memset(out, 0, k_bytes());
    if (p_.key_bits == 8) tq_key_encode_fp8(x, d_, out);
    else tq_key_encode_mse(x, d_, p_.key_bits, table_->midpoints.data(), scratch(d_), out);
  }
  void encode_v(int, const float* x, std::uint8_t* out) const override {
    std::memset(out, 0, v_bytes());
    tq_value_encode(x, d_, p_.value_bits, out);
  }
  void decode_k(int, const std::uint8_t* in, float* out) const override {
    if (p_.key_bits == 8) tq_key_decode_fp8(in, d_, out);
    else tq_key_decode_mse(in, d_, p_.key_bits, table_->centroids.data(), p_.norm_correction, out);
  }
  void decode_v(int, const std::uint8_t* in, float* out) const override { tq_value_decode(in, d_, p_.value_bits, out); }

 private:
  TurboQuantPreset p_;
  int d_;
  const LloydMaxTable* table_ = nullptr;
};

}  // namespace

std::unique_ptr<HeadCodec> make_head_codec(const KvFormatSpec& spec, int layer) {
  const int d = spec.shape.head_dim;
  const std::string& f = spec.format;
  if (spec.skipped(layer) || f == "bf16") return std::make_unique<PlainCodec>(Plain::kBf16, d);
  if (f == "fp32") return std::make_unique<PlainCodec>(Plain::kF32, d);
  if (f == "fp16") return std::make_unique<PlainCodec>(Plain::kF16, d);
  if (f == "fp8_e4m3" || f == "fp8_e5m2")
    return std::make_unique<Fp8TensorCodec>(f == "fp8_e4m3" ? Fp8Kind::kE4M3 : Fp8Kind::kE5M2, d, spec.scales.k[layer],
                                            spec.scales.v[layer]);
  if (f == "fp8_per_token_head" || f == "int8_per_token_head")
    return std::make_unique<PerTokenHeadCodec>(f == "int8_per_token_head", spec.rounding, d);
  if (f == "int4_per_token_head") return std::make_unique<Int4Codec>(d, spec.hadamard_signs, spec.round_input_bf16);
  if (f == "nvfp4") return std::make_unique<Nvfp4Codec>(d, spec.scales.k[layer], spec.scales.v[layer]);
  if (f == "q8_0" || f == "q4_0")
    return std::make_unique<GgmlCodec>(f == "q8_0", d, spec.k_rotation_block, spec.v_rotation_block);
  if (f.rfind("turboquant_", 0) == 0) return std::make_unique<TurboQuantCodec>(spec.turboquant, d);
  throw Error("KV format " + f + " has no per-slot codec", kExitInternal);
}

}  // namespace kvgate::kernels
