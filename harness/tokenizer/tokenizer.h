// Hugging Face tokenizers for byte-level BPE checkpoints (GPT-2, Llama-3, Qwen2/Qwen3 families):
// tokenizer.json (added tokens, normalizer, pre-tokenizer, BPE, post-processor, decoder) and, beside
// it, tokenizer_config.json (special tokens, chat template). Ids are identical to HF `tokenizers`;
// anything it cannot reproduce exactly (Unigram, WordPiece, Metaspace, ...) fails to load with a
// kvgate::Error instead of giving different ids.
//
// Input text must be valid UTF-8: HF only takes str, so invalid bytes get a kvgate::Error naming the
// offset rather than a guess. decode() replaces invalid byte sequences with U+FFFD exactly as HF.
// A Tokenizer is cheap to copy (shared, immutable) and safe to use from many threads.
#pragma once
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "harness/tokenizer/chat_template.h"

namespace kvgate {

// Special tokens named by tokenizer_config.json (text empty and id unset when not named).
struct SpecialToken {
  std::string text;
  std::optional<std::int32_t> id;
};
struct SpecialTokens {
  SpecialToken bos, eos, pad, unk;
};

class Tokenizer {
 public:
  // tokenizer.json, plus tokenizer_config.json and chat_template.jinja from the same folder when
  // present. `path` may also name the folder.
  static Tokenizer load(const std::string& path);
  // From file contents (tests, fuzzing); `config_json` may be empty. `name` appears in errors.
  static Tokenizer from_strings(std::string_view tokenizer_json, std::string_view config_json, const std::string& name);

  // Token ids of text; add_special_tokens applies the post-processor (Llama-3's BOS, ...).
  std::vector<std::int32_t> encode(std::string_view text, bool add_special_tokens = false) const;
  // encode(text).size(), without keeping the ids.
  std::size_t count(std::string_view text, bool add_special_tokens = false) const;
  // Text of ids (HF's decode: unknown ids skipped, invalid UTF-8 replaced by U+FFFD).
  std::string decode(std::span<const std::int32_t> ids, bool skip_special_tokens = false) const;
  // The raw bytes of ids, before UTF-8 repair (for streaming; see StreamDecoder).
  std::string decode_bytes(std::span<const std::int32_t> ids, bool skip_special_tokens = false) const;

  std::optional<std::int32_t> token_to_id(std::string_view token) const;
  std::optional<std::string> id_to_token(std::int32_t id) const;
  bool is_special(std::int32_t id) const;
  // Distinct tokens, added tokens included (HF get_vocab_size(with_added_tokens=True)).
  std::size_t vocab_size() const;
  const SpecialTokens& special_tokens() const;

  // Chat: the checkpoint's template when it has one, else the built-in ChatML rendering.
  bool has_chat_template() const;
  const std::string& chat_template_source() const;  // the Jinja text, empty for ChatML
  std::string apply_chat_template(const nlohmann::ordered_json& messages, const ChatOptions& options = {}) const;
  // Ids of the rendered chat (encoded without adding special tokens, as transformers does).
  std::vector<std::int32_t> encode_chat(const nlohmann::ordered_json& messages, const ChatOptions& options = {}) const;

  const std::string& path() const;

  struct Impl;

 private:
  explicit Tokenizer(std::shared_ptr<const Impl> impl) : impl_(std::move(impl)) {}
  std::shared_ptr<const Impl> impl_;
};

// Incremental decoding for generation: push ids one at a time and get the text that is complete so
// far; bytes of an unfinished UTF-8 character are held until the next id completes them.
class StreamDecoder {
 public:
  explicit StreamDecoder(Tokenizer tokenizer, bool skip_special_tokens = false)
      : tokenizer_(std::move(tokenizer)), skip_special_(skip_special_tokens) {}
  std::string push(std::int32_t id);
  // Whatever is held back, with U+FFFD for an unfinished character.
  std::string finish();

 private:
  Tokenizer tokenizer_;
  bool skip_special_;
  std::string pending_;
};

}  // namespace kvgate
