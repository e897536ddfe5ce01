#include "harness/gate/trial_gen.h"

#include <algorithm>
#include <map>

#include "datasets/common/depths.h"
#include "datasets/common/input_api.h"
#include "harness/core/error.h"
#include "harness/core/json_fields.h"
#include "harness/core/log.h"
#include "datasets/golden/golden_prompts.h"
#include "datasets/gsm8k/gsm8k_data.h"
#include "datasets/gsm8k/gsm8k_prompts.h"
#include "datasets/mrcr/mrcr_gen.h"
#include "datasets/multicode/multicode.h"
#include "datasets/niah/niah.h"

namespace kvgate::gate {

using nlohmann::json;

namespace {

const std::map<std::string, std::vector<std::string>>& keys_by_task() {
  static const std::map<std::string, std::vector<std::string>> keys = {
      {"niah", {"depths", "value_type", "api", "max_tokens"}},
      {"multicode", {"lines", "ask", "api", "max_tokens"}},
      {"mrcr", {"needles", "merge_user_turns"}},
      {"gsm8k", {"style", "limit", "num_fewshot", "system", "max_tokens", "primary", "data", "train"}},
      {"golden", {"prompts", "max_tokens"}},
  };
  return keys;
}

// Strict reads of a task's generator options: messages name the suite's place and the key.
struct Options {
  const TaskSpec& spec;
  FieldReader f{spec.options, spec.where};

