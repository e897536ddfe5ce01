// kvgate run: sends each trial to a backend, grades the answer, appends to RUN_DIR/results.jsonl.
// A thin layer over runner/run_session.h.
#include <memory>

#include "harness/cli/cli_common.h"
#include "harness/core/error.h"
#include "harness/core/jsonl.h"
#include "harness/decoder/kv_flags.h"
#include "harness/runner/run_session.h"

namespace kvgate::cli {

namespace {
struct RunOptions {
  std::string tasks, out, label;
  std::vector<std::string> endpoints;
  std::string model, api = "chat", backend = "openai", model_dir, kv_format, device;
  int concurrency = 8, repeats = 1, max_tokens = 1024, max_retries = 5;
  double temperature = 0.0, top_p = 1.0, timeout_s = 600.0, connect_timeout_s = 30.0;
  std::uint64_t seed = 0;
  int top_k = 0;
  bool stream = false, insecure = false, force_new = false, retry_errors = false, fsync = false;
  std::vector<std::string> stop;
  std::string engine_log;
  std::string extra_body, api_key_env, shard, progress = "auto", ca_bundle;
  std::string kv_params, kv_skip_layers, kv_scales, kernel_switches;  // reference backend
  std::string numerics;  // reference backend: "" (the device's default), "exact" or "engine"
  int threads = 1, max_batch = 32;
  double retry_base_s = 0.5, retry_max_s = 60.0, max_retry_after_s = 600.0, progress_interval_s = 10.0, max_error_rate = 1.0;
};

nlohmann::json parse_extra_body(const std::string& text) {
  if (text.empty()) return nlohmann::json::object();
  const bool from_file = text[0] == '@';
  const std::string source = from_file ? read_file(text.substr(1)) : text;
  nlohmann::json j = nlohmann::json::parse(source, nullptr, false);
  const std::string what = from_file ? "--extra-body " + text : "--extra-body";
  if (j.is_discarded() || !j.is_object())
    throw Error(what + ": not a JSON object, e.g. --extra-body '{\"chat_template_kwargs\": {\"enable_thinking\": false}}' or @body.json");
  for (const char* k : {"model", "messages", "prompt", "stream", "stream_options"})
    if (j.contains(k)) throw Error(what + ": sets \"" + std::string(k) + "\", which kvgate sets itself (use --model, the tasks file, --stream)");
  return j;
}

std::vector<std::string> split_commas(const std::vector<std::string>& items) {
  std::vector<std::string> out;
  for (const std::string& s : items) {
    std::size_t pos = 0;
    while (pos <= s.size()) {
      const std::size_t comma = s.find(',', pos);
      const std::string part = s.substr(pos, comma == std::string::npos ? std::string::npos : comma - pos);
      if (!part.empty()) out.push_back(part);
      if (comma == std::string::npos) break;
      pos = comma + 1;
    }
  }
  return out;
}

int run(const RunOptions& o, const CLI::App& sub) {
  using namespace runner;
  RunSessionOptions s;
  s.tasks_path = o.tasks;
  s.out_dir = o.out;
  s.label = o.label;
  s.kv_format = o.kv_format;
  s.engine_log = o.engine_log;
  s.backend.kind = o.backend;
  if (o.backend == "openai") {
    if (o.endpoints.empty()) throw Error("--endpoint: missing: pass the server's base URL, e.g. --endpoint http://localhost:8000/v1 (or --backend reference)");
    if (o.model.empty()) throw Error("--model: missing: pass the model name the server serves (GET BASE_URL/models lists them)");
    if (!o.model_dir.empty() || !o.device.empty()) throw Error("--model-dir and --device belong to --backend reference");
    for (const char* flag : {"--kv-params", "--kv-skip-layers", "--kv-scales", "--kernel-switches", "--numerics", "--threads", "--max-batch"})
      if (sub.count(flag)) throw Error(std::string(flag) + " belongs to --backend reference (a server's KV settings are its own flags)");
  } else {
    if (!o.endpoints.empty()) throw Error("--endpoint belongs to --backend openai (the default); drop it for --backend reference");
    if (o.model_dir.empty()) throw Error("--backend reference: --model-dir missing: pass a Hugging Face checkpoint directory");
    if (o.kv_format.empty()) throw Error("--backend reference: --kv-format missing (bf16, fp8_e4m3, ...)");
  }
  s.backend.http = HttpBackendOptions{
      .endpoints = split_commas(o.endpoints),
      .model = o.model,
      .api = parse_api(o.api),
      .stream = o.stream,
      .api_key = read_api_key(o.api_key_env, !o.api_key_env.empty()),
      .api_key_env = o.api_key_env.empty() ? "OPENAI_API_KEY" : o.api_key_env,
      .insecure = o.insecure,
      .ca_bundle = o.ca_bundle,
      .timeout_s = o.timeout_s,
      .connect_timeout_s = o.connect_timeout_s,
  };
  if (o.backend == "reference") {
    const kernels::KvStoreOptions kv = decoder::kv_store_options(
        {.format = o.kv_format, .params = o.kv_params, .skip_layers = o.kv_skip_layers, .scales = o.kv_scales});
    s.backend.reference = ReferenceBackendOptions{.model_dir = o.model_dir,
                                                  .kv_format = o.kv_format,
                                                  .device = o.device,  // "" = the default, resolved by the backend and recorded as such
                                                  .kv_params = kv.params,
                                                  .kernel_switches = decoder::with_numerics(
                                                      decoder::parse_kernel_switches(o.kernel_switches), o.numerics),
                                                  .threads = o.threads,
                                                  .max_batch = o.max_batch,
                                                  .stream = o.stream};
  }
  s.sampling.temperature = o.temperature;
  s.sampling.top_p = o.top_p;
  if (sub.count("--top-k")) s.sampling.top_k = o.top_k;
  s.sampling.seed = o.seed;
  s.sampling.max_tokens = o.max_tokens;
  s.sampling.stop = o.stop;
  s.sampling.extra_body = parse_extra_body(o.extra_body);
  s.repeats = o.repeats;
  if (!o.shard.empty()) s.shard = parse_shard(o.shard);
  s.force_new = o.force_new;
  s.retry_errors = o.retry_errors;
  s.fsync = o.fsync;
  s.concurrency = o.concurrency;
  s.retry = RetryPolicy{.max_retries = o.max_retries,
                        .base_delay_s = o.retry_base_s,
                        .max_delay_s = o.retry_max_s,
                        .max_retry_after_s = o.max_retry_after_s};
  s.progress = o.progress;
  s.progress_interval_s = o.progress_interval_s;
  s.max_error_rate = o.max_error_rate;
  return run_session(s).exit_code;
}
}  // namespace

void register_run(CLI::App& app, Commands& commands) {
  auto o = std::make_shared<RunOptions>();
  CLI::App* sub = app.add_subcommand("run", "Run a tasks file through an endpoint or the reference decoder into RUN_DIR (re-running resumes)");
  sub->add_option("--tasks", o->tasks, "Tasks file made by `kvgate gen`")->required();
  sub->add_option("--out", o->out, "Run directory: run.json and results.jsonl (re-running with the same --out resumes)")->required();
  sub->add_option("--label", o->label, "Name of this configuration in reports (default: the directory name)");
  sub->add_option("--endpoint", o->endpoints, "OpenAI-compatible base URL, e.g. http://localhost:8000/v1 (repeat, or comma-separate, to spread over replicas)");
  sub->add_option("--model", o->model, "Model name sent to the endpoint");
  sub->add_option("--api", o->api, "chat or completions")->check(CLI::IsMember({"chat", "completions"}))->capture_default_str();
  sub->add_option("--backend", o->backend, "openai (an --endpoint) or reference (kvgate's decoder)")
      ->check(CLI::IsMember({"openai", "reference"}))->capture_default_str();
  sub->add_option("--model-dir", o->model_dir, "Hugging Face checkpoint directory (reference backend)");
  sub->add_option("--kv-format", o->kv_format,
                  "KV-cache format: the reference decoder's (bf16, fp8_e4m3, int4_per_token_head, ...), or the one the server was "
                  "started with (recorded in run.json and checked against what the engine reports)");
  sub->add_option("--engine-log", o->engine_log,
                  "The server's startup log (vLLM, SGLang, TensorRT-LLM): engine version, attention backend as selected, KV cache "
                  "dtype and scales, KV cache tokens, max concurrency and GPU go into run.json engine.log (docs/engine-log.md)");
  sub->add_option("--device", o->device, "cuda or cpu (reference backend; default cuda when a GPU is present)")
      ->check(CLI::IsMember({"cuda", "cpu"}));
  sub->add_option("--kv-params", o->kv_params,
                  "Reference backend: the KV format's parameters as a JSON object or @FILE, e.g. '{\"k_scale\": 0.05}' "
                  "(docs/kv-formats.md lists them)");
  sub->add_option("--kv-skip-layers", o->kv_skip_layers, "Reference backend: layers kept in bf16, e.g. 0,1,-2,-1 (negative from the end)");
  sub->add_option("--kv-scales", o->kv_scales, "Reference backend: KV scales file (kvgate calibrate's, or SGLang's --quantization-param-path JSON)")
      ->check(CLI::ExistingFile);
  sub->add_option("--kernel-switches", o->kernel_switches,
                  "Reference backend: engine-kernel switches as a JSON object or @FILE, e.g. '{\"q_fp8\": true, "
                  "\"pv_fp8\": true, \"pv_accum\": \"reduced\"}' or '{\"q_vec_dot\": \"q8_0\"}' (llama.cpp's Q rounding) (recorded in "
                  "run.json; docs/reference-decoder.md lists them)");
  sub->add_option("--numerics", o->numerics,
                  "Reference backend: attention numerics, exact (fp32 Q and softmax weights; the CPU default) or engine (Q "
                  "and softmax weights rounded to bf16, fp32 accumulation, as FlashAttention/FlashInfer; the CUDA default). "
                  "Sets the kernel switch \"numerics\"; recorded in run.json (docs/reference-decoder.md, \"Numerics\")")
      ->check(CLI::IsMember({"exact", "engine"}));
  sub->add_option("--threads", o->threads, "Reference backend on CPU: threads per sequence (--concurrency sequences run at once)")
      ->check(CLI::Range(1, 1024))->capture_default_str();
  sub->add_option("--max-batch", o->max_batch, "Reference backend: sequences decoded at once (the rest wait)")
      ->check(CLI::Range(1, 4096))->capture_default_str();
  sub->add_option("--concurrency", o->concurrency, "Requests in flight")->check(CLI::Range(1, 4096))->capture_default_str();
  sub->add_option("--repeats", o->repeats, "Samples per trial (per-repeat seeds)")->check(CLI::Range(1, 100000))->capture_default_str();
  sub->add_option("--temperature", o->temperature, "Sampling temperature")->check(CLI::NonNegativeNumber)->capture_default_str();
  sub->add_option("--top-p", o->top_p, "Nucleus sampling")->check(CLI::Range(0.0, 1.0))->capture_default_str();
  sub->add_option("--top-k", o->top_k, "Top-k sampling (not in the OpenAI API; vLLM, SGLang and llama.cpp accept it; sent only when given)");
  sub->add_option("--seed", o->seed, "Base seed; repeat r of trial t uses a seed derived from (seed, t, r)")->capture_default_str();
  sub->add_option("--max-tokens", o->max_tokens, "Tokens to generate at most (a trial's own limit wins)")->check(CLI::PositiveNumber)->capture_default_str();
  sub->add_option("--stop", o->stop, "Stop string (repeat for several); a trial's own stop strings are added");
  sub->add_option("--extra-body", o->extra_body,
                  "JSON object merged into every request body, or @FILE, e.g. '{\"chat_template_kwargs\":{\"enable_thinking\":false}}'");
  sub->add_flag("--stream", o->stream, "Stream answers (SSE): records time to first token and inter-token latency");
  sub->add_option("--timeout", o->timeout_s, "Seconds per request before it counts as a timeout")->check(CLI::PositiveNumber)->capture_default_str();
  sub->add_option("--connect-timeout", o->connect_timeout_s, "Seconds to establish a connection")->check(CLI::PositiveNumber)->capture_default_str();
  sub->add_option("--max-retries", o->max_retries, "Retries for 429, 5xx, timeouts and connection errors")->check(CLI::Range(0, 1000))->capture_default_str();
  sub->add_option("--retry-base-delay", o->retry_base_s, "Seconds of the first backoff (doubles per retry, with jitter)")
      ->check(CLI::NonNegativeNumber)->capture_default_str();
  sub->add_option("--retry-max-delay", o->retry_max_s, "Longest backoff, seconds")->check(CLI::NonNegativeNumber)->capture_default_str();
  sub->add_option("--max-retry-after", o->max_retry_after_s, "Longest Retry-After honoured, seconds")->check(CLI::NonNegativeNumber)->capture_default_str();
  sub->add_option("--api-key-env", o->api_key_env, "Environment variable holding the API key (default OPENAI_API_KEY; the key is never written anywhere)");
  sub->add_flag("--insecure", o->insecure, "Do not verify TLS certificates (warned)");
  sub->add_option("--ca-bundle", o->ca_bundle, "PEM file of CA certificates to trust (a private CA) instead of the system's")
      ->check(CLI::ExistingFile);
  sub->add_option("--shard", o->shard, "Run slice i of n (i/n, from 0/n): trial k belongs to shard k mod n; join with `kvgate merge`");
  sub->add_flag("--force-new", o->force_new, "RUN_DIR holds a run with another configuration: move it to RUN_DIR/superseded/ and start over");
  sub->add_flag("--retry-errors", o->retry_errors, "Drop the error lines from the journal and run those (trial, repeat) pairs again");
  sub->add_flag("--fsync", o->fsync, "fsync after every result line (survives power loss, not only a killed process)");
  sub->add_option("--max-error-rate", o->max_error_rate, "Exit 1 when the run's error rate ends above this fraction")
      ->check(CLI::Range(0.0, 1.0))->capture_default_str();
  sub->add_option("--progress", o->progress, "auto (a bar on a terminal, lines otherwise), bar, lines or none")
      ->check(CLI::IsMember({"auto", "bar", "lines", "none"}))->capture_default_str();
  sub->add_option("--progress-interval", o->progress_interval_s, "Least seconds between progress lines (one comes at the latest every 30 s, sooner after each 10% of the work; rate and ETA are the run's average)")->check(CLI::PositiveNumber)->capture_default_str();
  commands.add(sub, [o, sub] { return run(*o, *sub); });
}

}  // namespace kvgate::cli
