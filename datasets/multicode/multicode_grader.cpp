// The "multicode" grader: all asked codes exact and attributed to their own names (the seed's
// pass rule), with the fraction right and RULER's string_match_all as secondary scores.
#include "datasets/common/answer_text.h"
#include "harness/core/error.h"
#include "datasets/multicode/multicode.h"

namespace kvgate::multicode {

namespace {

bool is_digit(char c) { return c >= '0' && c <= '9'; }
bool is_alnum(char c) { return is_digit(c) || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }

struct Mention {
  std::size_t begin, end;  // the mention's bytes
  std::string name;        // canonical "<base>-<n>"
};

std::vector<Mention> find_mentions(std::string_view text, const std::string& base) {
  std::vector<Mention> out;
  const std::string lower = lower_ascii(text), want = lower_ascii(base) + "-";
  for (std::size_t at = lower.find(want); at != std::string::npos; at = lower.find(want, at + 1)) {
    if (at > 0 && is_alnum(text[at - 1])) continue;
    std::size_t d = at + want.size(), e = d;
    while (e < text.size() && is_digit(text[e])) ++e;
    if (e == d || e - d > 9 || (e < text.size() && is_alnum(text[e]))) continue;
    out.push_back({at, e, base + "-" + std::to_string(std::stol(std::string(text.substr(d, e - d))))});
  }
  return out;
}

// The first run of exactly six digits in [begin, end).
std::string first_code(std::string_view text, std::size_t begin, std::size_t end) {
  for (std::size_t i = begin; i < end;) {
    if (!is_digit(text[i])) {
      ++i;
      continue;
    }
    std::size_t j = i;
    while (j < text.size() && is_digit(text[j])) ++j;
    if (j - i == 6 && j <= end) return std::string(text.substr(i, 6));
    i = j;
  }
  return {};
}

}  // namespace

ReadCodes read_codes(std::string_view answer, const std::string& base, const std::vector<std::string>& asked) {
  ReadCodes r;
  r.given.assign(asked.size(), "");
  const std::vector<Mention> mentions = find_mentions(answer, base);
  for (std::size_t m = 0; m < mentions.size(); ++m) {
    const std::size_t end = m + 1 < mentions.size() ? mentions[m + 1].begin : answer.size();
    for (std::size_t a = 0; a < asked.size(); ++a) {
      if (!r.given[a].empty() || mentions[m].name != asked[a]) continue;
      r.given[a] = first_code(answer, mentions[m].end, end);
    }
  }
  return r;
}

Grade grade_multicode(const GradeInput& in) {
  const Trial& t = in.trial;
  const nlohmann::json* codes = t.target.is_object() && t.target.contains("codes") ? &t.target["codes"] : nullptr;
  bool ok = codes && codes->is_array() && !codes->empty();
  if (ok)
    for (const auto& c : *codes)
      ok = ok && c.is_object() && c.contains("name") && c["name"].is_string() && c.contains("code") && c["code"].is_string() &&
           c["name"].get_ref<const std::string&>().rfind('-') != std::string::npos;
  if (!ok)
    throw Error("trial " + t.id +
                ": a multicode target must be {\"codes\": [{\"name\": \"Juniper-24\", \"code\": \"951936\"}, ...]}: regenerate the tasks file");
  std::vector<std::string> asked, want;
  for (const auto& c : *codes) {
    asked.push_back(c["name"].get<std::string>());
    want.push_back(c["code"].get<std::string>());
  }
  const std::string base = asked[0].substr(0, asked[0].rfind('-'));
  const std::string text = final_answer_text(in.response);
  const ReadCodes read = read_codes(text, base, asked);

  std::size_t right = 0, anywhere = 0;
  const std::string lower = lower_ascii(text);
  nlohmann::json given = nlohmann::json::object();
  std::string extracted;
  for (std::size_t i = 0; i < asked.size(); ++i) {
    right += read.given[i] == want[i] ? 1 : 0;
    anywhere += lower.find(lower_ascii(want[i])) != std::string::npos ? 1 : 0;
    given[asked[i]] = read.given[i].empty() ? nlohmann::json() : nlohmann::json(read.given[i]);
    extracted += (i ? "; " : "") + asked[i] + ": " + (read.given[i].empty() ? "-" : read.given[i]);
  }
  const double n = static_cast<double>(asked.size());
  Grade g;
  g.passed = right == asked.size();
  g.score = g.passed ? 1.0 : 0.0;
  g.value = g.passed ? GradeValue::correct : right > 0 ? GradeValue::partial : text.empty() ? GradeValue::no_answer : GradeValue::incorrect;
  g.extracted = text.empty() ? "[invalid]" : extracted;
  g.explanation = std::to_string(right) + " of " + std::to_string(asked.size()) + " codes exact and attributed";
  g.details = {{"codes_right", right},
               {"codes_asked", asked.size()},
               {"fraction_right", static_cast<double>(right) / n},
               {"ruler_string_match_all", static_cast<double>(anywhere) / n},
               {"given", given}};
  copy_trial_fields(t, {"depths", "prompt_tokens", "target_tokens"}, g.details);
  return g;
}

}  // namespace kvgate::multicode
