// `kvgate gate --ladder FORMAT`: seed 000's protocol step 6 as one command, on the reference
// decoder. Rungs, each a candidate run of the same gate directory against the bf16 baseline:
//   1. FORMAT at its defaults (fp8: scale 1.0, uncalibrated);
//   2. if that does not PASS and the format takes scales: FORMAT+calibrated, with scales from
//      calibration text (the suite's own kind of prompts at another seed, or --calibration-text)
//      -> DIR/ladder/scales.json;
//   3. if that does not PASS: the most sensitive layers kept in bf16, ranked by per-layer KLD
//      (DIR/ladder/per_layer.json), 1, 2, 4, ... layers up to a limit, on the best settings so far;
//   4. else: stay on bf16.
// The first rung that PASSes is the recommendation. Every rung resumes (its runs, the scales, the
// ranking are kept in DIR), so the same command continues a stopped ladder.
#pragma once
#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "harness/gate/gate.h"
#include "reports/report_section.h"

namespace kvgate::gate {

struct LadderOptions {
  GateOptions gate{};              // suite, DIR, ...; configs: [0] the baseline (reference decoder), the rest ignored
  KvSettings start{};              // the format (and any kernel switches) to walk the ladder with
  std::string calibration_text{};  // a text file; "" = prompts of the suite's tasks (calibration_text.h)
  long long calibration_tokens = 16384;
  int calibration_ctx = 2048;      // tokens per calibration window
  int kld_ctx = 512, kld_chunks = 4;  // the per-layer ranking's text: chunks of kld_ctx tokens
  int max_skip_layers = 0;         // 0: a quarter of the layers (at least 1)
  // Progress lines (one per rung, per layer ranked); none when empty.
  std::function<void(const std::string&)> log{};
};

struct LadderRung {
  std::string step{};  // "uncalibrated" (the format at its defaults), "calibrated", "skip"
  KvSettings kv{};
  std::string label{};
  compare::Verdict verdict = compare::Verdict::inconclusive;
  std::string reason{};           // compare::verdict_line of the rung
  double bytes_per_token = 0;     // KV bytes per token (all layers, K and V, scales included)
  double capacity = 0;            // bf16 bytes per token / this rung's: tokens that fit the same KV memory
};

struct LadderResult {
  std::vector<LadderRung> rungs{};
  int chosen = -1;                // index of the rung that PASSed; -1: stay on bf16
  std::string recommendation{};   // "ship fp8_e4m3 with calibrated scales: PASS, x1.97 capacity"
  double bf16_bytes_per_token = 0;
  std::vector<int> ranked_layers{};  // most sensitive first (empty when the skip rungs were not reached)
  GateResult gate{};              // the final gate: the baseline against every rung run
  int exit_code = 3;              // 0: a rung PASSed; 1: none did (stay on bf16); 130/143: stopped
};

LadderResult run_ladder(const LadderOptions& options);

// The skip rungs' sizes: 1, 2, 4, ... and `limit` itself, each at most `limit`.
std::vector<int> skip_sizes(int limit);

// The ladder's record (DIR/ladder.json, and "ladder" in compare.json), its text (printed, and in
// summary.txt) and its Markdown section.
nlohmann::json ladder_json(const LadderResult& r);
std::string ladder_text(const LadderResult& r);
reports::ReportSection ladder_section(const LadderResult& r);

}  // namespace kvgate::gate
