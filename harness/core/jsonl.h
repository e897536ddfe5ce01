// JSON Lines files: strict reading with line numbers, and one-line serialization.
#pragma once
#include <cstddef>
#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace kvgate {

struct JsonlReadOptions {
  // A last line with no newline that is not valid JSON is the mark of a write cut short (a killed
  // run): with this set it is skipped and reported in `torn_tail`; otherwise it is an error.
  bool allow_torn_tail = false;
};

struct JsonlReadStats {
  std::size_t lines = 0;          // physical lines seen
  std::size_t records = 0;        // JSON values passed on
  std::size_t torn_tail_bytes = 0;  // bytes of a discarded torn last line (0 if none)
  std::size_t valid_bytes = 0;      // length of the file up to the end of the last good line
};

// Calls `fn(value, line_number)` for each non-blank line, in order (line numbers from 1).
// Errors name the file and line: `tasks.jsonl:17: not valid JSON (...)`.
JsonlReadStats for_each_jsonl(const std::string& path,
                              const std::function<void(nlohmann::json&& value, std::size_t line)>& fn,
                              const JsonlReadOptions& options = {});

// Reads a whole file's records (for small files and tests).
std::vector<nlohmann::json> read_jsonl(const std::string& path, const JsonlReadOptions& options = {});

// One compact line with a trailing '\n'. Invalid UTF-8 in strings (a model can emit a cut-off
// multi-byte character) is replaced by U+FFFD rather than failing the write.
std::string to_jsonl_line(const nlohmann::json& value);

// Reads a whole file; throws an Error naming the path when it cannot.
std::string read_file(const std::string& path);

}  // namespace kvgate
