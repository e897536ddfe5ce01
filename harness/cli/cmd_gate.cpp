// kvgate gate: generate, run every configuration, compare and report in one command (harness/gate).
#include <iostream>
#include <memory>

#include "cli_common.h"
#include "compare/comparison.h"
#include "core/error.h"
#include "gate/gate.h"

namespace kvgate::cli {

namespace {

struct GateCli {
  std::string suite = "quick", out, show_suite;
  gate::Targets targets;
  std::int64_t max_context = 0;
  std::string tokenizer, tokenize_url, tokenize_model, golden, gsm8k_data, history, progress = "auto";
  int concurrency = 8;
  bool list_suites = false;
};

int show_suite(const std::string& name) {
  const auto& builtins = gate::builtin_suites();
  if (auto it = builtins.find(name); it != builtins.end()) {
    std::cout << it->second;
    return 0;
  }
  const gate::Suite s = gate::load_suite(name);  // validates a file, then prints it as read
  std::cout << s.document.dump(2) << "\n";
  return 0;
}

int run(const GateCli& o) {
  if (o.list_suites) {
    for (const auto& [name, text] : gate::builtin_suites()) {
      const gate::Suite s = gate::load_suite(name);
      std::cout << name << "\t" << s.description << "\n";
    }
    return 0;
  }
  if (!o.show_suite.empty()) return show_suite(o.show_suite);
  if (o.out.empty()) throw Error("gate: --out DIR missing: the directory for trials, runs and reports (re-running resumes)");
  gate::GateOptions g;
  g.suite = gate::load_suite(o.suite);
  g.out_dir = o.out;
  g.configs = gate::make_configurations(o.targets);
  g.max_context = o.max_context;
  g.tokenizer = o.tokenizer;
  g.tokenize_url = o.tokenize_url;
  g.tokenize_model = o.tokenize_model;
  g.golden_prompts = o.golden;
  g.gsm8k_data = o.gsm8k_data;
  g.history_db = o.history;
  g.concurrency = o.concurrency;
  g.progress = o.progress;
  std::string names;
  for (std::size_t i = 0; i < g.configs.size(); ++i) names += (i ? ", " : "") + g.configs[i].label + (i == 0 ? " (baseline)" : "");
  std::cerr << "kvgate: gate: suite " << g.suite.name << " (" << g.suite.source << "): " << names << " -> " << g.out_dir << "\n";

  const gate::GateResult r = gate::run_gate(g);
  if (r.stopped) return r.exit_code;
  std::cout << "\n" << "verdict: " << compare::to_string(r.verdict) << "\n";
  for (const std::string& reason : r.comparison.reasons) std::cout << "  " << reason << "\n";
  std::cout << "report: " << r.main_report << "\n";
  return r.exit_code;
}

}  // namespace

void register_gate(CLI::App& app, Commands& commands) {
  auto o = std::make_shared<GateCli>();
  gate::Targets& t = o->targets;
  CLI::App* sub = app.add_subcommand("gate", "One command for the whole gate: suite -> trials -> runs -> compare -> reports, exit 0/1/3");
  sub->add_option("--suite", o->suite, "Built-in suite (quick, ship, nightly) or a suite file (.yaml, .yml, .json)")->capture_default_str();
  sub->add_option("--out", o->out, "Output directory: tasks, runs, reports (re-running with the same settings resumes)");
  sub->add_option("--baseline", t.baseline_url, "Baseline endpoint base URL, e.g. http://localhost:8000/v1");
  sub->add_option("--candidate", t.candidate_urls, "Candidate endpoint base URL (repeat for several)");
  sub->add_option("--model", t.model, "Model name sent to the endpoints");
  sub->add_option("--api", t.api, "chat or completions (endpoints)")->check(CLI::IsMember({"chat", "completions"}))->capture_default_str();
  sub->add_option("--model-dir", t.model_dir, "Checkpoint for the reference decoder (default: the demo model, models/demo/)");
  sub->add_option("--baseline-kv", t.baseline_kv, "Baseline KV format of the reference decoder (default bf16)");
  sub->add_option("--candidate-kv", t.candidate_kv, "Candidate KV formats of the reference decoder, comma separated")->delimiter(',');
  sub->add_option("--device", t.device, "cuda or cpu (reference decoder; default cuda when a GPU is present)")
      ->check(CLI::IsMember({"cuda", "cpu"}));
  sub->add_option("--threads", t.threads, "Reference decoder on CPU: threads per sequence (--concurrency sequences run at once)")
      ->check(CLI::Range(1, 1024))->capture_default_str();
  sub->add_option("--max-batch", t.max_batch, "Reference decoder: sequences decoded at once")->check(CLI::Range(1, 4096))->capture_default_str();
  sub->add_option("--baseline-label", t.baseline_label, "Name of the baseline in reports and under DIR/runs/");
  sub->add_option("--candidate-label", t.candidate_labels, "Name of a candidate (repeat, in order: endpoints, then KV formats)");
  sub->add_option("--baseline-engine-log", t.baseline_engine_log, "The baseline server's startup log (provenance, issue #16)");
  sub->add_option("--candidate-engine-log", t.candidate_engine_logs, "A candidate server's startup log (repeat, in --candidate order)");
  sub->add_option("--max-context", o->max_context, "The model's maximum context in tokens (default: read from the server or the checkpoint)")
      ->check(CLI::Range(std::int64_t{1}, std::int64_t{1} << 24));
  sub->add_option("--tokenizer", o->tokenizer, "tokenizer.json for exact trial lengths (default: the checkpoint's, for the reference decoder)");
  sub->add_option("--tokenize-url", o->tokenize_url, "Count tokens with a server's /tokenize endpoint (vLLM, SGLang) instead");
  sub->add_option("--tokenize-model", o->tokenize_model, "Model name sent to --tokenize-url");
  sub->add_option("--golden", o->golden, "Your production prompts (JSONL of chat requests) for the suite's golden task");
  sub->add_option("--gsm8k-data", o->gsm8k_data, "GSM8K test JSONL (default: the official file, downloaded once and checked)");
  sub->add_option("--history", o->history, "Append the result to this history (JSONL; required by suites with history: true)");
  sub->add_option("--concurrency", o->concurrency, "Requests in flight per run")->check(CLI::Range(1, 4096))->capture_default_str();
  sub->add_option("--progress", o->progress, "auto, bar, lines or none (per run)")
      ->check(CLI::IsMember({"auto", "bar", "lines", "none"}))->capture_default_str();
  sub->add_option("--api-key-env", t.api_key_env, "Environment variable holding the API key (default OPENAI_API_KEY; never written anywhere)");
  sub->add_flag("--insecure", t.insecure, "Do not verify TLS certificates (warned)");
  sub->add_option("--ca-bundle", t.ca_bundle, "PEM file of CA certificates to trust")->check(CLI::ExistingFile);
  sub->add_option("--timeout", t.timeout_s, "Seconds per request")->check(CLI::PositiveNumber)->capture_default_str();
  sub->add_flag("--stream", t.stream, "Stream answers (SSE): records time to first token and inter-token latency");
  sub->add_option("--show-suite", o->show_suite, "Print a suite (a built-in one's YAML, or a file as read) and exit");
  sub->add_flag("--list-suites", o->list_suites, "List the built-in suites and exit");
  sub->footer(
      "With no --baseline, --candidate or --model-dir: the demo model (models/demo/) through the reference decoder, bf16\n"
      "against fp8_e4m3 and int4_per_token_head. Prints the verdict and the report's path.\n"
      "Exit: 0 PASS, 1 FAIL, 3 INCONCLUSIVE, 2 bad input or usage.");
  commands.add(sub, [o] { return run(*o); });
}

}  // namespace kvgate::cli
