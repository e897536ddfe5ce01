// The host side of a format's codec for one layer: encodes one (token, KV head) vector of K or V
// into its slot bytes and decodes it back, calling the __host__ __device__ codec functions. The
// slot-based stores (kv_store_slot.cpp) hold one per layer; skipped layers get the bf16 codec.
#pragma once
#include <cstdint>
#include <memory>

#include "kernels/kv_format.h"

namespace kvgate::kernels {

class HeadCodec {
 public:
  virtual ~HeadCodec() = default;
  virtual int k_bytes() const = 0;  // bytes of one (token, head) of K, scales included
  virtual int v_bytes() const = 0;
  // x: head_dim values, already rounded to the input dtype; out: k_bytes() / v_bytes() bytes.
  virtual void encode_k(int head, const float* x, std::uint8_t* out) const = 0;
  virtual void encode_v(int head, const float* x, std::uint8_t* out) const = 0;
  // Dequantized head_dim values in the model's basis (rotations undone).
  virtual void decode_k(int head, const std::uint8_t* in, float* out) const = 0;
  virtual void decode_v(int head, const std::uint8_t* in, float* out) const = 0;
};

// The codec of `layer` for a resolved slot format (every format but kivi2).
std::unique_ptr<HeadCodec> make_head_codec(const KvFormatSpec& spec, int layer);

}  // namespace kvgate::kernels
