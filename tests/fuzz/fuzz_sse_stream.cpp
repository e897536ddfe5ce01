// The SSE parser and the stream accumulator on arbitrary bytes, fed in arbitrary pieces (the
// first byte picks the piece size and the API): an answer or a clean error, never a crash.
#include <cstdint>
#include <string_view>

#include "harness/core/backend.h"
#include "harness/runner/openai_protocol.h"
#include "harness/runner/sse_parser.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace kvgate::runner;
  if (size == 0) return 0;
  const std::size_t piece = 1 + (data[0] & 0x3f);
  const Api api = (data[0] & 0x40) ? Api::completions : Api::chat;
  const std::string_view bytes(reinterpret_cast<const char*>(data + 1), size - 1);
  SseParser parser(1 << 16);
  StreamAccumulator acc(api);
  double t = 0;
  for (std::size_t i = 0; i < bytes.size(); i += piece)
    if (!parser.feed(bytes.substr(i, piece), [&](const SseEvent& e) { acc.on_event(e, t += 1); })) break;
  kvgate::Response r;
  acc.finish(r);
  // Whatever came out must be printable as a result line.
  if (!r.error) (void)r.tool_calls.dump();
  return 0;
}
