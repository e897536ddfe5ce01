// kvgate grade mrcr --response S --answer S --prefix S
#include <memory>

#include "cli_common.h"

namespace kvgate::cli {

void register_grade_mrcr(CLI::App& grade, Commands& commands) {
  struct Options {
    std::string response, answer, prefix;
  };
  auto o = std::make_shared<Options>();
  CLI::App* mrcr = grade.add_subcommand("mrcr", "Print the official MRCR score (difflib ratio after the random prefix)");
  mrcr->add_option("--response", o->response, "The model's response")->required();
  mrcr->add_option("--answer", o->answer, "The expected answer")->required();
  mrcr->add_option("--prefix", o->prefix, "The random string the answer must start with")->required();
  commands.add(mrcr, [o] { return not_built("grade mrcr", 6); });
}

}  // namespace kvgate::cli
