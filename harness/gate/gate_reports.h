// The gate's outputs in DIR: report.json (every number: the compare JSON of docs/compare-json.md
// plus a "gate" object: suite, configurations, buckets, skipped tasks), summary.txt (the text
// table), and the HTML, Markdown and JUnit reports; then the history row when asked.
#pragma once
#include "harness/gate/gate.h"

namespace kvgate::gate {

// Writes every report (each atomically), fills result.reports and result.main_report, appends to
// options.history_db when set.
void write_gate_reports(GateResult& result, const GateOptions& options);

// The "gate" object of report.json.
nlohmann::json gate_record(const GateResult& result, const GateOptions& options);

}  // namespace kvgate::gate
