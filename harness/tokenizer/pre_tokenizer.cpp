#include "harness/tokenizer/pre_tokenizer.h"

#include "harness/core/error.h"
#include "harness/tokenizer/utf8.h"

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

// HF's NormalizedString::split, streamed: parts (matches and the gaps between them) come in order
// and leave combined by the behaviour, as soon as they are final.
class PartCombiner {
 public:
  PartCombiner(SplitBehavior b, std::string_view text, const std::function<void(std::string_view)>& emit)
      : behavior_(b), text_(text), emit_(emit) {}

  void add(std::size_t b, std::size_t e, bool match) {
    switch (behavior_) {
      case SplitBehavior::Isolated: out(b, e); break;
      case SplitBehavior::Removed:
        if (!match) out(b, e);
        break;
      case SplitBehavior::MergedWithPrevious:  // a match joins the part before it (unless that was a match)
        if (match && !prev_match_ && has_pending_) pending_.end = e;
        else push(b, e);
        break;
      case SplitBehavior::Contiguous:  // runs of matches, and runs of non-matches, join
        if (has_pending_ && match == prev_match_) pending_.end = e;
        else push(b, e);
        break;
      case SplitBehavior::MergedWithNext:  // a match joins the part after it (unless that is a match)
        if (has_pending_ && !match) {
          pending_.end = e;
          flush();
        } else {
          flush();
          if (match) hold(b, e);
          else out(b, e);
        }
        break;
    }
    prev_match_ = match;
  }
  void finish() { flush(); }

 private:
  void out(std::size_t b, std::size_t e) {
    if (e > b) emit_(text_.substr(b, e - b));
  }
  void hold(std::size_t b, std::size_t e) {
    pending_ = {b, e};
    has_pending_ = true;
  }
  void push(std::size_t b, std::size_t e) {
    flush();
    hold(b, e);
  }
  void flush() {
    if (has_pending_) out(pending_.begin, pending_.end);
    has_pending_ = false;
  }

  SplitBehavior behavior_;
  std::string_view text_;
  const std::function<void(std::string_view)>& emit_;
  Span pending_;
  bool has_pending_ = false, prev_match_ = false;
};

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

void PreTokenizer::run_step(std::size_t step, std::string_view piece, const PieceFn& sink) const {
  if (piece.empty()) return;
  if (step == steps_.size()) {
    sink(piece);
    return;
  }
  const PreTokenizerStep& s = steps_[step];
  const PieceFn next = [&](std::string_view p) { run_step(step + 1, p, sink); };
  if (s.kind == PreTokenizerStep::Kind::ByteLevel) {
    std::string prefixed;
    if (s.add_prefix_space && piece.front() != ' ') {
      prefixed.reserve(piece.size() + 1);
      prefixed += ' ';
      prefixed.append(piece);
      piece = prefixed;
    }
    if (!s.regex) {
      next(piece);
      return;
    }
    PartCombiner parts(SplitBehavior::Isolated, piece, next);
    std::size_t prev = 0;
    s.regex->for_each_match(piece, [&](std::size_t b, std::size_t e) {
      if (b > prev) parts.add(prev, b, false);
      parts.add(b, e, true);
      prev = e;
    });
    if (prev < piece.size()) parts.add(prev, piece.size(), false);
    parts.finish();
    return;
  }
  if (s.kind == PreTokenizerStep::Kind::Digits) {
    // Each digit is a match; runs of them join unless individual_digits.
    PartCombiner parts(s.individual_digits ? SplitBehavior::Isolated : SplitBehavior::Contiguous, piece, next);
    std::size_t i = 0, gap = 0;
    while (i < piece.size()) {
      const std::size_t at = i;
      if (is_numeric(next_codepoint(piece, i))) {
        if (at > gap) parts.add(gap, at, false);
        parts.add(at, i, true);
        gap = i;
      }
    }
    if (gap < piece.size()) parts.add(gap, piece.size(), false);
    parts.finish();
    return;
  }
  PartCombiner parts(s.behavior, piece, next);
  std::size_t prev = 0;
  s.regex->for_each_match(piece, [&](std::size_t b, std::size_t e) {
    if (b > prev) parts.add(prev, b, s.invert);
    parts.add(b, e, !s.invert);
    prev = e;
  });
  if (prev < piece.size()) parts.add(prev, piece.size(), s.invert);
  parts.finish();
}

}  // namespace kvgate::tok
