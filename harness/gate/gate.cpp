#include "gate/gate.h"

#include <filesystem>
#include <iostream>

#include "compare/compare.h"
#include "compare/comparison_json.h"
#include "compare/text_table.h"
#include "core/atomic_file.h"
#include "core/error.h"
#include "core/jsonl.h"
#include "core/log.h"
#include "core/manifest.h"
#include "core/run_dir.h"
#include "core/version.h"
#include "gate/engine_log.h"
#include "gate/gate_reports.h"
#include "gate/lengths.h"
#include "gate/trial_gen.h"
#include "runner/run_session.h"

namespace kvgate::gate {

using nlohmann::json;
namespace fs = std::filesystem;

namespace {

constexpr const char* kGateSchema = "kvgate-gate/1";

struct PlannedTask {
  const TaskSpec* spec = nullptr;
  std::vector<std::int64_t> buckets{};
  std::string tasks_path{};
};

std::string task_file(const std::string& dir, const std::string& task) { return dir + "/tasks/" + task + ".jsonl"; }
std::string run_dir(const std::string& dir, const std::string& label) { return dir + "/runs/" + label; }

// What makes the trials: a resumed gate must generate the very same ones.
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

// DIR/gate.json: the plan the trials came from and the configurations run so far. A re-run with the
// same suite and inputs resumes; another one is refused rather than mixing two gates in one DIR.
void check_or_record_plan(const std::string& dir, const json& plan) {
  const std::string path = dir + "/gate.json";
  if (fs::exists(path)) {
    const json old = json::parse(read_file(path), nullptr, false);
    if (old.is_discarded() || !old.is_object() || old.value("schema", "") != kGateSchema)
      throw Error(path + ": not a kvgate gate record: pass another --out (an empty or new directory)");
    if (old.value("plan", json()) != plan) {
      std::string what;
      const json& a = old["plan"];
      for (const char* k : {"suite", "seed", "tasks", "token_counter", "golden_prompts", "gsm8k_data"})
        if (a.value(k, json()) != plan.value(k, json())) what += (what.empty() ? "" : ", ") + std::string(k);
      throw Error(dir + ": holds a gate made with another " + (what.empty() ? std::string("plan") : what) +
                  "; its trials and runs belong to that one: re-run with the same suite and inputs to resume, or pass another --out");
    }
    return;
  }
  write_file_atomic(path, json{{"schema", kGateSchema}, {"kvgate_version", version()}, {"created_at", utc_now_rfc3339()},
                               {"plan", plan}}
                              .dump(2) +
                              "\n");
}

std::unique_ptr<TokenCounter> open_counter(const GateOptions& o, const std::vector<PlannedTask>& tasks) {
  bool needed = false;
  for (const PlannedTask& p : tasks) needed |= is_long_context(p.spec->task);
  if (!needed) return nullptr;
  if (!o.tokenizer.empty() || !o.tokenize_url.empty())
    return open_token_counter({.tokenizer_path = o.tokenizer, .tokenize_url = o.tokenize_url, .model = o.tokenize_model});
  for (const Configuration& c : o.configs)
    if (c.backend.kind == "reference") {
      const std::string tok = c.backend.reference.model_dir + "/tokenizer.json";
      if (!fs::is_regular_file(tok))
        throw Error(c.backend.reference.model_dir + ": no tokenizer.json: the reference decoder needs the checkpoint's tokenizer");
      return open_token_counter({.tokenizer_path = tok, .tokenize_url = "", .model = ""});
    }
  log_warn("gate: lengths are estimated (about 4 bytes a token): pass --tokenizer tokenizer.json of the served model, or "
           "--tokenize-url URL of a vLLM/SGLang server, for exact lengths");
  return make_estimating_token_counter();
}

// One configuration's task runs joined into DIR/runs/<label>/ (run.json + results.jsonl): what
// compare reads, and what `kvgate compare` and `kvgate report` read too.
std::shared_ptr<const RunDir> join_runs(const std::string& dir, const Configuration& c, const std::vector<PlannedTask>& tasks) {
  auto joined = std::make_shared<RunDir>();
  joined->path = run_dir(dir, c.label);
  RunManifest& m = joined->manifest;
  json per_task = json::object();
  std::string results;
  for (const PlannedTask& p : tasks) {
    const std::string sub = joined->path + "/" + p.spec->task;
    RunDir r = load_run_dir(sub);
    if (m.kvgate_version.empty()) {
      m = r.manifest;
      m.extra = json::object();
      m.sampling = json::object();
      m.tasks_path = dir + "/tasks";
      m.tasks_sha256.clear();
    }
    if (!r.manifest.started_at.empty() && (m.started_at.empty() || r.manifest.started_at < m.started_at))
      m.started_at = r.manifest.started_at;
    if (r.manifest.ended_at > m.ended_at) m.ended_at = r.manifest.ended_at;
    per_task[p.spec->task] = {{"run", sub},
                              {"tasks_path", r.manifest.tasks_path},
                              {"tasks_sha256", r.manifest.tasks_sha256},
                              {"sampling", r.manifest.sampling},
                              {"repeats", p.spec->repeats},
                              {"summary", r.manifest.extra.value("summary", json())}};
    for (ResultRecord& rec : r.results.records) {
      results += to_json(rec).dump() + "\n";
      joined->results.records.push_back(std::move(rec));
    }
    joined->results.torn_tail_bytes += r.results.torn_tail_bytes;
  }
  m.label = c.label;
  m.extra["gate_tasks"] = per_task;
  m.extra["joined_by"] = "kvgate gate: the task runs under this directory, one after another";
  write_file_atomic(results_path(joined->path), results);
  write_manifest(manifest_path(joined->path), m);
  return joined;
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
  if (o.suite.history && o.history_db.empty())
    throw Error("--suite " + o.suite.name + ": this suite keeps a history: pass --history FILE (e.g. --history nightly/history.jsonl)");
  for (const Configuration& c : o.configs) check_engine_log(c);
  make_directories(o.out_dir);
  GateResult result;

  // The model's context bounds the buckets: the servers' or the checkpoint's, or --max-context.
  std::int64_t max_context = o.max_context;
  std::string context_source = "--max-context";
  if (max_context == 0) max_context = discover_max_context(o.configs, &context_source);
  if (max_context > 0) log_info("gate: maximum context " + std::to_string(max_context) + " tokens (" + context_source + ")");

  std::vector<PlannedTask> tasks;
  for (const TaskSpec& t : o.suite.tasks) {
    if (t.optional && t.task == "golden" && o.golden_prompts.empty() && !t.options.contains("prompts")) {
      result.skipped_tasks.push_back(t.task);
      log_info("gate: " + t.task + " skipped: no prompts given (--golden FILE adds your production prompts)");
      continue;
    }
    PlannedTask p{.spec = &t, .tasks_path = task_file(o.out_dir, t.task)};
    if (t.lengths) {
      const ResolvedLengths l = resolve_lengths(*t.lengths, max_context, generation_reserve(t), t.where);
      if (!l.dropped.empty()) {
        std::string d;
        for (std::int64_t b : l.dropped) d += (d.empty() ? "" : ", ") + std::to_string(b);
        log_warn(t.where + ": buckets " + d + " are beyond the model's context less the generated tokens (" +
                 std::to_string(l.limit) + "): left out");
      }
      p.buckets = l.buckets;
    }
    tasks.push_back(std::move(p));
  }
  if (tasks.empty()) throw Error("--suite " + o.suite.name + ": every task was skipped: nothing to gate");

  result.max_context = max_context;
  if (max_context > 0) result.max_context_source = context_source;
  for (const PlannedTask& p : tasks)
    result.tasks.push_back({.task = p.spec->task, .tasks_path = p.tasks_path, .buckets = p.buckets});
  const std::unique_ptr<TokenCounter> counter = open_counter(o, tasks);
  check_or_record_plan(o.out_dir, generation_plan(o, tasks, counter.get()));

  // 1. Trials, once.
  make_directories(o.out_dir + "/tasks");
  for (const PlannedTask& p : tasks) {
    if (fs::exists(p.tasks_path)) {
      log_info("gate: " + p.spec->task + ": trials already in " + p.tasks_path);
      continue;
    }
    const std::vector<Trial> trials =
        generate_task(*p.spec, p.buckets,
                      {.seed = o.suite.seed, .counter = counter.get(), .golden_prompts = o.golden_prompts, .gsm8k_data = o.gsm8k_data,
                       .threads = o.gen_threads});
    if (trials.empty()) throw Error(p.spec->where + ": the generator made no trials: check the task's options");
    write_tasks(p.tasks_path, trials);
    log_info("gate: " + p.spec->task + ": " + std::to_string(trials.size()) + " trials -> " + p.tasks_path);
  }

  // 2. Every configuration on every task (each run resumes what its journal holds).
  const std::size_t total = o.configs.size() * tasks.size();
  std::size_t step = 0;
  for (const Configuration& c : o.configs)
    for (const PlannedTask& p : tasks) {
      ++step;
      log_info("gate: [" + std::to_string(step) + "/" + std::to_string(total) + "] " + c.label + " / " + p.spec->task);
      runner::RunSessionOptions s;
      s.tasks_path = p.tasks_path;
      s.out_dir = run_dir(o.out_dir, c.label) + "/" + p.spec->task;
      s.label = c.label;
      s.backend = c.backend;
      s.kv_format = c.kv_format;
      s.sampling = p.spec->sampling;
      s.repeats = p.spec->repeats;
      s.concurrency = o.concurrency;
      s.progress = o.progress;
      s.max_error_rate = 1.0;  // the comparison gates the error rate (the suite's max_error_rate)
      apply_engine_log(s, c);
      const runner::RunSessionResult r = runner::run_session(s);
      if (r.exit_code >= 128) {  // stopped by a signal: what ran is kept; the same command resumes
        result.stopped = true;
        result.exit_code = r.exit_code;
        return result;
      }
    }

  // 3. Join, compare, report.
  std::vector<std::shared_ptr<const RunDir>> runs;
  for (const Configuration& c : o.configs) runs.push_back(join_runs(o.out_dir, c, tasks));
  result.comparison = compare::compare_loaded(runs, compare_options(o.suite));
  result.verdict = result.comparison.verdict;
  result.exit_code = compare::exit_code(result.verdict);
  write_gate_reports(result, o);
  return result;
}

}  // namespace kvgate::gate
