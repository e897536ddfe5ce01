#include "reports/html_escape.h"

#include <utf8proc.h>

#include <cstdint>
#include <vector>

namespace kvgate::reports {

namespace {

void append_utf8(std::string& out, std::int32_t cp) {
  utf8proc_uint8_t buf[4];
  const utf8proc_ssize_t n = utf8proc_encode_char(cp, buf);
  out.append(reinterpret_cast<const char*>(buf), static_cast<std::size_t>(n));
}

void append_visible_code(std::string& out, std::int32_t cp) {
  static const char* hex = "0123456789ABCDEF";
  out += "\u27E8U+";
  std::string digits;
  for (int shift = cp > 0xFFFFF ? 20 : cp > 0xFFFF ? 16 : 12; shift >= 0; shift -= 4) digits += hex[(cp >> shift) & 0xF];
  out += digits + "\u27E9";
}

// Code points shown as "<U+XXXX>": invisible, or able to reorder or hide the text around them.
bool shown_as_code(std::int32_t cp) {
  return (cp >= 0x80 && cp <= 0x9F) ||      // C1 controls
         cp == 0x200B || cp == 0x200C || cp == 0x200D || cp == 0x200E || cp == 0x200F ||  // zero width, LRM, RLM
         (cp >= 0x202A && cp <= 0x202E) ||  // embeddings and overrides
         (cp >= 0x2066 && cp <= 0x2069) ||  // isolates
         cp == 0x2028 || cp == 0x2029 || cp == 0xFEFF;
}

// Calls emit(code point) for each code point of `text`, already replaced as clean_text says.
template <class Emit>
void for_each_clean(std::string_view text, Emit emit_cp, std::string& out) {
  const auto* p = reinterpret_cast<const utf8proc_uint8_t*>(text.data());
  const auto n = static_cast<utf8proc_ssize_t>(text.size());
  utf8proc_ssize_t i = 0;
  while (i < n) {
    utf8proc_int32_t cp = -1;
    const utf8proc_ssize_t used = utf8proc_iterate(p + i, n - i, &cp);
    if (used <= 0 || cp < 0 || !utf8proc_codepoint_valid(cp)) {
      append_utf8(out, 0xFFFD);  // one replacement per invalid byte
      i += 1;
      continue;
    }
    i += used;
    if (cp == '\r') {
      if (i < n && p[i] == '\n') continue;  // CR LF -> LF
      append_visible_code(out, cp);
    } else if (cp == '\t' || cp == '\n') {
      emit_cp(cp);
    } else if (cp < 0x20 || cp == 0x7F) {
      append_visible_code(out, cp);
    } else if (cp == 0xFFFE || cp == 0xFFFF) {
      append_utf8(out, 0xFFFD);
    } else if (shown_as_code(cp)) {
      append_visible_code(out, cp);
    } else {
      emit_cp(cp);
    }
  }
}

}  // namespace

std::string clean_text(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for_each_clean(text, [&](std::int32_t cp) { append_utf8(out, cp); }, out);
  return out;
}

std::string escape_html(std::string_view text) {
  const std::string clean = clean_text(text);
  std::string out;
  out.reserve(clean.size() + clean.size() / 8);
  for (std::size_t i = 0; i < clean.size(); ++i) {
    const char ch = clean[i];
    switch (ch) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&#39;"; break;
      case ':':
        out += clean.compare(i + 1, 2, "//") == 0 ? "&#58;" : ":";
        break;
      default: out += ch;
    }
  }
  return out;
}

std::string escape_markdown(std::string_view text) {
  const std::string clean = clean_text(text);
  std::string out;
  out.reserve(clean.size() + 8);
  for (std::size_t i = 0; i < clean.size(); ++i) {
    const char ch = clean[i];
    if (ch == ':' && clean.compare(i + 1, 2, "//") == 0) {  // no autolink: "https[:]//host" reads but does not link
      out += "\\[:\\]";
      continue;
    }
    switch (ch) {
      case '\n':
      case '\t': out += ' '; break;
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '|': case '`': case '*': case '_': case '[': case ']': case '\\': case '~': case '#': case '!':
        out += '\\';
        out += ch;
        break;
      default: out += ch;
    }
  }
  return out;
}

std::string truncate_middle(std::string_view text, std::size_t head, std::size_t tail) {
  const std::string clean = clean_text(text);
  // Byte offsets of each code point start.
  std::vector<std::size_t> starts;
  for (std::size_t i = 0; i < clean.size(); ++i)
    if ((static_cast<unsigned char>(clean[i]) & 0xC0) != 0x80) starts.push_back(i);
  const std::size_t count = starts.size();
  if (count <= head + tail) return clean;
  const std::size_t cut_from = starts[head], cut_to = tail == 0 ? clean.size() : starts[count - tail];
  return clean.substr(0, cut_from) + "\n\u2026 [" + std::to_string(count - head - tail) + " characters left out] \u2026\n" +
         clean.substr(cut_to);
}

}  // namespace kvgate::reports
