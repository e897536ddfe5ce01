#include "harness/decoder/synthetic_tokenizer.h"

#include <algorithm>
#include <map>
#include <utility>

#include "harness/core/error.h"

namespace kvgate::decoder {

namespace {

// Training text for the merges (written for kvgate): the words long-context and reasoning trials use.
constexpr const char* kTrainingText =
    "The access code for the north gate is written on the last page of the report. "
    "The special magic number for the quiet river is hidden somewhere in the text that follows. "
    "What is the access code for the east tower? Answer with the number only. "
    "A model reads the whole context before it answers the question, and the answer must be exact. "
    "There are three apples and four oranges in the basket, so there are seven pieces of fruit in total. "
    "The engine stores the keys and the values of every token in the cache, then reads them back for "
    "each new token it generates. When the cache is stored in fewer bits, the values change a little, "
    "and the model may miss the needle in the haystack. The test compares the baseline with the "
    "candidate trial by trial and reports whether the change may ship. Remember the code, the name and "
    "the place. The user asks the assistant a question; the assistant thinks, then answers in one line. "
    "Natalia sold clips to her friends in April, and then she sold half as many clips in May. "
    "How many clips did she sell altogether in April and May? She sold them all before the end of the "
    "month, and the teacher checked the answer against the key. This is the end of the document.";

void append_utf8(std::string& out, unsigned cp) {
  if (cp < 0x80) {
    out.push_back(static_cast<char>(cp));
  } else if (cp < 0x800) {
    out.push_back(static_cast<char>(0xC0 | (cp >> 6)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else {
    out.push_back(static_cast<char>(0xE0 | (cp >> 12)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  }
}

bool printable_byte(unsigned b) { return (b >= 33 && b <= 126) || (b >= 161 && b <= 172) || (b >= 174 && b <= 255); }

// Bytes in GPT-2's order: the printable ones first, then the rest.
std::vector<unsigned char> byte_order() {
  std::vector<unsigned char> order;
  for (unsigned b = 0; b < 256; ++b)
    if (printable_byte(b)) order.push_back(static_cast<unsigned char>(b));
  for (unsigned b = 0; b < 256; ++b)
    if (!printable_byte(b)) order.push_back(static_cast<unsigned char>(b));
  return order;
}

bool is_letter(unsigned char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }

// Words of the training text as the Qwen2 pre-tokenizer splits letter runs: an optional leading
// space (or other non-letter, non-digit, non-newline character) then letters. Other pieces hold
// no merge worth learning here.
std::map<std::vector<std::string>, int> training_words() {
  std::map<std::vector<std::string>, int> words;
  const std::string text = kTrainingText;
  std::size_t i = 0;
  while (i < text.size()) {
    std::size_t start = i;
    if (text[i] == ' ' && i + 1 < text.size() && is_letter(static_cast<unsigned char>(text[i + 1]))) ++i;
    if (!is_letter(static_cast<unsigned char>(text[i]))) {
      i = start + 1;
      continue;
    }
    while (i < text.size() && is_letter(static_cast<unsigned char>(text[i]))) ++i;
    std::vector<std::string> symbols;
    for (std::size_t j = start; j < i; ++j) symbols.push_back(byte_level_char(static_cast<unsigned char>(text[j])));
    ++words[symbols];
  }
  return words;
}

}  // namespace

std::string byte_level_char(unsigned char b) {
  unsigned cp = b;
  if (!printable_byte(b)) {
    unsigned n = 0;
    for (unsigned x = 0; x < b; ++x)
      if (!printable_byte(x)) ++n;
    cp = 256 + n;
  }
  std::string s;
  append_utf8(s, cp);
  return s;
}

SyntheticTokenizer make_synthetic_tokenizer(int merges, int model_max_length) {
  using oj = nlohmann::ordered_json;
  if (merges < 0) throw Error("make-model: --merges must not be negative");
  SyntheticTokenizer t;
  oj vocab = oj::object();
  std::map<std::string, std::string> char_bytes;  // byte-level text -> raw bytes
  for (unsigned char b : byte_order()) {
    const std::string c = byte_level_char(b);
    vocab[c] = static_cast<int>(t.token_bytes.size());
    t.token_bytes.push_back(std::string(1, static_cast<char>(b)));
    char_bytes[c] = std::string(1, static_cast<char>(b));
  }
  // Byte-pair merges: the most frequent adjacent pair, ties to the smallest (left, right) strings.
  auto words = training_words();
  oj merge_list = oj::array();
  for (int m = 0; m < merges; ++m) {
    std::map<std::pair<std::string, std::string>, int> counts;
    for (const auto& [w, freq] : words)
      for (std::size_t i = 0; i + 1 < w.size(); ++i) counts[{w[i], w[i + 1]}] += freq;
    if (counts.empty()) break;
    auto best = counts.begin();
    for (auto it = counts.begin(); it != counts.end(); ++it)
      if (it->second > best->second) best = it;
    const auto [left, right] = best->first;
    const std::string merged = left + right;
    merge_list.push_back({left, right});
    if (!vocab.contains(merged)) {  // two merge paths can spell the same token: one id
      vocab[merged] = static_cast<int>(t.token_bytes.size());
      t.token_bytes.push_back(char_bytes[left] + char_bytes[right]);
      char_bytes[merged] = char_bytes[left] + char_bytes[right];
    }
    std::map<std::vector<std::string>, int> next;
    for (const auto& [w, freq] : words) {
      std::vector<std::string> out;
      for (std::size_t i = 0; i < w.size(); ++i) {
        if (i + 1 < w.size() && w[i] == left && w[i + 1] == right) {
          out.push_back(merged);
          ++i;
        } else {
          out.push_back(w[i]);
        }
      }
      next[out] += freq;
    }
    words = std::move(next);
  }
  oj added = oj::array();
  oj added_decoder = oj::object();
  for (const char* special : {"<|endoftext|>", "<|im_start|>", "<|im_end|>"}) {
    const int id = static_cast<int>(t.token_bytes.size());
    t.token_bytes.push_back(special);
    const oj entry = {{"content", special}, {"single_word", false}, {"lstrip", false},
                      {"rstrip", false},    {"normalized", false},  {"special", true}};
    oj with_id = {{"id", id}};
    for (auto it = entry.begin(); it != entry.end(); ++it) with_id[it.key()] = it.value();
    added.push_back(with_id);
    added_decoder[std::to_string(id)] = entry;
  }
  t.endoftext = t.size() - 3;
  t.im_start = t.size() - 2;
  t.im_end = t.size() - 1;
  const oj byte_level = {{"type", "ByteLevel"}, {"add_prefix_space", false}, {"trim_offsets", false}, {"use_regex", false}};
  t.tokenizer = {
      {"version", "1.0"},
      {"truncation", nullptr},
      {"padding", nullptr},
      {"added_tokens", added},
      {"normalizer", {{"type", "NFC"}}},
      {"pre_tokenizer",
       {{"type", "Sequence"},
        {"pretokenizers",
         {{{"type", "Split"},
           {"pattern",
            {{"Regex",
              "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|"
              "\\s+(?!\\S)|\\s+"}}},
           {"behavior", "Isolated"},
           {"invert", false}},
          byte_level}}}},
      {"post_processor", byte_level},
      {"decoder", byte_level},
      {"model",
       {{"type", "BPE"},
        {"dropout", nullptr},
        {"unk_token", nullptr},
        {"continuing_subword_prefix", ""},
        {"end_of_word_suffix", ""},
        {"fuse_unk", false},
        {"byte_fallback", false},
        {"ignore_merges", false},
        {"vocab", vocab},
        {"merges", merge_list}}}};
  t.tokenizer_config = {
      {"add_bos_token", false},
      {"add_prefix_space", false},
      {"added_tokens_decoder", added_decoder},
      {"bos_token", nullptr},
      {"chat_template",
       "{%- for message in messages %}{{- '<|im_start|>' + message['role'] + '\\n' + message['content'] + "
       "'<|im_end|>' + '\\n' }}{%- endfor %}{%- if add_generation_prompt %}{{- '<|im_start|>assistant\\n' }}{%- endif %}"},
      {"clean_up_tokenization_spaces", false},
      {"eos_token", "<|im_end|>"},
      {"errors", "replace"},
      {"model_max_length", model_max_length},
      {"pad_token", "<|endoftext|>"},
      {"split_special_tokens", false},
      {"tokenizer_class", "Qwen2Tokenizer"},
      {"unk_token", nullptr}};
  return t;
}

}  // namespace kvgate::decoder
