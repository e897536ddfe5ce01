// kvgate gen golden
#include <memory>

#include "gen_common.h"

namespace kvgate::cli {

void register_gen_golden(CLI::App& gen, Commands& commands) {
  auto o = std::make_shared<GenCommonOptions>();
  CLI::App* sub = gen.add_subcommand("golden", "Your own production prompts, run at temperature 0 and checked for structural breaks");
  add_gen_common_options(sub, *o, "");
  commands.add(sub, [o] { return not_built("gen golden", 7); });
}

}  // namespace kvgate::cli
