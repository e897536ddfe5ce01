// kTestBrokenZeroV (kv_format.h): a deliberately broken store for end-to-end tests of the gate. K is
// kept as bf16; V reads back as zeros, so attention outputs vanish and answers fall apart.
#include <algorithm>

#include "kernels/kv_store_impl.h"

namespace kvgate::kernels {

namespace {

class BrokenZeroVKvStore final : public KvStore {
 public:
  BrokenZeroVKvStore(std::unique_ptr<KvStore> inner, nlohmann::json record) : inner_(std::move(inner)), record_(std::move(record)) {}
  const KvShape& shape() const override { return inner_->shape(); }
  std::string format() const override { return kTestBrokenZeroV; }
  void append(int layer, const float* k, const float* v) override { inner_->append(layer, k, v); }
  int size(int layer) const override { return inner_->size(layer); }
  void read(int layer, int kv_head, int begin, int end, float* k_out, float* v_out) const override {
    inner_->read(layer, kv_head, begin, end, k_out, v_out);
    std::fill(v_out, v_out + static_cast<std::size_t>(end - begin) * shape().head_dim, 0.0f);
  }
  void truncate(int n) override { inner_->truncate(n); }
  double bytes_per_token() const override { return inner_->bytes_per_token(); }
  nlohmann::json describe() const override { return record_; }

 private:
  std::unique_ptr<KvStore> inner_;
  nlohmann::json record_;
};

}  // namespace

std::unique_ptr<KvStore> make_broken_zero_v_kv_store(const KvFormatSpec& spec) {
  KvFormatSpec bf16 = spec;
  bf16.format = "bf16";
  return std::make_unique<BrokenZeroVKvStore>(make_plain_kv_store(bf16), spec.record());
}

}  // namespace kvgate::kernels
