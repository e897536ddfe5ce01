// kivi2: KIVI's 2-bit cache as its reference code keeps it (LlamaAttention_KIVI):
//   keys    per channel, in groups of G consecutive tokens; tokens past the last multiple of the
//           residual length R stay in full precision and are quantized R at a time;
//   values  per token, in groups of G channels; the last R tokens stay in full precision and the
//           oldest one is quantized as each new token arrives.
// Both rules depend only on the token count, so a prefill and token-by-token appends store the same
// bytes. "Full precision" is the input dtype (bf16 by default). A copy of the inputs is kept to serve
// the full-precision window and truncate(); it is not part of the format's size.
#include <algorithm>
#include <vector>

#include "kernels/codec_bytes.h"
#include "kernels/codec_kivi.h"
#include "harness/core/error.h"
#include "kernels/float_formats.h"
#include "kernels/kv_store_impl.h"

namespace kvgate::kernels {

namespace {

class KiviKvStore final : public KvStore {
 public:
  explicit KiviKvStore(KvFormatSpec spec) : s_(std::move(spec)), layers_(s_.shape.layers) {
    const int d = s_.shape.head_dim, g = s_.kivi_group, b = s_.kivi_bits;
    key_codes_ = packed_bytes(g, b);                           // one channel of one group
    key_head_bytes_ = d * (key_codes_ + 4);                    // codes, then fp16 scales, then fp16 mins
    val_codes_ = packed_bytes(d, b);
    val_head_bytes_ = val_codes_ + (d / g) * 4;
  }
  const KvShape& shape() const override { return s_.shape; }
  std::string format() const override { return s_.format; }

  void append(int layer, const float* k, const float* v) override {
    Layer& L = at(layer);
    const std::size_t w = static_cast<std::size_t>(s_.shape.kv_heads) * s_.shape.head_dim;
    const bool round = s_.round_input_bf16 || s_.skipped(layer);
    for (std::size_t i = 0; i < w; ++i) {
      L.k_in.push_back(round ? bf16_to_f32(f32_to_bf16(k[i])) : k[i]);
      L.v_in.push_back(round ? bf16_to_f32(f32_to_bf16(v[i])) : v[i]);
    }
    ++L.n;
    if (s_.skipped(layer)) return;
    const int r = s_.kivi_residual;
    if (L.n % r == 0)
      for (int t0 = L.n - r; t0 < L.n; t0 += s_.kivi_group) quantize_key_group(L, t0);
    if (L.n > r) quantize_value(L, L.n - r - 1);
  }

  int size(int layer) const override { return at(layer).n; }

  void read(int layer, int kv_head, int begin, int end, float* k_out, float* v_out) const override {
    const Layer& L = at(layer);
    if (kv_head < 0 || kv_head >= s_.shape.kv_heads || begin < 0 || end < begin || end > L.n)
      throw Error("KV store read out of range", kExitInternal);
    const int d = s_.shape.head_dim, g = s_.kivi_group, b = s_.kivi_bits;
    const bool quantized = !s_.skipped(layer);
    const int kq = quantized ? (L.n / s_.kivi_residual) * s_.kivi_residual : 0;
    const int vq = quantized ? std::max(0, L.n - s_.kivi_residual) : 0;
    for (int t = begin; t < end; ++t) {
      float* ko = k_out + static_cast<std::size_t>(t - begin) * d;
      float* vo = v_out + static_cast<std::size_t>(t - begin) * d;
      const std::size_t in = (static_cast<std::size_t>(t) * s_.shape.kv_heads + kv_head) * d;
      if (t < kq) {
        const std::uint8_t* blk = L.keys.data() + key_block_offset(t / g, kv_head);
        for (int c = 0; c < d; ++c) {
          const float scale = f16_to_f32(load_u16_le(blk + d * key_codes_ + 2 * c));
          const float mn = f16_to_f32(load_u16_le(blk + d * (key_codes_ + 2) + 2 * c));
          ko[c] = static_cast<float>(unpack_code_le(blk + c * key_codes_, t % g, b)) * scale + mn;
        }
      } else {
        std::copy(L.k_in.begin() + in, L.k_in.begin() + in + d, ko);
      }
      if (t < vq) {
        const std::uint8_t* p = L.values.data() + (static_cast<std::size_t>(t) * s_.shape.kv_heads + kv_head) * val_head_bytes_;
        for (int grp = 0; grp < d / g; ++grp)
          kivi_decode_group(p + grp * g * b / 8, g, b, load_u16_le(p + val_codes_ + 2 * grp),
                            load_u16_le(p + val_codes_ + 2 * (d / g) + 2 * grp), vo + grp * g, 1);
      } else {
        std::copy(L.v_in.begin() + in, L.v_in.begin() + in + d, vo);
      }
    }
  }

