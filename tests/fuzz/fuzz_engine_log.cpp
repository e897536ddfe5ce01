// Engine startup logs on arbitrary bytes: a result with the documented keys (facts, evidence,
// notes, warnings), never a crash, and the summary line always renders.
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "harness/provenance/engine_log.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  const nlohmann::json log = kvgate::provenance::parse_engine_log_text(text, "fuzz.log");
  if (!log.contains("facts") || !log["facts"].is_object() || !log["warnings"].is_array() || !log["notes"].is_array()) std::abort();
  if (log["notes"].size() > 20) std::abort();
  (void)kvgate::provenance::facts_line(log);
  (void)log.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  return 0;
}
