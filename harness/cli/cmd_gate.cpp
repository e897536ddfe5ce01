// kvgate gate: generate, run every configuration, compare and report in one command.
#include <memory>

#include "cli_common.h"

namespace kvgate::cli {

namespace {
struct GateOptions {
  std::string suite = "quick", out, baseline, model, model_dir, baseline_kv = "bf16", device;
  std::vector<std::string> candidates, candidate_kv;
};
}  // namespace

void register_gate(CLI::App& app, Commands& commands) {
  auto o = std::make_shared<GateOptions>();
  CLI::App* sub = app.add_subcommand("gate", "One command for the whole gate: suite -> trials -> runs -> compare -> reports, exit 0/1/3");
  sub->add_option("--suite", o->suite, "Built-in suite (quick, ship, nightly) or a suite file")->capture_default_str();
  sub->add_option("--out", o->out, "Output directory: tasks, runs, reports (re-running resumes)")->required();
  sub->add_option("--baseline", o->baseline, "Baseline endpoint base URL");
  sub->add_option("--candidate", o->candidates, "Candidate endpoint base URL (repeat for several)");
  sub->add_option("--model", o->model, "Model name sent to the endpoints");
  sub->add_option("--model-dir", o->model_dir, "Checkpoint for the reference decoder (default: the demo model)");
  sub->add_option("--baseline-kv", o->baseline_kv, "Baseline KV format (reference decoder)")->capture_default_str();
  sub->add_option("--candidate-kv", o->candidate_kv, "Candidate KV formats, comma separated (reference decoder)")->delimiter(',');
  sub->add_option("--device", o->device, "cuda or cpu (reference decoder)")->check(CLI::IsMember({"cuda", "cpu"}));
  commands.add(sub, [o] { return not_built("gate", 15); });
}

}  // namespace kvgate::cli