  bool has(const char* k) const { return f.has_value(k); }
  int integer(const char* k, int lo, int hi, int fallback) const {
    if (!has(k)) return fallback;
    const std::int64_t v = f.integer(k);
    if (v < lo || v > hi) f.fail(k, "must be in [" + std::to_string(lo) + ", " + std::to_string(hi) + "]");
    return static_cast<int>(v);
  }
  std::string str(const char* k, const std::string& fallback) const { return has(k) ? f.str(k) : fallback; }
};

InputApi input_api(const Options& o) {
  const std::string api = o.str("api", "chat");
  if (api != "chat" && api != "completions") o.f.fail("api", "must be chat or completions");
  return parse_input_api(api, "api");
}

// depths: [10, 50, 90] (percents), "random", or {grid: N, spacing: linear|sigmoid}. Default: a grid of 11.
std::vector<double> niah_depths(const Options& o) {
  if (!o.has("depths")) return depth_grid(11, DepthSpacing::linear);
  const json& d = o.f.any("depths");
  const std::string what = o.spec.where + ".depths";
  if (d.is_string()) {
    if (d.get<std::string>() != "random") o.f.fail("depths", "must be a list of percents, \"random\" or {grid: N}");
    return {};
  }
  if (d.is_array()) {
    std::vector<double> out;
    for (const json& x : d) {
      if (!x.is_number() || x.get<double>() < 0 || x.get<double>() > 100)
        o.f.fail("depths", "must hold percents from 0 (start) to 100 (end), got " + describe_json_value(x));
      out.push_back(x.get<double>());
    }
    if (out.empty()) o.f.fail("depths", "is empty");
    return out;
  }
  if (d.is_object()) {
    FieldReader g(d, what);
    for (auto it = d.begin(); it != d.end(); ++it)
      if (it.key() != "grid" && it.key() != "spacing") g.fail(it.key().c_str(), "unknown key (known: grid, spacing)");
    const std::int64_t n = g.integer("grid");
    if (n < 1 || n > 1000) g.fail("grid", "must be in [1, 1000]");
    const std::string spacing = g.opt_str("spacing").value_or("linear");
    return depth_grid(static_cast<int>(n), parse_depth_spacing(spacing, what + ".spacing"), what + ".grid");
  }
  o.f.fail("depths", "must be a list of percents, \"random\" or {grid: N}");
}

niah::NiahOptions niah_options(const TaskSpec& spec) {
  const Options o{spec};
  niah::NiahOptions n;
  n.depths = niah_depths(o);
  n.value_type = niah::parse_value_type(o.str("value_type", "numbers"), spec.where + ".value_type");
  n.api = input_api(o);
  n.max_tokens = o.integer("max_tokens", 0, 1 << 20, n.max_tokens);
  n.per_bucket = spec.per_bucket;
  return n;
}

multicode::MulticodeOptions multicode_options(const TaskSpec& spec) {
  const Options o{spec};
  multicode::MulticodeOptions m;
  m.lines = o.integer("lines", 1, 100000, m.lines);
  m.ask = o.integer("ask", 1, m.lines, std::min(m.ask, m.lines));
  m.api = input_api(o);
  m.max_tokens = o.integer("max_tokens", 0, 1 << 20, m.max_tokens);
  m.per_bucket = spec.per_bucket;
  return m;
}

mrcr::GenOptions mrcr_options(const TaskSpec& spec) {
  const Options o{spec};
  mrcr::GenOptions m;
  if (o.has("needles")) {
    m.needles.clear();
    const json& n = o.f.array("needles");
    for (const json& x : n) {
      if (!x.is_number_integer() || x.get<std::int64_t>() < 1 || x.get<std::int64_t>() > 64)
        o.f.fail("needles", "must be a list of needle counts from 1 to 64, e.g. [2, 4, 8], got " + describe_json_value(x));
      m.needles.push_back(x.get<int>());
    }
    if (m.needles.empty()) o.f.fail("needles", "is empty");
  }
  if (auto v = o.f.opt_boolean("merge_user_turns")) m.merge_user_turns = *v;
  m.per_bucket = spec.per_bucket;
  return m;
}

struct Gsm8kTaskOptions {
  Gsm8kGenOptions gen;
  std::string data, train;
};

Gsm8kTaskOptions gsm8k_options(const TaskSpec& spec) {
  const Options o{spec};
  Gsm8kTaskOptions g;
  g.gen.style = parse_gsm8k_style(o.str("style", "gsm8k"));
  if (o.has("limit")) g.gen.limit = static_cast<std::size_t>(o.integer("limit", 1, 1000000, 1));
  if (o.has("num_fewshot")) g.gen.num_fewshot = o.integer("num_fewshot", 0, 64, 0);
  g.gen.system = o.str("system", "");
  if (o.has("max_tokens")) g.gen.max_tokens = o.integer("max_tokens", 1, 1 << 20, 1);
  g.gen.primary = o.str("primary", "strict");
  if (g.gen.primary != "strict" && g.gen.primary != "flexible") o.f.fail("primary", "must be strict or flexible");
  g.data = o.str("data", "");
  g.train = o.str("train", "");
  return g;
}

Gsm8kFile load_split(const std::string& given, const char* split) {
  const Gsm8kSplit& official = gsm8k_split(split);
  Gsm8kFile file = load_gsm8k(given.empty() ? fetch_gsm8k_split(split) : given);
  if (file.sha256 != official.sha256)
    log_warn(file.path + " is not the official GSM8K " + split + " split: scores are not comparable with published GSM8K numbers");
  return file;
}

}  // namespace

const std::vector<std::string>& suite_task_names() {
  static const std::vector<std::string> names = {"niah", "multicode", "mrcr", "gsm8k", "golden"};
  return names;
}

bool is_long_context(const std::string& task) { return task == "niah" || task == "multicode" || task == "mrcr"; }

const std::vector<std::string>& generator_keys(const std::string& task, const std::string& where) {
  const auto& keys = keys_by_task();
  auto it = keys.find(task);
  if (it == keys.end()) {
    std::string list;
    for (const std::string& n : suite_task_names()) list += (list.empty() ? "" : ", ") + n;
    throw Error(where + ": unknown task \"" + task + "\" (known: " + list + ")");
  }
  return it->second;
}

void check_generator_options(const TaskSpec& spec) {
  if (spec.task == "niah") niah_options(spec);
  else if (spec.task == "multicode") multicode_options(spec);
  else if (spec.task == "gsm8k") gsm8k_options(spec);
  else if (spec.task == "golden") {
    const Options o{spec};
    o.str("prompts", "");
    o.integer("max_tokens", 1, 1 << 20, 1);
  } else if (spec.task == "mrcr") {
    mrcr_options(spec);
  }
}

int generation_reserve(const TaskSpec& spec) {
  const Options o{spec};
  const int fallback = spec.task == "niah"        ? niah::NiahOptions{}.max_tokens
                       : spec.task == "multicode" ? multicode::MulticodeOptions{}.max_tokens
                                                  : 0;
  const int hint = o.integer("max_tokens", 0, 1 << 20, fallback);
  return hint > 0 ? hint : spec.sampling.max_tokens;  // a trial's own limit wins over the run's
}

std::vector<Trial> generate_task(const TaskSpec& spec, const std::vector<std::int64_t>& buckets, const GenContext& ctx) {
  if (spec.task == "mrcr") {  // MRCR writes no limit into its trials: the run's max_tokens bounds the answer
    if (!ctx.counter) throw Error(spec.where + ": internal: no token counter for a long-context task", kExitInternal);
    mrcr::GenOptions m = mrcr_options(spec);
    m.seed = ctx.seed;
    m.lengths = buckets;
    m.counter = ctx.counter;
    m.threads = ctx.threads;
    return mrcr::generate_trials(m);
  }
  if (spec.task == "niah" || spec.task == "multicode") {
    if (!ctx.counter) throw Error(spec.where + ": internal: no token counter for a long-context task", kExitInternal);
    if (spec.task == "niah") {
      niah::NiahOptions n = niah_options(spec);
      n.seed = ctx.seed;
      n.lengths = buckets;
      n.threads = ctx.threads;
      return niah::generate_niah(n, *ctx.counter);
    }
    multicode::MulticodeOptions m = multicode_options(spec);
    m.seed = ctx.seed;
    m.lengths = buckets;
    m.threads = ctx.threads;
    return multicode::generate_multicode(m, *ctx.counter);
  }
  if (spec.task == "gsm8k") {
    Gsm8kTaskOptions g = gsm8k_options(spec);
    g.gen.seed = ctx.seed;
    const Gsm8kFile test = load_split(g.data.empty() ? ctx.gsm8k_data : g.data, "test");
    const bool needs_train = g.gen.num_fewshot ? *g.gen.num_fewshot > 0 : g.gen.style != Gsm8kStyle::chat;
    const Gsm8kFile train = needs_train ? load_split(g.train, "train") : Gsm8kFile{};
    return make_gsm8k_trials(test, train, g.gen);
  }
  if (spec.task == "golden") {
    const Options o{spec};
    const std::string prompts = o.str("prompts", ctx.golden_prompts);
    if (prompts.empty()) throw Error(spec.where + ": golden prompts: pass --golden FILE (JSONL of chat requests) or set `prompts`");
    GoldenGenOptions g{.prompts_path = prompts};
    if (o.has("max_tokens")) g.max_tokens = o.integer("max_tokens", 1, 1 << 20, 1);
    GoldenGenResult r = make_golden_trials(g);
    if (!r.ignored_keys.empty()) {
      std::string keys;
      for (const std::string& k : r.ignored_keys) keys += (keys.empty() ? "" : ", ") + k;
      log_warn(prompts + ": request keys not carried into the trials: " + keys + " (golden prompts run at temperature 0)");
    }
    return std::move(r.trials);
  }
  throw Error(spec.where + ": unknown task " + spec.task);
}

}  // namespace kvgate::gate
