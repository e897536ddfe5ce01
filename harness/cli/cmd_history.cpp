// kvgate history add|report: the nightly history.
#include <memory>

#include "cli_common.h"

namespace kvgate::cli {

void register_history(CLI::App& app, Commands& commands) {
  CLI::App* history = app.add_subcommand("history", "Nightly history: add a comparison, draw metrics over time");
  history->require_subcommand(1);
  auto result = std::make_shared<std::string>();
  auto db = std::make_shared<std::string>();
  auto html = std::make_shared<std::string>();
  CLI::App* add = history->add_subcommand("add", "Append a comparison (compare --json output) to the history");
  add->add_option("result", *result, "RESULT.json written by `kvgate compare --json`")->required();
  add->add_option("--db", *db, "History file (JSONL)")->required();
  commands.add(add, [] { return not_built("history add", 9); });
  CLI::App* report = history->add_subcommand("report", "Draw each metric over time per engine version");
  report->add_option("--db", *db, "History file (JSONL)")->required();
  report->add_option("--html", *html, "HTML file to write")->required();
  commands.add(report, [] { return not_built("history report", 9); });
}

}  // namespace kvgate::cli
