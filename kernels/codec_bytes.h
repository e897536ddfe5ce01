// Little-endian byte access and bit packing shared by the KV codecs (__host__ __device__): every
// engine layout kvgate copies is little-endian, so the bytes do not depend on the host.
#pragma once
#include <cstdint>

#include "kernels/float_formats.h"

namespace kvgate::kernels {

KV_HD void store_u16_le(std::uint8_t* p, std::uint16_t v) {
  p[0] = static_cast<std::uint8_t>(v & 0xffu);
  p[1] = static_cast<std::uint8_t>(v >> 8);
}

KV_HD std::uint16_t load_u16_le(const std::uint8_t* p) {
  return static_cast<std::uint16_t>(p[0] | (static_cast<std::uint16_t>(p[1]) << 8));
}

KV_HD void store_u32_le(std::uint8_t* p, std::uint32_t v) {
  for (int i = 0; i < 4; ++i) p[i] = static_cast<std::uint8_t>((v >> (8 * i)) & 0xffu);
}

KV_HD std::uint32_t load_u32_le(const std::uint8_t* p) {
  return static_cast<std::uint32_t>(p[0]) | (static_cast<std::uint32_t>(p[1]) << 8) |
         (static_cast<std::uint32_t>(p[2]) << 16) | (static_cast<std::uint32_t>(p[3]) << 24);
}

KV_HD void store_f32_le(std::uint8_t* p, float f) { store_u32_le(p, f32_bits(f)); }
KV_HD float load_f32_le(const std::uint8_t* p) { return bits_f32(load_u32_le(p)); }

// Codes of `bits` bits packed little-endian by bit offset: code i occupies bits [i*bits, i*bits+bits)
// of the byte stream. This is vLLM's 4-bit order (element 2i low nibble, 2i+1 high) and TurboQuant's
// 3-bit order (8 codes in 3 bytes), and KIVI's order inside each 32-bit word.
KV_HD void pack_code_le(std::uint8_t* bytes, int i, int bits, unsigned code) {
  const int bit = i * bits;
  const unsigned v = (code & ((1u << bits) - 1u)) << (bit & 7);
  bytes[bit >> 3] = static_cast<std::uint8_t>(bytes[bit >> 3] | (v & 0xffu));
  if ((bit & 7) + bits > 8) bytes[(bit >> 3) + 1] = static_cast<std::uint8_t>(bytes[(bit >> 3) + 1] | (v >> 8));
}

KV_HD unsigned unpack_code_le(const std::uint8_t* bytes, int i, int bits) {
  const int bit = i * bits;
  unsigned v = bytes[bit >> 3];
  if ((bit & 7) + bits > 8) v |= static_cast<unsigned>(bytes[(bit >> 3) + 1]) << 8;
  return (v >> (bit & 7)) & ((1u << bits) - 1u);
}

KV_HD int packed_bytes(int n, int bits) { return (n * bits + 7) / 8; }

}  // namespace kvgate::kernels
