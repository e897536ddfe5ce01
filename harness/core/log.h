// Messages to stderr, prefixed "kvgate: ". Never pass a secret (API key) to these.
#pragma once
#include <string_view>

namespace kvgate {

enum class LogLevel { quiet = 0, normal = 1, verbose = 2 };
void set_log_level(LogLevel level);
LogLevel log_level();

void log_info(std::string_view message);     // shown unless --quiet
void log_verbose(std::string_view message);  // shown with --verbose
void log_warn(std::string_view message);     // "kvgate: warning: ..." always shown

}  // namespace kvgate
