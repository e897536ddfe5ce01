// kvgate grade gsm8k --response S --target S: lm-eval's two filters and exact_match on one response.
#include <iostream>
#include <memory>

#include "harness/cli/cli_common.h"
#include "datasets/common/thinking.h"
#include "datasets/gsm8k/gsm8k_extract.h"
#include "datasets/gsm8k/gsm8k_prompts.h"

namespace kvgate::cli {

void register_grade_gsm8k(CLI::App& grade, Commands& commands) {
  struct Options {
    std::string response, target, style = "gsm8k";
  };
  auto o = std::make_shared<Options>();
  CLI::App* gsm8k = grade.add_subcommand("gsm8k", "Print JSON: strict and flexible extraction, each {extracted, correct}");
  gsm8k->add_option("--response", o->response, "The model's response")->required();
  gsm8k->add_option("--target", o->target, "The dataset's answer text (ending \"#### N\") or just the number")->required();
  gsm8k->add_option("--style", o->style, "Prompt style whose strict-match pattern to use: gsm8k, gsm8k-cot, chat")
      ->capture_default_str();
  commands.add(gsm8k, [o] {
    const Gsm8kScores s = score_gsm8k(strip_thinking(o->response), o->target,
                                      {.strict = gsm8k_strict_regex(parse_gsm8k_style(o->style)), .flexible = kGsm8kFlexibleRegex});
    auto part = [](const Gsm8kFilterScore& f) {
      return "{\"extracted\": " + nlohmann::json(f.extracted).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) +
             ", \"correct\": " + (f.correct ? "true" : "false") + "}";
    };
    std::cout << "{\"strict\": " << part(s.strict) << ", \"flexible\": " << part(s.flexible) << "}\n";
    return 0;
  });
}

}  // namespace kvgate::cli
