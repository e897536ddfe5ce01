// kvgate history add|report: the nightly history (reports/history.h).
#include <iostream>
#include <memory>

#include "harness/cli/cli_common.h"
#include "harness/core/atomic_file.h"
#include "harness/core/error.h"
#include "harness/core/manifest.h"
#include "reports/history.h"
#include "reports/report_writer.h"

namespace kvgate::cli {

namespace {
struct HistoryCli {
  std::string result, db, html, date;
};
}  // namespace

void register_history(CLI::App& app, Commands& commands) {
  CLI::App* history = app.add_subcommand("history", "Nightly history: add a comparison, draw metrics over time");
  history->require_subcommand(1);
  auto o = std::make_shared<HistoryCli>();
  CLI::App* add = history->add_subcommand("add", "Append a comparison (compare --json output) to the history");
  add->add_option("result", o->result, "RESULT.json written by `kvgate compare --json`")->required();
  add->add_option("--db", o->db, "History file (JSONL; created when missing)")->required();
  add->add_option("--date", o->date, "The night, YYYY-MM-DD (default: the candidate run's start date)");
  add->footer("One row per candidate compared with the baseline. Adding the same RESULT.json again adds nothing.");
  commands.add(add, [o] {
    reports::check_output_path(o->db, "--db");
    const reports::AddOutcome r = reports::add_to_history(o->db, o->result, {.date = o->date});
    std::cout << "kvgate history add: " << r.added << " row" << (r.added == 1 ? "" : "s") << " added to " << o->db;
    if (r.already_present) std::cout << " (" << r.already_present << " already there: nothing appended for them)";
    std::cout << "\n";
    return 0;
  });
  CLI::App* report = history->add_subcommand("report", "Draw each metric over time per engine version");
  report->add_option("--db", o->db, "History file (JSONL)")->required();
  report->add_option("--html", o->html, "HTML file to write")->required();
  commands.add(report, [o] {
    reports::check_output_path(o->html, "--html");
    const std::vector<reports::HistoryRow> rows = reports::read_history(o->db);
    if (rows.empty()) throw Error("--db " + o->db + ": the history is empty: add comparisons first (kvgate history add RESULT.json --db " + o->db + ")");
    write_file_atomic(o->html, reports::render_history_html(rows, o->db, utc_now_rfc3339()));
    std::cout << "kvgate history report: wrote " << o->html << " (" << rows.size() << " comparisons)\n";
    return 0;
  });
}

}  // namespace kvgate::cli
