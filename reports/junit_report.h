// The gate as JUnit XML, so any CI system shows it: one <testsuite> per candidate (vs the
// baseline), one <testcase> per gated task, and one per bucket regression flagged by Holm. A task
// that does not PASS carries a <failure> whose type is FAIL or INCONCLUSIVE (an undecided gate is not
// a pass: the exit code is 3) and whose message says why; warnings go to <system-out>.
#pragma once
#include <string>

#include "reports/report_writer.h"

namespace kvgate::reports {

std::string render_junit(const compare::Comparison& c, const ReportContext& ctx);

}  // namespace kvgate::reports
