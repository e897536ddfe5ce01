// Hostile strings from model outputs, labels and task files (reports/html_escape.h, markup.h): markup,
// quotes, control and bidi characters, invalid UTF-8 and URLs reach a report as inert, visible text.
#include <string>

#include "tests/catch_compat.hpp"
#include "reports/html_escape.h"
#include "reports/markup.h"

using kvgate::reports::clean_text;
using kvgate::reports::escape_html;
using kvgate::reports::escape_markdown;
using kvgate::reports::Markup;
using kvgate::reports::truncate_middle;
using kvtest::contains;

namespace {

// Valid UTF-8 with no XML 1.0-forbidden character (C0 controls but tab/newline, U+FFFE/U+FFFF, surrogates).
bool valid_xml_text(const std::string& s) {
  for (std::size_t i = 0; i < s.size();) {
    const unsigned char c = static_cast<unsigned char>(s[i]);
    int n = c < 0x80 ? 1 : (c >> 5) == 6 ? 2 : (c >> 4) == 14 ? 3 : (c >> 3) == 30 ? 4 : 0;
    if (n == 0 || i + n > s.size()) return false;
    unsigned cp = n == 1 ? c : n == 2 ? c & 0x1F : n == 3 ? c & 0x0F : c & 0x07;
    for (int k = 1; k < n; ++k) {
      const unsigned char d = static_cast<unsigned char>(s[i + k]);
      if ((d >> 6) != 2) return false;
      cp = (cp << 6) | (d & 0x3F);
    }
    if (cp < 0x20 && cp != '\t' && cp != '\n') return false;
    if ((cp >= 0xD800 && cp <= 0xDFFF) || cp == 0xFFFE || cp == 0xFFFF || cp > 0x10FFFF) return false;
    i += n;
  }
  return true;
}

}  // namespace

TEST_CASE("escape_html: markup and quotes become character references", "[reports][escape]") {
  CHECK(escape_html("<script>alert(\"x\")</script>") == "&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;");
  CHECK(escape_html("\"><img src=x onerror=alert(1)>") == "&quot;&gt;&lt;img src=x onerror=alert(1)&gt;");
  CHECK(escape_html("a & b 'c'") == "a &amp; b &#39;c&#39;");
  CHECK(escape_html("]]> <!-- -->") == "]]&gt; &lt;!-- --&gt;");
  CHECK(escape_html("plain text, 12:30") == "plain text, 12:30");
  CHECK(escape_html("caf\u00e9 \u6f22\u5b57 \U0001F600") == "caf\u00e9 \u6f22\u5b57 \U0001F600");  // valid text unchanged
}

TEST_CASE("escape_html: a URL shows as text but the file holds no http:// reference", "[reports][escape]") {
  const std::string e = escape_html("see https://evil.example/x.js and http://127.0.0.1:8000/v1");
  CHECK_THAT(e, !contains("https://"));
  CHECK_THAT(e, !contains("http://"));
  CHECK(e == "see https&#58;//evil.example/x.js and http&#58;//127.0.0.1:8000/v1");
}

TEST_CASE("clean_text: control characters are shown, never passed through", "[reports][escape]") {
  CHECK(clean_text(std::string("a\x1b[31mred", 9)) == "a\u27e8U+001B\u27e9[31mred");
  CHECK(clean_text(std::string("nul\0x", 5)) == "nul\u27e8U+0000\u27e9x");
  CHECK(clean_text("bell\x07") == "bell\u27e8U+0007\u27e9");
  CHECK(clean_text("del\x7f") == "del\u27e8U+007F\u27e9");
  CHECK(clean_text("a\r\nb\rc") == "a\nb\u27e8U+000D\u27e9c");  // CR LF -> LF; a lone CR is shown
  CHECK(clean_text("tab\tand\nnewline") == "tab\tand\nnewline");
  CHECK(clean_text("\u202eevil\u202c") == "\u27e8U+202E\u27e9evil\u27e8U+202C\u27e9");  // bidi override: no reordering
  CHECK(clean_text("zero\u200bwidth\ufeff") == "zero\u27e8U+200B\u27e9width\u27e8U+FEFF\u27e9");
  CHECK(clean_text("c1\u0085") == "c1\u27e8U+0085\u27e9");
}

