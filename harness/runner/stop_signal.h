// Ctrl-C and SIGTERM during a run: the first asks the run to stop (nothing more is sent, in-flight
// requests are cancelled and not recorded, run.json says "interrupted"), the second exits at once.
// Either way the journal holds only whole lines, so re-running resumes.
#pragma once
#include <atomic>

namespace kvgate::runner {

class StopSignals {
 public:
  // Installs the handlers. `message` (a string literal: it must outlive the handlers) is what the
  // first signal prints; nullptr: the run's message (results kept, re-run to resume).
  explicit StopSignals(const char* message = nullptr);
  ~StopSignals();  // restores the previous ones
  StopSignals(const StopSignals&) = delete;
  StopSignals& operator=(const StopSignals&) = delete;
  const std::atomic<bool>& flag() const;
  int signal_number() const;  // the first signal received, 0 if none
};

}  // namespace kvgate::runner
