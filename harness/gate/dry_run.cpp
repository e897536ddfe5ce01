#include "harness/gate/dry_run.h"

#include <cstdio>
#include <fstream>

#include "harness/core/error.h"
#include "harness/gate/gate_dir.h"
#include "harness/gate/plan.h"
#include "harness/gate/trial_gen.h"
#include "datasets/gsm8k/gsm8k_data.h"

namespace kvgate::gate {

using nlohmann::json;

namespace {

std::size_t count_lines(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw Error(path + ": cannot be read: check the path (a dry run counts its lines)");
  std::size_t n = 0;
  for (std::string line; std::getline(in, line);)
    if (line.find_first_not_of(" \t\r") != std::string::npos) ++n;
  return n;
}

// Trials of a task without buckets: GSM8K's limit of its test problems, or the golden prompts.
std::size_t flat_trials(const TaskSpec& t, const GateOptions& o) {
  if (t.task == "gsm8k") {
    const std::string data = t.options.value("data", o.gsm8k_data);
    const std::size_t rows = data.empty() ? gsm8k_split("test").rows : count_lines(data);
    const std::size_t limit = t.options.contains("limit") ? t.options["limit"].get<std::size_t>() : rows;
    return std::min(rows, limit);
  }
  return count_lines(t.options.value("prompts", o.golden_prompts));  // golden: one trial a prompt
}

std::string describe_target(const Configuration& c) {
  if (c.backend.kind == "reference")
    return "reference decoder " + c.backend.reference.model_dir + " kv " + c.kv_format +
           (c.kv.plain() ? "" : " " + c.kv.record().dump(-1, ' ', false, json::error_handler_t::replace));
  std::string urls;
  for (const std::string& u : c.backend.http.endpoints) urls += (urls.empty() ? "" : " ") + u;
  return urls + " model " + c.backend.http.model + (c.kv_format.empty() ? "" : " kv " + c.kv_format + " (declared)");
}

std::size_t share(std::size_t n, int index, int count) {
  return n / static_cast<std::size_t>(count) + (static_cast<std::size_t>(index) < n % static_cast<std::size_t>(count) ? 1 : 0);
}

std::string human(double n) {
  char b[32];
  if (n >= 1e9) std::snprintf(b, sizeof b, "%.2fG", n / 1e9);
  else if (n >= 1e6) std::snprintf(b, sizeof b, "%.2fM", n / 1e6);
  else if (n >= 1e4) std::snprintf(b, sizeof b, "%.1fK", n / 1e3);
  else std::snprintf(b, sizeof b, "%.0f", n);
  return b;
}

}  // namespace

json dry_run_plan(const GateOptions& o, int shard_count) {
  const GatePlan plan = plan_gate(o, false);
  json tasks = json::array();
  std::size_t requests = 0, unknown_prompt_requests = 0;
  double prompt_tokens = 0, output_tokens = 0;
  std::vector<std::pair<std::string, std::pair<std::size_t, int>>> trial_counts;  // task -> (trials, repeats)
  for (const PlannedTask& p : plan.tasks) {
    const TaskSpec& t = *p.spec;
    const int max_out = generation_reserve(t);
    json buckets = json::array();
    std::size_t trials = 0;
    const auto add = [&](json bucket, std::size_t n, json prompt) {
      const std::size_t req = n * static_cast<std::size_t>(t.repeats);
      buckets.push_back({{"bucket", bucket}, {"trials", n}, {"repeats", t.repeats}, {"requests", req}, {"prompt_tokens", prompt},
                         {"max_output_tokens", max_out}});
      trials += n;
      requests += req;
      output_tokens += static_cast<double>(req) * max_out;
      if (prompt.is_null()) unknown_prompt_requests += req;
      else prompt_tokens += static_cast<double>(req) * prompt.get<double>();
    };
    if (t.lengths)
      for (std::int64_t b : p.buckets) add(b, static_cast<std::size_t>(t.per_bucket), b);
    else
      add(nullptr, flat_trials(t, o), nullptr);
    trial_counts.push_back({t.task, {trials, t.repeats}});
    tasks.push_back({{"task", t.task}, {"gated", t.gate}, {"trials", trials}, {"repeats", t.repeats},
                     {"requests", trials * static_cast<std::size_t>(t.repeats)}, {"buckets", buckets}});
  }
  json configs = json::array();
  for (std::size_t i = 0; i < o.configs.size(); ++i)
    configs.push_back({{"label", o.configs[i].label}, {"role", i == 0 ? "baseline" : "candidate"}, {"backend", o.configs[i].backend.kind},
                       {"target", describe_target(o.configs[i])}});
  const double n_configs = static_cast<double>(o.configs.size());
  json j = {{"schema", "kvgate-gate-plan/1"},
            {"suite", o.suite.name},
            {"suite_source", o.suite.source},
            {"max_context", plan.max_context > 0 ? json(plan.max_context) : json(nullptr)},
            {"max_context_source", plan.max_context_source.empty() ? json(nullptr) : json(plan.max_context_source)},
            {"configurations", configs},
            {"tasks", tasks},
            {"skipped_tasks", plan.skipped_tasks},
            {"per_configuration",
             {{"requests", requests}, {"prompt_tokens", prompt_tokens}, {"requests_prompt_uncounted", unknown_prompt_requests},
              {"max_output_tokens", output_tokens}}},
            {"total",
             {{"requests", static_cast<double>(requests) * n_configs}, {"prompt_tokens", prompt_tokens * n_configs},
              {"max_output_tokens", output_tokens * n_configs}}},
            {"shards", nullptr}};
  const int count = o.shard.active() ? o.shard.count : shard_count;
  if (count > 1) {
    json per = json::array();
    for (int i = 0; i < count; ++i) {
      json by_task = json::object();
      std::size_t req = 0;
      for (const auto& [task, tr] : trial_counts) {
        const std::size_t n = share(tr.first, i, count);
        by_task[task] = {{"trials", n}, {"requests", n * static_cast<std::size_t>(tr.second)}};
        req += n * static_cast<std::size_t>(tr.second);
      }
      per.push_back({{"shard", std::to_string(i) + "/" + std::to_string(count)}, {"tasks", by_task}, {"requests_per_configuration", req},
                     {"requests", static_cast<double>(req) * n_configs}});
    }
    j["shards"] = {{"count", count}, {"this_shard", o.shard.active() ? json(shard_text(o.shard)) : json(nullptr)},
                   {"rule", "trial k of a tasks file goes to shard k mod n"}, {"per_shard", per}};
  }
  return j;
}

std::string dry_run_text(const json& j) {
  std::string s = "plan: suite " + j["suite"].get<std::string>() + " (" + j["suite_source"].get<std::string>() + "), " +
                  std::to_string(j["configurations"].size()) + " configurations, maximum context " +
                  (j["max_context"].is_null() ? std::string("not needed")
                                              : std::to_string(j["max_context"].get<std::int64_t>()) + " tokens (" +
                                                    j["max_context_source"].get<std::string>() + ")") +
                  "; nothing is sent\n";
  for (const json& c : j["configurations"])
    s += "  " + c["label"].get<std::string>() + " (" + c["role"].get<std::string>() + "): " + c["target"].get<std::string>() + "\n";
  char line[200];
  std::snprintf(line, sizeof line, "%-10s %8s %7s %7s %9s %13s %17s\n", "task", "bucket", "trials", "repeats", "requests", "prompt tokens",
                "max output tokens");
  s += line;
  for (const json& t : j["tasks"])
    for (const json& b : t["buckets"]) {
      std::snprintf(line, sizeof line, "%-10s %8s %7zu %7d %9zu %13s %17d\n", t["task"].get<std::string>().c_str(),
                    b["bucket"].is_null() ? "-" : std::to_string(b["bucket"].get<std::int64_t>()).c_str(), b["trials"].get<std::size_t>(),
                    b["repeats"].get<int>(), b["requests"].get<std::size_t>(),
                    b["prompt_tokens"].is_null() ? "short" : std::to_string(b["prompt_tokens"].get<std::int64_t>()).c_str(),
                    b["max_output_tokens"].get<int>());
      s += line;
    }
  for (const json& k : j["skipped_tasks"]) s += "skipped: " + k.get<std::string>() + " (no prompts given)\n";
  const json& pc = j["per_configuration"];
  s += "per configuration: " + std::to_string(pc["requests"].get<std::size_t>()) + " requests, " +
       human(pc["prompt_tokens"].get<double>()) + " prompt tokens" +
       (pc["requests_prompt_uncounted"].get<std::size_t>()
            ? " (+ " + std::to_string(pc["requests_prompt_uncounted"].get<std::size_t>()) + " requests with short prompts, not counted)"
            : "") +
       ", at most " + human(pc["max_output_tokens"].get<double>()) + " output tokens\n";
  s += "all configurations: " + human(j["total"]["requests"].get<double>()) + " requests, " + human(j["total"]["prompt_tokens"].get<double>()) +
       " prompt tokens, at most " + human(j["total"]["max_output_tokens"].get<double>()) + " output tokens\n";
  if (!j["shards"].is_null()) {
    const json& sh = j["shards"];
    s += "shards: " + std::to_string(sh["count"].get<int>()) + " (" + sh["rule"].get<std::string>() + ")\n";
    for (const json& p : sh["per_shard"]) {
      std::string tasks;
      for (const auto& [task, v] : p["tasks"].items()) tasks += (tasks.empty() ? "" : ", ") + task + " " + std::to_string(v["trials"].get<std::size_t>());
      const bool mine = sh["this_shard"] == p["shard"];
      s += (mine ? "* shard " : "  shard ") + p["shard"].get<std::string>() + ": trials " + tasks + "; " +
           std::to_string(p["requests_per_configuration"].get<std::size_t>()) + " requests per configuration" +
           (mine ? "  <- this process" : "") + "\n";
    }
  }
  return s;
}

}  // namespace kvgate::gate
