// The tokenizer `kvgate make-model` writes beside its random weights: a small byte-level BPE in
// Hugging Face format (tokenizer.json: 256 byte tokens in GPT-2's byte-to-unicode order, merges
// learned deterministically from a built-in English text, Qwen2's pre-tokenizer regex, ByteLevel
// decoder; then <|endoftext|>, <|im_start|>, <|im_end|>) and tokenizer_config.json with a ChatML
// chat template, so tests run the whole text path with no download.
#pragma once
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace kvgate::decoder {

struct SyntheticTokenizer {
  nlohmann::ordered_json tokenizer;         // tokenizer.json
  nlohmann::ordered_json tokenizer_config;  // tokenizer_config.json
  std::vector<std::string> token_bytes;     // id -> the bytes it decodes to (special tokens: their text)
  int endoftext = 0, im_start = 0, im_end = 0;
  int size() const { return static_cast<int>(token_bytes.size()); }
};

// Up to `merges` merges (fewer if the training text runs out of pairs); model_max_length as given.
SyntheticTokenizer make_synthetic_tokenizer(int merges, int model_max_length);

// GPT-2's byte-to-unicode map: the UTF-8 text of the character standing for byte b.
std::string byte_level_char(unsigned char b);

}  // namespace kvgate::decoder
