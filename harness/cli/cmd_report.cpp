// kvgate report RUN_DIR... --html F
#include <memory>

#include "cli_common.h"

namespace kvgate::cli {

void register_report(CLI::App& app, Commands& commands) {
  auto dirs = std::make_shared<std::vector<std::string>>();
  auto html = std::make_shared<std::string>();
  CLI::App* sub = app.add_subcommand("report", "Render run directories (the first is the baseline) as a self-contained HTML report");
  sub->add_option("dirs", *dirs, "RUN_DIR...")->required();
  sub->add_option("--html", *html, "HTML file to write")->required();
  commands.add(sub, [dirs, html] { return not_built("report", 9); });
}

}  // namespace kvgate::cli
