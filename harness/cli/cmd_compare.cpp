// kvgate compare BASELINE CANDIDATE...: pairs runs trial by trial and decides PASS / FAIL / INCONCLUSIVE.
#include <memory>

#include "cli_common.h"

namespace kvgate::cli {

namespace {
struct CompareOptions {
  std::vector<std::string> dirs;
  double margin = 0.95, alpha = 0.05;
  std::string auc_axis = "linear", json, markdown, html, junit;
};
}  // namespace

void register_compare(CLI::App& app, Commands& commands) {
  auto o = std::make_shared<CompareOptions>();
  CLI::App* sub = app.add_subcommand("compare", "Compare candidate runs with a baseline run: flips, McNemar, AUC, the non-inferiority gate");
  sub->add_option("dirs", o->dirs, "BASELINE_DIR CANDIDATE_DIR [CANDIDATE_DIR...]")->required();
  sub->add_option("--margin", o->margin, "Non-inferiority margin on candidate/baseline")->check(CLI::Range(0.0, 1.0))->capture_default_str();
  sub->add_option("--alpha", o->alpha, "One-sided error rate of the gate")->check(CLI::Range(0.0, 0.5))->capture_default_str();
  sub->add_option("--auc-axis", o->auc_axis, "linear (Context Arena, lm-eval) or log2")->check(CLI::IsMember({"linear", "log2"}))->capture_default_str();
  sub->add_option("--json", o->json, "Write every number as JSON");
  sub->add_option("--markdown", o->markdown, "Write a Markdown summary (fits a pull-request comment)");
  sub->add_option("--html", o->html, "Write a self-contained HTML report");
  sub->add_option("--junit", o->junit, "Write JUnit XML (one testcase per gated task)");
  sub->footer("Exit: 0 PASS, 1 FAIL, 3 INCONCLUSIVE, 2 bad input or usage.");
  commands.add(sub, [o] { return not_built("compare", 3); });
}

}  // namespace kvgate::cli
