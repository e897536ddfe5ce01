// kvgate gate: generate, run every configuration, compare and report in one command (harness/gate);
// or one shard of it (--shard), the merge of the shards (--merge), the plan only (--dry-run).
#include <cstdlib>
#include <iostream>
#include <memory>
#include <optional>

#include "harness/cli/cli_common.h"
#include "harness/compare/comparison.h"
#include "harness/compare/verdict.h"
#include "harness/core/error.h"
#include "harness/gate/dry_run.h"
#include "harness/gate/gate.h"
#include "harness/gate/ladder.h"
#include "harness/gate/merge_shards.h"
#include "harness/gate/shard_env.h"

namespace kvgate::cli {

namespace {

struct GateCli {
  std::string suite = "quick", out, show_suite;
  gate::Targets targets;
  std::int64_t max_context = 0;
  std::string tokenize_api = "auto";
  std::string tokenizer, tokenize_url, tokenize_model, golden, gsm8k_data, history, progress = "auto";
  int concurrency = 8;
  bool list_suites = false;
  std::string shard;
  std::optional<int> shard_count;
  std::vector<std::string> merge;
  bool allow_partial = false, dry_run = false, json = false;
  std::string ladder, calibration_text;
  int ladder_max_skip = 0;
  const CLI::App* app = nullptr;  // to tell which options were given
};

const char* getenv_lookup(const char* name) { return std::getenv(name); }

// Options that say what to run have no place in a merge: the shards recorded all of it.
void check_merge_flags(const GateCli& o) {
  for (const char* f : {"--suite", "--baseline", "--candidate", "--model", "--model-dir", "--baseline-kv", "--candidate-kv", "--shard",
                        "--shard-count", "--max-context", "--tokenizer", "--tokenize-url", "--golden", "--gsm8k-data", "--ladder"})
    if (o.app->count(f))
      throw Error(std::string(f) + " with --merge: the shards' gate.json records the suite, the configurations and the trials: drop it");
  if (o.app->count("--numerics"))
    throw Error("--numerics with --merge: the shards' run.json files record the numerics they ran with: drop it");
}

void print_runs(const gate::GateResult& r) {
  for (const gate::GateResult::RunStatus& s : r.runs)
    std::cout << "  " << s.label << " / " << s.task << ": " << s.results << "/" << s.expected << " results"
              << (s.complete ? "" : " (incomplete)") << "\n";
}

int print_verdict(const gate::GateResult& r) {
  std::cout << "\n" << "verdict: " << compare::to_string(r.verdict) << (r.partial.empty() ? "" : " (partial)") << "\n";
  // One line per candidate: its verdict and the reason (the deciding task's bound, flips, McNemar).
  for (const compare::PairComparison& p : r.comparison.pairs)
    if (p.gating) std::cout << "  " << compare::verdict_line(r.comparison, p) << "\n";
  for (const std::string& p : r.partial) std::cout << "  partial: " << p << "\n";
  std::cout << "report: " << r.main_report << "\n";
  return r.exit_code;
}

int merge(const GateCli& o) {
  check_merge_flags(o);
  if (o.dry_run) {
    const nlohmann::json j = gate::inspect_shards(o.merge);
    if (o.json) {
      std::cout << j.dump(2) << "\n";
      return 0;
    }
    std::cout << "merge: " << j["shards"].size() << " shard directories of " << (j["count"].is_null() ? std::string("?") : j["count"].dump())
              << (j["ready"].get<bool>() ? ", ready" : ", not ready") << "; nothing is written\n";
    for (const auto& s : j["shards"]) std::cout << "  shard " << s["shard"].get<std::string>() << ": " << s["dir"].get<std::string>() << "\n";
    for (const auto& m : j["missing_shards"]) std::cout << "  missing: shard " << m.get<std::string>() << "\n";
    for (const auto& u : j["unreadable"]) std::cout << "  not a shard: " << u.get<std::string>() << "\n";
    for (const auto& u : j["unfinished_runs"]) std::cout << "  unfinished: " << u.get<std::string>() << "\n";
    return 0;
  }
  if (o.out.empty()) throw Error("--merge: --out DIR missing: the directory for the merged gate and its reports");
  std::cerr << "kvgate: gate: merging " << o.merge.size() << " shard directories -> " << o.out << "\n";
  const gate::GateResult r =
      gate::merge_gate_shards({.shard_dirs = o.merge, .out_dir = o.out, .allow_partial = o.allow_partial, .history_db = o.history});
  print_runs(r);
  return print_verdict(r);
}

int ladder(const GateCli& o, gate::GateOptions g) {
  for (const char* f : {"--candidate-kv", "--candidate", "--baseline", "--candidate-label", "--shard", "--shard-count", "--dry-run"})
    if (o.app->count(f))
      throw Error(std::string(f) + " with --ladder: the ladder makes its own candidates on the reference decoder (docs/ladder.md): drop it");
  if (o.app->count("--numerics"))
    throw Error("--numerics with --ladder: the ladder's rungs run in the device's default numerics: drop it");
  const std::vector<gate::KvSettings> start = gate::parse_kv_settings({o.ladder}, "--ladder");
  if (start.size() != 1) throw Error("--ladder " + o.ladder + ": one format to climb with, e.g. --ladder fp8_e4m3");
  gate::LadderOptions l{.gate = std::move(g), .start = start[0], .calibration_text = o.calibration_text, .max_skip_layers = o.ladder_max_skip};
  l.log = [](const std::string& line) { std::cerr << "kvgate: gate: " << line << "\n"; };
  std::cerr << "kvgate: gate: ladder of " << l.start.name() << " against " << l.gate.configs[0].label << " -> " << l.gate.out_dir << "\n";
  const gate::LadderResult r = gate::run_ladder(l);
  if (r.gate.stopped || r.recommendation.empty()) return r.exit_code;
  std::cout << "\n" << gate::ladder_text(r);
  std::cout << "report: " << r.gate.main_report << "\n";
  return r.exit_code;
}

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
  if (o.json && !o.dry_run) throw Error("--json goes with --dry-run (the plan as JSON); the gate's own JSON is DIR/compare.json");
  if (!o.merge.empty()) return merge(o);
  if (o.allow_partial) throw Error("--allow-partial goes with --merge SHARD_DIR...: drop it");
  if (o.shard_count && o.shard.empty() && !o.dry_run)
    throw Error("--shard-count N goes with --shard auto (a Kubernetes Indexed Job's count) or --dry-run (a plan split N ways)");
  if (o.out.empty() && !o.dry_run) throw Error("gate: --out DIR missing: the directory for trials, runs and reports (re-running resumes)");
  if (!o.calibration_text.empty() && o.ladder.empty()) throw Error("--calibration-text goes with --ladder FORMAT: drop it");
  gate::GateOptions g;
  g.suite = gate::load_suite(o.suite);
  g.out_dir = o.out;
  gate::Targets targets = o.targets;
  if (!o.ladder.empty()) targets.candidate_kv = {o.ladder};  // the ladder's first rung; it makes the others
  g.configs = gate::make_configurations(targets);
  g.max_context = o.max_context;
  g.tokenizer = o.tokenizer;
  g.tokenize_url = o.tokenize_url;
  g.tokenize_model = o.tokenize_model;
  g.tokenize_api = o.tokenize_api;
  g.golden_prompts = o.golden;
  g.gsm8k_data = o.gsm8k_data;
  g.history_db = o.history;
  g.concurrency = o.concurrency;
  g.progress = o.progress;
  if (!o.ladder.empty()) return ladder(o, std::move(g));
  if (!o.shard.empty()) g.shard = gate::resolve_shard(o.shard, o.shard_count, getenv_lookup);
  if (o.dry_run) {
    const nlohmann::json plan = gate::dry_run_plan(g, o.shard_count.value_or(0));
    std::cout << (o.json ? plan.dump(2) + "\n" : gate::dry_run_text(plan));
    return 0;
  }
  std::string names;
  for (std::size_t i = 0; i < g.configs.size(); ++i) names += (i ? ", " : "") + g.configs[i].label + (i == 0 ? " (baseline)" : "");
  std::cerr << "kvgate: gate: suite " << g.suite.name << " (" << g.suite.source << "): " << names << " -> " << g.out_dir << "\n";
  if (g.shard.active()) {
    const std::string from = gate::describe_shard_source(o.shard, getenv_lookup);
    std::cerr << "kvgate: gate: shard " << g.shard.index << "/" << g.shard.count << (from.empty() ? "" : " (" + from + ")") << "\n";
  }

