// The KV cache of the reference decoder behind one interface: the decoder appends each token's K
// (after RoPE and Qwen3's k_norm, as the engines cache it) and V, and reads them back dequantized.
// Each --kv-format is an implementation; what it stores is exactly what that engine stores.
#pragma once
#include <cstdint>
#include <memory>
#include <string>

#include <nlohmann/json.hpp>

namespace kvgate::kernels {

struct KvShape {
  int layers = 0;
  int kv_heads = 0;
  int head_dim = 0;
};

class KvStore {
 public:
  virtual ~KvStore() = default;
  virtual const KvShape& shape() const = 0;
  virtual std::string format() const = 0;
  // Appends one token to `layer`: k and v are [kv_heads * head_dim] floats each.
  virtual void append(int layer, const float* k, const float* v) = 0;
  // Tokens stored in `layer`.
  virtual int size(int layer) const = 0;
  // Dequantized K and V of tokens [begin, end) of one KV head of `layer`: [(end - begin) * head_dim] each.
  virtual void read(int layer, int kv_head, int begin, int end, float* k_out, float* v_out) const = 0;
  // Keeps the first n tokens of every layer (n <= size), e.g. to start a new sequence (n = 0).
  virtual void truncate(int n) = 0;
  // Bytes stored per token over all layers, K and V, scales included (capacity planning, reports).
  virtual double bytes_per_token() const = 0;
  // The format and its resolved parameters, every default filled in: run.json's "kv" object
  // ({"format": ..., "skip_layers": [...], ..., "bytes_per_token": ...}, kv_format.h).
  virtual nlohmann::json describe() const { return {{"format", format()}, {"bytes_per_token", bytes_per_token()}}; }
};

struct KvStoreOptions {
  std::string format = "bf16";
  // Format parameters: scales, skip layers, rounding and rotation switches (recorded in run.json);
  // every format's parameters are listed in kv_format.h.
  nlohmann::json params = nlohmann::json::object();
};

// The store for a format (kv_store_factory.cpp); an unknown format or parameter is an Error naming
// it and the known ones.
std::unique_ptr<KvStore> make_kv_store(const KvStoreOptions& options, const KvShape& shape);

}  // namespace kvgate::kernels
