// kvgate gen custom
#include <memory>

#include "gen_common.h"

namespace kvgate::cli {

void register_gen_custom(CLI::App& gen, Commands& commands) {
  auto o = std::make_shared<GenCommonOptions>();
  CLI::App* sub = gen.add_subcommand("custom", "Any JSONL benchmark with a standard grader (exact, regex, numeric, choice, contains, json_field)");
  add_gen_common_options(sub, *o, "");
  commands.add(sub, [o] { return not_built("gen custom", 17); });
}

}  // namespace kvgate::cli
