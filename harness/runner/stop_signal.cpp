#include "harness/runner/stop_signal.h"

#include <signal.h>
#include <cstddef>
#include <unistd.h>

namespace kvgate::runner {

namespace {
std::atomic<bool> g_stop{false};
std::atomic<int> g_signal{0};
constexpr const char kRunMessage[] =
    "\nkvgate: stopping (results so far are kept; re-run the same command to resume; again to quit now)\n";
std::atomic<const char*> g_message{kRunMessage};
struct sigaction g_old_int, g_old_term;

void on_signal(int sig) {
  if (g_stop.exchange(true)) _exit(128 + sig);  // the second one: now
  g_signal = sig;
  const char* msg = g_message.load();
  std::size_t n = 0;
  while (msg[n]) ++n;  // strlen is not async-signal-safe by the letter of POSIX
  (void)!::write(2, msg, n);
}
}  // namespace

StopSignals::StopSignals(const char* message) {
  g_message = message ? message : kRunMessage;
  g_stop = false;
  g_signal = 0;
  struct sigaction sa {};
  sa.sa_handler = on_signal;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGINT, &sa, &g_old_int);
  sigaction(SIGTERM, &sa, &g_old_term);
}

StopSignals::~StopSignals() {
  sigaction(SIGINT, &g_old_int, nullptr);
  sigaction(SIGTERM, &g_old_term, nullptr);
}

const std::atomic<bool>& StopSignals::flag() const { return g_stop; }
int StopSignals::signal_number() const { return g_signal.load(); }

}  // namespace kvgate::runner
