#include "harness/gate/gate.h"

#include <filesystem>

#include "harness/core/atomic_file.h"
#include "harness/core/error.h"
#include "harness/core/log.h"
#include "harness/core/sha256.h"
#include "harness/gate/gate_dir.h"
#include "harness/gate/join_runs.h"
#include "harness/gate/plan.h"
#include "harness/gate/trial_gen.h"
#include "harness/provenance/engine_log.h"
#include "harness/runner/http_backend.h"
#include "harness/runner/run_session.h"

namespace kvgate::gate {

using nlohmann::json;
namespace fs = std::filesystem;

namespace {

// A configuration's engine startup log (--baseline-engine-log, --candidate-engine-log) is checked
// before any work, so a wrong path fails at once rather than after the runs.
void check_engine_log(const Configuration& config) {
  if (config.engine_log.empty()) return;
  if (!fs::is_regular_file(config.engine_log))
    throw Error("engine log " + config.engine_log + " of " + config.label + ": no such file: pass the server's startup log");
}

// What makes the trials: a resumed gate, and every shard of one, must generate the very same ones.
json generation_plan(const GateOptions& o, const std::vector<PlannedTask>& tasks, const TokenCounter* counter) {
  json t = json::array();
  for (const PlannedTask& p : tasks)
    t.push_back({{"task", p.spec->task}, {"buckets", p.buckets}, {"per_bucket", p.spec->per_bucket}, {"options", p.spec->options}});
  return {{"suite", o.suite.document},
          {"seed", o.suite.seed},
          {"tasks", t},
          {"token_counter", counter ? json(counter->source()) : json(nullptr)},
          {"golden_prompts", o.golden_prompts},
          {"gsm8k_data", o.gsm8k_data}};
}

std::unique_ptr<TokenCounter> open_counter(const GateOptions& o, const std::vector<PlannedTask>& tasks) {
  bool needed = false;
  for (const PlannedTask& p : tasks) needed |= is_long_context(p.spec->task);
  if (!needed) return nullptr;
  if (!o.tokenizer.empty() || !o.tokenize_url.empty())
    return open_token_counter({.tokenizer_path = o.tokenizer, .tokenize_url = o.tokenize_url, .model = o.tokenize_model,
                               .tokenize_api = o.tokenize_api});
  for (const Configuration& c : o.configs)
    if (c.backend.kind == "reference") {
      const std::string tok = c.backend.reference.model_dir + "/tokenizer.json";
      if (!fs::is_regular_file(tok))
        throw Error(c.backend.reference.model_dir + ": no tokenizer.json: the reference decoder needs the checkpoint's tokenizer");
      return open_token_counter({.tokenizer_path = tok, .tokenize_url = "", .model = ""});
    }
  log_warn("gate: lengths are estimated (about 4 bytes a token): pass --tokenizer tokenizer.json of the served model, or "
           "--tokenize-url URL of a vLLM, SGLang or llama.cpp server, for exact lengths");
  return make_estimating_token_counter();
}

// An endpoint's declared KV format against what its engine says about itself: the probe's
// kv_cache_dtype (/v1/models, /server_info, /props) and its startup log's, before any trial runs.
void check_declared_formats(const std::vector<Configuration>& configs) {
  for (const Configuration& c : configs) {
    if (c.backend.kind != "openai" || c.kv_format.empty()) continue;
    if (!c.engine_log.empty()) {
      const json log = provenance::parse_engine_log(c.engine_log);
      const json facts = log.value("facts", json::object());
      for (const char* k : {"kv_cache_dtype", "type_k"})
        if (facts.contains(k) && facts[k].is_string()) check_declared_kv(c, facts[k].get<std::string>(), "engine log " + c.engine_log + " " + k);
    }
    runner::HttpBackend backend(c.backend.http);
    const json d = backend.describe();
    const json summary = d.contains("engine") && d["engine"].is_object() ? d["engine"].value("summary", json::object()) : json::object();
    for (const char* k : {"kv_cache_dtype", "type_k"})
      if (summary.contains(k) && summary[k].is_string())
        check_declared_kv(c, summary[k].get<std::string>(), c.backend.http.endpoints.front() + " " + k);
  }
}

}  // namespace

compare::CompareOptions compare_options(const Suite& suite) {
  compare::CompareOptions o = suite.compare;
  for (const TaskSpec& t : suite.tasks) {
    if (t.margin) o.task_margins[t.task] = *t.margin;
    if (!t.gate) o.informative_tasks.insert(t.task);
  }
  return o;
}

GateResult run_gate(const GateOptions& o) {
  if (o.configs.size() < 2) throw Error("gate: needs a baseline and at least one candidate");
  // A shard compares nothing: the history is appended by the merge.
  if (o.suite.history && o.history_db.empty() && !o.shard.active())
    throw Error("--suite " + o.suite.name + ": this suite keeps a history: pass --history FILE (e.g. --history nightly/history.jsonl)");
  for (const Configuration& c : o.configs) check_engine_log(c);
  check_kv_settings(o.configs);
  check_declared_formats(o.configs);
  make_directories(o.out_dir);
  GateResult result;
  result.shard = o.shard;

  // The model's context bounds the buckets: the servers' or the checkpoint's, or --max-context.
  const GatePlan plan = plan_gate(o, true);
  const std::vector<PlannedTask>& tasks = plan.tasks;
  result.skipped_tasks = plan.skipped_tasks;
  result.max_context = plan.max_context;
  result.max_context_source = plan.max_context_source;
  for (const PlannedTask& p : tasks)
    result.tasks.push_back({.task = p.spec->task, .tasks_path = p.tasks_path, .buckets = p.buckets});
  const std::unique_ptr<TokenCounter> counter = open_counter(o, tasks);
  check_or_record_plan(o.out_dir, generation_plan(o, tasks, counter.get()), o.shard);

  // 1. Trials, once; every shard generates all of them (their sha256 in gate.json shows it).
  make_directories(o.out_dir + "/tasks");
  std::map<std::string, std::string> sha;
  for (const PlannedTask& p : tasks) {
    if (fs::exists(p.tasks_path)) {
      log_info("gate: " + p.spec->task + ": trials already in " + p.tasks_path);
    } else {
      const std::vector<Trial> trials =
          generate_task(*p.spec, p.buckets,
                        {.seed = o.suite.seed, .counter = counter.get(), .golden_prompts = o.golden_prompts, .gsm8k_data = o.gsm8k_data,
                         .threads = o.gen_threads});
      if (trials.empty()) throw Error(p.spec->where + ": the generator made no trials: check the task's options");
      write_tasks(p.tasks_path, trials);
      log_info("gate: " + p.spec->task + ": " + std::to_string(trials.size()) + " trials -> " + p.tasks_path);
    }
    sha[p.spec->task] = sha256_file(p.tasks_path);
  }
  record_trials_and_configurations(o.out_dir, sha, o.configs,
                                   {{"suite_source", o.suite.source},
                                    {"max_context", plan.max_context},
                                    {"max_context_source", plan.max_context_source},
                                    {"skipped_tasks", plan.skipped_tasks}});

  // 2. Every configuration on every task (each run resumes what its journal holds).
  const std::size_t total = o.configs.size() * tasks.size();
  std::size_t step = 0;
  const std::string shard_note = o.shard.active() ? " (shard " + shard_text(o.shard) + ")" : "";
  for (const Configuration& c : o.configs)
    for (const PlannedTask& p : tasks) {
      ++step;
      log_info("gate: [" + std::to_string(step) + "/" + std::to_string(total) + "] " + c.label + " / " + p.spec->task + shard_note);
      runner::RunSessionOptions s;
      s.tasks_path = p.tasks_path;
      s.out_dir = o.out_dir + "/runs/" + c.label + "/" + p.spec->task;
      s.label = c.label;
      s.backend = c.backend;
      s.kv_format = c.kv_format;
      s.sampling = p.spec->sampling;
      s.repeats = p.spec->repeats;
      s.shard = o.shard;
      s.concurrency = o.concurrency;
      s.progress = o.progress;
      s.max_error_rate = 1.0;  // the comparison gates the error rate (the suite's max_error_rate)
      s.engine_log = c.engine_log;  // `kvgate run --engine-log`: provenance in run.json engine.log
      const runner::RunSessionResult r = runner::run_session(s);
      if (r.exit_code >= 128) {  // stopped by a signal: what ran is kept; the same command resumes
        result.stopped = true;
        result.exit_code = r.exit_code;
        return result;
      }
      result.runs.push_back({.label = c.label,
                             .task = p.spec->task,
                             .dir = s.out_dir,
                             .results = r.summary.value("results", std::size_t{0}),
                             .expected = r.summary.value("expected", std::size_t{0}),
                             .complete = r.summary.value("complete", false)});
    }

  // 3. Join, compare, report; a shard leaves that to the merge.
  if (o.shard.active()) {
    result.exit_code = 0;
    return result;
  }
  compare_and_report(result, o, tasks);
  return result;
}

}  // namespace kvgate::gate
