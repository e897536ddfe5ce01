#include "tests/python_check.h"

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <stdexcept>

#include "tests/test_util.h"

namespace kvtest {

std::string find_python() {
  if (const char* p = std::getenv("KVGATE_PYTHON"); p && *p) return ::access(p, X_OK) == 0 ? p : "";  // named: no fallback
  if (std::filesystem::exists(".venv-tests/bin/python")) return ".venv-tests/bin/python";
  if (std::system("command -v python3 >/dev/null 2>&1") == 0) return "python3";
  return "";
}

std::string run_python(const std::string& python, const std::string& script_text, const std::string& input_path) {
  TempDir dir;
  write_text(dir.file("check.py"), script_text);
  const std::string cmd = "'" + python + "' '" + dir.file("check.py") + "' '" + input_path + "' > '" + dir.file("out") +
                          "' 2> '" + dir.file("err") + "'";
  if (std::system(cmd.c_str()) != 0) throw std::runtime_error("python failed: " + read_text(dir.file("err")));
  return read_text(dir.file("out"));
}

}  // namespace kvtest
