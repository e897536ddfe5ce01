// The seam of the reports (style.md §10): one decision (compare::Comparison), several printers
// behind one interface. `kvgate compare --json/--markdown/--html/--junit` and `kvgate report` pick
// writers by format and write each file atomically.
#pragma once
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "harness/compare/comparison.h"
#include "reports/report_section.h"
#include "reports/trial_texts.h"

namespace kvgate::reports {

enum class ReportFormat { json, markdown, html, junit };
const char* to_string(ReportFormat f);  // "json", "markdown", "html", "junit"

// What a candidate gains, shown beside what it loses (compare measures these: KV capacity,
// inter-token latency, time to first token). report_top.h gathers them per candidate.
struct Gain {
  std::string candidate{};           // the candidate's run label; empty: every candidate
  std::string what{};                // "KV capacity", "inter-token latency p50", "time to first token p50"
  double factor = 1.0;               // oriented so that > 1 is better: capacity candidate/baseline, latency baseline/candidate
  std::optional<double> lo{}, hi{};  // its interval, when paired per trial (two-sided, as `detail` says)
  std::string detail{};              // how it was measured: "engine logs", "estimate (kvgate capacity)", "400 paired trials, 95%"
};

// Everything a writer needs beside the decision. All optional: the defaults give a full report.
struct ReportContext {
  std::string generated_at{};  // RFC 3339; empty: now (tests pass a fixed time)
  std::string command{};       // the command line that produced the decision, shown in the footer
  const TrialTexts* trials = nullptr;  // prompts and targets for the drill-down (trial_texts.h); null: none
  std::size_t max_trials_shown = 12;   // lost trials shown in full per task and pair (the rest are listed by id)
  bool json_trial_pairs = false;       // JSON: also every task's per-trial pairs (--json-trials)
  // What differs in pinning (engine build, attention backend, GPU, driver), one sentence
  // each, and what the candidates gain. Shown at the top of every report when set; the pinning list
  // joins the differences the report finds itself (report_top.h).
  std::vector<std::string> pinning_differences{};
  std::vector<Gain> gains{};
  // Sections a command adds beside the comparison (the gate's calibration ladder), under the verdict.
  std::vector<ReportSection> sections{};
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

// The files one decision is written to; an empty path is not written.
struct ReportFiles {
  std::string json{}, markdown{}, html{}, junit{};
  // `kvgate gate --out DIR`'s layout: DIR/compare.json, DIR/report.md, DIR/report.html, DIR/junit.xml.
  static ReportFiles in_directory(const std::string& dir);
};

// Before any work: check_output_path for each named file (named by its compare flag, --json ...).
void check_output_paths(const ReportFiles& files);

// Writes every named file, each atomically (compare's --json/--markdown/--html/--junit, the gate's
// DIR). For the HTML drill-down pass ctx.trials (load_trial_texts, trial_texts.h).
void write_reports(const ReportFiles& files, const compare::Comparison& c, const ReportContext& ctx);

// Before any work: an Error naming `flag` when `path` cannot be an output file (its directory is
// missing, or it is a directory), so a command either writes every file it was asked for or none.
void check_output_path(const std::string& path, const std::string& flag);

// The generated_at a writer prints: ctx.generated_at, or now.
std::string generated_at(const ReportContext& ctx);

}  // namespace kvgate::reports
