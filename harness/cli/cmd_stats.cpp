// kvgate stats mcnemar B C
#include <iostream>
#include <memory>

#include "harness/cli/cli_common.h"
#include "harness/compare/comparison_json.h"
#include "harness/stats/mcnemar.h"

namespace kvgate::cli {

void register_stats(CLI::App& app, Commands& commands) {
  CLI::App* stats = app.add_subcommand("stats", "Statistics helpers");
  stats->require_subcommand(1);
  auto b = std::make_shared<long long>(0);
  auto c = std::make_shared<long long>(0);
  CLI::App* mcnemar = stats->add_subcommand(
      "mcnemar",
      "McNemar tests for B regressions and C improvements: JSON with exact and midp (two-sided p), chi2 and chi2_cc "
      "(statistics, without and with continuity correction; p in chi2_p, chi2_cc_p) and one_sided_exact (H1: more regressions)");
  mcnemar->add_option("B", *b, "Regression flips (baseline pass, candidate fail)")->required()->check(CLI::NonNegativeNumber);
  mcnemar->add_option("C", *c, "Improvement flips (baseline fail, candidate pass)")->required()->check(CLI::NonNegativeNumber);
  commands.add(mcnemar, [b, c] {
    std::cout << compare::to_json(kvgate::stats::mcnemar(*b, *c)).dump(2) << "\n";
    return 0;
  });
}

}  // namespace kvgate::cli
