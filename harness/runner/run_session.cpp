#include "harness/runner/run_session.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <mutex>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <map>

#include "harness/core/atomic_file.h"
#include "harness/core/error.h"
#include "harness/core/log.h"
#include "harness/core/manifest.h"
#include "harness/provenance/engine_log.h"
#include "harness/core/result.h"
#include "harness/core/results_writer.h"
#include "harness/core/run_dir.h"
#include "harness/core/version.h"
#include "harness/decoder/device.h"
#include "harness/decoder/kernel_switches.h"
#include "harness/decoder/kv_flags.h"
#include "datasets/graders.h"
#include "harness/runner/engine_metadata.h"
#include "harness/runner/progress.h"
#include "harness/runner/run_journal.h"
#include "harness/runner/run_summary.h"
#include "harness/runner/stop_signal.h"
#include "harness/runner/url.h"

namespace kvgate::runner {

using nlohmann::json;
namespace fs = std::filesystem;

namespace {

std::string shard_text(const Shard& s) { return std::to_string(s.index) + "/" + std::to_string(s.count); }

// Every trial must be gradable and match --api before anything is sent.
void check_tasks(const TasksFile& tasks, const RunSessionOptions& o) {
  std::map<std::string, std::size_t> unknown;
  std::size_t wrong_api = 0;
  std::string first_wrong;
  const bool chat = o.backend.http.api == Api::chat;
  for (const Trial& t : tasks.trials) {
    if (!find_grader(t.grader_name())) ++unknown[t.grader_name()];
    if (o.backend.kind == "openai" && t.is_chat() != chat && !wrong_api++) first_wrong = t.id;
  }
  if (!unknown.empty()) {
    std::string names, known;
    for (const auto& [name, n] : unknown) names += (names.empty() ? "" : ", ") + name + " (" + std::to_string(n) + " trials)";
    for (const GraderInfo& g : graders()) known += (known.empty() ? "" : ", ") + std::string(g.name);
    throw Error(tasks.path + ": unknown grader " + names + "; this kvgate knows: " + known +
                ": regenerate the tasks file, or use a kvgate that has the grader");
  }
  if (wrong_api)
    throw Error(tasks.path + ": " + std::to_string(wrong_api) + " trials (first: " + first_wrong + ") have " +
                (chat ? "a \"prompt\" (completions input) but --api is chat: pass --api completions"
                      : "\"messages\" (chat input) but --api is completions: pass --api chat"));
}

void warn_about_transport(const RunSessionOptions& o) {
  if (o.backend.kind != "openai") return;
  if (o.backend.http.insecure) log_warn("--insecure: TLS certificates are not verified; anyone on the path can read or alter the traffic");
  for (const std::string& u : o.backend.http.endpoints) {
    const EndpointUrl e = parse_endpoint(u);
    if (e.scheme == "http" && !e.loopback)
      log_warn(e.redacted + ": plain http:// to another host: prompts" +
               std::string(o.backend.http.api_key.empty() ? "" : ", answers and the API key") +
               " travel unencrypted; use https:// or an SSH tunnel");
  }
}

// Prompt + max_tokens past the server's context would be cut or refused: say so before sending.
void warn_about_context(const TasksFile& tasks, const SamplingParams& sampling, const json& engine) {
  const json* summary = engine.is_object() && engine.contains("summary") ? &engine["summary"] : nullptr;
  if (!summary || !summary->contains("max_model_len") || !(*summary)["max_model_len"].is_number_integer()) return;
  const std::int64_t limit = (*summary)["max_model_len"].get<std::int64_t>();
  std::size_t over = 0;
  std::string first;
  for (const Trial& t : tasks.trials) {
    auto it = t.meta.find("prompt_tokens");
    if (it == t.meta.end() || !it->is_number_integer()) continue;
    const int max_tokens = t.input.contains("max_tokens") && t.input["max_tokens"].is_number_integer()
                               ? t.input["max_tokens"].get<int>()
                               : sampling.max_tokens;
    if (it->get<std::int64_t>() + max_tokens > limit && !over++) first = t.id;
  }
  if (over)
    log_warn(std::to_string(over) + " trials (first: " + first + ") need more than the server's context of " +
             context_limit_text(*summary) + " (prompt + max_tokens): the server will refuse or truncate them");
}

struct Stopwatch {
  std::chrono::steady_clock::time_point t = std::chrono::steady_clock::now();
  std::string lap() {  // "0.123 s" since the last lap
    const auto now = std::chrono::steady_clock::now();
    const double s = std::chrono::duration<double>(now - t).count();
    t = now;
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.3f s", s);
    return buf;
  }
};

// The fields summarize_results reads, without the answer text.
ResultRecord summary_fields(const ResultRecord& r) {
  ResultRecord s;
  s.id = r.id;
  s.task = r.task;
  s.repeat = r.repeat;
  s.score = r.score;
  s.passed = r.passed;
  s.error = r.error;
  if (auto it = r.extra.find("error_kind"); it != r.extra.end()) s.extra["error_kind"] = *it;
  return s;
}

// The run directory's name ("runs/fp8/" -> "fp8").
std::string default_label(const std::string& dir) {
  std::string d = fs::absolute(dir).lexically_normal().string();
  while (d.size() > 1 && d.back() == '/') d.pop_back();
  const std::string name = fs::path(d).filename().string();
  return name.empty() ? "run" : name;
}

std::string joined(const std::vector<std::string>& v) {
  std::string s;
  for (const auto& x : v) s += (s.empty() ? "" : ",") + x;
  return s;
}

}  // namespace

std::string read_api_key(const std::string& name, bool name_given) {
  const std::string var = name_given ? name : "OPENAI_API_KEY";
  const char* v = std::getenv(var.c_str());
  if (name_given && (!v || !*v))
    throw Error("--api-key-env " + var + ": the environment variable is not set or empty: export it first");
  return v ? v : "";
}

json run_identity(const RunSessionOptions& o, const std::string& tasks_sha256) {
  json id = {{"backend", o.backend.kind}, {"tasks_sha256", tasks_sha256}, {"sampling", to_json(o.sampling)},
             {"kv_format", o.kv_format.empty() ? json(nullptr) : json(o.kv_format)},
             {"shard", o.shard.active() ? json(shard_text(o.shard)) : json(nullptr)}};
  if (o.backend.kind == "openai") {
    std::vector<std::string> urls;
    for (const std::string& u : o.backend.http.endpoints) urls.push_back(parse_endpoint(u).redacted);
    std::sort(urls.begin(), urls.end());
    id["endpoints"] = urls;
    id["model"] = o.backend.http.model;
    id["api"] = to_string(o.backend.http.api);
    id["stream"] = o.backend.http.stream;
  } else {
    id["model_dir"] = o.backend.reference.model_dir;
    id["device"] = decoder::resolve_device(o.backend.reference.device);  // "" is the default, resolved
    id["kv"] = decoder::kv_identity({.format = o.backend.reference.kv_format, .params = o.backend.reference.kv_params});
    // The numerics as resolved, not as given: `--numerics engine` on CUDA is its default run, and a
    // run whose recorded mode differs from this device's default is refused, not continued in it.
    json switches = o.backend.reference.kernel_switches;
    const std::string numerics = switches.is_object() ? switches.value("numerics", "") : "";
    id["attention_numerics"] = decoder::numerics_name(decoder::resolve_numerics(numerics, decoder::default_numerics(id["device"])));
    if (switches.is_object()) switches.erase("numerics");
    if (!switches.empty()) id["kernel_switches"] = switches;
  }
  return id;
}

RunSessionResult run_session(const RunSessionOptions& o) {
  if (o.repeats < 1) throw Error("--repeats must be at least 1");
  warn_about_transport(o);  // checks the endpoint URLs first: a typo fails before a big tasks file is read
  Stopwatch clock;
  const TasksFile tasks = load_tasks(o.tasks_path);
  log_verbose("read " + std::to_string(tasks.trials.size()) + " trials in " + clock.lap());
  check_tasks(tasks, o);
  const json identity = run_identity(o, tasks.sha256);
  // Read before anything is written: an unreadable log is bad input (exit 2), a log with no known line a warning.
  const json engine_log = o.engine_log.empty() ? json() : provenance::parse_engine_log(o.engine_log);
  if (!engine_log.is_null()) {
    for (const json& w : engine_log["warnings"]) log_warn(w.get<std::string>());
    if (!engine_log["facts"].empty()) log_info("engine log: " + provenance::facts_line(engine_log));
  }

  make_directories(o.out_dir);
  RunDirLock lock(o.out_dir);
  const std::string mpath = manifest_path(o.out_dir), rpath = results_path(o.out_dir);

  // Resume, refuse, or set aside.
  RunManifest previous;
  bool have_previous = false;
  const bool have_results = fs::exists(rpath) && fs::file_size(rpath) > 0;
  if (fs::exists(mpath) || have_results) {
    std::vector<std::string> diffs;
    std::string hint;  // where the attention numerics differ, the flag that resumes the run in its own mode
    if (fs::exists(mpath)) {
      previous = read_manifest(mpath);
      have_previous = true;
      auto it = previous.extra.find("identity");
      if (it == previous.extra.end())
        diffs.push_back("run.json has no \"identity\" (not written by kvgate run)");
      else {
        const json before = comparable_identity(*it);
        diffs = identity_differences(before, identity);
        if (const json n = before.value("attention_numerics", json()); n.is_string() && n != identity.value("attention_numerics", json()))
          hint = " (here --numerics " + n.get<std::string>() + ")";
      }
    } else {
      diffs.push_back("results.jsonl exists without run.json");
    }
    if (!diffs.empty()) {
      if (!o.force_new) {
        std::string list;
        for (const auto& d : diffs) list += "\n  " + d;
        throw Error(o.out_dir + ": holds a run with another configuration:" + list +
                    "\nre-run with the same settings to resume it" + hint +
                    ", pass another --out, or --force-new to set it aside (moved to " + o.out_dir +
                    "/superseded/) and start over");
      }
      const std::string moved = supersede_run(o.out_dir);
      log_warn("--force-new: the previous run was moved to " + moved);
      have_previous = false;
      previous = RunManifest{};
    }
  }
  if (o.retry_errors) {
    const std::size_t dropped = drop_error_lines(rpath);
    if (dropped) log_info("--retry-errors: " + std::to_string(dropped) + " error lines removed from the journal; those pairs run again");
  }

  // The backend first: a reference backend that cannot load its model or KV format fails here,
  // before the run directory gets a results file.
  StopSignals signals;
  BackendOptions bo = o.backend;
  bo.http.cancel = &signals.flag();
  bo.reference.cancel = &signals.flag();
  std::unique_ptr<Backend> backend = make_backend(bo);

  ResultsWriter writer(rpath, o.fsync);  // repairs a torn last line left by a killed run
  const ResultsFile journal = read_results(rpath);
  const DoneSet done = journal_pairs(journal.records, rpath, tasks, o.shard);
  const std::vector<WorkItem> work = plan_work(tasks.trials, o.repeats, o.shard, done);
  const std::size_t total = shard_size(tasks.trials.size(), o.repeats, o.shard);
  const std::size_t done_in_scope = total - work.size();
  log_verbose("read the journal (" + std::to_string(journal.records.size()) + " lines) in " + clock.lap());
  const json description = backend->describe();  // asks the engine about itself
  log_verbose("asked the engine about itself in " + clock.lap());

  RunManifest m = have_previous ? previous : RunManifest{};
  if (!o.label.empty()) m.label = o.label;
  if (m.label.empty()) m.label = default_label(o.out_dir);
  m.kvgate_version = version();
  m.kvgate_commit = git_commit();
  m.backend = o.backend.kind;
  if (o.backend.kind == "openai") {
    std::vector<std::string> urls;
    for (const std::string& u : o.backend.http.endpoints) urls.push_back(parse_endpoint(u).redacted);
    m.endpoint = joined(urls);
    m.model = o.backend.http.model;
    m.api = to_string(o.backend.http.api);
  } else {
    m.model = o.backend.reference.model_dir;
  }
  const json previous_log = m.engine.is_object() && m.engine.contains("log") ? m.engine["log"] : json();
  m.engine = description.contains("engine") ? description["engine"] : json::object();
  if (!engine_log.is_null()) m.engine["log"] = engine_log;
  else if (!previous_log.is_null()) m.engine["log"] = previous_log;  // a resume without --engine-log keeps it
  // The reference decoder's resolved format record (every parameter, scales, bytes per token);
  // for a server, the format the user declared.
  if (description.contains("kv") && description["kv"].is_object())
    m.kv = description["kv"];
  else
    m.kv = {{"format", o.kv_format.empty() ? json(nullptr) : json(o.kv_format)}};
  if (m.engine.contains("summary") && m.engine["summary"].contains("kv_cache_dtype"))
    m.kv["engine_reported"] = m.engine["summary"]["kv_cache_dtype"];
  m.sampling = to_json(o.sampling);
  m.sampling["seed_per_repeat"] = "derive_seed(seed, id + \"#\" + repeat) & 0x7fffffff";
  m.tasks_path = o.tasks_path;
  m.tasks_sha256 = tasks.sha256;
  if (m.started_at.empty()) m.started_at = utc_now_rfc3339();
  m.ended_at.clear();
  m.extra["identity"] = identity;
  m.extra["backend_description"] = description;
  m.extra["run"] = {{"repeats", std::max(o.repeats, m.extra.contains("run") ? m.extra["run"].value("repeats", 1) : 1)},
                    {"concurrency", o.concurrency},
                    {"timeout_s", o.backend.http.timeout_s},
                    {"max_retries", o.retry.max_retries},
                    {"retry_base_delay_s", o.retry.base_delay_s},
                    {"retry_max_delay_s", o.retry.max_delay_s},
                    {"fsync", o.fsync},
                    {"shard", o.shard.active() ? json({{"index", o.shard.index}, {"count", o.shard.count}}) : json(nullptr)}};
  if (!m.extra.contains("sessions") || !m.extra["sessions"].is_array()) m.extra["sessions"] = json::array();
  json session = {{"started_at", utc_now_rfc3339()}, {"kvgate_version", version()}, {"status", "running"},
                  {"to_run", work.size()}, {"done_before", done_in_scope}};
  m.extra["sessions"].push_back(session);
  m.extra["status"] = "running";
  write_manifest(mpath, m);

  if (m.engine.contains("summary") && m.engine["summary"].contains("kv_cache_dtype") && !o.kv_format.empty())
    log_info("engine reports kv_cache_dtype " + m.engine["summary"]["kv_cache_dtype"].dump() + "; --kv-format says " + o.kv_format);
  warn_about_context(tasks, o.sampling, m.engine);
  if (journal.torn_tail_bytes) log_info("the journal's torn last line was discarded; that pair runs again");
  log_info(m.label + ": " + std::to_string(total) + " pairs (" + std::to_string(done_in_scope) + " already done, " +
           std::to_string(work.size()) + " to run) at concurrency " + std::to_string(o.concurrency));

  RunCounters counters;
  RunnerOptions ro{.concurrency = o.concurrency,
                   .retry = o.retry,
                   .jitter_seed = derive_seed(o.sampling.seed.value_or(0), "retry-jitter"),
                   .cancel = &signals.flag(),
                   .grade = o.grade ? o.grade : GradeFn(grade_trial),
                   .counters = &counters};
  const bool tty = ::isatty(2) == 1;
  ProgressMode mode = parse_progress_mode(o.progress, tty);
  if (log_level() == LogLevel::quiet || work.empty()) mode = ProgressMode::none;
  RunnerStats stats;
  std::mutex written_mu;
  std::vector<ResultRecord> written;  // this session's lines, the fields the summary needs
  clock.lap();
  {
    ProgressReporter progress(ProgressOptions{.mode = mode, .interval_s = o.progress_interval_s, .total = total, .done_before = done_in_scope},
                              counters);
    stats = run_work(work, *backend, o.sampling, [&](const ResultRecord& r) {
      writer.append(r);
      std::lock_guard<std::mutex> lock(written_mu);
      written.push_back(summary_fields(r));
    }, ro);
    progress.stop();
  }

  log_verbose("ran " + std::to_string(stats.written) + " pairs in " + clock.lap());
  // The summary counts the whole journal: earlier sessions' lines and this one's.
  std::vector<ResultRecord> all = journal.records;
  all.insert(all.end(), std::make_move_iterator(written.begin()), std::make_move_iterator(written.end()));
  RunSessionResult result;
  result.summary = summarize_results(all, total);
  result.summary["retries_this_session"] = stats.retries;
  result.summary["retry_kinds_this_session"] = stats.retry_kinds;
  const bool interrupted = signals.signal_number() != 0;
  const bool complete = result.summary.value("complete", false);
  const std::string status = complete ? "complete" : interrupted ? "interrupted" : "incomplete";
  json& s = m.extra["sessions"].back();
  s["ended_at"] = utc_now_rfc3339();
  s["status"] = status;
  s["written"] = stats.written;
  s["errors"] = stats.errors;
  s["retries"] = stats.retries;
  s["attempts"] = stats.attempts;
  s["wall_s"] = stats.wall_s;
  s["requests_per_s"] = stats.wall_s > 0 ? static_cast<double>(stats.attempts) / stats.wall_s : 0.0;
  m.extra["status"] = status;
  m.extra["summary"] = result.summary;
  m.ended_at = utc_now_rfc3339();
  write_manifest(mpath, m);

  std::cout << m.label << ": " << summary_text(result.summary) << std::flush;
  if (interrupted) {
    log_warn("stopped by a signal: " + std::to_string(result.summary.value("results", 0)) + " results kept; re-run the same command to resume");
    result.exit_code = 128 + signals.signal_number();
    return result;
  }
  const double rate = result.summary.value("error_rate", 0.0);
  if (rate > o.max_error_rate) {
    log_warn("error rate " + std::to_string(rate) + " is above --max-error-rate " + std::to_string(o.max_error_rate));
    result.exit_code = 1;
  }
  return result;
}

}  // namespace kvgate::runner
