// The comparison as a compact Markdown summary that fits a pull-request comment: the verdict line,
// the runs, one table per task, the reasons of every task that did not pass. No links, no images,
// every string from the data escaped (escape_markdown).
#pragma once
#include <string>

#include "reports/report_writer.h"

namespace kvgate::reports {

std::string render_markdown(const compare::Comparison& c, const ReportContext& ctx);

}  // namespace kvgate::reports
