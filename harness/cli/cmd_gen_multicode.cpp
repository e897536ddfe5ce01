// kvgate gen multicode
#include <memory>

#include "gen_common.h"

namespace kvgate::cli {

void register_gen_multicode(CLI::App& gen, Commands& commands) {
  auto o = std::make_shared<GenCommonOptions>();
  CLI::App* sub = gen.add_subcommand("multicode", "Multi-code retrieval");
  add_gen_common_options(sub, *o, " 64 access codes in filler text, four asked at once:4096,8192,16384,32768");
  commands.add(sub, [o] { return not_built("gen multicode", 5); });
}

}  // namespace kvgate::cli
