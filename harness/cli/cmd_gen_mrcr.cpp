// kvgate gen mrcr
#include <memory>

#include "gen_common.h"

namespace kvgate::cli {

void register_gen_mrcr(CLI::App& gen, Commands& commands) {
  auto o = std::make_shared<GenCommonOptions>();
  CLI::App* sub = gen.add_subcommand("mrcr", "MRCR multi-round coreference");
  add_gen_common_options(sub, *o, " generated conversations, or official openai/mrcr rows:4096,8192,16384,32768");
  commands.add(sub, [o] { return not_built("gen mrcr", 6); });
}

}  // namespace kvgate::cli
