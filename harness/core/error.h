// kvgate's error type: every error names the input and the fix, and carries the exit code.
#pragma once
#include <stdexcept>
#include <string>

namespace kvgate {

// Exit codes shared by every command (product.md: compare uses 0 PASS, 1 FAIL, 3 INCONCLUSIVE, 2 bad input).
enum ExitCode : int {
  kExitOk = 0,
  kExitFail = 1,
  kExitUsage = 2,  // bad input or usage
  kExitInconclusive = 3,
  kExitInternal = 4,  // a bug in kvgate: please report
};

class Error : public std::runtime_error {
 public:
  explicit Error(const std::string& message, int exit_code = kExitUsage)
      : std::runtime_error(message), exit_code_(exit_code) {}
  int exit_code() const { return exit_code_; }

 private:
  int exit_code_;
};

}  // namespace kvgate
