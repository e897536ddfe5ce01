#include "harness/tokenizer/jinja/strings.h"

#include <algorithm>

#include <utf8proc.h>

#include "harness/core/error.h"
#include "harness/tokenizer/jinja/lexer.h"
#include "harness/tokenizer/utf8.h"

namespace kvgate::jinja {

namespace {
std::vector<char32_t> decode(std::string_view s) {
  std::vector<char32_t> cps;
  cps.reserve(s.size());
  std::size_t i = 0;
  while (i < s.size()) cps.push_back(tok::next_codepoint(s, i));
  return cps;
}
std::string encode(const std::vector<char32_t>& cps, std::size_t b, std::size_t e) {
  std::string out;
  for (std::size_t i = b; i < e; ++i) tok::append_utf8(out, cps[i]);
  return out;
}
char32_t upper_cp(char32_t c) {
  if (c < 0x80) return c >= 'a' && c <= 'z' ? c - 32 : c;
  return static_cast<char32_t>(utf8proc_toupper(static_cast<utf8proc_int32_t>(c)));
}
char32_t lower_cp(char32_t c) {
  if (c < 0x80) return c >= 'A' && c <= 'Z' ? c + 32 : c;
  return static_cast<char32_t>(utf8proc_tolower(static_cast<utf8proc_int32_t>(c)));
}
bool is_cased(char32_t c) {
  const auto cat = utf8proc_category(static_cast<utf8proc_int32_t>(c));
  return cat == UTF8PROC_CATEGORY_LU || cat == UTF8PROC_CATEGORY_LL || cat == UTF8PROC_CATEGORY_LT;
}
bool is_line_break(char32_t c) {
  return c == '\n' || c == '\r' || c == 0x0B || c == 0x0C || c == 0x1C || c == 0x1D || c == 0x1E || c == 0x85 ||
         c == 0x2028 || c == 0x2029;
}
}  // namespace

std::size_t py_len(std::string_view s) {
  std::size_t n = 0;
  for (const char c : s) n += (static_cast<unsigned char>(c) & 0xC0) != 0x80;
  return n;
}

std::string py_strip(std::string_view s, const std::optional<std::string>& chars, bool left, bool right) {
  const std::vector<char32_t> cps = decode(s);
  std::vector<char32_t> set;
  if (chars) set = decode(*chars);
  const auto strip_it = [&](char32_t c) {
    return chars ? std::find(set.begin(), set.end(), c) != set.end() : py_isspace(c);
  };
  std::size_t b = 0, e = cps.size();
  if (left)
    while (b < e && strip_it(cps[b])) ++b;
  if (right)
    while (e > b && strip_it(cps[e - 1])) --e;
  return encode(cps, b, e);
}

std::vector<std::string> py_split(std::string_view s, const std::optional<std::string>& sep, long maxsplit) {
  std::vector<std::string> out;
  if (sep) {
    if (sep->empty()) throw Error("chat template: split(): empty separator");
    std::size_t pos = 0;
    long splits = 0;
    for (;;) {
      const std::size_t f = (maxsplit >= 0 && splits >= maxsplit) ? std::string_view::npos : s.find(*sep, pos);
      if (f == std::string_view::npos) {
        out.emplace_back(s.substr(pos));
        return out;
      }
      out.emplace_back(s.substr(pos, f - pos));
      pos = f + sep->size();
      ++splits;
    }
  }
  const std::vector<char32_t> cps = decode(s);
  std::size_t i = 0;
  long splits = 0;
  while (i < cps.size()) {
    while (i < cps.size() && py_isspace(cps[i])) ++i;
    if (i >= cps.size()) break;
    if (maxsplit >= 0 && splits >= maxsplit) {
      std::size_t e = cps.size();
      while (e > i && py_isspace(cps[e - 1])) --e;
      out.push_back(encode(cps, i, e));
      return out;
    }
    std::size_t j = i;
    while (j < cps.size() && !py_isspace(cps[j])) ++j;
    out.push_back(encode(cps, i, j));
    ++splits;
    i = j;
  }
  return out;
}

std::vector<std::string> py_rsplit(std::string_view s, const std::optional<std::string>& sep, long maxsplit) {
  if (maxsplit < 0) return py_split(s, sep, maxsplit);
  std::vector<std::string> out;
  if (sep) {
    if (sep->empty()) throw Error("chat template: rsplit(): empty separator");
    std::size_t end = s.size();
    long splits = 0;
    while (splits < maxsplit) {
      if (end < sep->size()) break;
      const std::size_t f = s.rfind(*sep, end - sep->size());
      if (f == std::string_view::npos) break;
      out.emplace_back(s.substr(f + sep->size(), end - f - sep->size()));
      end = f;
      ++splits;
    }
    out.emplace_back(s.substr(0, end));
    std::reverse(out.begin(), out.end());
    return out;
  }
  const std::vector<char32_t> cps = decode(s);
  std::size_t e = cps.size();
  long splits = 0;
  while (e > 0) {
    while (e > 0 && py_isspace(cps[e - 1])) --e;
    if (e == 0) break;
    if (splits >= maxsplit) {
      std::size_t b = 0;
      while (b < e && py_isspace(cps[b])) ++b;
      out.push_back(encode(cps, b, e));
      break;
    }
    std::size_t b = e;
    while (b > 0 && !py_isspace(cps[b - 1])) --b;
    out.push_back(encode(cps, b, e));
    ++splits;
    e = b;
  }
  std::reverse(out.begin(), out.end());
  return out;
}

std::string py_replace(std::string_view s, std::string_view old, std::string_view repl, long count) {
  std::string out;
  if (old.empty()) {
    const std::vector<char32_t> cps = decode(s);
    long done = 0;
    for (std::size_t i = 0; i <= cps.size(); ++i) {
      if (count < 0 || done < count) {
        out += repl;
        ++done;
      }
      if (i < cps.size()) tok::append_utf8(out, cps[i]);
    }
    return out;
  }
  std::size_t pos = 0;
  long done = 0;
  for (;;) {
    const std::size_t f = (count >= 0 && done >= count) ? std::string_view::npos : s.find(old, pos);
    if (f == std::string_view::npos) break;
    out.append(s.substr(pos, f - pos));
    out.append(repl);
    pos = f + old.size();
    ++done;
  }
  out.append(s.substr(pos));
  return out;
}

std::string py_upper(std::string_view s) {
  std::string out;
  std::size_t i = 0;
  while (i < s.size()) tok::append_utf8(out, upper_cp(tok::next_codepoint(s, i)));
  return out;
}

std::string py_lower(std::string_view s) {
  std::string out;
  std::size_t i = 0;
  while (i < s.size()) tok::append_utf8(out, lower_cp(tok::next_codepoint(s, i)));
  return out;
}

std::string py_capitalize(std::string_view s) {
  std::string out;
  std::size_t i = 0;
  bool first = true;
  while (i < s.size()) {
    const char32_t c = tok::next_codepoint(s, i);
    tok::append_utf8(out, first ? upper_cp(c) : lower_cp(c));
    first = false;
  }
  return out;
}

std::string py_title(std::string_view s) {
  std::string out;
  std::size_t i = 0;
  bool prev_cased = false;
  while (i < s.size()) {
    const char32_t c = tok::next_codepoint(s, i);
    const bool cased = is_cased(c);
    tok::append_utf8(out, cased ? (prev_cased ? lower_cp(c) : upper_cp(c)) : c);
    prev_cased = cased;
  }
  return out;
}

std::vector<std::string> py_splitlines(std::string_view s, bool keepends) {
  std::vector<std::string> out;
  std::size_t i = 0, start = 0;
  while (i < s.size()) {
    const std::size_t at = i;
    const char32_t c = tok::next_codepoint(s, i);
    if (!is_line_break(c)) continue;
    std::size_t end_break = i;
    if (c == '\r' && i < s.size() && s[i] == '\n') end_break = ++i;
    out.emplace_back(s.substr(start, (keepends ? end_break : at) - start));
    start = i;
  }
  if (start < s.size()) out.emplace_back(s.substr(start));
  return out;
}

bool py_is(std::string_view s, const char* what) {
  const std::string w = what;
  const std::vector<char32_t> cps = decode(s);
  if (cps.empty()) return false;
  bool any_cased = false;
  for (const char32_t c : cps) {
    const auto cat = utf8proc_category(static_cast<utf8proc_int32_t>(c));
    const bool letter = cat >= UTF8PROC_CATEGORY_LU && cat <= UTF8PROC_CATEGORY_LO;
    const bool digit = cat == UTF8PROC_CATEGORY_ND;
    const bool numeric = digit || cat == UTF8PROC_CATEGORY_NL || cat == UTF8PROC_CATEGORY_NO;
    if (w == "isdigit" && !digit) return false;
    if (w == "isdecimal" && !digit) return false;
    if (w == "isnumeric" && !numeric) return false;
    if (w == "isalpha" && !letter) return false;
    if (w == "isalnum" && !letter && !numeric) return false;
    if (w == "isspace" && !py_isspace(c)) return false;
    if (w == "islower" && (cat == UTF8PROC_CATEGORY_LU || cat == UTF8PROC_CATEGORY_LT)) return false;
    if (w == "isupper" && (cat == UTF8PROC_CATEGORY_LL || cat == UTF8PROC_CATEGORY_LT)) return false;
    any_cased = any_cased || is_cased(c);
  }
  if (w == "islower" || w == "isupper") return any_cased;
  return true;
}

}  // namespace kvgate::jinja
