// The comparison as one self-contained HTML page (no network, no script): the verdict first, with
// margin, bounds and what would resolve an INCONCLUSIVE; then every task (charts as inline SVG, flip
// tables, NIAH heatmaps, per-problem flips, structural breaks, lost trials), the candidate pairs,
// the run metadata and every warning.
#pragma once
#include <string>

#include "reports/report_writer.h"

namespace kvgate::reports {

std::string render_html(const compare::Comparison& c, const ReportContext& ctx);

}  // namespace kvgate::reports
