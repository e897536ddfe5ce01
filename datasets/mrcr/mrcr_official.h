// Official openai/mrcr rows: parsing with errors that name the row, the dataset card's length
// bins, and trials made from rows. Row fields: prompt (a JSON string holding the messages),
// answer (starts with the prefix), random_string_to_prepend, n_needles, desired_msg_index,
// total_messages, n_chars, and optionally date_added.
#pragma once
#include <array>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "harness/core/trial.h"
#include "harness/tokenizer/token_counter.h"

namespace kvgate::mrcr {

struct OfficialRow {
  std::int64_t index = 0;    // 0-based position in the source (file line order or row_idx)
  nlohmann::json messages;   // the parsed prompt: [{"role", "content"}, ...]
  std::string answer;
  std::string prefix;        // random_string_to_prepend
  std::int64_t n_needles = 0;
  std::int64_t desired_msg_index = 0;
  std::int64_t total_messages = 0;
  std::int64_t n_chars = 0;
  std::optional<std::string> date_added;
};

// Validates one row; `where` names it in errors ("mrcr.jsonl:17", "openai/mrcr row 16").
OfficialRow parse_official_row(const nlohmann::json& row, const std::string& where, std::int64_t index);

// Reads a JSONL export, one row a line; fn returns false to stop early.
void for_each_official_row(const std::string& path, const std::function<bool(OfficialRow&&)>& fn);

// The dataset card's bins: [4096, 8192], (8192, 16384], ..., (524288, 1048576] tokens of all
// message contents plus the answer.
inline constexpr std::array<std::int64_t, 9> kBinEdges = {4096,   8192,   16384,  32768,  65536,
                                                          131072, 262144, 524288, 1048576};
// The upper edge of the bin holding `tokens`, or nullopt outside [4096, 1048576].
std::optional<std::int64_t> bin_upper_edge(std::int64_t tokens);
// The card's count: tokens of every message's content plus the answer's (no template, no roles).
std::int64_t bin_tokens(const TokenCounter& counter, const nlohmann::json& messages, const std::string& answer);

struct OfficialTrialOptions {
  std::vector<std::int64_t> buckets = {};  // bin upper edges to keep (each must be one); empty: all
  int per_bucket = 0;                 // at most this many rows per bin, in source order; 0: all
  std::vector<int> needles = {};      // n_needles values to keep; empty: all
  bool merge_user_turns = false;      // see merge_consecutive_user_turns
  const TokenCounter* counter = nullptr;
  std::string origin = {};            // recorded in meta ("mrcr.jsonl", "hf:openai/mrcr/default/train")
};

struct OfficialSummary {
  std::int64_t rows = 0;           // rows read
  std::int64_t out_of_bins = 0;    // rows outside [4096, 1048576] tokens
  std::int64_t not_selected = 0;   // filtered by needles or bucket, or over --per-bucket
  std::map<std::int64_t, std::int64_t> per_bucket;  // trials made per bin upper edge
};

// Turns rows into trials: id "mrcr/<bin upper edge>/<row index, 4 digits>", bucket = the bin's
// upper edge, target = answer, grader {"name": "mrcr", "prefix": ...}.
class OfficialTrialBuilder {
 public:
  explicit OfficialTrialBuilder(OfficialTrialOptions options);
  // Adds a row (or counts it as skipped); returns false once every requested bin is full.
  bool add(const OfficialRow& row);
  std::vector<Trial> take_trials() { return std::move(trials_); }
  const OfficialSummary& summary() const { return summary_; }

 private:
  OfficialTrialOptions o_;
  std::vector<Trial> trials_;
  OfficialSummary summary_;
};

}  // namespace kvgate::mrcr
