#include "harness/tokenizer/normalizer.h"

#include <cstdlib>
#include <cstring>

#include <utf8proc.h>

#include "harness/core/error.h"
#include "harness/tokenizer/utf8.h"

namespace kvgate::tok {

namespace {
constexpr utf8proc_option_t form_options(NormalForm f) {
  switch (f) {
    case NormalForm::NFC: return static_cast<utf8proc_option_t>(UTF8PROC_STABLE | UTF8PROC_COMPOSE);
    case NormalForm::NFD: return static_cast<utf8proc_option_t>(UTF8PROC_STABLE | UTF8PROC_DECOMPOSE);
    case NormalForm::NFKC: return static_cast<utf8proc_option_t>(UTF8PROC_STABLE | UTF8PROC_COMPOSE | UTF8PROC_COMPAT);
    case NormalForm::NFKD: return static_cast<utf8proc_option_t>(UTF8PROC_STABLE | UTF8PROC_DECOMPOSE | UTF8PROC_COMPAT);
  }
  return UTF8PROC_STABLE;
}

// A stable character starts a normalization segment that nothing before it can change: combining
// class 0, no canonical decomposition, and never the second half of a composition (utf8proc marks
// those with comb_index >= 0x8000; Hangul vowel and trailing jamo compose algorithmically).
bool nfc_stable(char32_t c) {
  if (c < 0x300) return true;
  if ((c >= 0x1161 && c <= 0x1175) || (c >= 0x11A8 && c <= 0x11C2)) return false;
  const utf8proc_property_t* p = utf8proc_get_property(static_cast<utf8proc_int32_t>(c));
  if (p->combining_class != 0) return false;
  if (p->decomp_seqindex != UINT16_MAX && p->decomp_type == 0) return false;  // canonical decomposition
  if (p->comb_index != UINT16_MAX && p->comb_index >= 0x8000) return false;
  return true;
}

void append_normalized(std::string& out, std::string_view text, NormalForm form) {
  utf8proc_uint8_t* dst = nullptr;
  const utf8proc_ssize_t n = utf8proc_map(reinterpret_cast<const utf8proc_uint8_t*>(text.data()),
                                          static_cast<utf8proc_ssize_t>(text.size()), &dst, form_options(form));
  if (n < 0) {
    std::free(dst);
    throw Error(std::string("Unicode normalization failed: ") + utf8proc_errmsg(n));
  }
  out.append(reinterpret_cast<const char*>(dst), static_cast<std::size_t>(n));
  std::free(dst);
}
}  // namespace

std::string normalize_full(std::string_view text, NormalForm form) {
  std::string out;
  append_normalized(out, text, form);
  return out;
}

bool nfc_fast(std::string_view text, std::string& out) {
  // Find the first unstable character; before it everything stays.
  std::size_t i = 0, last_stable = 0;
  const std::size_t n = text.size();
  bool found = false;
  while (i < n) {
    const auto c = static_cast<unsigned char>(text[i]);
    if (c < 0x80) {
      last_stable = i++;
      continue;
    }
    const std::size_t at = i;
    const char32_t cp = next_codepoint(text, i);
    if (nfc_stable(cp)) {
      last_stable = at;
    } else {
      found = true;
      i = at;
      break;
    }
  }
  if (!found) return false;
  out.clear();
  out.reserve(n + 16);
  std::size_t copied = 0;  // text[0, copied) is in `out`
  while (i < n) {
    // i is at an unstable character: its segment starts at the last stable character before it
    // (which may compose with it) and ends before the next stable character.
    const std::size_t seg_start = last_stable >= copied ? last_stable : copied;
    out.append(text.data() + copied, seg_start - copied);
    std::size_t j = i;
    while (j < n) {
      const std::size_t at = j;
      const char32_t cp = next_codepoint(text, j);
      if (nfc_stable(cp)) {
        j = at;
        break;
      }
    }
    append_normalized(out, text.substr(seg_start, j - seg_start), NormalForm::NFC);
    copied = j;
    // Continue scanning for the next unstable character.
    i = j;
    bool more = false;
    while (i < n) {
      const std::size_t at = i;
      const auto c = static_cast<unsigned char>(text[i]);
      const char32_t cp = c < 0x80 ? (++i, c) : next_codepoint(text, i);
      if (nfc_stable(cp)) {
        last_stable = at;
      } else {
        i = at;
        more = true;
        break;
      }
    }
    if (!more) break;
  }
  out.append(text.data() + copied, n - copied);
  return true;
}

Normalizer Normalizer::from_json(const nlohmann::json& j, const std::string& where) {
  Normalizer n;
  if (j.is_null()) return n;
  if (!j.is_object() || !j.contains("type") || !j["type"].is_string())
    throw Error(where + ": \"normalizer\" must be null or an object with a \"type\"");
  const std::string type = j["type"].get<std::string>();
  if (type == "Sequence") {
    if (!j.contains("normalizers") || !j["normalizers"].is_array())
      throw Error(where + ": normalizer Sequence needs a \"normalizers\" array");
    for (const auto& s : j["normalizers"]) {
      Normalizer inner = from_json(s, where);
      n.steps_.insert(n.steps_.end(), inner.steps_.begin(), inner.steps_.end());
    }
    return n;
  }
  if (type == "NFC") n.steps_.push_back(NormalForm::NFC);
  else if (type == "NFD") n.steps_.push_back(NormalForm::NFD);
  else if (type == "NFKC") n.steps_.push_back(NormalForm::NFKC);
  else if (type == "NFKD") n.steps_.push_back(NormalForm::NFKD);
  else
    throw Error(where + ": normalizer \"" + type +
                "\" is not supported (kvgate reads byte-level BPE tokenizers: NFC, NFD, NFKC, NFKD or a "
                "Sequence of them); use the server's /tokenize endpoint (--tokenize-url) for this model");
  return n;
}

std::string_view Normalizer::apply(std::string_view text, std::string& scratch) const {
  if (steps_.empty()) return text;
  std::string_view cur = text;
  std::string tmp;
  for (const NormalForm f : steps_) {
    if (f == NormalForm::NFC) {
      if (!nfc_fast(cur, tmp)) continue;
    } else {
      tmp.clear();
      append_normalized(tmp, cur, f);
    }
    scratch.swap(tmp);
    cur = scratch;
  }
  return cur;
}

}  // namespace kvgate::tok
