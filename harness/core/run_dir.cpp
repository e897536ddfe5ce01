#include "harness/core/run_dir.h"

#include <filesystem>

#include "harness/core/error.h"

namespace kvgate {

RunDir load_run_dir(const std::string& dir) {
  namespace fs = std::filesystem;
  if (!fs::is_directory(dir)) throw Error(dir + ": not a run directory (it does not exist): pass a directory made by `kvgate run`");
  if (!fs::exists(manifest_path(dir)))
    throw Error(dir + ": run.json missing: a run directory holds run.json (at least {\"label\": ...}) and results.jsonl");
  if (!fs::exists(results_path(dir))) throw Error(dir + ": results.jsonl missing: has this run started?");
  RunDir run;
  run.path = dir;
  run.manifest = read_manifest(manifest_path(dir));
  run.results = read_results(results_path(dir));
  return run;
}

}  // namespace kvgate
