// examples/ (slurm, kubernetes, ci) stay working: every YAML file parses, every shell script
// passes `bash -n`, every kvgate command line in them parses against the real command line and
// plans (run by bash, the shell that runs them, with `--dry-run` added and the scheduler's
// variables set), and the pieces that make them work are there (an Indexed Job whose shard count
// is its completions, a merge after the array, a nightly schedule that keeps the history).
#include <yaml-cpp/yaml.h>

#include <filesystem>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>

#include "tests/catch_compat.hpp"
#include "tests/test_util.h"

using kvtest::contains;
namespace fs = std::filesystem;

namespace {

const fs::path kExamples = "examples";

std::vector<fs::path> files_under(const fs::path& dir, const std::set<std::string>& extensions) {
  std::vector<fs::path> out;
  for (const auto& e : fs::recursive_directory_iterator(dir))
    if (e.is_regular_file() && extensions.count(e.path().extension().string())) out.push_back(e.path());
  std::sort(out.begin(), out.end());
  return out;
}

// The kvgate command lines of a file: lines that start with `kvgate ` (after indentation), joined
// with their backslash continuations.
std::vector<std::string> kvgate_commands(const fs::path& file) {
  std::istringstream in(kvtest::read_text(file.string()));
  std::vector<std::string> out;
  std::string line, current;
  bool open = false;
  while (std::getline(in, line)) {
    const std::size_t start = line.find_first_not_of(" \t");
    const std::string body = start == std::string::npos ? "" : line.substr(start);
    if (!open && body.rfind("kvgate ", 0) != 0) continue;
    current += body;
    open = !body.empty() && body.back() == '\\';
    if (open) {
      current.pop_back();
      continue;
    }
    out.push_back(current);
    current.clear();
  }
  return out;
}

struct Shell {
  int exit_code = -1;
  std::string out;
};

// Runs a bash script with stdout and stderr captured.
Shell bash(const std::string& script, const kvtest::TempDir& dir) {
  kvtest::write_text(dir.file("script.sh"), script);
  const std::string cmd = "bash " + dir.file("script.sh") + " > " + dir.file("out") + " 2>&1";
  const int rc = std::system(cmd.c_str());
  return {WIFEXITED(rc) ? WEXITSTATUS(rc) : -1, kvtest::read_text(dir.file("out"))};
}

// What the examples' command lines read from their environment, as the job would set it.
const char* kEnvironment = R"(set -euo pipefail
export MODEL=Qwen/Qwen3-8B MAX_MODEL_LEN=131072 GATE_DIR=/scratch/kvgate/gate-1 LOGS=/scratch/kvgate/gate-1/logs SUITE=ship
export BASELINE_URL=http://127.0.0.1:8000/v1 CANDIDATE_URL=http://127.0.0.1:8001/v1
export HISTORY=history/history.jsonl OUT=nightly-gate
export SLURM_ARRAY_TASK_ID=0 SLURM_ARRAY_TASK_MIN=0 SLURM_ARRAY_TASK_MAX=3 SLURM_ARRAY_TASK_COUNT=4
)";

}  // namespace

TEST_CASE("examples: the three folders are there with their files", "[examples][e2e]") {
  for (const char* f : {"slurm/gate-array.sbatch", "slurm/merge.sbatch", "slurm/submit.sh", "slurm/README.md", "kubernetes/engines.yaml",
                        "kubernetes/gate-shards-job.yaml", "kubernetes/gate-merge-job.yaml", "kubernetes/README.md",
                        "ci/nightly-gate.yml", "ci/README.md"})
    CHECK(fs::is_regular_file(kExamples / f));
}

TEST_CASE("examples: every YAML file parses", "[examples][e2e]") {
  const auto files = files_under(kExamples, {".yaml", ".yml"});
  REQUIRE(files.size() >= 4);
  for (const fs::path& f : files) {
    INFO(f.string());
    std::vector<YAML::Node> docs;
    CHECK_NOTHROW(docs = YAML::LoadAllFromFile(f.string()));
    CHECK(!docs.empty());
    for (const YAML::Node& d : docs) CHECK(d.IsMap());
  }
}

