// The seam of the reports (style.md §10): one decision (compare::Comparison), several printers
// behind one interface. `kvgate compare --json/--markdown/--html/--junit` and `kvgate report` pick
// writers by format and write each file atomically.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "compare/comparison.h"
#include "trial_texts.h"

namespace kvgate::reports {

enum class ReportFormat { json, markdown, html, junit };
const char* to_string(ReportFormat f);  // "json", "markdown", "html", "junit"

// Issue #16 fills these (capacity x, ITL x, TTFT x): shown near the top of the HTML and Markdown
// reports when present.
struct Gain {
  std::string what{};    // "KV capacity", "inter-token latency", "time to first token"
  double factor = 1.0;   // candidate over baseline, oriented so that > 1 is better
  std::string detail{};  // how it was measured
};

// Everything a writer needs beside the decision. All optional: the defaults give a full report.
struct ReportContext {
  std::string generated_at{};  // RFC 3339; empty: now (tests pass a fixed time)
  std::string command{};       // the command line that produced the decision, shown in the footer
  const TrialTexts* trials = nullptr;  // prompts and targets for the drill-down (trial_texts.h); null: none
  std::size_t max_trials_shown = 12;   // lost trials shown in full per task and pair (the rest are listed by id)
  bool json_trial_pairs = false;       // JSON: also every task's per-trial pairs (--json-trials)
  // Issue #16: what differs in pinning (engine build, GPU, driver) and what the candidate gains.
  // Shown at the top of every report when set, beside the run differences found here.
  std::vector<std::string> pinning_differences{};
  std::vector<Gain> gains{};
};

class ReportWriter {
 public:
  virtual ~ReportWriter() = default;
  virtual ReportFormat format() const = 0;
  virtual std::string render(const compare::Comparison& c, const ReportContext& ctx) const = 0;
};

std::unique_ptr<ReportWriter> make_report_writer(ReportFormat f);

// Renders and writes `path` atomically (never half-written); an Error names the path when it cannot.
void write_report(const std::string& path, ReportFormat f, const compare::Comparison& c, const ReportContext& ctx);

// Before any work: an Error naming `flag` when `path` cannot be an output file (its directory is
// missing, or it is a directory), so a command either writes every file it was asked for or none.
void check_output_path(const std::string& path, const std::string& flag);

// The generated_at a writer prints: ctx.generated_at, or now.
std::string generated_at(const ReportContext& ctx);

}  // namespace kvgate::reports
