#define PCRE2_CODE_UNIT_WIDTH 8
#include "harness/tokenizer/split_regex.h"

#include <pcre2.h>

#include "harness/core/error.h"
#include "harness/tokenizer/utf8.h"

namespace kvgate::tok {

namespace {
// Oniguruma's Unicode \s: U+0009-U+000D, U+0085 and the Z categories (PCRE2 adds U+180E).
constexpr const char* kSpaceSet = "\\t\\n\\x0B\\f\\r\\x{85}\\p{Z}";

std::string pcre2_message(int code) {
  PCRE2_UCHAR buf[256];
  pcre2_get_error_message(code, buf, sizeof buf);
  return reinterpret_cast<const char*>(buf);
}

// Match data, match context and JIT stack, once per thread and shared by every pattern: group 0
// is all a split needs (a too-small ovector still holds it), and a JIT stack is an mmap.
struct MatchResources {
  pcre2_match_data* md = pcre2_match_data_create(1, nullptr);
  pcre2_match_context* mc = pcre2_match_context_create(nullptr);
  // Long runs (a megabyte of spaces) need more than the default 32 KiB JIT stack.
  pcre2_jit_stack* js = pcre2_jit_stack_create(32 * 1024, 8 * 1024 * 1024, nullptr);
  MatchResources() { pcre2_jit_stack_assign(mc, nullptr, js); }
  ~MatchResources() {
    pcre2_match_data_free(md);
    pcre2_match_context_free(mc);
    pcre2_jit_stack_free(js);
  }
};
MatchResources& match_resources() {
  thread_local MatchResources r;
  return r;
}
}  // namespace

std::string rewrite_whitespace_classes(const std::string& p) {
  std::string out;
  out.reserve(p.size() + 32);
  bool in_class = false;
  for (std::size_t i = 0; i < p.size(); ++i) {
    const char c = p[i];
    if (c == '\\' && i + 1 < p.size()) {
      const char e = p[i + 1];
      if (e == 's') {
        out += in_class ? std::string(kSpaceSet) : "[" + std::string(kSpaceSet) + "]";
      } else if (e == 'S' && !in_class) {
        out += "[^" + std::string(kSpaceSet) + "]";
      } else {
        out += c;
        out += e;
      }
      ++i;
      continue;
    }
    if (!in_class && c == '[') {
      in_class = true;
      out += c;
      // A ']' right after '[' or '[^' is a literal.
      if (i + 1 < p.size() && p[i + 1] == '^') out += p[++i];
      if (i + 1 < p.size() && p[i + 1] == ']') out += p[++i];
      continue;
    }
    if (in_class && c == '[' && i + 1 < p.size() && p[i + 1] == ':') {  // [:alpha:]
      const std::size_t close = p.find(":]", i + 2);
      if (close != std::string::npos) {
        out.append(p, i, close + 2 - i);
        i = close + 1;
        continue;
      }
    }
    if (in_class && c == ']') in_class = false;
    out += c;
  }
  return out;
}

std::string escape_regex_literal(std::string_view literal) {
  std::string out;
  for (const char c : literal) {
    const auto u = static_cast<unsigned char>(c);
    const bool plain = u >= 0x80 || (u >= '0' && u <= '9') || (u >= 'a' && u <= 'z') || (u >= 'A' && u <= 'Z');
    if (!plain) out += '\\';
    out += c;
  }
  return out;
}

struct SplitRegex::Impl {
  pcre2_code* code = nullptr;
  bool jit = false;
  ~Impl() {
    if (code) pcre2_code_free(code);
  }
};

SplitRegex::SplitRegex(const std::string& pattern, const std::string& where) : impl_(std::make_unique<Impl>()) {
  const std::string rewritten = rewrite_whitespace_classes(pattern);
  int err = 0;
  PCRE2_SIZE offset = 0;
  impl_->code = pcre2_compile(reinterpret_cast<PCRE2_SPTR>(rewritten.data()), rewritten.size(),
                              PCRE2_UTF | PCRE2_UCP | PCRE2_NO_UTF_CHECK, &err, &offset, nullptr);
  if (!impl_->code)
    throw Error(where + ": the pre-tokenizer regex does not compile at offset " + std::to_string(offset) + ": " +
                pcre2_message(err) + " (pattern: " + pattern + ")");
  impl_->jit = pcre2_jit_compile(impl_->code, PCRE2_JIT_COMPLETE) == 0;
}

SplitRegex::~SplitRegex() = default;

bool SplitRegex::next_match(std::string_view text, std::size_t& pos, bool& after_empty, Span& m) const {
  MatchResources& r = match_resources();
  const auto* subject = reinterpret_cast<PCRE2_SPTR>(text.data());
  const PCRE2_SIZE n = text.size();
  while (pos <= n) {
    const std::uint32_t flags = after_empty ? (PCRE2_NOTEMPTY_ATSTART | PCRE2_ANCHORED) : 0;
    const int rc = impl_->jit ? pcre2_jit_match(impl_->code, subject, n, pos, flags, r.md, r.mc)
                              : pcre2_match(impl_->code, subject, n, pos, flags | PCRE2_NO_UTF_CHECK, r.md, r.mc);
    if (rc == PCRE2_ERROR_NOMATCH) {
      if (!after_empty || pos >= n) return false;
      // No non-empty match here after an empty one: step one character.
      pos += utf8_seq_len(static_cast<unsigned char>(text[pos]));
      after_empty = false;
      continue;
    }
    if (rc < 0) throw Error("tokenizer regex match failed: " + pcre2_message(rc));
    const PCRE2_SIZE* ov = pcre2_get_ovector_pointer(r.md);
    const std::size_t b = ov[0], e = ov[1];
    pos = e;
    after_empty = e == b;
    if (e > b) {
      m = {b, e};
      return true;
    }
    if (pos >= n) return false;
  }
  return false;
}

}  // namespace kvgate::tok
