// The results journal: one JSON line per (trial, repeat), appended and flushed as each finishes.
// A line is written whole with one write(2) on an O_APPEND descriptor, so a killed process leaves
// at most one torn last line; reopening detects it, discards it with a warning, and goes on.
#pragma once
#include <cstddef>
#include <mutex>
#include <string>

#include "harness/core/result.h"

namespace kvgate {

class ResultsWriter {
 public:
  // Opens (creating if needed) `path` for appending and repairs a torn last line.
  // fsync_each: also fsync after every line (survives power loss, not only a killed process).
  explicit ResultsWriter(const std::string& path, bool fsync_each = false);
  ~ResultsWriter();
  ResultsWriter(const ResultsWriter&) = delete;
  ResultsWriter& operator=(const ResultsWriter&) = delete;

  void append(const ResultRecord& record);  // thread-safe
  void append_json(const nlohmann::json& line);  // thread-safe; for callers with their own records
  std::size_t discarded_bytes() const { return discarded_bytes_; }  // of a torn last line at open
  const std::string& path() const { return path_; }

 private:
  std::string path_;
  int fd_ = -1;
  bool fsync_each_;
  std::size_t discarded_bytes_ = 0;
  std::mutex mu_;
};

// Truncates a torn (newline-less, unparsable) last line of a JSONL file; a complete JSON value
// missing only its newline gets the newline. Returns the bytes discarded. No file: returns 0.
std::size_t repair_jsonl_tail(const std::string& path);

}  // namespace kvgate
