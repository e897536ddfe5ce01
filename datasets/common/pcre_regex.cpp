#define PCRE2_CODE_UNIT_WIDTH 8
#include "datasets/common/pcre_regex.h"

#include <pcre2.h>

#include <map>

#include "harness/core/error.h"

namespace kvgate {

struct Regex::Code {
  pcre2_code* code = nullptr;
  ~Code() { pcre2_code_free(code); }
};

Regex::Regex(std::string_view pattern, const RegexOptions& o) : code_(std::make_unique<Code>()), pattern_(pattern) {
  // PCRE2_MATCH_INVALID_UTF: invalid UTF-8 in a subject never matches a character but is no error.
  uint32_t flags = PCRE2_UTF | PCRE2_UCP | PCRE2_MATCH_INVALID_UTF;
  if (o.ignore_case) flags |= PCRE2_CASELESS;
  if (o.dotall) flags |= PCRE2_DOTALL;
  int err = 0;
  PCRE2_SIZE offset = 0;
  code_->code = pcre2_compile(reinterpret_cast<PCRE2_SPTR>(pattern.data()), pattern.size(), flags, &err, &offset, nullptr);
  if (!code_->code) {
    PCRE2_UCHAR msg[256];
    pcre2_get_error_message(err, msg, sizeof msg);
    throw Error("regex \"" + pattern_ + "\": " + reinterpret_cast<const char*>(msg) + " at offset " +
                std::to_string(offset));
  }
  // JIT when the platform has it (pcre2_match falls back to the interpreter otherwise).
  pcre2_jit_compile(code_->code, PCRE2_JIT_COMPLETE);
  uint32_t n = 0;
  pcre2_pattern_info(code_->code, PCRE2_INFO_CAPTURECOUNT, &n);
  groups_ = static_cast<int>(n);
}

Regex::~Regex() = default;
Regex::Regex(Regex&&) noexcept = default;
Regex& Regex::operator=(Regex&&) noexcept = default;

bool Regex::search(std::string_view subject, RegexMatch& m, std::size_t from) const {
  return search_impl(subject, m, from, false);
}

bool Regex::search_impl(std::string_view subject, RegexMatch& m, std::size_t from, bool not_empty_at_start) const {
  struct Data {
    pcre2_match_data* p;
    ~Data() { pcre2_match_data_free(p); }
  } data{pcre2_match_data_create_from_pattern(code_->code, nullptr)};
  if (!data.p) throw Error("regex: out of memory", kExitInternal);
  const int rc = pcre2_match(code_->code, reinterpret_cast<PCRE2_SPTR>(subject.data()), subject.size(), from,
                               not_empty_at_start ? PCRE2_NOTEMPTY_ATSTART : 0, data.p, nullptr);
  if (rc == PCRE2_ERROR_NOMATCH) return false;
  if (rc < 0) {
    PCRE2_UCHAR msg[256];
    pcre2_get_error_message(rc, msg, sizeof msg);
    throw Error("regex \"" + pattern_ + "\": matching failed: " + reinterpret_cast<const char*>(msg));
  }
  const PCRE2_SIZE* ov = pcre2_get_ovector_pointer(data.p);
  m.begin = ov[0];
  m.end = ov[1];
  m.text.assign(subject.substr(m.begin, m.end - m.begin));
  m.groups.assign(groups_, std::string());
  for (int g = 1; g <= groups_ && g < rc; ++g)
    if (ov[2 * g] != PCRE2_UNSET) m.groups[g - 1].assign(subject.substr(ov[2 * g], ov[2 * g + 1] - ov[2 * g]));
  return true;
}

std::vector<RegexMatch> Regex::find_all(std::string_view subject) const {
  // As Python 3.7+: after an empty match at p, the next match may start at p only if it is not empty.
  std::vector<RegexMatch> out;
  std::size_t from = 0;
  bool after_empty = false;
  RegexMatch m;
  while (from <= subject.size() && search_impl(subject, m, from, after_empty)) {
    after_empty = m.end == m.begin;
    from = m.end;
    out.push_back(std::move(m));
  }
  return out;
}

std::string Regex::remove_all(std::string_view subject) const {
  std::string out;
  std::size_t kept = 0;
  for (const RegexMatch& m : find_all(subject)) {
    out.append(subject.substr(kept, m.begin - kept));
    kept = m.end;
  }
  out.append(subject.substr(kept));
  return out;
}

const Regex& cached_regex(std::string_view pattern, const RegexOptions& o) {
  thread_local std::map<std::string, Regex> cache;
  std::string key = std::string(o.ignore_case ? "i" : "-") + (o.dotall ? "s" : "-") + std::string(pattern);
  auto it = cache.find(key);
  if (it != cache.end()) return it->second;
  if (cache.size() >= 256) cache.clear();  // user patterns are few; never grow without bound
  return cache.emplace(std::move(key), Regex(pattern, o)).first->second;
}

static std::string strip_ascii(std::string s) {
  const char* ws = " \t\r\n\f\v";
  const std::size_t b = s.find_first_not_of(ws);
  if (b == std::string::npos) return "";
  return s.substr(b, s.find_last_not_of(ws) - b + 1);
}

std::string regex_filter(const Regex& regex, std::string_view response, int group_select, std::string_view fallback) {
  const std::vector<RegexMatch> all = regex.find_all(response);
  const long n = static_cast<long>(all.size());
  const long at = group_select < 0 ? n + group_select : group_select;
  if (n == 0 || at < 0 || at >= n) return std::string(fallback);
  const RegexMatch& m = all[static_cast<std::size_t>(at)];
  // re.findall: no groups -> the whole match; one group -> that group; several -> a tuple, of which
  // lm-eval takes the first non-empty element.
  if (regex.group_count() == 0) return strip_ascii(m.text);
  if (regex.group_count() == 1) return strip_ascii(m.groups[0]);
  for (const std::string& g : m.groups)
    if (!g.empty()) return strip_ascii(g);
  return std::string(fallback);
}

}  // namespace kvgate