  const gate::GateResult r = gate::run_gate(g);
  if (r.stopped) return r.exit_code;
  if (g.shard.active()) {
    std::cout << "shard " << g.shard.index << "/" << g.shard.count << " done: " << g.out_dir << "\n";
    print_runs(r);
    std::cout << "merge when every shard is done: kvgate gate --merge SHARD_DIR... --out DIR\n";
    return 0;
  }
  return print_verdict(r);
}

}  // namespace

void register_gate(CLI::App& app, Commands& commands) {
  auto o = std::make_shared<GateCli>();
  gate::Targets& t = o->targets;
  CLI::App* sub = app.add_subcommand("gate", "One command for the whole gate: suite -> trials -> runs -> compare -> reports, exit 0/1/3");
  sub->add_option("--suite", o->suite, "Built-in suite (quick, ship, nightly, demo: --list-suites) or a suite file (.yaml, .yml, .json)")->capture_default_str();
  sub->add_option("--out", o->out, "Output directory: tasks, runs, reports (re-running with the same settings resumes)");
  sub->add_option("--baseline", t.baseline_url,
                  "Baseline endpoint base URL, e.g. http://localhost:8000/v1; URL,URL,... for replicas of one engine (requests spread over them)");
  sub->add_option("--candidate", t.candidate_urls, "Candidate endpoint base URL (repeat for several candidates; URL,URL,... for replicas)");
  sub->add_option("--model", t.model, "Model name sent to the endpoints");
  sub->add_option("--api", t.api, "chat or completions (endpoints)")->check(CLI::IsMember({"chat", "completions"}))->capture_default_str();
  sub->add_option("--model-dir", t.model_dir, "Checkpoint for the reference decoder (default: the demo model, models/demo/)");
  sub->add_option("--baseline-kv", t.baseline_kv,
                  "Baseline KV format: the reference decoder's (default bf16), or with --baseline URL the server's, declared (recorded, "
                  "checked against what the engine reports)");
  sub->add_option("--candidate-kv", t.candidate_kv,
                  "Candidate KV configurations of the reference decoder: FORMAT[,KEY=VALUE...][,FORMAT...] with scales=FILE, "
                  "skip=L:L (layers kept in bf16), switches={...}|@FILE (kernel switches), params={...}|@FILE, label=NAME; e.g. "
                  "fp8_e4m3,int8_per_token_head or 'fp8_e4m3,scales=cal.json,skip=0:27'. With --candidate URLs: each server's format, declared, one per URL");
  sub->add_option("--device", t.device, "cuda or cpu (reference decoder; default cuda when a GPU is present)")
      ->check(CLI::IsMember({"cuda", "cpu"}));
  sub->add_option("--threads", t.threads, "Reference decoder on CPU: threads per sequence (--concurrency sequences run at once)")
      ->check(CLI::Range(1, 1024))->capture_default_str();
  sub->add_option("--max-batch", t.max_batch, "Reference decoder: sequences decoded at once")->check(CLI::Range(1, 4096))->capture_default_str();
  sub->add_option("--numerics", t.numerics,
                  "Reference decoder: attention numerics of every configuration, exact (fp32 Q and softmax weights; the CPU "
                  "default) or engine (Q and softmax weights rounded to bf16, fp32 accumulation, as FlashAttention/FlashInfer; "
                  "the CUDA default); recorded in run.json, compared by the pinning check (docs/reference-decoder.md)")
      ->check(CLI::IsMember({"exact", "engine"}));
  sub->add_option("--baseline-label", t.baseline_label, "Name of the baseline in reports and under DIR/runs/");
  sub->add_option("--candidate-label", t.candidate_labels, "Name of a candidate (repeat, in order: endpoints, then KV formats)");
  sub->add_option("--baseline-engine-log", t.baseline_engine_log, "The baseline server's startup log (provenance: docs/engine-log.md)");
  sub->add_option("--candidate-engine-log", t.candidate_engine_logs, "A candidate server's startup log (repeat, in --candidate order)");
  sub->add_option("--max-context", o->max_context, "The model's maximum context in tokens (default: read from the server or the checkpoint)")
      ->check(CLI::Range(std::int64_t{1}, std::int64_t{1} << 24));
  sub->add_option("--tokenizer", o->tokenizer, "tokenizer.json for exact trial lengths (default: the checkpoint's, for the reference decoder)");
  sub->add_option("--tokenize-url", o->tokenize_url, "Count tokens with a server's /tokenize endpoint (vLLM, SGLang, llama.cpp) instead");
  sub->add_option("--tokenize-model", o->tokenize_model, "Model name sent to --tokenize-url");
  sub->add_option("--tokenize-api", o->tokenize_api, "Request shape of --tokenize-url: auto (detected), llamacpp, vllm, sglang")
      ->capture_default_str();
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
  sub->add_option("--shard", o->shard,
                  "Run slice i of n of every configuration's trials into --out (a shard directory; all shards generate the same "
                  "trials): i/n (from 0), or auto: Slurm's SLURM_ARRAY_TASK_ID (count from SLURM_ARRAY_TASK_COUNT or _MIN/_MAX) or a "
                  "Kubernetes Indexed Job's JOB_COMPLETION_INDEX (count from --shard-count or KVGATE_SHARD_COUNT)");
  sub->add_option("--shard-count", o->shard_count, "The number of shards for --shard auto (Kubernetes), or for the split --dry-run shows")
      ->check(CLI::Range(1, 1 << 20));
  sub->add_option("--merge", o->merge,
                  "Join shard directories (the --out of each --shard run), compare and report into --out, exit with the verdict; "
                  "missing shards or unfinished runs are named")
      ->expected(1, -1);
  sub->add_flag("--allow-partial", o->allow_partial, "With --merge: report what the shards hold when some are missing or unfinished (marked partial)");
  sub->add_flag("--dry-run", o->dry_run,
                "Print the plan and exit, sending nothing: per task and bucket the trials, repeats, requests, prompt and maximum "
                "output tokens; per configuration and in all; with --shard or --shard-count what each shard gets. With --merge: "
                "which shards are there and finished");
  sub->add_flag("--json", o->json, "With --dry-run: the plan as JSON (schema kvgate-gate-plan/1)");
  sub->add_option("--ladder", o->ladder,
                  "Walk seed 000's step 6 for FORMAT on the reference decoder: FORMAT, then calibrated scales, then the most "
                  "sensitive layers (per-layer KLD) in bf16, until a rung PASSes, else stay on bf16; each rung a run in --out "
                  "(resumable); the reports show the ladder (docs/ladder.md). Exit 0 when a rung PASSes, 1 when none does");
  sub->add_option("--calibration-text", o->calibration_text,
                  "With --ladder: text to calibrate and rank layers on (default: prompts of the suite's long-context tasks, "
                  "generated with another seed than the trials')")
      ->check(CLI::ExistingFile);
  sub->add_option("--ladder-max-skip", o->ladder_max_skip, "With --ladder: the most layers kept in bf16 (default: a quarter of the layers)")
      ->check(CLI::Range(1, 4096));
  sub->add_option("--show-suite", o->show_suite, "Print a suite (a built-in one's YAML, or a file as read) and exit");
  sub->add_flag("--list-suites", o->list_suites, "List the built-in suites and exit");
  sub->footer(
      "With no --baseline, --candidate or --model-dir: the demo model (models/demo/) through the reference decoder, bf16\n"
      "against fp8_e4m3 and int4_per_token_head. Prints the verdict and the report's path.\n"
      "KV settings per candidate: --candidate-kv fp8_e4m3 --candidate-kv 'fp8_e4m3,scales=cal.json' --candidate-kv\n"
      "'fp8_e4m3,skip=0:27' compares bf16, fp8_e4m3, fp8_e4m3+calibrated and fp8_e4m3+skip(0,27) (docs/suites.md).\n"
      "Past one machine: run `--shard i/n --out SHARD_DIR` (or --shard auto in a Slurm array or Kubernetes Indexed Job) on\n"
      "each node, then `--merge SHARD_DIR... --out DIR` (docs/beyond-one-machine.md). A shard exits 0 when its runs are done.\n"
      "Exit: 0 PASS, 1 FAIL, 3 INCONCLUSIVE, 2 bad input or usage.");
  o->app = sub;
  commands.add(sub, [o] { return run(*o); });
}

}  // namespace kvgate::cli
