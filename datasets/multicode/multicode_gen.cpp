// The multicode generator: code lines at random depths in a fitted haystack, one question for
// several of them (seed 001: 64 lines, four asked, a pass needs all four exact).
#include <algorithm>
#include <numeric>

#include "datasets/common/parallel.h"
#include "datasets/common/trial_ids.h"
#include "harness/core/error.h"
#include "harness/core/rng.h"
#include "datasets/haystack/haystack_input.h"
#include "datasets/multicode/multicode.h"

namespace kvgate::multicode {

namespace {

constexpr int kVersion = 1;  // bump when the rendering of a trial changes

// Base names: one per trial, every line "<base>-<n>". Not words the prose generator uses.
const char* const kBaseNames[] = {"Juniper", "Cedar",   "Aspen",   "Hazel",   "Rowan",  "Alder",    "Laurel",
                                  "Sorrel",  "Yarrow",  "Tansy",   "Sequoia", "Cypress", "Magnolia", "Linden",
                                  "Hawthorn", "Myrtle", "Heather", "Bramble", "Fennel", "Larch",    "Sage",
                                  "Thyme",   "Clover",  "Briar",   "Poplar",  "Acacia", "Tamarind", "Marigold"};

std::string join_names(const std::vector<std::string>& names) {
  std::string out;
  for (std::size_t i = 0; i < names.size(); ++i) {
    if (i > 0) out += names.size() == 2 ? " and " : (i + 1 == names.size() ? ", and " : ", ");
    out += names[i];
  }
  return out;
}

Trial make_trial(const MulticodeOptions& o, const TokenCounter& counter, double bytes_per_token, std::int64_t bucket,
                 std::size_t index) {
  Trial t;
  t.id = bucket_trial_id("multicode", bucket, index);
  t.task = "multicode";
  t.bucket = bucket;
  Rng rng(derive_seed(o.seed, t.id));
  const std::string base = kBaseNames[rng.below(std::size(kBaseNames))];

  // Distinct numbers (1..max(99, 2 lines)) and distinct 6-digit codes, one per line.
  const std::size_t lines = static_cast<std::size_t>(o.lines);
  std::vector<int> numbers(std::max<std::size_t>(99, 2 * lines));
  std::iota(numbers.begin(), numbers.end(), 1);
  rng.shuffle(numbers);
  numbers.resize(lines);
  std::vector<std::string> names, codes, sentences;
  std::vector<double> depths;
  for (std::size_t i = 0; i < lines; ++i) {
    std::string code;
    do code = std::to_string(rng.range(100000, 999999));
    while (std::find(codes.begin(), codes.end(), code) != codes.end());
    names.push_back(base + "-" + std::to_string(numbers[i]));
    codes.push_back(code);
    depths.push_back(round_to(rng.uniform() * 100.0, 3));
    sentences.push_back("The access code for " + names.back() + " is " + code + ".");
  }
  std::vector<std::size_t> order(lines);
  std::iota(order.begin(), order.end(), std::size_t{0});
  rng.shuffle(order);
  order.resize(static_cast<std::size_t>(o.ask));
  std::vector<std::string> asked;
  for (std::size_t k : order) asked.push_back(names[k]);

  haystack::HaystackPrompt prompt;
  prompt.before = "Some access codes are hidden within the following text. Make sure to memorize them. "
                  "I will quiz you about the codes afterwards.\n";
  if (asked.size() == 1) {
    prompt.after = "\nWhat is the access code for " + asked[0] +
                   "? Answer with one line, written as \"<name>: <code>\", and nothing else.";
  } else {
    prompt.after = "\nWhat are the access codes for " + join_names(asked) +
                   "? Answer with one line for each name, written as \"<name>: <code>\", and nothing else.";
  }
  if (o.api == InputApi::completions) prompt.after += "\nAnswer:\n";
  for (std::size_t i = 0; i < lines; ++i) prompt.insertions.push_back({depths[i] / 100.0, sentences[i]});

  std::size_t start = 0;
  auto source = haystack::make_trial_source(o.corpus, derive_seed(o.seed, t.id + "/haystack"), &start);
  haystack::HaystackBuilder builder(*source);
  haystack::FittedHaystackInput f = haystack::fit_haystack_input(
      builder, prompt, counter,
      {.target = bucket, .tolerance = o.tolerance, .api = o.api, .bytes_per_token = bytes_per_token}, t.id);

  t.input = std::move(f.input);
  if (o.max_tokens > 0) t.input["max_tokens"] = o.max_tokens;
  nlohmann::json target_codes = nlohmann::json::array();
  nlohmann::json asked_depths = nlohmann::json::array();
  for (std::size_t k : order) {
    target_codes.push_back({{"name", names[k]}, {"code", codes[k]}});
    asked_depths.push_back(round_to(f.depths[k] * 100.0, 3));
  }
  t.target = {{"codes", target_codes}};
  t.grader = {{"name", "multicode"}};
  nlohmann::json line_meta = nlohmann::json::array();
  for (std::size_t i = 0; i < lines; ++i)
    line_meta.push_back({{"name", names[i]},
                         {"code", codes[i]},
                         {"depth", depths[i]},
                         {"depth_actual", round_to(f.depths[i] * 100.0, 3)},
                         {"offset", f.offsets[i]},
                         {"text", sentences[i]}});
  t.meta = {{"version", kVersion},
            {"seed", o.seed},
            {"api", to_string(o.api)},
            {"base_name", base},
            {"asked", asked},
            {"depths", asked_depths},
            {"lines", line_meta},
            {"haystack", haystack::haystack_meta(o.corpus, start, f)}};
  t.meta.update(haystack::length_meta(f, counter, bucket));
  return t;
}

}  // namespace

std::vector<Trial> generate_multicode(const MulticodeOptions& o, const TokenCounter& counter) {
  check_buckets(o.lengths, o.per_bucket);
  if (o.lines < 1 || o.lines > 10000)
    throw Error("--lines " + std::to_string(o.lines) + ": give between 1 and 10000 code lines");
  if (o.ask < 1 || o.ask > o.lines)
    throw Error("--ask " + std::to_string(o.ask) + ": must be between 1 and --lines (" + std::to_string(o.lines) + ")");
  std::size_t start = 0;
  auto calibration = haystack::make_trial_source(o.corpus, derive_seed(o.seed, "multicode/calibration"), &start);
  const double bytes_per_token = haystack::measure_bytes_per_token(counter, *calibration);

  return make_per_bucket(o.lengths, o.per_bucket, o.threads, [&](std::int64_t bucket, std::size_t index) {
    return make_trial(o, counter, bytes_per_token, bucket, index);
  });
}

}  // namespace kvgate::multicode
