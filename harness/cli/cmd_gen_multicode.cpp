// kvgate gen multicode
#include <memory>

#include "harness/cli/gen_common.h"
#include "harness/cli/gen_haystack_options.h"
#include "datasets/multicode/multicode.h"

namespace kvgate::cli {

namespace {
struct MulticodeCli {
  GenCommonOptions common;
  HaystackCliOptions haystack;
  int lines = 64;
  int ask = 4;
};
}  // namespace

void register_gen_multicode(CLI::App& gen, Commands& commands) {
  auto o = std::make_shared<MulticodeCli>();
  CLI::App* sub = gen.add_subcommand(
      "multicode", "Multi-code retrieval: access-code lines at random depths, several asked at once; all must be exact");
  add_gen_common_options(sub, o->common, "4096,8192,16384,32768");
  sub->add_option("--lines", o->lines, "Code lines \"The access code for <Name>-<n> is <6 digits>.\" in each haystack")
      ->capture_default_str();
  sub->add_option("--ask", o->ask, "Codes asked for in the one question (a trial passes only when all are exact)")
      ->capture_default_str();
  add_haystack_cli_options(sub, o->haystack, 256);
  commands.add(sub, [o] {
    multicode::MulticodeOptions opt;
    opt.seed = o->common.seed;
    opt.lengths = o->common.lengths();
    opt.per_bucket = o->common.per_bucket;
    opt.lines = o->lines;
    opt.ask = o->ask;
    opt.api = parse_input_api(o->haystack.api);
    opt.max_tokens = o->haystack.max_tokens;
    opt.threads = o->haystack.threads;
    const auto corpus = load_haystack_files(o->haystack);
    opt.corpus = corpus ? &*corpus : nullptr;
    const auto counter = open_token_counter(o->common.token_counter_options());
    write_haystack_tasks(o->common.out, multicode::generate_multicode(opt, *counter), *counter);
    return 0;
  });
}

}  // namespace kvgate::cli
