#include "harness/compare/options.h"

#include <cmath>
#include <filesystem>

#include "harness/core/error.h"

namespace kvgate::compare {

const char* to_string(ErrorPolicy p) { return p == ErrorPolicy::fail ? "fail" : "exclude"; }

CompareOptions CompareOptions::for_task(const std::string& task) const {
  CompareOptions o = *this;
  if (auto it = task_margins.find(task); it != task_margins.end()) o.margin = it->second;
  return o;
}

void validate(const CompareOptions& o) {
  if (!(o.margin > 0.0 && o.margin <= 1.0))
    throw Error("--margin " + std::to_string(o.margin) + ": must be in (0, 1] (0.95 = candidate keeps 95% of the baseline)");
  if (!(o.alpha > 0.0 && o.alpha < 0.5)) throw Error("--alpha " + std::to_string(o.alpha) + ": must be in (0, 0.5), e.g. 0.05");
  if (!(o.max_error_rate >= 0.0 && o.max_error_rate <= 1.0))
    throw Error("--max-error-rate " + std::to_string(o.max_error_rate) + ": must be in [0, 1], e.g. 0.02");
  if (!(o.power > 0.0 && o.power < 1.0)) throw Error("--power " + std::to_string(o.power) + ": must be in (0, 1), e.g. 0.8");
  if (o.bootstrap_replicates < 0 || o.bootstrap_replicates > 1000000)
    throw Error("--bootstrap " + std::to_string(o.bootstrap_replicates) + ": must be in [0, 1000000] (0 turns the cross-check off)");
  if (!o.model_config.empty() && !std::filesystem::is_regular_file(o.model_config))
    throw Error("--model-config " + o.model_config + ": no such file; pass the model's Hugging Face config.json");
  for (const auto& [task, margin] : o.task_margins)
    if (!(margin > 0.0 && margin <= 1.0))
      throw Error("margin of task " + task + ": " + std::to_string(margin) + " must be in (0, 1]");
}

}  // namespace kvgate::compare
