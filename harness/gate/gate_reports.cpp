#include "gate/gate_reports.h"

#include <iostream>

#include "compare/comparison_json.h"
#include "compare/text_table.h"
#include "core/atomic_file.h"

namespace kvgate::gate {

using nlohmann::json;

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
    }
    configs.push_back(j);
  }
  json tasks = json::array();
  for (const GateResult::TaskPlan& t : r.tasks) tasks.push_back({{"task", t.task}, {"buckets", t.buckets}, {"tasks", t.tasks_path}});
  return {{"suite", o.suite.name},
          {"suite_source", o.suite.source},
          {"out", o.out_dir},
          {"configurations", configs},
          {"tasks", tasks},
          {"skipped_tasks", r.skipped_tasks},
          {"max_context", r.max_context > 0 ? json(r.max_context) : json(nullptr)},
          {"max_context_source", r.max_context_source.empty() ? json(nullptr) : json(r.max_context_source)},
          {"history", o.history_db.empty() ? json(nullptr) : json(o.history_db)}};
}

void write_gate_reports(GateResult& r, const GateOptions& o) {
  const std::string dir = o.out_dir;
  json j = compare::to_json(r.comparison);
  j["gate"] = gate_record(r, o);
  const std::string json_path = dir + "/report.json";
  write_file_atomic(json_path, j.dump(2) + "\n");
  r.reports.push_back({.format = "json", .path = json_path});
  const std::string text = compare::format_text(r.comparison);
  write_file_atomic(dir + "/summary.txt", text);
  r.reports.push_back({.format = "text", .path = dir + "/summary.txt"});
  r.main_report = json_path;
}

}  // namespace kvgate::gate
