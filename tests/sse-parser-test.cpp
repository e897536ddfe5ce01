// runner/sse_parser.h: Server-Sent Events as OpenAI-compatible servers stream them.
#include <string>
#include <vector>

#include "tests/catch_compat.hpp"
#include "harness/runner/sse_parser.h"

using kvgate::runner::SseEvent;
using kvgate::runner::SseParser;

namespace {
std::vector<SseEvent> parse_in_pieces(const std::string& stream, std::size_t piece) {
  SseParser p;
  std::vector<SseEvent> out;
  for (std::size_t i = 0; i < stream.size(); i += piece)
    REQUIRE(p.feed(std::string_view(stream).substr(i, piece), [&](const SseEvent& e) { out.push_back(e); }));
  return out;
}
}  // namespace

TEST_CASE("sse: data events, [DONE], comments and field spacing", "[sse]") {
  const std::string s = ": ping\n\ndata: {\"a\":1}\n\ndata:{\"b\":2}\n\nevent: error\ndata: oops\n\ndata: [DONE]\n\n";
  auto ev = parse_in_pieces(s, s.size());
  REQUIRE(ev.size() == 4);
  CHECK(ev[0].data == "{\"a\":1}");
  CHECK(ev[0].event.empty());
  CHECK(ev[1].data == "{\"b\":2}");  // no space after the colon is fine too
  CHECK(ev[2].event == "error");
  CHECK(ev[2].data == "oops");
  CHECK(ev[3].data == "[DONE]");
}

TEST_CASE("sse: every split of the stream gives the same events (CRLF, CR, LF line ends)", "[sse]") {
  const std::string s = "\xEF\xBB\xBF" "data: one\r\n\r\ndata: two\r\ndata: lines\r\rid: 7\nretry: 10\ndata: three\n\n";
  const auto whole = parse_in_pieces(s, s.size());
  REQUIRE(whole.size() == 3);
  CHECK(whole[0].data == "one");
  CHECK(whole[1].data == "two\nlines");
  CHECK(whole[2].data == "three");
  for (std::size_t piece = 1; piece < s.size(); ++piece) {
    INFO("piece size " << piece);
    const auto ev = parse_in_pieces(s, piece);
    REQUIRE(ev.size() == whole.size());
    for (std::size_t i = 0; i < ev.size(); ++i) CHECK(ev[i].data == whole[i].data);
  }
}

TEST_CASE("sse: an event without its blank line is not dispatched, and is reported as partial", "[sse]") {
  SseParser p;
  std::vector<SseEvent> out;
  p.feed("data: complete\n\ndata: {\"cut\":", [&](const SseEvent& e) { out.push_back(e); });
  CHECK(out.size() == 1);
  CHECK(p.has_partial_event());
  CHECK(p.events() == 1);
}

TEST_CASE("sse: an empty data line dispatches an empty event; a blank line alone dispatches nothing", "[sse]") {
  auto ev = parse_in_pieces("\n\n\ndata:\n\n", 100);
  REQUIRE(ev.size() == 1);
  CHECK(ev[0].data.empty());
}

TEST_CASE("sse: a line or event past the limit stops parsing instead of buffering without bound", "[sse]") {
  SseParser p(64);
  std::size_t n = 0;
  CHECK_FALSE(p.feed(std::string(100, 'x'), [&](const SseEvent&) { ++n; }));
  CHECK(p.overflowed());
  SseParser q(64);
  bool ok = true;
  for (int i = 0; i < 20 && ok; ++i) ok = q.feed("data: 0123456789\n", [&](const SseEvent&) { ++n; });
  CHECK_FALSE(ok);
  CHECK(n == 0);
}
