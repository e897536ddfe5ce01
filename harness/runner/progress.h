// Progress of a run on stderr: a bar redrawn in place on a terminal (done/total, rate, ETA,
// errors, retries), plain lines every few seconds otherwise (CI logs, Slurm output files).
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
  double interval_s = 10.0;       // between plain lines
  std::size_t total = 0;          // pairs in this run (shard)
  std::size_t done_before = 0;    // already in the journal when this session started
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
  // A sliding window for the rate: (time, done) a few seconds back.
  double window_t_ = 0.0;
  std::size_t window_done_ = 0;
  double rate_ = 0.0;
};

}  // namespace kvgate::runner
