// kvgate gen golden --prompts F: the user's production requests as trials at temperature 0.
#include <memory>
#include <optional>

#include "harness/core/log.h"
#include "harness/core/trial.h"
#include "harness/cli/gen_common.h"
#include "datasets/golden/golden_prompts.h"

namespace kvgate::cli {

void register_gen_golden(CLI::App& gen, Commands& commands) {
  struct Options {
    GenCommonOptions common;
    std::string prompts;
    std::optional<int> max_tokens;
  };
  auto o = std::make_shared<Options>();
  CLI::App* sub = gen.add_subcommand("golden", "Your own production prompts, run at temperature 0 and checked for structural breaks");
  add_gen_common_options(sub, o->common, "");
  sub->add_option("--prompts", o->prompts,
                  "JSONL of chat requests: {\"messages\": [...], \"tools\"?, \"response_format\"?, \"id\"?} or OpenAI Batch "
                  "lines {\"custom_id\", \"body\": {...}}")
      ->required();
  sub->add_option("--max-tokens", o->max_tokens, "New-token limit for requests that carry none (default: the run's --max-tokens)");
  commands.add(sub, [o] {
    GoldenGenResult r = make_golden_trials({.prompts_path = o->prompts, .max_tokens = o->max_tokens});
    if (!r.ignored_keys.empty()) {
      std::string keys;
      for (const std::string& k : r.ignored_keys) keys += (keys.empty() ? "" : ", ") + k;
      log_warn(o->prompts + ": request keys not carried into the trials: " + keys +
               " (golden prompts run at temperature 0; the run sets the model and sampling)");
    }
    write_tasks(o->common.out, r.trials);
    log_info("golden: wrote " + std::to_string(r.trials.size()) + " trials to " + o->common.out);
    return 0;
  });
}

}  // namespace kvgate::cli
