// The openai/mrcr row parser, the rows API URL parser and the difflib port on arbitrary bytes: a
// row (a source) or a clean Error, and ratios that keep difflib's invariants (0..1, blocks that
// really match, in order).
#include <cstdint>
#include <cstdlib>
#include <string>

#include <nlohmann/json.hpp>

#include "datasets/common/hf_rows.h"
#include "harness/core/error.h"
#include "datasets/mrcr/mrcr_chat.h"
#include "datasets/mrcr/mrcr_grader.h"
#include "datasets/mrcr/mrcr_official.h"
#include "datasets/mrcr/sequence_matcher.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  try {
    const kvgate::mrcr::OfficialRow row =
        kvgate::mrcr::parse_official_row(nlohmann::json::parse(text), "fuzz:1", 0);
    kvgate::mrcr::merge_consecutive_user_turns(row.messages);
  } catch (const kvgate::Error&) {
  } catch (const nlohmann::json::exception&) {  // not JSON at all: the JSONL reader reports it
  }
  // A rows API URL (gen mrcr --official, gen custom --data): a source or a clean Error.
  try {
    const kvgate::HfRowsUrl u = kvgate::parse_hf_rows_url("https://h/rows?" + text);
    if (u.source.dataset.empty() || u.page_length < 0 || u.page_length > 100) std::abort();
  } catch (const kvgate::Error&) {
  }
  // The two halves as response and answer.
  const std::string a = text.substr(0, size / 2), b = text.substr(size / 2);
  const std::u32string ua = kvgate::decode_code_points(a), ub = kvgate::decode_code_points(b);
  const kvgate::SequenceMatcher sm(ua, ub);
  const double r = sm.ratio();
  if (!(r >= 0.0 && r <= 1.0)) std::abort();
  std::size_t total = 0, next_a = 0, next_b = 0;
  for (const auto& m : sm.matching_blocks()) {
    if (m.a < next_a || m.b < next_b || m.a + m.size > ua.size() || m.b + m.size > ub.size()) std::abort();
    if (ua.compare(m.a, m.size, ub, m.b, m.size) != 0) std::abort();
    next_a = m.a + m.size, next_b = m.b + m.size, total += m.size;
  }
  if (total != sm.matches()) std::abort();
  const kvgate::MrcrScore s = kvgate::mrcr_score(a, b, b.substr(0, 3));
  if (!(s.score >= 0.0 && s.score <= 1.0)) std::abort();
  return 0;
}
