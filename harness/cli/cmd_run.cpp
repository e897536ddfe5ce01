// kvgate run: sends each trial to a backend, grades the answer, appends to RUN_DIR/results.jsonl.
#include <memory>

#include "cli_common.h"

namespace kvgate::cli {

namespace {
struct RunOptions {
  std::string tasks, out, label;
  std::vector<std::string> endpoints;
  std::string model, api = "chat", backend = "openai", model_dir, kv_format, device;
  int concurrency = 8, repeats = 1, max_tokens = 1024, max_retries = 5;
  double temperature = 0.0, top_p = 1.0, timeout_s = 600.0;
  std::uint64_t seed = 0;
};
}  // namespace

void register_run(CLI::App& app, Commands& commands) {
  auto o = std::make_shared<RunOptions>();
  CLI::App* sub = app.add_subcommand("run", "Run a tasks file through an endpoint or the reference decoder into RUN_DIR (re-running resumes)");
  sub->add_option("--tasks", o->tasks, "Tasks file made by `kvgate gen`")->required();
  sub->add_option("--out", o->out, "Run directory: run.json and results.jsonl (re-running with the same --out resumes)")->required();
  sub->add_option("--label", o->label, "Name of this configuration in reports (default: the directory name)");
  sub->add_option("--endpoint", o->endpoints, "OpenAI-compatible base URL, e.g. http://localhost:8000/v1 (repeat to spread over replicas)");
  sub->add_option("--model", o->model, "Model name sent to the endpoint");
  sub->add_option("--api", o->api, "chat or completions")->check(CLI::IsMember({"chat", "completions"}))->capture_default_str();
  sub->add_option("--backend", o->backend, "openai (an --endpoint) or reference (kvgate's decoder)")
      ->check(CLI::IsMember({"openai", "reference"}))->capture_default_str();
  sub->add_option("--model-dir", o->model_dir, "Hugging Face checkpoint directory (reference backend)");
  sub->add_option("--kv-format", o->kv_format, "KV-cache format of the reference decoder (bf16, fp8_e4m3, int4_per_token_head, ...)");
  sub->add_option("--device", o->device, "cuda or cpu (reference backend; default cuda when a GPU is present)")
      ->check(CLI::IsMember({"cuda", "cpu"}));
  sub->add_option("--concurrency", o->concurrency, "Requests in flight")->check(CLI::PositiveNumber)->capture_default_str();
  sub->add_option("--repeats", o->repeats, "Samples per trial (per-repeat seeds)")->check(CLI::PositiveNumber)->capture_default_str();
  sub->add_option("--temperature", o->temperature, "Sampling temperature")->check(CLI::NonNegativeNumber)->capture_default_str();
  sub->add_option("--top-p", o->top_p, "Nucleus sampling")->check(CLI::Range(0.0, 1.0))->capture_default_str();
  sub->add_option("--seed", o->seed, "Base seed; repeat r of trial t uses a seed derived from (seed, t, r)")->capture_default_str();
  sub->add_option("--max-tokens", o->max_tokens, "Tokens to generate at most (a trial's own limit wins)")->check(CLI::PositiveNumber)->capture_default_str();
  sub->add_option("--timeout", o->timeout_s, "Seconds per request before it counts as a timeout")->check(CLI::PositiveNumber)->capture_default_str();
  sub->add_option("--max-retries", o->max_retries, "Retries for 429, 5xx, timeouts and connection errors")->check(CLI::NonNegativeNumber)->capture_default_str();
  commands.add(sub, [o] { return not_built("run", o->backend == "reference" ? 13 : 8); });
}

}  // namespace kvgate::cli
