// The response-body parser and the error-message reader on arbitrary bytes: an answer or a clean
// error, never a crash, and whatever is kept prints.
#include <cstdint>
#include <string_view>

#include "harness/core/backend.h"
#include "harness/runner/openai_protocol.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace kvgate::runner;
  const std::string_view body(reinterpret_cast<const char*>(data), size);
  for (Api api : {Api::chat, Api::completions}) {
    kvgate::Response r;
    parse_response_body(body, api, r);
    if (!r.error) {
      (void)r.tool_calls.dump();
      (void)r.details.dump();
    }
  }
  (void)server_error_message(body);
  return 0;
}
