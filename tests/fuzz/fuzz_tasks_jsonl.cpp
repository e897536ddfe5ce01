// The tasks and results JSONL readers on arbitrary bytes: a clean Error or a record, never a crash.
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <string>

#include "harness/core/error.h"
#include "harness/core/result.h"
#include "harness/core/trial.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const std::string path = "/tmp/kvgate-fuzz-tasks-" + std::to_string(::getpid()) + ".jsonl";
  if (FILE* f = std::fopen(path.c_str(), "wb")) {
    std::fwrite(data, 1, size, f);
    std::fclose(f);
  }
  try {
    kvgate::load_tasks(path);
  } catch (const kvgate::Error&) {
  }
  try {
    kvgate::read_results(path);
  } catch (const kvgate::Error&) {
  }
  return 0;
}