  // Both rules depend only on the count, and quantized groups depend only on earlier tokens: cutting
  // the buffers is exactly the state after n tokens.
  void truncate(int n) override {
    for (int l = 0; l < s_.shape.layers; ++l) {
      Layer& L = layers_[l];
      if (n >= L.n) continue;
      L.n = n;
      const std::size_t w = static_cast<std::size_t>(s_.shape.kv_heads) * s_.shape.head_dim;
      L.k_in.resize(static_cast<std::size_t>(n) * w);
      L.v_in.resize(static_cast<std::size_t>(n) * w);
      const int kq = (n / s_.kivi_residual) * s_.kivi_residual, vq = std::max(0, n - s_.kivi_residual);
      L.keys.resize(key_block_offset(kq / s_.kivi_group, 0));
      L.values.resize(static_cast<std::size_t>(vq) * s_.shape.kv_heads * val_head_bytes_);
    }
  }

  double bytes_per_token() const override { return s_.bytes_per_token(); }
  nlohmann::json describe() const override { return s_.record(); }

 private:
  struct Layer {
    int n = 0;
    std::vector<float> k_in, v_in;           // the inputs (rounded to the input dtype), [token][head][d]
    std::vector<std::uint8_t> keys, values;  // key groups [group][head]{codes[d][G/4], scales[d], mins[d]}; values [token][head]
  };

  Layer& at(int layer) {
    if (layer < 0 || layer >= s_.shape.layers) throw Error("KV store: layer out of range", kExitInternal);
    return layers_[layer];
  }
  const Layer& at(int layer) const { return const_cast<KiviKvStore*>(this)->at(layer); }

  std::size_t key_block_offset(int group, int head) const {
    return (static_cast<std::size_t>(group) * s_.shape.kv_heads + head) * key_head_bytes_;
  }

  void quantize_key_group(Layer& L, int t0) {
    const int d = s_.shape.head_dim, g = s_.kivi_group, heads = s_.shape.kv_heads;
    L.keys.resize(key_block_offset(t0 / g + 1, 0));
    for (int h = 0; h < heads; ++h) {
      std::uint8_t* blk = L.keys.data() + key_block_offset(t0 / g, h);
      for (int c = 0; c < d; ++c) {
        std::uint16_t scale, mn;
        const float* x = L.k_in.data() + (static_cast<std::size_t>(t0) * heads + h) * d + c;
        kivi_encode_group(x, heads * d, g, s_.kivi_bits, blk + c * key_codes_, &scale, &mn);
        store_u16_le(blk + d * key_codes_ + 2 * c, scale);
        store_u16_le(blk + d * (key_codes_ + 2) + 2 * c, mn);
      }
    }
  }

  void quantize_value(Layer& L, int t) {
    const int d = s_.shape.head_dim, g = s_.kivi_group, b = s_.kivi_bits, heads = s_.shape.kv_heads;
    L.values.resize(static_cast<std::size_t>(t + 1) * heads * val_head_bytes_);
    for (int h = 0; h < heads; ++h) {
      std::uint8_t* p = L.values.data() + (static_cast<std::size_t>(t) * heads + h) * val_head_bytes_;
      const float* x = L.v_in.data() + (static_cast<std::size_t>(t) * heads + h) * d;
      for (int grp = 0; grp < d / g; ++grp) {
        std::uint16_t scale, mn;
        kivi_encode_group(x + grp * g, 1, g, b, p + grp * g * b / 8, &scale, &mn);
        store_u16_le(p + val_codes_ + 2 * grp, scale);
        store_u16_le(p + val_codes_ + 2 * (d / g) + 2 * grp, mn);
      }
    }
  }

  KvFormatSpec s_;
  std::vector<Layer> layers_;
  int key_codes_ = 0, key_head_bytes_ = 0, val_codes_ = 0, val_head_bytes_ = 0;
};

}  // namespace

std::unique_ptr<KvStore> make_kivi_kv_store(const KvFormatSpec& spec) { return std::make_unique<KiviKvStore>(spec); }

}  // namespace kvgate::kernels
