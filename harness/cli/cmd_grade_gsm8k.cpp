// kvgate grade gsm8k --response S --target S
#include <memory>

#include "cli_common.h"

namespace kvgate::cli {

void register_grade_gsm8k(CLI::App& grade, Commands& commands) {
  struct Options {
    std::string response, target;
  };
  auto o = std::make_shared<Options>();
  CLI::App* gsm8k = grade.add_subcommand("gsm8k", "Print JSON: strict and flexible extraction, each {extracted, correct}");
  gsm8k->add_option("--response", o->response, "The model's response")->required();
  gsm8k->add_option("--target", o->target, "The dataset's answer text (ending \"#### N\") or just the number")->required();
  commands.add(gsm8k, [o] { return not_built("grade gsm8k", 7); });
}

}  // namespace kvgate::cli
