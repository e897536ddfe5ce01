// kvgate grade mrcr --response S --answer S --prefix S: prints the official score as the official
// script's print(grade(...)) does ("0" when the prefix is missing, else Python's float repr).
#include <iostream>
#include <memory>

#include <nlohmann/json.hpp>

#include "harness/cli/cli_common.h"
#include "datasets/mrcr/mrcr_grader.h"

namespace kvgate::cli {

void register_grade_mrcr(CLI::App& grade, Commands& commands) {
  struct Options {
    std::string response, answer, prefix;
    bool json = false;
  };
  auto o = std::make_shared<Options>();
  CLI::App* mrcr = grade.add_subcommand("mrcr", "Print the official MRCR score (difflib ratio after the random prefix)");
  mrcr->add_option("--response", o->response, "The model's response")->required();
  mrcr->add_option("--answer", o->answer, "The expected answer (it starts with the prefix, as in the dataset)")->required();
  mrcr->add_option("--prefix", o->prefix, "The random string the response must start with (random_string_to_prepend)")->required();
  mrcr->add_flag("--json", o->json, "Print {\"score\": ..., \"prefix_ok\": ...} instead");
  mrcr->footer("The score is SequenceMatcher(None, response, answer).ratio() after removing the prefix from both,\n"
               "identical to Python's difflib; 0 when the response does not start with the prefix (no stripping).");
  commands.add(mrcr, [o] {
    const MrcrScore s = mrcr_score(o->response, o->answer, o->prefix);
    if (o->json) std::cout << nlohmann::json{{"score", s.score}, {"prefix_ok", s.prefix_ok}}.dump() << "\n";
    else std::cout << (s.prefix_ok ? python_float_repr(s.score) : "0") << "\n";
    return 0;
  });
}

}  // namespace kvgate::cli
