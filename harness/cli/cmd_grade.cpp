// kvgate grade mrcr|gsm8k: grade one response from the command line.
#include "harness/cli/cli_common.h"

namespace kvgate::cli {

void register_grade_mrcr(CLI::App& grade, Commands& commands);
void register_grade_gsm8k(CLI::App& grade, Commands& commands);

void register_grade(CLI::App& app, Commands& commands) {
  CLI::App* grade = app.add_subcommand("grade", "Grade one response with a task's official grader");
  grade->require_subcommand(1);
  register_grade_mrcr(*grade, commands);
  register_grade_gsm8k(*grade, commands);
}

}  // namespace kvgate::cli
