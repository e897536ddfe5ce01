// The store of every format that keeps each (token, KV head) in its own slot: per layer, K bytes
// [token][head][k_bytes] and V bytes [token][head][v_bytes] (vLLM's NHD order; a per-token-head
// scale sits right after its data here, where vLLM keeps it in a separate tensor of the same order).
// Reads decode on the fly: the bytes are the truth, and a dump of them is the engine's cache.
#include <algorithm>
#include <vector>

#include "harness/core/error.h"
#include "kernels/float_formats.h"
#include "kernels/kv_head_codec.h"
#include "kernels/kv_store_impl.h"

namespace kvgate::kernels {

namespace {

class SlotKvStore final : public KvStore {
 public:
  explicit SlotKvStore(KvFormatSpec spec) : spec_(std::move(spec)), k_(spec_.shape.layers), v_(spec_.shape.layers) {
    for (int l = 0; l < spec_.shape.layers; ++l) codecs_.push_back(make_head_codec(spec_, l));
  }
  const KvShape& shape() const override { return spec_.shape; }
  std::string format() const override { return spec_.format; }

  void append(int layer, const float* k, const float* v) override {
    check_layer(layer);
    const HeadCodec& c = *codecs_[layer];
    const int d = spec_.shape.head_dim, heads = spec_.shape.kv_heads;
    std::vector<float> x(d);
    auto& kb = k_[layer];
    auto& vb = v_[layer];
    const std::size_t k0 = kb.size(), v0 = vb.size();
    kb.resize(k0 + static_cast<std::size_t>(heads) * c.k_bytes());
    vb.resize(v0 + static_cast<std::size_t>(heads) * c.v_bytes());
    for (int h = 0; h < heads; ++h) {
      input(k + static_cast<std::size_t>(h) * d, x.data());
      c.encode_k(h, x.data(), kb.data() + k0 + static_cast<std::size_t>(h) * c.k_bytes());
      input(v + static_cast<std::size_t>(h) * d, x.data());
      c.encode_v(h, x.data(), vb.data() + v0 + static_cast<std::size_t>(h) * c.v_bytes());
    }
  }

  int size(int layer) const override {
    check_layer(layer);
    return static_cast<int>(k_[layer].size() / (static_cast<std::size_t>(spec_.shape.kv_heads) * codecs_[layer]->k_bytes()));
  }

  void read(int layer, int kv_head, int begin, int end, float* k_out, float* v_out) const override {
    check_layer(layer);
    if (kv_head < 0 || kv_head >= spec_.shape.kv_heads || begin < 0 || end < begin || end > size(layer))
      throw Error("KV store read out of range", kExitInternal);
    const HeadCodec& c = *codecs_[layer];
    const int d = spec_.shape.head_dim, heads = spec_.shape.kv_heads;
    for (int t = begin; t < end; ++t) {
      const std::size_t slot = static_cast<std::size_t>(t) * heads + kv_head;
      c.decode_k(kv_head, k_[layer].data() + slot * c.k_bytes(), k_out + static_cast<std::size_t>(t - begin) * d);
      c.decode_v(kv_head, v_[layer].data() + slot * c.v_bytes(), v_out + static_cast<std::size_t>(t - begin) * d);
    }
  }

  void truncate(int n) override {
    for (int l = 0; l < spec_.shape.layers; ++l) {
      const std::size_t tokens = std::min<std::size_t>(static_cast<std::size_t>(n), static_cast<std::size_t>(size(l)));
      k_[l].resize(tokens * spec_.shape.kv_heads * codecs_[l]->k_bytes());
      v_[l].resize(tokens * spec_.shape.kv_heads * codecs_[l]->v_bytes());
    }
  }

  double bytes_per_token() const override { return spec_.bytes_per_token(); }
  nlohmann::json describe() const override { return spec_.record(); }

 private:
  void check_layer(int layer) const {
    if (layer < 0 || layer >= spec_.shape.layers) throw Error("KV store: layer out of range", kExitInternal);
  }
  // The engines cache K/V in the model dtype: round to bf16 unless input_dtype is fp32.
  void input(const float* src, float* dst) const {
    for (int i = 0; i < spec_.shape.head_dim; ++i) dst[i] = spec_.round_input_bf16 ? bf16_to_f32(f32_to_bf16(src[i])) : src[i];
  }

  KvFormatSpec spec_;
  std::vector<std::unique_ptr<HeadCodec>> codecs_;
  std::vector<std::vector<std::uint8_t>> k_, v_;
};

}  // namespace

std::unique_ptr<KvStore> make_slot_kv_store(const KvFormatSpec& spec) { return std::make_unique<SlotKvStore>(spec); }

}  // namespace kvgate::kernels
