#include "harness/gate/gate_reports.h"

#include <filesystem>
#include <iostream>

#include "harness/compare/comparison_json.h"
#include "harness/compare/text_table.h"
#include "harness/core/atomic_file.h"
#include "harness/core/error.h"
#include "harness/core/jsonl.h"
#include "harness/core/manifest.h"
#include "harness/core/log.h"
#include "reports/history.h"
#include "reports/report_writer.h"
#include "reports/trial_texts.h"

namespace kvgate::gate {

using nlohmann::json;

namespace {

// The prompts of the trials the HTML shows in full, from the gate's own tasks files (one per task;
// the gate wrote them, so no sha256 is checked against a run's record).
reports::TrialTexts trial_texts(const GateResult& r) {
  const std::set<std::string> ids = reports::report_trial_ids(r.comparison);
  reports::TrialTexts all;
  if (ids.empty()) return all;
  for (const GateResult::TaskPlan& t : r.tasks) {
    reports::TrialTexts one = reports::load_trial_texts({}, ids, {.tasks_path = t.tasks_path});
    all.texts.merge(one.texts);
    all.source += (all.source.empty() ? "" : ", ") + one.source;
  }
  return all;
}

std::string command_line(const GateOptions& o) {
  std::string s = "kvgate gate --suite " + (o.suite.source == "built-in" ? o.suite.name : o.suite.source) + " --out " + o.out_dir;
  for (std::size_t i = 0; i < o.configs.size(); ++i) {
    const Configuration& c = o.configs[i];
    s += " [" + std::string(i == 0 ? "baseline " : "candidate ") + c.label + ": " +
         (c.backend.kind == "reference" ? "reference " + c.backend.reference.model_dir + " " + c.kv.name()
                                        : c.backend.http.endpoints.front() + " " + c.backend.http.model +
                                              (c.kv_format.empty() ? "" : " KV " + c.kv_format)) +
         "]";
  }
  return s;
}

// One gate is one night: a re-run of the same DIR (to resume, or to re-render) does not add its rows
// again. DIR/history-added.json lists the histories this gate was added to.
void append_history_once(const std::string& db, const std::string& compare_json, const std::string& dir) {
  const std::string marker = dir + "/history-added.json";
  json added = json::array();
  if (std::filesystem::exists(marker)) {
    added = json::parse(read_file(marker), nullptr, false);
    if (!added.is_array()) throw Error(marker + ": not the list kvgate gate writes: delete it to append this gate to the history again");
  }
  const std::string key = std::filesystem::weakly_canonical(db).string();
  for (const json& a : added)
    if (a.is_object() && a.value("db", "") == key) {
      log_info("gate: already added to the history " + db + " (" + marker + "); not added twice");
      return;
    }
  const reports::AddOutcome a = reports::add_to_history(db, compare_json, {});
  log_info("gate: history " + db + ": " + std::to_string(a.added) + " rows added" +
           (a.already_present ? ", " + std::to_string(a.already_present) + " already there" : ""));
  added.push_back({{"db", key}, {"rows", a.added}, {"at", utc_now_rfc3339()}});
  write_file_atomic(marker, added.dump(2) + "\n");
}

}  // namespace

json gate_record(const GateResult& r, const GateOptions& o) {
  json configs = json::array();
  for (std::size_t i = 0; i < o.configs.size(); ++i) {
    const Configuration& c = o.configs[i];
    json j = {{"label", c.label}, {"role", i == 0 ? "baseline" : "candidate"}, {"backend", c.backend.kind},
              {"run", o.out_dir + "/runs/" + c.label}};
    if (c.backend.kind == "reference") {
      j["model_dir"] = c.backend.reference.model_dir;
      j["kv_format"] = c.kv_format;
      j["device"] = c.backend.reference.device.empty() ? json(nullptr) : json(c.backend.reference.device);
    } else {
      j["model"] = c.backend.http.model;
      j["kv_format"] = c.kv_format.empty() ? json(nullptr) : json(c.kv_format);  // declared
    }
    if (!c.kv.format.empty()) j["kv"] = c.kv.record();  // every setting: scales (and sha256), skipped layers, switches
    configs.push_back(j);
  }
  json tasks = json::array();
  for (const GateResult::TaskPlan& t : r.tasks) tasks.push_back({{"task", t.task}, {"buckets", t.buckets}, {"tasks", t.tasks_path}});
  json files = json::object();
  for (const GateReport& f : r.reports) files[f.format] = f.path;
  json record = {{"suite", o.suite.name},
          {"suite_source", o.suite.source},
          {"out", o.out_dir},
          {"configurations", configs},
          {"tasks", tasks},
          {"skipped_tasks", r.skipped_tasks},
          {"max_context", r.max_context > 0 ? json(r.max_context) : json(nullptr)},
          {"max_context_source", r.max_context_source.empty() ? json(nullptr) : json(r.max_context_source)},
          {"reports", files},
          {"history", o.history_db.empty() ? json(nullptr) : json(o.history_db)}};
  // A gate merged from shards: which, and (--allow-partial) what was missing.
  if (!r.merged_from.empty()) record["shards"] = {{"merged_from", r.merged_from}, {"partial", !r.partial.empty()}, {"missing", r.partial}};
  return record;
}

void write_gate_reports(GateResult& r, const GateOptions& o) {
  const reports::ReportFiles files = reports::ReportFiles::in_directory(o.out_dir);
  const reports::TrialTexts texts = trial_texts(r);
  const reports::ReportContext ctx{.command = command_line(o), .trials = &texts, .sections = o.report_sections};
  r.reports = {{.format = "json", .path = files.json},
               {.format = "html", .path = files.html},
               {.format = "markdown", .path = files.markdown},
               {.format = "junit", .path = files.junit},
               {.format = "text", .path = o.out_dir + "/summary.txt"}};
  // The JSON: every number of the comparison (docs/compare-json.md), plus what the gate did.
  json j = json::parse(reports::make_report_writer(reports::ReportFormat::json)->render(r.comparison, ctx));
  j["gate"] = gate_record(r, o);
  write_file_atomic(files.json, j.dump(2, ' ', false, json::error_handler_t::replace) + "\n");
  for (const auto& [path, format] : {std::pair{files.html, reports::ReportFormat::html}, {files.markdown, reports::ReportFormat::markdown},
                                     {files.junit, reports::ReportFormat::junit}})
    reports::write_report(path, format, r.comparison, ctx);
  write_file_atomic(o.out_dir + "/summary.txt", compare::format_text(r.comparison));
  r.main_report = files.html;

  if (!o.history_db.empty()) append_history_once(o.history_db, files.json, o.out_dir);
}

}  // namespace kvgate::gate
