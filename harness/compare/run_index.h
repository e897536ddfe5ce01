// A run directory indexed for pairing: its unique (id, repeat) keys sorted, duplicates set aside
// (the first line wins, the rest are listed), per-task result and error counts.
#pragma once
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "harness/core/run_dir.h"

namespace kvgate::compare {

struct IndexedRun {
  struct Key {
    std::string_view id;  // points into run->results.records
    int repeat = 0;
    std::uint32_t record = 0;
  };
  struct TaskCount {
    std::size_t results = 0, errors = 0;
  };
  std::shared_ptr<const RunDir> run;
  std::vector<Key> keys;                    // unique, sorted by (id, repeat)
  std::vector<std::uint32_t> duplicates;    // records repeating an earlier line's (id, repeat)
  std::map<std::string, TaskCount> tasks;   // over unique keys

  const ResultRecord& record(std::uint32_t i) const { return run->results.records[i]; }
};

// Throws kvgate::Error (exit 2) for an empty run, or a trial id whose task or bucket differs
// between its lines (the run mixes tasks files).
IndexedRun index_run(std::shared_ptr<const RunDir> run);

}  // namespace kvgate::compare
