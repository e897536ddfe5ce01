// The gate's size and power over docs/gate-bound.md's grid: per scenario, the share of seeded
// simulated runs the gate PASSes at a true ratio equal to the margin (its false-PASS rate: at most
// alpha), FAILs at 0.90 and PASSes at 1.0 (its power), beside the same draws decided by Fieller's
// bound (the gate's bound before). Prints a Markdown table. A program, not a test: gate-size-test
// guards the cells nearest the edge in CI.
//
//   gate_size_sim [--sims N] [--seed S] [--only SUBSTRING]
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "tests/gate_sim.h"

using namespace kvtest::gate_sim;

namespace {

std::vector<Scenario> grid() {
  std::vector<Scenario> g;
  for (double level : {0.9, 0.98})
    for (Discordance d : {Discordance::losses_only, Discordance::two_way})
      for (int n : {100, 400, 1000}) g.push_back(four_buckets(level, n, d));
  for (int n : {100, 400, 1000}) g.push_back(falling(n));
  for (int n : {100, 400}) g.push_back(clustered(n, 3));
  for (int scale : {1, 4}) g.push_back(six_unequal(scale));
  for (int n : {100, 400}) g.push_back(fractional(n));
  for (Discordance d : {Discordance::losses_only, Discordance::two_way})
    for (int n : {100, 400}) g.push_back(one_bucket(0.9, n, d));
  return g;
}

// A count as a percent of the draws.
std::string pct(int count, int sims) {
  const double p = static_cast<double>(count) / sims;
  char buf[48];
  std::snprintf(buf, sizeof buf, "%.1f", 100 * p);
  return buf;
}

}  // namespace

int main(int argc, char** argv) {
  int sims = 2000;
  std::uint64_t seed = 44;
  std::string only;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--sims" && i + 1 < argc) sims = std::atoi(argv[++i]);
    else if (a == "--seed" && i + 1 < argc) seed = std::strtoull(argv[++i], nullptr, 10);
    else if (a == "--only" && i + 1 < argc) only = argv[++i];
    else {
      std::fprintf(stderr, "usage: gate_size_sim [--sims N] [--seed S] [--only SUBSTRING]\n");
      return 2;
    }
  }
  if (sims < 1) {
    std::fprintf(stderr, "gate_size_sim: --sims must be >= 1\n");
    return 2;
  }
  const auto start = std::chrono::steady_clock::now();
  std::printf("%d simulations a cell, seed %llu; rates in %%, the gate's (Fieller's); Monte Carlo SE of a 5%% rate: %.1f points\n\n",
              sims, static_cast<unsigned long long>(seed), 100 * std::sqrt(0.05 * 0.95 / sims));
  std::printf("| scenario | bound | false PASS at 0.95 | FAIL at 0.90 | PASS at 1.00 |\n|---|---|---|---|---|\n");
  std::uint64_t cell = 0;
  for (const Scenario& s : grid()) {
    ++cell;
    if (!only.empty() && s.name.find(only) == std::string::npos) continue;
    const Tally at = simulate(s, 0.95, sims, seed * 1000 + cell * 3);
    const Tally worse = simulate(s, 0.90, sims, seed * 1000 + cell * 3 + 1);
    const Tally same = simulate(s, 1.00, sims, seed * 1000 + cell * 3 + 2);
    std::printf("| %s | %s | %s (%s) | %s (%s) | %s (%s) |\n", s.name.c_str(), at.method.c_str(), pct(at.pass, sims).c_str(),
                pct(at.fieller_pass, sims).c_str(), pct(worse.fail, sims).c_str(), pct(worse.fieller_fail, sims).c_str(),
                pct(same.pass, sims).c_str(), pct(same.fieller_pass, sims).c_str());
    std::fflush(stdout);
  }
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::fprintf(stderr, "gate_size_sim: %.0f s\n", secs);
  return 0;
}
