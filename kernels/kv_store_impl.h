// The KvStore implementations behind make_kv_store (kv_store_factory.cpp), one file each.
#pragma once
#include <memory>

#include "kernels/kv_format.h"
#include "kernels/kv_store.h"

namespace kvgate::kernels {

// fp32 and bf16 without skipped layers: plain arrays (kv_store_basic.cpp).
std::unique_ptr<KvStore> make_plain_kv_store(const KvFormatSpec& spec);
// Every format that stores each (token, KV head) in its own slot (kv_store_slot.cpp).
std::unique_ptr<KvStore> make_slot_kv_store(const KvFormatSpec& spec);
// kivi2: per-channel key groups across tokens and a full-precision window (kv_store_kivi.cpp).
std::unique_ptr<KvStore> make_kivi_kv_store(const KvFormatSpec& spec);

// kTestBrokenZeroV: the bf16 store with V read back as zeros (kv_store_broken.cpp; tests only).
std::unique_ptr<KvStore> make_broken_zero_v_kv_store(const KvFormatSpec& spec);

}  // namespace kvgate::kernels
