// Cross-checks against Python (difflib, repr): finds an interpreter and runs a script on a file.
// A test that needs Python and finds none FAILS, saying to run scripts/setup (never a silent skip).
#pragma once
#include <string>

namespace kvtest {

// $KVGATE_PYTHON (must be executable), else .venv-tests/bin/python, else python3 on PATH; "" when none.
std::string find_python();
// Runs `python script input` and returns its stdout; throws std::runtime_error with stderr on failure.
std::string run_python(const std::string& python, const std::string& script_text, const std::string& input_path);

}  // namespace kvtest
