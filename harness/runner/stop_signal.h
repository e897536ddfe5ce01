// Ctrl-C and SIGTERM during a run: the first asks the run to stop (nothing more is sent, in-flight
// requests are cancelled and not recorded, run.json says "interrupted"), the second exits at once.
// Either way the journal holds only whole lines, so re-running resumes.
#pragma once
#include <atomic>

namespace kvgate::runner {

class StopSignals {
 public:
  StopSignals();   // installs the handlers
  ~StopSignals();  // restores the previous ones
  StopSignals(const StopSignals&) = delete;
  StopSignals& operator=(const StopSignals&) = delete;
  const std::atomic<bool>& flag() const;
  int signal_number() const;  // the first signal received, 0 if none
};

}  // namespace kvgate::runner
