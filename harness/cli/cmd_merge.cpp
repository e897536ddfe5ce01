// kvgate merge RUN_DIR... --out RUN_DIR: joins the shards of one run.
#include <memory>

#include "cli_common.h"

namespace kvgate::cli {

void register_merge(CLI::App& app, Commands& commands) {
  auto dirs = std::make_shared<std::vector<std::string>>();
  auto out = std::make_shared<std::string>();
  CLI::App* sub = app.add_subcommand("merge", "Join run directories of one configuration (shards made with --shard i/n) into one");
  sub->add_option("dirs", *dirs, "RUN_DIR...")->required();
  sub->add_option("--out", *out, "Merged run directory to write")->required();
  commands.add(sub, [dirs, out] { return not_built("merge", 8); });
}

}  // namespace kvgate::cli
