#include "datasets/custom/text_match.h"

#include <utf8proc.h>

#include <cctype>

#include "datasets/common/pcre_regex.h"
#include "harness/core/error.h"

namespace kvgate {

TextMatchOptions text_match_options(const GraderParams& p) {
  return {.case_sensitive = p.flag("case_sensitive", false),
          .ignore_punctuation = p.flag("ignore_punctuation", false),
          .regexes_to_ignore = p.strings("regexes_to_ignore")};
}

namespace {

std::string lower(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  const auto* p = reinterpret_cast<const utf8proc_uint8_t*>(s.data());
  utf8proc_ssize_t left = static_cast<utf8proc_ssize_t>(s.size());
  while (left > 0) {
    utf8proc_int32_t cp = 0;
    const utf8proc_ssize_t n = utf8proc_iterate(p, left, &cp);
    if (n <= 0) {  // invalid byte: kept as it is
      out.push_back(static_cast<char>(*p));
      ++p, --left;
      continue;
    }
    utf8proc_uint8_t buf[4];
    const utf8proc_ssize_t w = utf8proc_encode_char(utf8proc_tolower(cp), buf);
    out.append(reinterpret_cast<const char*>(buf), static_cast<std::size_t>(w));
    p += n, left -= n;
  }
  return out;
}

}  // namespace

std::string normalize_text(std::string_view text, const TextMatchOptions& o) {
  std::string s(text);
  for (const std::string& pattern : o.regexes_to_ignore) s = cached_regex(pattern).remove_all(s);
  std::string out;
  bool space = false;
  for (unsigned char c : s) {
    if (o.ignore_punctuation && std::ispunct(c)) continue;
    if (std::isspace(c)) {
      space = !out.empty();
      continue;
    }
    if (space) out.push_back(' ');
    space = false;
    out.push_back(static_cast<char>(c));
  }
  return o.case_sensitive ? out : lower(out);
}

std::vector<std::string> target_alternatives(const Trial& t) {
  auto one = [&](const nlohmann::json& v) -> std::string {
    if (v.is_string()) return v.get<std::string>();
    if (v.is_number()) return v.dump();
    throw Error("trial " + t.id + ": grader " + t.grader_name() +
                ": the target must be a string, a number, or an array of those (acceptable answers)");
  };
  std::vector<std::string> out;
  if (t.target.is_array()) {
    for (const nlohmann::json& v : t.target) out.push_back(one(v));
    if (out.empty()) throw Error("trial " + t.id + ": grader " + t.grader_name() + ": the target is an empty array");
  } else {
    out.push_back(one(t.target));
  }
  return out;
}

}  // namespace kvgate
