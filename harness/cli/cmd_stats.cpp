// kvgate stats mcnemar B C
#include <memory>

#include "cli_common.h"

namespace kvgate::cli {

void register_stats(CLI::App& app, Commands& commands) {
  CLI::App* stats = app.add_subcommand("stats", "Statistics helpers");
  stats->require_subcommand(1);
  auto b = std::make_shared<long long>(0);
  auto c = std::make_shared<long long>(0);
  CLI::App* mcnemar = stats->add_subcommand("mcnemar", "McNemar tests for B regressions and C improvements: JSON with exact, midp, chi2, chi2_cc");
  mcnemar->add_option("B", *b, "Regression flips (baseline pass, candidate fail)")->required()->check(CLI::NonNegativeNumber);
  mcnemar->add_option("C", *c, "Improvement flips (baseline fail, candidate pass)")->required()->check(CLI::NonNegativeNumber);
  commands.add(mcnemar, [] { return not_built("stats mcnemar", 3); });
}

}  // namespace kvgate::cli
