#include "harness/gate/calibration_text.h"

#include <filesystem>
#include <map>
#include <set>

#include "harness/core/rng.h"
#include "harness/core/trial.h"
#include "harness/gate/plan.h"
#include "harness/gate/trial_gen.h"
#include "harness/tokenizer/token_counter.h"

namespace kvgate::gate {

using nlohmann::json;
namespace fs = std::filesystem;

namespace {

// What the model reads of a trial: the message contents (or the completions prompt).
std::string prompt_text(const Trial& t) {
  if (!t.is_chat()) return t.input.value("prompt", std::string());
  std::string out;
  for (const json& m : t.input.at("messages"))
    if (m.contains("content") && m["content"].is_string()) out += (out.empty() ? "" : "\n") + m["content"].get<std::string>();
  return out;
}

// The counter the gate measures lengths with: --tokenizer's, else the checkpoint's.
std::unique_ptr<TokenCounter> counter_for(const GateOptions& o) {
  if (!o.tokenizer.empty()) return open_token_counter({.tokenizer_path = o.tokenizer, .tokenize_url = "", .model = ""});
  for (const Configuration& c : o.configs)
    if (c.backend.kind == "reference")
      return open_token_counter({.tokenizer_path = c.backend.reference.model_dir + "/tokenizer.json", .tokenize_url = "", .model = ""});
  return make_estimating_token_counter();
}

}  // namespace

std::uint64_t calibration_seed(std::uint64_t suite_seed) {
  const std::uint64_t s = derive_seed(suite_seed, "gate/ladder/calibration");
  return s == suite_seed ? s ^ 1u : s;
}

CalibrationPrompts suite_calibration_prompts(const GateOptions& gate, int per_bucket) {
  CalibrationPrompts out{.seed = calibration_seed(gate.suite.seed)};
  const GatePlan plan = plan_gate(gate, false);
  std::unique_ptr<TokenCounter> counter;
  // Groups of trials, one per (task, bucket), each in generation order.
  std::vector<std::vector<Trial>> groups;
  for (const PlannedTask& p : plan.tasks) {
    if (!is_long_context(p.spec->task) || p.buckets.empty()) continue;
    if (!counter) counter = counter_for(gate);
    std::set<std::string> scored;
    if (fs::is_regular_file(p.tasks_path))
      for (const Trial& t : load_tasks(p.tasks_path).trials) scored.insert(t.input.dump());
    TaskSpec spec = *p.spec;
    spec.per_bucket = per_bucket;
    std::map<std::int64_t, std::size_t> group_of;
    for (Trial& t : generate_task(spec, p.buckets, {.seed = out.seed, .counter = counter.get(), .threads = gate.gen_threads})) {
      if (scored.count(t.input.dump())) {
        ++out.dropped;
        continue;
      }
      if (!group_of.count(t.bucket)) {
        group_of[t.bucket] = groups.size();
        groups.emplace_back();
      }
      groups[group_of[t.bucket]].push_back(std::move(t));
    }
    out.tasks += (out.tasks.empty() ? "" : ", ") + p.spec->task;
  }
  for (std::size_t i = 0;; ++i) {
    bool any = false;
    for (const std::vector<Trial>& g : groups) {
      if (i >= g.size()) continue;
      any = true;
      const std::string text = prompt_text(g[i]);
      if (text.empty()) continue;
      out.text += (out.text.empty() ? "" : "\n\n") + text;
      ++out.prompts;
    }
    if (!any) break;
  }
  return out;
}

}  // namespace kvgate::gate
