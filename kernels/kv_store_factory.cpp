// make_kv_store: resolve the format against the model's shape, then pick its store.
#include "kernels/kv_store_impl.h"

namespace kvgate::kernels {

std::unique_ptr<KvStore> make_kv_store(const KvStoreOptions& options, const KvShape& shape) {
  const KvFormatSpec spec = resolve_kv_format(options, shape);
  if (spec.format == kTestBrokenZeroV) return make_broken_zero_v_kv_store(spec);
  if ((spec.format == "fp32" || spec.format == "bf16") && spec.skip_layers.empty()) return make_plain_kv_store(spec);
  if (spec.format == "kivi2") return make_kivi_kv_store(spec);
  return make_slot_kv_store(spec);
}

}  // namespace kvgate::kernels
