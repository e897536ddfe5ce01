// GPT-2's byte-level alphabet: every byte maps to a printable code point (33-126, 161-172 and
// 174-255 map to themselves, the other 68 bytes to U+0100 upwards, in order). Vocabularies of
// byte-level BPE tokenizers are written in this alphabet.
#pragma once
#include <string>
#include <string_view>

namespace kvgate::tok {

// The code point byte b is written as.
char32_t byte_to_char(unsigned char b);

// The byte a code point of the alphabet stands for, or -1.
int char_to_byte(char32_t c);

// Appends the raw bytes a vocabulary string stands for; false (and `out` unchanged) when a
// character is outside the alphabet.
bool byte_level_to_bytes(std::string_view token, std::string& out);

// The vocabulary spelling of raw bytes.
std::string bytes_to_byte_level(std::string_view bytes);

}  // namespace kvgate::tok
