// The unquantized stores: fp32 (no storage loss: the exact reference) and bf16 (the baseline every
// engine compares against). Quantized formats live in their own files (kv_store_impl.h).
#include <cstring>
#include <vector>

#include "kernels/float_formats.h"
#include "kernels/kv_store_impl.h"

namespace kvgate::kernels {

namespace {

template <class Elem, Elem (*Encode)(float), float (*Decode)(Elem)>
class PlainKvStore final : public KvStore {
 public:
  PlainKvStore(const KvShape& shape, std::string name, nlohmann::json record)
      : shape_(shape), name_(std::move(name)), record_(std::move(record)), k_(shape.layers), v_(shape.layers) {}
  const KvShape& shape() const override { return shape_; }
  std::string format() const override { return name_; }
  void append(int layer, const float* k, const float* v) override {
    const int w = shape_.kv_heads * shape_.head_dim;
    for (int i = 0; i < w; ++i) {
      k_[layer].push_back(Encode(k[i]));
      v_[layer].push_back(Encode(v[i]));
    }
  }
  int size(int layer) const override {
    return static_cast<int>(k_[layer].size() / (shape_.kv_heads * shape_.head_dim));
  }
  void read(int layer, int kv_head, int begin, int end, float* k_out, float* v_out) const override {
    const int d = shape_.head_dim, w = shape_.kv_heads * d;
    for (int t = begin; t < end; ++t) {
      const std::size_t base = static_cast<std::size_t>(t) * w + static_cast<std::size_t>(kv_head) * d;
      for (int i = 0; i < d; ++i) {
        k_out[(t - begin) * d + i] = Decode(k_[layer][base + i]);
        v_out[(t - begin) * d + i] = Decode(v_[layer][base + i]);
      }
    }
  }
  void truncate(int n) override {
    const std::size_t keep = static_cast<std::size_t>(n) * shape_.kv_heads * shape_.head_dim;
    for (auto& x : k_) x.resize(std::min(x.size(), keep));
    for (auto& x : v_) x.resize(std::min(x.size(), keep));
  }
  double bytes_per_token() const override {
    return 2.0 * shape_.layers * shape_.kv_heads * shape_.head_dim * sizeof(Elem);
  }
  nlohmann::json describe() const override { return record_; }

 private:
  KvShape shape_;
  std::string name_;
  nlohmann::json record_;
  std::vector<std::vector<Elem>> k_, v_;
};

float identity(float x) { return x; }
std::uint16_t encode_bf16(float x) { return f32_to_bf16(x); }
float decode_bf16(std::uint16_t h) { return bf16_to_f32(h); }

}  // namespace

std::unique_ptr<KvStore> make_plain_kv_store(const KvFormatSpec& spec) {
  if (spec.format == "fp32")
    return std::make_unique<PlainKvStore<float, identity, identity>>(spec.shape, "fp32", spec.record());
  return std::make_unique<PlainKvStore<std::uint16_t, encode_bf16, decode_bf16>>(spec.shape, "bf16", spec.record());
}

}  // namespace kvgate::kernels
