// kvgate gen niah
#include <memory>

#include "datasets/common/depths.h"
#include "harness/core/error.h"
#include "harness/cli/gen_common.h"
#include "harness/cli/gen_haystack_options.h"
#include "datasets/niah/niah.h"

namespace kvgate::cli {

namespace {

struct NiahCli {
  GenCommonOptions common;
  HaystackCliOptions haystack;
  std::string depths;
  int depth_grid = 0;
  std::string depth_spacing = "linear";
  std::string value_type = "numbers";
};

// --depths LIST | --depths random | --depth-grid N [--depth-spacing linear|sigmoid]; default: 11 linear.
std::vector<double> resolve_depths(const NiahCli& o, bool spacing_given) {
  if (!o.depths.empty() && o.depth_grid != 0)
    throw Error("--depths and --depth-grid both given: pass one (a list of percents, random, or a grid size)");
  const DepthSpacing spacing = parse_depth_spacing(o.depth_spacing, "--depth-spacing");
  if (!o.depths.empty()) {
    if (spacing_given) throw Error("--depth-spacing applies to --depth-grid, not to --depths " + o.depths + ": drop one");
    if (o.depths == "random") return {};
    return parse_depths(o.depths, "--depths");
  }
  return depth_grid(o.depth_grid == 0 ? 11 : o.depth_grid, spacing, "--depth-grid");
}

}  // namespace

void register_gen_niah(CLI::App& gen, Commands& commands) {
  auto o = std::make_shared<NiahCli>();
  CLI::App* sub = gen.add_subcommand("niah", "Needle in a haystack (RULER niah_single style) at exact token lengths and controlled depths");
  add_gen_common_options(sub, o->common, "4096,8192,16384,32768");
  sub->add_option("--depths", o->depths,
                  "Needle depths in percent of the haystack, comma separated (0 = start, 100 = end), cycled over each "
                  "bucket's trials; or \"random\" (uniform per trial). Default: --depth-grid 11");
  sub->add_option("--depth-grid", o->depth_grid, "N depths from 0 to 100 (Kamradt grid); make --per-bucket a multiple of N for even cells")
      ->check(CLI::PositiveNumber);
  CLI::Option* spacing = sub->add_option("--depth-spacing", o->depth_spacing,
                                         "Grid spacing: linear, or sigmoid (denser near 0 and 100, as Kamradt's)")
                             ->capture_default_str();
  sub->add_option("--value-type", o->value_type, "Needle values: numbers (7 digits), uuids or words")->capture_default_str();
  add_haystack_cli_options(sub, o->haystack, 128);
  commands.add(sub, [o, spacing] {
    niah::NiahOptions opt;
    opt.depths = resolve_depths(*o, spacing->count() > 0);
    opt.seed = o->common.seed;
    opt.lengths = o->common.lengths();
    opt.per_bucket = o->common.per_bucket;
    opt.api = parse_input_api(o->haystack.api);
    opt.value_type = niah::parse_value_type(o->value_type, "--value-type");
    opt.max_tokens = o->haystack.max_tokens;
    opt.threads = o->haystack.threads;
    const auto corpus = load_haystack_files(o->haystack);
    opt.corpus = corpus ? &*corpus : nullptr;
    const auto counter = open_token_counter(o->common.token_counter_options());
    write_haystack_tasks(o->common.out, niah::generate_niah(opt, *counter), *counter);
    return 0;
  });
}

}  // namespace kvgate::cli
