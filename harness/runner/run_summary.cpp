#include "harness/runner/run_summary.h"

#include <cstdio>
#include <map>

namespace kvgate::runner {

using nlohmann::json;

namespace {
struct Tally {
  std::size_t results = 0, errors = 0, passed = 0;
  double score = 0.0;
  json to_json() const {
    const std::size_t answered = results - errors;
    return {{"results", results},
            {"errors", errors},
            {"error_rate", results ? static_cast<double>(errors) / static_cast<double>(results) : 0.0},
            {"answered", answered},
            {"passed", passed},
            {"pass_rate", answered ? json(static_cast<double>(passed) / static_cast<double>(answered)) : json(nullptr)},
            {"mean_score", answered ? json(score / static_cast<double>(answered)) : json(nullptr)}};
  }
  void add(const ResultRecord& r) {
    ++results;
    if (r.error) {
      ++errors;
      return;
    }
    passed += r.passed;
    score += r.score;
  }
};

std::string pct(const json& v) {
  if (!v.is_number()) return "n/a";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2f%%", 100.0 * v.get<double>());
  return buf;
}
}  // namespace

json summarize_results(const std::vector<ResultRecord>& records, std::size_t expected) {
  Tally all;
  std::map<std::string, Tally> by_task;
  std::map<std::string, std::size_t> kinds;
  for (const ResultRecord& r : records) {
    all.add(r);
    by_task[r.task].add(r);
    if (r.error) {
      auto it = r.extra.find("error_kind");
      ++kinds[it != r.extra.end() && it->is_string() ? it->get<std::string>() : "unknown"];
    }
  }
  json s = all.to_json();
  s["expected"] = expected;
  s["complete"] = records.size() >= expected;
  s["error_kinds"] = kinds;
  json tasks = json::object();
  for (const auto& [task, t] : by_task) tasks[task] = t.to_json();
  s["by_task"] = tasks;
  return s;
}

std::string summary_text(const json& s) {
  std::string out = "results " + std::to_string(s.value("results", 0)) + "/" + std::to_string(s.value("expected", 0)) +
                    (s.value("complete", false) ? "" : " (incomplete: re-run the same command to resume)") + "\n";
  out += "errors " + std::to_string(s.value("errors", 0)) + " (" + pct(s["error_rate"]) + ")";
  if (s.contains("error_kinds") && !s["error_kinds"].empty()) {
    std::string kinds;
    for (const auto& item : s["error_kinds"].items())
      kinds += (kinds.empty() ? "" : ", ") + item.key() + " " + std::to_string(item.value().get<std::size_t>());
    out += ": " + kinds;
  }
  out += "\n";
  out += "passed " + std::to_string(s.value("passed", 0)) + "/" + std::to_string(s.value("answered", 0)) + " answered (" +
         pct(s["pass_rate"]) + ")\n";
  if (s.contains("by_task"))
    for (const auto& item : s["by_task"].items()) {
      const json& t = item.value();
      out += "  " + item.key() + ": " + std::to_string(t.value("passed", 0)) + "/" + std::to_string(t.value("answered", 0)) +
             " passed (" + pct(t["pass_rate"]) + "), mean score " +
             (t["mean_score"].is_number() ? std::to_string(t["mean_score"].get<double>()).substr(0, 6) : std::string("n/a")) +
             ", errors " + std::to_string(t.value("errors", 0)) + "\n";
    }
  return out;
}

}  // namespace kvgate::runner
