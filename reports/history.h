// The nightly history: one JSONL row per comparison of a candidate with its baseline (a compare
// --json file holds one per candidate), appended by `kvgate history add` and drawn over time by
// `kvgate history report`. Schema kvgate-history/1, documented in docs/history-jsonl.md.
#pragma once
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace kvgate::reports {

inline constexpr const char* kHistorySchema = "kvgate-history/1";

struct HistoryTask {
  std::string task{}, verdict{}, metric{};
  double reference_metric = 0.0, candidate_metric = 0.0;
  std::optional<double> ratio{}, lcb{}, ucb{};  // empty: undefined (the reference never scores) or unbounded (ucb)
  std::size_t trials = 0, lost = 0, gained = 0;
  double mcnemar_p = 1.0;
  std::vector<std::int64_t> regressed_buckets{};  // Holm-flagged
  bool regression() const { return verdict == "FAIL" || !regressed_buckets.empty(); }
};

// What the candidate gained that night, from the compare JSON's pairs[].gains: ratios
// candidate / baseline (latencies below 1 are faster), two-sided intervals; empty when not measured
// (and in rows written before gains were recorded).
struct HistoryGains {
  std::optional<double> kv_capacity_ratio{};
  bool kv_capacity_estimate = false;
  std::optional<double> itl_ratio{}, itl_lo{}, itl_hi{};
  std::optional<double> ttft_ratio{}, ttft_lo{}, ttft_hi{};
  std::optional<double> e2e_ratio{}, e2e_lo{}, e2e_hi{};
  std::optional<double> tokens_per_s_ratio{};
  bool any() const { return kv_capacity_ratio || itl_ratio || ttft_ratio || e2e_ratio || tokens_per_s_ratio; }
};

struct HistoryRow {
  std::string date{};         // the night, YYYY-MM-DD (the candidate's start date, or --date)
  std::string recorded_at{};  // when it was added (RFC 3339)
  std::string source{};       // the compare JSON's path as given, and its sha256 (duplicates are skipped)
  std::string source_sha256{};
  std::size_t pair = 0;       // index of the pair in the compare JSON
  std::string verdict{};
  std::string baseline{}, candidate{};  // labels
  std::string engine{}, engine_version{}, baseline_engine_version{};
  std::string model{}, kv_format{}, baseline_kv_format{};
  double margin = 0.95, alpha = 0.05;
  std::string kvgate_version{};
  std::vector<HistoryTask> tasks{};
  HistoryGains gains{};
  std::vector<std::string> pinning_differences{};  // "attention backend FLASH_ATTN -> FLASHINFER"
  // The series a row belongs to: model, KV formats (engine versions vary along it).
  std::string series() const;
};

nlohmann::json to_json(const HistoryRow& r);
HistoryRow history_row_from_json(const nlohmann::json& j, const std::string& where);

struct HistoryAddOptions {
  std::string date{};         // override the night (YYYY-MM-DD)
  std::string recorded_at{};  // empty: now
};

// The rows of a compare --json file (one per gating pair). Errors name the file and the field.
std::vector<HistoryRow> rows_from_compare_json(const nlohmann::json& result, const std::string& source, const std::string& sha256,
                                               const HistoryAddOptions& o);

struct AddOutcome {
  std::size_t added = 0, already_present = 0;
};

// Appends the rows of `result_path` to `db` (created when missing): the whole file is rewritten
// atomically under a lock (db + ".lock"), so a row is never half-written or lost to a concurrent add;
// rows already present (same source sha256 and pair) are skipped.
AddOutcome add_to_history(const std::string& db, const std::string& result_path, const HistoryAddOptions& o);

// Every row, in file order; an Error names the line of a malformed row.
std::vector<HistoryRow> read_history(const std::string& db);

// The history page: per series and task, the metric and the ratio over the nights, points coloured
// by engine version, the night each regression entered marked.
std::string render_history_html(const std::vector<HistoryRow>& rows, const std::string& db, const std::string& generated_at);

}  // namespace kvgate::reports