TEST_CASE("clean_text: invalid UTF-8 becomes U+FFFD, one per bad byte", "[reports][escape]") {
  CHECK(clean_text("ok\xff") == "ok\ufffd");
  CHECK(clean_text("\xc3") == "\ufffd");                  // a cut-off two-byte sequence
  CHECK(clean_text("\xe2\x82") == "\ufffd\ufffd");        // a cut-off three-byte sequence
  CHECK(clean_text("\xed\xa0\x80") == "\ufffd\ufffd\ufffd");  // an encoded surrogate
  CHECK(clean_text("\xc0\xaf") == "\ufffd\ufffd");        // an overlong '/'
  CHECK(clean_text("\xef\xbf\xbe") == "\ufffd");          // U+FFFE, not allowed in XML
  const char raw[] = "<b>\xff\x00\x1b\xed\xa0\x80\"'&\u202e\xf4\x90\x80\x80";  // ... and a code point above U+10FFFF
  const std::string nasty(raw, sizeof raw - 1);
  const std::string e = escape_html(nasty);
  CHECK(valid_xml_text(e));
  CHECK_THAT(e, !contains("<"));
  CHECK_THAT(e, !contains("\""));
  CHECK(clean_text(clean_text(nasty)) == clean_text(nasty));  // idempotent
}

TEST_CASE("escape_markdown: a cell can neither break the table nor add markup or links", "[reports][escape]") {
  CHECK(escape_markdown("a|b") == "a\\|b");
  CHECK(escape_markdown("line\nbreak") == "line break");
  CHECK(escape_markdown("<img src=x>") == "&lt;img src=x&gt;");
  CHECK(escape_markdown("[link](x) **bold** `code` _i_ ~s~ #h !") == "\\[link\\](x) \\*\\*bold\\*\\* \\`code\\` \\_i\\_ \\~s\\~ \\#h \\!");
  CHECK(escape_markdown("https://evil.example") == "https\\[:\\]//evil.example");
}

TEST_CASE("truncate_middle: cuts on code points, says how much it left out", "[reports][escape]") {
  CHECK(truncate_middle("short", 10, 10) == "short");
  const std::string t = truncate_middle("\u00e9\u00e9\u00e9abcdefghij\u6f22\u6f22", 3, 2);
  CHECK(t == "\u00e9\u00e9\u00e9\n\u2026 [10 characters left out] \u2026\n\u6f22\u6f22");
  CHECK(truncate_middle("abcdef", 2, 0) == "ab\n\u2026 [4 characters left out] \u2026\n");
  CHECK(valid_xml_text(truncate_middle(std::string(100, 'x') + "\xff\xfe", 50, 1)));
}

TEST_CASE("Markup: well-formed by construction, attributes escaped", "[reports][escape]") {
  Markup m;
  m.open("p", {{"title", "a \"quoted\" <b> & 'x'"}}).text("<script>").close();
  m.empty("br");
  CHECK(m.str() == "<p title=\"a &quot;quoted&quot; &lt;b&gt; &amp; &#39;x&#39;\">&lt;script&gt;</p><br/>");
  Markup open;
  open.open("div");
  CHECK_THROWS_AS(open.str(), std::logic_error);
  Markup none;
  CHECK_THROWS_AS(none.close(), std::logic_error);
  CHECK(kvgate::reports::num(3.0) == "3");
  CHECK(kvgate::reports::num(12.26, 1) == "12.3");
  CHECK(kvgate::reports::num(-0.01, 1) == "0");
}
