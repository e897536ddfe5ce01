// One line of a run's results.jsonl: the outcome of one (trial, repeat) (product.md "Files").
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace kvgate {

struct ResultRecord {
  // Required: the fields `compare` needs.
  std::string id;
  std::string task;
  std::int64_t bucket = 0;
  int repeat = 0;
  double score = 0.0;  // 0..1
  bool passed = false;
  std::optional<std::string> error;  // set: the trial is an error, never a silent wrong answer

  // Details, optional in a file.
  std::string response;
  std::string reasoning;      // reasoning_content / thinking, kept apart from the answer
  std::string finish_reason;
  std::optional<std::int64_t> prompt_tokens;
  std::optional<std::int64_t> completion_tokens;
  std::optional<double> latency_ms;
  std::optional<double> ttft_ms;
  nlohmann::json grade = nlohmann::json::object();  // {"value","extracted","explanation","details"}
  // Any other fields (task details, timings); kept through a read/write round trip.
  nlohmann::json extra = nlohmann::json::object();
};

nlohmann::json to_json(const ResultRecord& r);
// Validates the required fields; errors name `where` (e.g. "run/results.jsonl:4").
ResultRecord result_from_json(const nlohmann::json& j, const std::string& where);

struct ResultsFile {
  std::vector<ResultRecord> records;
  std::size_t torn_tail_bytes = 0;  // a cut-short last line that was skipped (a killed run)
};

// Reads results.jsonl; a torn last line is skipped (and counted), any other bad line is an Error.
ResultsFile read_results(const std::string& path);

}  // namespace kvgate
