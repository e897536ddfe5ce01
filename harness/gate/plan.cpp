#include "harness/gate/plan.h"

#include "harness/core/error.h"
#include "harness/core/log.h"
#include "harness/gate/lengths.h"
#include "harness/gate/trial_gen.h"
#include "harness/runner/engine_metadata.h"

namespace kvgate::gate {

namespace {

bool any_endpoint(const std::vector<Configuration>& configs) {
  for (const Configuration& c : configs)
    if (c.backend.kind != "reference") return true;
  return false;
}

// A dry run sends nothing: without --max-context only the checkpoints can tell the context.
std::vector<Configuration> local_only(const std::vector<Configuration>& configs) {
  std::vector<Configuration> out;
  for (const Configuration& c : configs)
    if (c.backend.kind == "reference") out.push_back(c);
  return out;
}

}  // namespace

std::string task_file(const std::string& dir, const std::string& task) { return dir + "/tasks/" + task + ".jsonl"; }

GatePlan plan_gate(const GateOptions& o, bool ask_servers) {
  GatePlan plan;
  plan.max_context = o.max_context;
  plan.max_context_source = "--max-context";
  if (plan.max_context == 0) {
    if (ask_servers) plan.max_context = discover_max_context(o.configs, &plan.max_context_source, &plan.max_context_engine);
    else if (!any_endpoint(o.configs)) plan.max_context = discover_max_context(local_only(o.configs), &plan.max_context_source);
  }
  if (plan.max_context > 0 && ask_servers)
    log_info("gate: maximum context " + std::to_string(plan.max_context) + " tokens (" + plan.max_context_source + ")");
  if (plan.max_context == 0) plan.max_context_source.clear();

  for (const TaskSpec& t : o.suite.tasks) {
    if (t.optional && t.task == "golden" && o.golden_prompts.empty() && !t.options.contains("prompts")) {
      plan.skipped_tasks.push_back(t.task);
      if (ask_servers) log_info("gate: " + t.task + " skipped: no prompts given (--golden FILE adds your production prompts)");
      continue;
    }
    PlannedTask p{.spec = &t, .tasks_path = task_file(o.out_dir, t.task)};
    if (t.lengths) {
      if (!ask_servers && plan.max_context == 0 && t.lengths->ladder() && t.lengths->to == 0)
        throw Error(t.where + ": lengths go up to the model's maximum context, and a dry run asks no server: pass --max-context N "
                              "(the servers' max_model_len)");
      const ResolvedLengths l =
          resolve_lengths(*t.lengths, plan.max_context, generation_reserve(t), t.where, plan.max_context_source,
                          [&](std::int64_t wanted) { return runner::context_advice(plan.max_context_engine, wanted); });
      if (!l.dropped.empty()) {
        std::string d;
        for (std::int64_t b : l.dropped) d += (d.empty() ? "" : ", ") + std::to_string(b);
        log_warn(t.where + ": buckets " + d + " are beyond the model's context less the generated tokens (" + std::to_string(l.limit) +
                 "; " + plan.max_context_source + "): left out");
      }
      p.buckets = l.buckets;
    }
    plan.tasks.push_back(std::move(p));
  }
  if (plan.tasks.empty()) throw Error("--suite " + o.suite.name + ": every task was skipped: nothing to gate");
  return plan;
}

}  // namespace kvgate::gate
