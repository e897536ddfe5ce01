// `kvgate gen custom`: any JSONL benchmark (one JSON object a line) becomes a tasks file. The user
// names the fields: the input (or a --template over several fields), the target, optionally an id.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "datasets/common/hf_rows.h"
#include "harness/core/trial.h"

namespace kvgate {

struct CustomGenOptions {
  std::string name = "custom";         // the task name; ids are "<name>/<id>"
  std::string input_field{};             // the prompt (a string, or an array of chat messages); optional with a template
  std::string target_field{};            // required
  std::string id_field{};                // "" = a stable hash of the rendered input
  std::string prompt_template{};         // "" = the input field as it is
  std::string system{};                  // chat only
  bool chat = true;                    // false: completions {"prompt": ...}
  std::string grader = "exact";
  nlohmann::json grader_params = nlohmann::json::object();
  std::optional<int> max_tokens{};
  std::optional<std::size_t> limit{};    // a seeded random subset of the rows
  std::uint64_t seed = 1;
};

struct CustomRow {
  nlohmann::json value{};
  std::string where{};  // "data.jsonl:7", for messages
  std::size_t line{};   // 1-based line (or row number), recorded in the trial's meta
};

// Rows from a JSONL file (each must be an object; errors name the line).
std::vector<CustomRow> read_custom_rows(const std::string& path);

// Rows of a Hugging Face split through the rows API (cached, resumed: common/hf_rows.h), in order;
// `where` is "ORG/NAME/CONFIG/SPLIT row I" (I = the API's 0-based row_idx), `line` is I + 1.
// sha256 is of the rows as read, one canonical JSON line each: it names the data in each trial's meta.
struct CustomRows {
  std::vector<CustomRow> rows;
  std::string sha256;
};
CustomRows read_custom_hf_rows(const HfRowsSource& source, const HfRowsOptions& options);

// Trials from rows, in row order. `source` (the file or URL) and `source_sha256` go to meta.
// Errors name the row: a missing field (listing the fields the row has), a target of the wrong kind
// for the grader, a repeated id.
std::vector<Trial> make_custom_trials(const std::vector<CustomRow>& rows, const std::string& source_sha256,
                                      const CustomGenOptions& options);

}  // namespace kvgate
