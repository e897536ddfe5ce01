// Progress of a run on stderr: a bar redrawn in place on a terminal (done/total, rate, ETA,
// errors, retries), plain lines every 10-30 s otherwise (CI logs, Slurm output files), and a last
// line with the elapsed time.
#pragma once
#include <condition_variable>
#include <cstddef>
#include <mutex>
#include <string>
#include <thread>

#include "harness/runner/runner.h"

namespace kvgate::runner {

enum class ProgressMode { bar, lines, none };
// "auto" -> bar when stderr is a terminal, lines otherwise; "bar", "lines", "none". Error otherwise.
ProgressMode parse_progress_mode(const std::string& s, bool stderr_is_tty);

struct ProgressOptions {
  ProgressMode mode = ProgressMode::lines;
  double interval_s = 10.0;       // the least time between plain lines
  std::size_t total = 0;          // pairs in this run (shard)
  std::size_t done_before = 0;    // already in the journal when this session started
};

// When a plain progress line is due and what it says; it owns no thread and no clock, so tests
// drive it with their own times. A line comes at most every `min_interval_s`, at the latest every
// `max_interval_s`, and in between when another `every_percent` of the total is done. Its rate
// and ETA are the whole session's average (done / elapsed), not the last interval's, so the ETA
// does not swing with each burst of answers.
class ProgressLines {
 public:
  ProgressLines(double start_s, std::size_t total, std::size_t done_before, double min_interval_s = 10.0,
                double max_interval_s = 30.0, double every_percent = 10.0);
  // The line due at time `now_s` (seconds, same clock as start_s), or "" when none is due.
  std::string poll(double now_s, std::size_t session_done, std::size_t errors, std::size_t retries, std::size_t in_flight);
  // The last line: "done 48/48 100.0% | 0.52/s | errors 0 (0.00%) | retries 0 | elapsed 1m32s".
  std::string final_line(double now_s, std::size_t session_done, std::size_t errors, std::size_t retries) const;
  // The session's average rate (pairs/s) at `now_s`.
  double rate(double now_s, std::size_t session_done) const;

 private:
  double start_ = 0.0, last_ = 0.0, min_ = 10.0, max_ = 30.0, every_ = 10.0;
  std::size_t total_ = 0, before_ = 0, done_at_last_ = 0;
};

// "1h02m", "3m05s", "42s"
std::string format_duration(double seconds);
// One status text: "1234/2000 61.7% | 512.3/s | ETA 1m30s | errors 3 (0.24%) | retries 12 | in flight 64"
std::string progress_text(std::size_t done, std::size_t total, double rate, std::size_t errors, std::size_t retries,
                          std::size_t in_flight);

class ProgressReporter {
 public:
  ProgressReporter(const ProgressOptions& options, const RunCounters& counters);
  ~ProgressReporter();  // stop()
  // Draws the final state and ends the bar's line; idempotent.
  void stop();

 private:
  void loop();
  void draw(bool final);

  ProgressOptions o_;
  const RunCounters& c_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool stop_ = false;
  std::thread thread_;
  double started_ = 0.0;
  ProgressLines lines_;
};

}  // namespace kvgate::runner
