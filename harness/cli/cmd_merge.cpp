// kvgate merge RUN_DIR... --out RUN_DIR: joins the shards of one run (runner/merge.h).
#include <iostream>
#include <memory>

#include "harness/cli/cli_common.h"
#include "harness/runner/merge.h"
#include "harness/runner/run_summary.h"

namespace kvgate::cli {

void register_merge(CLI::App& app, Commands& commands) {
  auto o = std::make_shared<runner::MergeOptions>();
  CLI::App* sub = app.add_subcommand("merge", "Join run directories of one configuration (shards made with --shard i/n) into one");
  sub->add_option("dirs", o->dirs, "RUN_DIR...")->required();
  sub->add_option("--out", o->out, "Merged run directory to write")->required();
  sub->add_flag("--allow-partial", o->allow_partial,
                "Merge even when some shards are missing (then `kvgate run` on the merged directory runs the rest)");
  commands.add(sub, [o] {
    const nlohmann::json summary = runner::merge_runs(*o);
    std::cout << o->out << ": merged " << o->dirs.size() << " run directories\n" << runner::summary_text(summary);
    return 0;
  });
}

}  // namespace kvgate::cli
