#include "datasets/custom/answer_extract.h"

#include <cctype>

#include "datasets/common/numbers.h"
#include "datasets/common/pcre_regex.h"

namespace kvgate {

namespace {

std::string trim(std::string_view s) {
  const char* ws = " \t\r\n";
  const std::size_t b = s.find_first_not_of(ws);
  if (b == std::string_view::npos) return "";
  return std::string(s.substr(b, s.find_last_not_of(ws) - b + 1));
}

// The last match of `pattern` with the letter class substituted, returning group 1 and the end offset.
bool last_letter(std::string_view text, const std::string& pattern, std::string& letter, std::size_t& end, bool ignore_case) {
  const Regex& re = cached_regex(pattern, {.ignore_case = ignore_case, .dotall = false});
  const auto all = re.find_all(text);
  if (all.empty()) return false;
  letter.clear();
  for (const std::string& g : all.back().groups)
    if (letter.empty() && !g.empty()) letter = g;
  end = all.back().end;
  for (char& c : letter) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return true;
}

}  // namespace

ExtractedAnswer extract_numeric_answer(std::string_view response, bool require_boxed) {
  ExtractedAnswer out;
  if (auto boxed = last_boxed(response)) {
    out.text = *boxed;
    out.via = "boxed";
    return out;
  }
  if (require_boxed) return out;
  if (const std::size_t at = response.rfind("####"); at != std::string_view::npos) {
    std::string_view rest = response.substr(at + 4);
    rest = rest.substr(0, rest.find('\n'));
    if (auto n = last_number_in(rest); n && !trim(rest).empty()) {
      out.text = trim(rest);
      if (!parse_answer_number(out.text)) out.text = *n;
      out.via = "####";
      return out;
    }
  }
  static const Regex answer_is(R"((?i)\banswer\b(?:\s+is)?\s*[:=]?\s*(?:\*\*)?([^\n]*))");
  const auto phrases = answer_is.find_all(response);
  for (auto it = phrases.rbegin(); it != phrases.rend(); ++it) {
    const Regex& first_number = cached_regex(kAnswerNumberPattern);
    RegexMatch m;
    if (first_number.search(it->groups[0], m)) {
      out.text = m.text;
      out.via = "answer_is";
      return out;
    }
  }
  if (auto n = last_number_in(response)) {
    out.text = *n;
    out.via = "last_number";
  }
  return out;
}

ExtractedAnswer extract_choice(std::string_view response, std::string_view choices, bool fallback_last_letter) {
  ExtractedAnswer out;
  const std::string up(choices);
  std::string low;
  for (char c : up) low.push_back(static_cast<char>(std::tolower(static_cast<unsigned char>(c))));
  const std::string L = "[" + up + "]", Lboth = "[" + up + low + "]";
  const std::string end = "(?![A-Za-z0-9])";
  std::string letter;
  std::size_t at = 0;

  // 1. An explicit final statement: "The answer is (C)", "Answer: C", "**Answer:** **C**",
  //    "the correct option is C", "Final answer: \boxed{C}". A letter in parentheses or bold may be lower case.
  const std::string lead =
      R"((?:answer|correct\s+(?:option|choice))\b(?:\s+(?:is|was|would\s+be|should\s+be))?\s*[:=]?[\s*_:$]*(?:\\boxed\{\s*)?(?:\\text(?:bf)?\{\s*)?)";
  const std::string phrase = "(?i:" + lead + ")(?:\\(\\s*(" + Lboth + ")\\s*\\)|\\*\\*\\s*\\(?(" + Lboth + ")\\)?\\s*\\*\\*|\\[(" +
                             Lboth + ")\\]|(" + L + ")" + end + ")";
  {
    const Regex& re = cached_regex(phrase);
    const auto all = re.find_all(response);
    if (!all.empty()) {
      for (const std::string& g : all.back().groups)
        if (!g.empty()) letter = g;
      letter[0] = static_cast<char>(std::toupper(static_cast<unsigned char>(letter[0])));
      at = all.back().end;
      out.text = letter;
      out.via = "answer_is";
      // "(B) or (C)", "B and C", "B, C": the statement names several options.
      const Regex& more = cached_regex(R"(^[\s*)\].]*(?:or|and|,|/|&)\s*[(\[*]*)" + L + end);
      RegexMatch m;
      if (more.search(response.substr(at), m)) out.ambiguous = true;
      return out;
    }
  }
  // 2. \boxed{C}, \boxed{\text{C}}, \boxed{(C)}.
  if (last_letter(response, R"(\\boxed\{\s*(?:\\text(?:bf)?\{\s*)?\(?()" + Lboth + R"()\)?\s*\}?\s*\})", letter, at, false)) {
    out.text = letter;
    out.via = "boxed";
    return out;
  }
  // 3. Bold: **C**, **(C)**, **C.**, **C) Paris**.
  if (last_letter(response, R"(\*\*\s*\(?(?:()" + L + R"()(?=\)|\.|:|\*\*|\s)|([)" + low + R"(])(?=\)?\s*\*\*)))", letter, at, false)) {
    out.text = letter;
    out.via = "bold";
    return out;
  }
  // 4. The response is just the option: "C", "(C)", "C.", "C) Paris", "C: Paris".
  if (last_letter(response, R"(^\s*[(\[]?()" + L + R"()(?=[)\]]?[.:]?\s*$|[)\]][.:]?\s|[.:]\s))", letter, at, false)) {
    out.text = letter;
    out.via = "whole";
    return out;
  }
  // 5. The last "(C)".
  if (last_letter(response, R"(\(()" + L + R"()\))", letter, at, false)) {
    out.text = letter;
    out.via = "parenthesized";
    return out;
  }
  // 6. Optional, as MMLU-Pro's script: the last standalone capital letter ("I" and "A" are words too).
  if (fallback_last_letter && last_letter(response, R"((?<![A-Za-z0-9])()" + L + R"())" + end, letter, at, false)) {
    out.text = letter;
    out.via = "last_letter";
  }
  return out;
}

std::optional<char> normalize_choice_target(std::string_view target) {
  std::string t = trim(target);
  if (!t.empty() && (t.back() == '.' || t.back() == ')')) t.pop_back();
  if (!t.empty() && t.front() == '(') t.erase(0, 1);
  t = trim(t);
  if (t.size() != 1 || !std::isalpha(static_cast<unsigned char>(t[0]))) return std::nullopt;
  return static_cast<char>(std::toupper(static_cast<unsigned char>(t[0])));
}

}  // namespace kvgate
