#include "harness/core/log.h"

#include <atomic>
#include <iostream>
#include <mutex>

namespace kvgate {

namespace {
std::atomic<LogLevel> g_level{LogLevel::normal};
std::mutex g_mu;
void emit(std::string_view prefix, std::string_view message) {
  std::lock_guard<std::mutex> lock(g_mu);
  std::cerr << prefix << message << '\n' << std::flush;
}
}  // namespace

void set_log_level(LogLevel level) { g_level = level; }
LogLevel log_level() { return g_level; }
void log_info(std::string_view m) {
  if (g_level >= LogLevel::normal) emit("kvgate: ", m);
}
void log_verbose(std::string_view m) {
  if (g_level >= LogLevel::verbose) emit("kvgate: ", m);
}
void log_warn(std::string_view m) { emit("kvgate: warning: ", m); }

}  // namespace kvgate
