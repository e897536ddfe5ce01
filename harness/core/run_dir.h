// A run directory: run.json + results.jsonl (product.md "Files").
#pragma once
#include <string>

#include "harness/core/manifest.h"
#include "harness/core/result.h"

namespace kvgate {

struct RunDir {
  std::string path;
  RunManifest manifest;
  ResultsFile results;
};

inline std::string manifest_path(const std::string& dir) { return dir + "/run.json"; }
inline std::string results_path(const std::string& dir) { return dir + "/results.jsonl"; }

// Reads both files; errors name the directory and what is missing.
RunDir load_run_dir(const std::string& dir);

}  // namespace kvgate
