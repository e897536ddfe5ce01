#include "tokenizer/pre_tokenizer.h"

#include "core/error.h"
#include "tokenizer/utf8.h"

#include <utf8proc.h>

namespace kvgate::tok {

namespace {
// GPT-2's pattern, used by ByteLevel with use_regex (tokenizers' byte_level.rs).
constexpr const char* kGpt2Pattern =
    R"('s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+)";

bool get_bool(const nlohmann::json& j, const char* key, bool fallback, const std::string& where) {
  if (!j.contains(key) || j[key].is_null()) return fallback;
  if (!j[key].is_boolean()) throw Error(where + ": pre_tokenizer field \"" + key + "\" must be true or false");
  return j[key].get<bool>();
}

SplitBehavior parse_behavior(const nlohmann::json& j, const std::string& where) {
  const std::string b = j.is_string() ? j.get<std::string>() : "";
  if (b == "Removed") return SplitBehavior::Removed;
  if (b == "Isolated") return SplitBehavior::Isolated;
  if (b == "MergedWithPrevious") return SplitBehavior::MergedWithPrevious;
  if (b == "MergedWithNext") return SplitBehavior::MergedWithNext;
  if (b == "Contiguous") return SplitBehavior::Contiguous;
  throw Error(where + ": Split \"behavior\" must be Removed, Isolated, MergedWithPrevious, MergedWithNext or Contiguous");
}

void parse_step(const nlohmann::json& j, const std::string& where, std::vector<PreTokenizerStep>& steps) {
  if (!j.is_object() || !j.contains("type") || !j["type"].is_string())
    throw Error(where + ": a pre_tokenizer must be an object with a \"type\"");
  const std::string type = j["type"].get<std::string>();
  PreTokenizerStep s;
  if (type == "Sequence") {
    if (!j.contains("pretokenizers") || !j["pretokenizers"].is_array())
      throw Error(where + ": pre_tokenizer Sequence needs a \"pretokenizers\" array");
    for (const auto& inner : j["pretokenizers"]) parse_step(inner, where, steps);
    return;
  }
  if (type == "Split") {
    s.kind = PreTokenizerStep::Kind::Split;
    if (!j.contains("pattern") || !j["pattern"].is_object())
      throw Error(where + ": Split needs a \"pattern\" object ({\"Regex\": ...} or {\"String\": ...})");
    const auto& p = j["pattern"];
    std::string pattern;
    if (p.contains("Regex") && p["Regex"].is_string()) pattern = p["Regex"].get<std::string>();
    else if (p.contains("String") && p["String"].is_string()) pattern = escape_regex_literal(p["String"].get<std::string>());
    else throw Error(where + ": Split \"pattern\" must be {\"Regex\": string} or {\"String\": string}");
    if (!j.contains("behavior")) throw Error(where + ": Split needs a \"behavior\"");
    s.behavior = parse_behavior(j["behavior"], where);
    s.invert = get_bool(j, "invert", false, where);
    s.regex = std::make_shared<SplitRegex>(pattern, where);
  } else if (type == "Digits") {
    s.kind = PreTokenizerStep::Kind::Digits;
    s.individual_digits = get_bool(j, "individual_digits", false, where);
  } else if (type == "ByteLevel") {
    s.kind = PreTokenizerStep::Kind::ByteLevel;
    s.add_prefix_space = get_bool(j, "add_prefix_space", true, where);
    if (get_bool(j, "use_regex", true, where)) s.regex = std::make_shared<SplitRegex>(kGpt2Pattern, where);
  } else {
    throw Error(where + ": pre_tokenizer \"" + type +
                "\" is not supported (kvgate reads byte-level BPE tokenizers: Split, Digits, ByteLevel and "
                "Sequence); use the server's /tokenize endpoint (--tokenize-url) for this model");
  }
  steps.push_back(std::move(s));
}

struct Part {
  std::size_t b, e;
  bool match;
};

// HF's NormalizedString::split: matches and gaps combined by the behaviour.
void split_by_behavior(std::vector<Part>& parts, SplitBehavior behavior, std::vector<Span>& out) {
  switch (behavior) {
    case SplitBehavior::Isolated:
      for (const Part& p : parts) out.push_back({p.b, p.e});
      return;
    case SplitBehavior::Removed:
      for (const Part& p : parts)
        if (!p.match) out.push_back({p.b, p.e});
      return;
    case SplitBehavior::MergedWithPrevious: {
      bool prev_match = false;
      for (const Part& p : parts) {
        if (p.match && !prev_match && !out.empty()) out.back().end = p.e;
        else out.push_back({p.b, p.e});
        prev_match = p.match;
      }
      return;
    }
    case SplitBehavior::MergedWithNext: {
      bool prev_match = false;
      std::vector<Span> rev;
      for (auto it = parts.rbegin(); it != parts.rend(); ++it) {
        if (it->match && !prev_match && !rev.empty()) rev.back().begin = it->b;
        else rev.push_back({it->b, it->e});
        prev_match = it->match;
      }
      out.insert(out.end(), rev.rbegin(), rev.rend());
      return;
    }
    case SplitBehavior::Contiguous: {
      bool prev_match = false;
      bool first = true;
      for (const Part& p : parts) {
        if (!first && p.match == prev_match) out.back().end = p.e;
        else out.push_back({p.b, p.e});
        prev_match = p.match;
        first = false;
      }
      return;
    }
  }
}

bool is_numeric(char32_t c) {
  if (c < 0x80) return c >= '0' && c <= '9';
  const auto cat = utf8proc_category(static_cast<utf8proc_int32_t>(c));
  return cat == UTF8PROC_CATEGORY_ND || cat == UTF8PROC_CATEGORY_NL || cat == UTF8PROC_CATEGORY_NO;
}
}  // namespace

PreTokenizer PreTokenizer::from_json(const nlohmann::json& j, const std::string& where) {
  PreTokenizer p;
  if (j.is_null())
    throw Error(where + ": no pre_tokenizer: kvgate reads byte-level BPE tokenizers, which need a ByteLevel pre-tokenizer");
  parse_step(j, where, p.steps_);
  bool byte_level = false;
  for (const auto& s : p.steps_) byte_level = byte_level || s.kind == PreTokenizerStep::Kind::ByteLevel;
  if (!byte_level)
    throw Error(where + ": the pre_tokenizer has no ByteLevel step: kvgate reads byte-level BPE tokenizers only "
                "(GPT-2, Llama-3, Qwen families); use --tokenize-url for this model");
  return p;
}

void PreTokenizer::run(std::string_view text, PreTokenized& out) const {
  out.clear();
  if (text.empty()) return;
  out.pieces.push_back(text);
  std::vector<Part> parts;
  for (const PreTokenizerStep& s : steps_) {
    out.tmp.clear();
    for (const std::string_view piece : out.pieces) {
      std::string_view cur = piece;
      if (s.kind == PreTokenizerStep::Kind::ByteLevel && s.add_prefix_space && cur.front() != ' ') {
        auto owned = std::make_unique<std::string>();
        owned->reserve(cur.size() + 1);
        *owned += ' ';
        owned->append(cur);
        cur = *owned;
        out.owned.push_back(std::move(owned));
      }
      if (s.kind == PreTokenizerStep::Kind::ByteLevel && !s.regex) {
        out.tmp.push_back(cur);
        continue;
      }
      parts.clear();
      if (s.kind == PreTokenizerStep::Kind::Digits) {
        // Runs of digits (or single digits) are the matches.
        std::size_t i = 0;
        while (i < cur.size()) {
          const std::size_t at = i;
          const bool digit = is_numeric(next_codepoint(cur, i));
          if (!parts.empty() && parts.back().match == digit && !(digit && s.individual_digits)) parts.back().e = i;
          else parts.push_back({at, i, digit});
        }
        out.spans.clear();
        split_by_behavior(parts, SplitBehavior::Isolated, out.spans);
      } else {
        out.spans.clear();
        s.regex->find_all(cur, out.spans);
        std::size_t prev = 0;
        for (const Span& m : out.spans) {
          if (m.begin > prev) parts.push_back({prev, m.begin, s.invert});
          parts.push_back({m.begin, m.end, !s.invert});
          prev = m.end;
        }
        if (prev < cur.size()) parts.push_back({prev, cur.size(), s.invert});
        out.spans.clear();
        split_by_behavior(parts, s.kind == PreTokenizerStep::Kind::Split ? s.behavior : SplitBehavior::Isolated, out.spans);
      }
      for (const Span& sp : out.spans)
        if (sp.end > sp.begin) out.tmp.push_back(cur.substr(sp.begin, sp.end - sp.begin));
    }
    out.pieces.swap(out.tmp);
  }
}

}  // namespace kvgate::tok
