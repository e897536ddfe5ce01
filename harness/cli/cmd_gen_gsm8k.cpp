// kvgate gen gsm8k
#include <memory>

#include "gen_common.h"

namespace kvgate::cli {

void register_gen_gsm8k(CLI::App& gen, Commands& commands) {
  auto o = std::make_shared<GenCommonOptions>();
  CLI::App* sub = gen.add_subcommand("gsm8k", "GSM8K grade-school math (lm-eval compatible prompts and answer extraction)");
  add_gen_common_options(sub, *o, "");
  commands.add(sub, [o] { return not_built("gen gsm8k", 7); });
}

}  // namespace kvgate::cli
