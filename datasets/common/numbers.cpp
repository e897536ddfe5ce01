#include "datasets/common/numbers.h"

#include <cctype>
#include <cmath>
#include <cstdlib>

#include "datasets/common/pcre_regex.h"

namespace kvgate {

namespace {

void replace_all(std::string& s, std::string_view from, std::string_view to) {
  for (std::size_t at = 0; (at = s.find(from, at)) != std::string::npos; at += to.size()) s.replace(at, from.size(), to);
}

std::string trim(std::string_view s) {
  const char* ws = " \t\r\n\f\v";
  const std::size_t b = s.find_first_not_of(ws);
  if (b == std::string_view::npos) return "";
  return std::string(s.substr(b, s.find_last_not_of(ws) - b + 1));
}

// The index just past the brace group that opens at s[open] ('{'), or npos when unbalanced.
std::size_t close_brace(std::string_view s, std::size_t open) {
  int depth = 0;
  for (std::size_t i = open; i < s.size(); ++i) {
    if (s[i] == '{') ++depth;
    else if (s[i] == '}' && --depth == 0) return i + 1;
  }
  return std::string_view::npos;
}

// \text{abc} -> abc (also \textbf, \mathrm, \mbox): units and words wrapped for typesetting.
void unwrap_text_commands(std::string& s) {
  for (std::string_view cmd : {"\\textbf{", "\\text{", "\\mathrm{", "\\mbox{"}) {
    for (std::size_t at; (at = s.find(cmd)) != std::string::npos;) {
      const std::size_t open = at + cmd.size() - 1, end = close_brace(s, open);
      if (end == std::string::npos) {
        s.erase(at, cmd.size());
        continue;
      }
      s = s.substr(0, at) + s.substr(open + 1, end - open - 2) + s.substr(end);
    }
  }
}

// What every answer normalization removes: spacing commands, \left/\right, degree marks, percent and
// dollar signs, LaTeX thousands separators, the Unicode minus.
std::string strip_latex_decoration(std::string_view text) {
  std::string s(text);
  replace_all(s, "\xE2\x88\x92", "-");  // U+2212 MINUS SIGN
  unwrap_text_commands(s);
  for (std::string_view junk : {"\\left", "\\right", "\\displaystyle", "\\!", "\\,", "\\;", "\\:", "\\ ", "^{\\circ}",
                                "^\\circ", "\\circ", "\\%", "%", "\\$", "{,}", "\\(", "\\)", "\\[", "\\]"})
    replace_all(s, junk, junk == "{,}" ? "," : "");
  replace_all(s, "\\dfrac", "\\frac");
  replace_all(s, "\\tfrac", "\\frac");
  replace_all(s, "$", "");
  return trim(s);
}

bool is_digit(char c) { return c >= '0' && c <= '9'; }

// A plain decimal with optional sign, thousands commas, fraction and exponent, as a double.
std::optional<double> parse_plain(std::string_view s) {
  std::string clean;
  std::size_t i = 0;
  if (i < s.size() && (s[i] == '-' || s[i] == '+')) clean.push_back(s[i++]);
  bool digits = false, dot = false;
  for (; i < s.size(); ++i) {
    const char c = s[i];
    if (is_digit(c)) {
      clean.push_back(c), digits = true;
    } else if (c == ',' && digits && !dot && i + 1 < s.size() && is_digit(s[i + 1])) {
      continue;  // thousands separator
    } else if (c == '.' && !dot) {
      clean.push_back(c), dot = true;
    } else {
      break;
    }
  }
  if (!digits) return std::nullopt;
  if (i < s.size() && (s[i] == 'e' || s[i] == 'E')) {
    std::size_t j = i + 1;
    std::string exp = "e";
    if (j < s.size() && (s[j] == '-' || s[j] == '+')) exp.push_back(s[j++]);
    const std::size_t start = j;
    while (j < s.size() && is_digit(s[j])) exp.push_back(s[j++]);
    if (j > start) clean += exp, i = j;
  }
  if (i != s.size()) return std::nullopt;
  const double v = std::strtod(clean.c_str(), nullptr);
  if (!std::isfinite(v)) return std::nullopt;
  return v;
}

// "3/4", "-3 / 4", "\frac{3}{4}", "-\frac{3}{4}", "\frac34", or a plain number.
std::optional<double> parse_number_expr(std::string_view s) {
  std::string t = trim(s);
  double sign = 1.0;
  if (t.rfind("-\\frac", 0) == 0) sign = -1.0, t.erase(0, 1);
  if (t.rfind("\\frac", 0) == 0) {
    std::string_view rest = std::string_view(t).substr(5);
    auto arg = [&](std::string_view& r) -> std::optional<double> {
      r = r.substr(std::min(r.find_first_not_of(' '), r.size()));
      if (r.empty()) return std::nullopt;
      if (r[0] == '{') {
        const std::size_t end = close_brace(r, 0);
        if (end == std::string_view::npos) return std::nullopt;
        auto v = parse_number_expr(r.substr(1, end - 2));
        r = r.substr(end);
        return v;
      }
      if (!is_digit(r[0])) return std::nullopt;
      auto v = parse_plain(r.substr(0, 1));  // \frac34: single-digit arguments
      r = r.substr(1);
      return v;
    };
    auto num = arg(rest), den = arg(rest);
    if (!num || !den || !trim(rest).empty() || *den == 0.0) return std::nullopt;
    return sign * *num / *den;
  }
  const std::size_t slash = t.find('/');
  if (slash != std::string::npos) {
    auto num = parse_plain(trim(std::string_view(t).substr(0, slash)));
    auto den = parse_plain(trim(std::string_view(t).substr(slash + 1)));
    if (!num || !den || *den == 0.0) return std::nullopt;
    return *num / *den;
  }
  return parse_plain(t);
}

}  // namespace

std::optional<double> parse_answer_number(std::string_view text) {
  std::string s = trim(text);
  if (auto boxed = last_boxed(s); boxed && s.rfind("\\boxed", 0) == 0) s = *boxed;
  s = strip_latex_decoration(s);
  while (!s.empty() && (s.back() == '.' || s.back() == ' ')) s.pop_back();
  // "x = 5", "n=3": a variable name then "=".
  static const Regex assignment(R"(^[A-Za-z][A-Za-z0-9_]*\s*=\s*)");
  RegexMatch m;
  if (assignment.search(s, m)) s.erase(0, m.end);
  if (s.empty()) return std::nullopt;
  return parse_number_expr(s);
}

std::optional<std::string> canonical_decimal(std::string_view text) {
  std::string s = trim(text);
  bool negative = false;
  std::size_t i = 0;
  if (i < s.size() && (s[i] == '-' || s[i] == '+')) negative = s[i++] == '-';
  std::string whole, frac;
  bool dot = false;
  for (; i < s.size(); ++i) {
    const char c = s[i];
    if (is_digit(c)) (dot ? frac : whole).push_back(c);
    else if (c == ',' && !dot) continue;
    else if (c == '.' && !dot) dot = true;
    else return std::nullopt;
  }
  if (whole.empty() && frac.empty()) return std::nullopt;
  whole.erase(0, std::min(whole.find_first_not_of('0'), whole.size()));
  while (!frac.empty() && frac.back() == '0') frac.pop_back();
  if (whole.empty()) whole = "0";
  std::string out = whole + (frac.empty() ? "" : "." + frac);
  if (negative && out != "0") out.insert(0, "-");
  return out;
}

std::optional<std::string> last_boxed(std::string_view text) {
  std::size_t at = std::string_view::npos, skip = 0;
  for (std::string_view cmd : {"\\boxed", "\\fbox"}) {
    const std::size_t p = text.rfind(cmd);
    if (p != std::string_view::npos && (at == std::string_view::npos || p > at)) at = p, skip = cmd.size();
  }
  if (at == std::string_view::npos) return std::nullopt;
  std::size_t i = at + skip;
  while (i < text.size() && text[i] == ' ') ++i;
  if (i < text.size() && text[i] == '{') {
    const std::size_t end = close_brace(text, i);
    if (end == std::string_view::npos) return trim(text.substr(i + 1));  // cut off: keep what is there
    return trim(text.substr(i + 1, end - i - 2));
  }
  // "\boxed 5" (MATH writes a few this way): up to the next space or '$'.
  const std::size_t end = text.find_first_of(" $\n", i);
  std::string out = trim(text.substr(i, end == std::string_view::npos ? std::string_view::npos : end - i));
  if (out.empty()) return std::nullopt;
  return out;
}

std::optional<std::string> last_number_in(std::string_view text) {
  std::string s(text);
  replace_all(s, "\xE2\x88\x92", "-");
  const Regex& number = cached_regex(kAnswerNumberPattern);
  const auto all = number.find_all(s);
  if (all.empty()) return std::nullopt;
  std::string out = all.back().text;
  replace_all(out, "$", "");
  return out;
}

std::string normalize_latex_answer(std::string_view text) {
  std::string s = strip_latex_decoration(text);
  std::string out;
  for (char c : s)
    if (!std::isspace(static_cast<unsigned char>(c))) out.push_back(c);
  while (!out.empty() && out.back() == '.') out.pop_back();
  return out;
}

}  // namespace kvgate
