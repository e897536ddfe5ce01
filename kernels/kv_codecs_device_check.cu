// Compiles every KV codec for the device, so a host-only construct in kernels/codec_*.h fails the
// CUDA build (CI builds it) before the decoder's kernels use them. The kernel is never launched.
#include "kernels/kv_codecs.h"

namespace kvgate::kernels {

__global__ void kv_codecs_device_check(const float* x, std::uint8_t* bytes, float* out, const float* tables) {
  constexpr int d = 128;
  float scratch[d];
  fp8_tensor_encode_row(x, d, 1.0f, Fp8Kind::kE4M3, bytes);
  fp8_tensor_decode_row(bytes, d, 1.0f, Fp8Kind::kE5M2, out);
  const float s8 = int8_pth_encode(x, d, IntRounding::kRne, reinterpret_cast<std::int8_t*>(bytes));
  int8_pth_decode(reinterpret_cast<const std::int8_t*>(bytes), d, s8, out);
  fp8_pth_decode(bytes, d, fp8_pth_encode(x, d, bytes), out);
  for (int i = 0; i < d; ++i) scratch[i] = x[i];
  rht_forward_inplace(scratch, tables, d);
  const std::uint32_t w = int4_pth_encode(scratch, d, bytes);
  int4_pth_decode(bytes, d, w, out);
  rht_inverse_inplace(out, tables, d);
  nvfp4_encode_head(x, d, 1.0f, bytes);
  nvfp4_decode_head(bytes, d, 1.0f, out);
  q8_0_encode_block(x, bytes);
  q8_0_decode_block(bytes, out);
  q4_0_encode_block(x, bytes);
  q4_0_decode_block(bytes, out);
  hadamard_blocks_inplace(out, d, ggml_k_rotation_block(d));
  tq_key_encode_mse(x, d, 3, tables, scratch, bytes);
  tq_key_decode_mse(bytes, d, 3, tables + 8, true, out);
  tq_key_encode_fp8(x, d, bytes);
  tq_key_decode_fp8(bytes, d, out);
  tq_value_encode(x, d, 4, bytes);
  tq_value_decode(bytes, d, 4, out);
  std::uint16_t sc, mn;
  kivi_encode_group(x, 1, 32, 2, bytes, &sc, &mn);
  kivi_decode_group(bytes, 32, 2, sc, mn, out, 1);
  out[0] += bf16_to_f32(f32_to_bf16(x[0])) + f16_to_f32(f32_to_f16(x[1])) + e2m1_to_f32(f32_to_e2m1(x[2]));
}

}  // namespace kvgate::kernels
