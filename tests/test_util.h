// Helpers for tests: temporary directories, files, and running the kvgate binary.
#pragma once
#include <string>
#include <vector>

namespace kvtest {

// A fresh directory under $TMPDIR, removed with everything in it at scope exit.
class TempDir {
 public:
  TempDir();
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::string& path() const { return path_; }
  std::string file(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

void write_text(const std::string& path, const std::string& text);
std::string read_text(const std::string& path);

struct CommandResult {
  int exit_code = -1;
  std::string out;  // stdout
  std::string err;  // stderr
};
// Runs the built kvgate with `args` (no shell), capturing stdout and stderr.
CommandResult run_kvgate(const std::vector<std::string>& args);
// The repository's test data folder (tests/data), relative to the repository root where ctest runs the tests.
std::string data_dir();
// Every regular file (symlinks left out) below root/folder for each folder, in directory order;
// .git and __pycache__ folders are skipped, and so are folders that do not exist.
std::vector<std::string> files_below(const std::string& root, const std::vector<std::string>& folders);

}  // namespace kvtest
