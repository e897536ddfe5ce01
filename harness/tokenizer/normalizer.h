// The normalizers byte-level BPE tokenizers use: Unicode NFC/NFD/NFKC/NFKD (utf8proc), alone or in
// a Sequence. NFC, the common one, only normalizes the stretches of text around characters that
// can change (most text is returned as is, without a copy).
#pragma once
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace kvgate::tok {

enum class NormalForm { NFC, NFD, NFKC, NFKD };

class Normalizer {
 public:
  Normalizer() = default;
  // From tokenizer.json's "normalizer" (null, a form, or a Sequence of forms). Throws kvgate::Error
  // naming `where` for any other type.
  static Normalizer from_json(const nlohmann::json& j, const std::string& where);

  bool empty() const { return steps_.empty(); }
  // The normalized text: `text` itself when unchanged, else a view of `scratch`. Input is valid UTF-8.
  std::string_view apply(std::string_view text, std::string& scratch) const;

 private:
  std::vector<NormalForm> steps_;
};

// Full normalization of valid UTF-8 with utf8proc (the reference the fast paths are tested against).
std::string normalize_full(std::string_view text, NormalForm form);
// NFC that leaves the text between stable characters untouched; equal to normalize_full(NFC).
// Returns false (scratch untouched) when the text is already NFC.
bool nfc_fast(std::string_view text, std::string& out);

}  // namespace kvgate::tok
