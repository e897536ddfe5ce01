// kvgate validate PATH...: checks tasks files and run directories and summarizes them.
#include <filesystem>
#include <iostream>
#include <map>
#include <memory>

#include "harness/cli/cli_common.h"
#include "harness/core/run_dir.h"
#include "harness/core/trial.h"

namespace kvgate::cli {

namespace {

std::string counts_line(const std::map<std::string, std::size_t>& counts) {
  std::string s;
  for (const auto& [name, n] : counts) s += (s.empty() ? "" : ", ") + name + " " + std::to_string(n);
  return s;
}

void describe_tasks(const std::string& path) {
  TasksFile f = load_tasks(path);
  std::map<std::string, std::size_t> tasks;
  std::map<std::int64_t, std::size_t> buckets;
  for (const Trial& t : f.trials) {
    ++tasks[t.task];
    ++buckets[t.bucket];
  }
  std::string bucket_list;
  for (const auto& [b, n] : buckets) bucket_list += (bucket_list.empty() ? "" : ", ") + std::to_string(b);
  std::cout << path << ": tasks file, " << f.trials.size() << " trials (" << counts_line(tasks) << "), buckets "
            << bucket_list << ", sha256 " << f.sha256 << "\n";
}

void describe_run(const std::string& dir) {
  RunDir run = load_run_dir(dir);
  std::size_t errors = 0, passed = 0;
  std::map<std::string, std::size_t> tasks;
  for (const ResultRecord& r : run.results.records) {
    errors += r.error.has_value();
    passed += r.passed;
    ++tasks[r.task];
  }
  std::cout << dir << ": run \"" << run.manifest.label << "\", " << run.results.records.size() << " results ("
            << counts_line(tasks) << "), " << passed << " passed, " << errors << " errors";
  if (run.results.torn_tail_bytes) std::cout << ", a torn last line of " << run.results.torn_tail_bytes << " bytes (an interrupted run)";
  std::cout << "\n";
}

}  // namespace

void register_validate(CLI::App& app, Commands& commands) {
  auto paths = std::make_shared<std::vector<std::string>>();
  CLI::App* sub = app.add_subcommand("validate", "Check tasks files and run directories and summarize them (exit 2 on the first bad one)");
  sub->add_option("paths", *paths, "tasks.jsonl files and RUN_DIRs")->required();
  commands.add(sub, [paths] {
    for (const std::string& p : *paths) {
      if (std::filesystem::is_directory(p))
        describe_run(p);
      else
        describe_tasks(p);
    }
    return 0;
  });
}

}  // namespace kvgate::cli
