// An incremental parser of Server-Sent Events (the WHATWG "text/event-stream" format) as OpenAI-
// compatible servers stream them: bytes arrive in arbitrary pieces; complete events come out.
// Lines end in LF, CRLF or CR (a CR at the end of one piece and an LF at the start of the next are
// one line end); ":" lines are comments; "data:" lines of one event are joined with "\n".
#pragma once
#include <cstddef>
#include <functional>
#include <string>
#include <string_view>

namespace kvgate::runner {

struct SseEvent {
  std::string event;  // the "event:" field, "" for the default "message"
  std::string data;   // the "data:" lines joined with "\n"
};

class SseParser {
 public:
  using Handler = std::function<void(const SseEvent&)>;

  // max_event_bytes bounds one event (and one line): a server that never ends a line cannot make
  // kvgate buffer without limit.
  explicit SseParser(std::size_t max_event_bytes = 64u << 20) : max_bytes_(max_event_bytes) {}

  // Feeds the next piece of the stream; calls `on_event` for each event it completes. Returns false
  // (and stops parsing) once an event or a line exceeds the limit.
  bool feed(std::string_view bytes, const Handler& on_event);

  bool overflowed() const { return overflowed_; }
  // True when bytes of an unfinished event are pending (a stream cut in the middle of an event).
  bool has_partial_event() const { return !line_.empty() || has_data_; }
  std::size_t events() const { return events_; }

 private:
  void process_line(const Handler& on_event);

  std::size_t max_bytes_;
  std::string line_;
  std::string data_;
  std::string event_;
  bool has_data_ = false;
  bool last_was_cr_ = false;
  bool at_start_ = true;  // a UTF-8 byte order mark may open the stream
  std::size_t bom_matched_ = 0;
  bool overflowed_ = false;
  std::size_t events_ = 0;
};

}  // namespace kvgate::runner
