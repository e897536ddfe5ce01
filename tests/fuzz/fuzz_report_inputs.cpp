// The reports' inputs on arbitrary bytes: the escaping functions keep their promises (no markup,
// valid XML text, no autolink), and the history readers (a history line, a compare --json file)
// give a row or a clean Error, never a crash or another exception.
#include <cstdint>
#include <cstdlib>
#include <string>

#include <nlohmann/json.hpp>

#include "harness/core/error.h"
#include "reports/history.h"
#include "reports/html_escape.h"

namespace {

// Valid UTF-8 holding no character XML 1.0 forbids.
bool valid_xml_text(const std::string& s) {
  for (std::size_t i = 0; i < s.size();) {
    const unsigned char c = static_cast<unsigned char>(s[i]);
    const int n = c < 0x80 ? 1 : (c >> 5) == 6 ? 2 : (c >> 4) == 14 ? 3 : (c >> 3) == 30 ? 4 : 0;
    if (n == 0 || i + n > s.size()) return false;
    unsigned cp = n == 1 ? c : n == 2 ? c & 0x1F : n == 3 ? c & 0x0F : c & 0x07;
    for (int k = 1; k < n; ++k) {
      if ((static_cast<unsigned char>(s[i + k]) >> 6) != 2) return false;
      cp = (cp << 6) | (static_cast<unsigned char>(s[i + k]) & 0x3F);
    }
    if ((cp < 0x20 && cp != '\t' && cp != '\n') || (cp >= 0xD800 && cp <= 0xDFFF) || cp == 0xFFFE || cp == 0xFFFF || cp > 0x10FFFF)
      return false;
    i += n;
  }
  return true;
}

void require(bool ok) {
  if (!ok) std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace kvgate::reports;
  const std::string in(reinterpret_cast<const char*>(data), size);
  const std::string html = escape_html(in);
  require(valid_xml_text(html));
  require(html.find_first_of("<>\"'") == std::string::npos);
  require(html.find("://") == std::string::npos);
  const std::string md = escape_markdown(in);
  require(valid_xml_text(md));
  require(md.find('\n') == std::string::npos && md.find('<') == std::string::npos && md.find("://") == std::string::npos);
  for (std::size_t p = md.find('|'); p != std::string::npos; p = md.find('|', p + 1)) require(p > 0 && md[p - 1] == '\\');
  require(valid_xml_text(truncate_middle(in, size % 17, size % 5)));
  require(clean_text(clean_text(in)) == clean_text(in));

  const nlohmann::json j = nlohmann::json::parse(in, nullptr, false);
  if (j.is_discarded()) return 0;
  try {
    history_row_from_json(j, "fuzz:1");
  } catch (const kvgate::Error&) {
  }
  try {
    rows_from_compare_json(j, "fuzz.json", "sha", {.date = "2026-11-29", .recorded_at = "2026-11-29T00:00:00Z"});
  } catch (const kvgate::Error&) {
  }
  return 0;
}
