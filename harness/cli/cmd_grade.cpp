// kvgate grade mrcr|gsm8k: grade one response from the command line.
#include <memory>

#include "cli_common.h"

namespace kvgate::cli {

void register_grade(CLI::App& app, Commands& commands) {
  CLI::App* grade = app.add_subcommand("grade", "Grade one response with a task's official grader");
  grade->require_subcommand(1);
  auto response = std::make_shared<std::string>();
  auto answer = std::make_shared<std::string>();
  auto prefix = std::make_shared<std::string>();
  auto target = std::make_shared<std::string>();
  CLI::App* mrcr = grade->add_subcommand("mrcr", "Print the official MRCR score (difflib ratio after the random prefix)");
  mrcr->add_option("--response", *response, "The model's response")->required();
  mrcr->add_option("--answer", *answer, "The expected answer")->required();
  mrcr->add_option("--prefix", *prefix, "The random string the answer must start with")->required();
  commands.add(mrcr, [] { return not_built("grade mrcr", 6); });
  CLI::App* gsm8k = grade->add_subcommand("gsm8k", "Print JSON: strict and flexible extraction, each {extracted, correct}");
  gsm8k->add_option("--response", *response, "The model's response")->required();
  gsm8k->add_option("--target", *target, "The dataset's answer text (ending \"#### N\") or just the number")->required();
  commands.add(gsm8k, [] { return not_built("grade gsm8k", 7); });
}

}  // namespace kvgate::cli