TEST_CASE("examples: every shell script passes bash -n", "[examples][e2e]") {
  kvtest::TempDir dir;
  const auto files = files_under(kExamples, {".sh", ".sbatch"});
  REQUIRE(files.size() >= 3);
  for (const fs::path& f : files) {
    INFO(f.string());
    const Shell r = bash("bash -n " + f.string() + "\n", dir);
    INFO(r.out);
    CHECK(r.exit_code == 0);
  }
}

TEST_CASE("examples: every kvgate command line parses and plans (--dry-run)", "[examples][e2e]") {
  kvtest::TempDir dir;
  std::size_t n = 0;
  std::set<std::string> kinds;
  for (const fs::path& f : files_under(kExamples, {".sh", ".sbatch", ".yaml", ".yml", ".md"})) {
    for (const std::string& cmd : kvgate_commands(f)) {
      INFO(f.string() + ": " + cmd);
      REQUIRE(cmd.rfind("kvgate gate ", 0) == 0);  // the examples run the gate only: every line is checked here
      ++n;
      kinds.insert(cmd.find("--merge") != std::string::npos ? "merge" : cmd.find("--shard") != std::string::npos ? "shard" : "whole");
      // Kubernetes' variables for the Indexed Job's lines, Slurm's for the rest.
      const std::string k8s = f.string().find("kubernetes") != std::string::npos
                                  ? "unset SLURM_ARRAY_TASK_ID; export JOB_COMPLETION_INDEX=1 KVGATE_SHARD_COUNT=4\n"
                                  : "";
      const Shell r = bash(std::string(kEnvironment) + k8s + "kvgate() { \"" + KVGATE_BIN + "\" \"$@\" --dry-run; }\n" + cmd + "\n", dir);
      INFO(r.out);
      CHECK(r.exit_code == 0);
      if (cmd.find("--merge") != std::string::npos) CHECK_THAT(r.out, contains("merge: "));
      else CHECK_THAT(r.out, contains("nothing is sent"));
      if (cmd.find("--shard auto") != std::string::npos) CHECK_THAT(r.out, contains(k8s.empty() ? "* shard 0/4" : "* shard 1/4"));
    }
  }
  CHECK(n >= 5);
  CHECK(kinds == std::set<std::string>{"merge", "shard", "whole"});
}

TEST_CASE("examples: the Indexed Job's shard count is its completions; the merge waits for the array", "[examples][e2e]") {
  const auto docs = YAML::LoadAllFromFile((kExamples / "kubernetes/gate-shards-job.yaml").string());
  bool found = false;
  for (const YAML::Node& d : docs) {
    if (d["kind"].as<std::string>() != "Job") continue;
    found = true;
    const YAML::Node spec = d["spec"];
    CHECK(spec["completionMode"].as<std::string>() == "Indexed");
    const int completions = spec["completions"].as<int>();
    std::string count;
    for (const YAML::Node& c : spec["template"]["spec"]["containers"])
      for (const YAML::Node& e : c["env"])
        if (e["name"].as<std::string>() == "KVGATE_SHARD_COUNT") count = e["value"].as<std::string>();
    CHECK(count == std::to_string(completions));
  }
  CHECK(found);
  const std::string submit = kvtest::read_text((kExamples / "slurm/submit.sh").string());
  CHECK_THAT(submit, contains("--dependency=afterany:"));
  const std::string array = kvtest::read_text((kExamples / "slurm/gate-array.sbatch").string());
  CHECK_THAT(array, contains("/health"));
  CHECK_THAT(array, contains("--shard auto"));

  const YAML::Node wf = YAML::LoadFile((kExamples / "ci/nightly-gate.yml").string());
  CHECK(wf["on"]["schedule"][0]["cron"].IsScalar());
  const std::string text = kvtest::read_text((kExamples / "ci/nightly-gate.yml").string());
  CHECK_THAT(text, contains("--suite nightly"));
  CHECK_THAT(text, contains("--history"));
  CHECK_THAT(text, contains("actions/upload-artifact"));
}
