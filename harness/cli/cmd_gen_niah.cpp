// kvgate gen niah
#include <memory>

#include "gen_common.h"

namespace kvgate::cli {

void register_gen_niah(CLI::App& gen, Commands& commands) {
  auto o = std::make_shared<GenCommonOptions>();
  CLI::App* sub = gen.add_subcommand("niah", "Needle in a haystack (RULER niah_single style) at exact token lengths and controlled depths");
  add_gen_common_options(sub, *o, "4096,8192,16384,32768");
  commands.add(sub, [o] { return not_built("gen niah", 5); });
}

}  // namespace kvgate::cli
