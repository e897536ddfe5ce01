// The niah generator: RULER niah_single prompts (templates in NVIDIA/RULER
// scripts/data/synthetic/constants.py, singular form) over a fitted haystack.
#include <algorithm>

#include "datasets/common/parallel.h"
#include "datasets/common/trial_ids.h"
#include "harness/core/error.h"
#include "harness/core/rng.h"
#include "datasets/haystack/haystack_input.h"
#include "datasets/niah/niah.h"

namespace kvgate::niah {

namespace {

constexpr int kVersion = 1;  // bump when the rendering of a trial changes

struct Names {
  const char* singular;
  const char* plural;
};

Names names_of(ValueType v) {
  switch (v) {
    case ValueType::numbers: return {"number", "numbers"};
    case ValueType::uuids: return {"uuid", "uuids"};
    case ValueType::words: return {"word", "words"};
  }
  return {"number", "numbers"};
}

Trial make_trial(const NiahOptions& o, const TokenCounter& counter, double bytes_per_token, std::int64_t bucket,
                 std::size_t index) {
  Trial t;
  t.id = bucket_trial_id("niah", bucket, index);
  t.task = "niah";
  t.bucket = bucket;
  Rng rng(derive_seed(o.seed, t.id));
  const std::string key = random_key(rng);
  std::string value = random_value(rng, o.value_type);
  while (value == key) value = random_value(rng, o.value_type);
  const double depth = o.depths.empty() ? round_to(rng.uniform() * 100.0, 3) : o.depths[index % o.depths.size()];
  const Names n = names_of(o.value_type);
  const std::string type = n.singular;

  const std::string needle = std::string("One of the special magic ") + n.plural + " for " + key + " is: " + value + ".";
  haystack::HaystackPrompt prompt;
  prompt.before = "A special magic " + type + " is hidden within the following text. Make sure to memorize it. " +
                  "I will quiz you about the " + type + " afterwards.\n";
  prompt.after = "\nWhat is the special magic " + type + " for " + key + " mentioned in the provided text?";
  if (o.api == InputApi::completions)
    prompt.after += " The special magic " + type + " for " + key + " mentioned in the provided text is";
  prompt.insertions.push_back({depth / 100.0, needle});

  std::size_t start = 0;
  auto source = haystack::make_trial_source(o.corpus, derive_seed(o.seed, t.id + "/haystack"), &start);
  haystack::HaystackBuilder builder(*source);
  haystack::FittedHaystackInput f = haystack::fit_haystack_input(
      builder, prompt, counter,
      {.target = bucket, .tolerance = o.tolerance, .api = o.api, .bytes_per_token = bytes_per_token}, t.id);

  t.input = std::move(f.input);
  if (o.max_tokens > 0) t.input["max_tokens"] = o.max_tokens;
  t.target = value;
  t.grader = {{"name", "niah"}};
  t.meta = {{"version", kVersion},
            {"seed", o.seed},
            {"api", to_string(o.api)},
            {"key", key},
            {"value", value},
            {"value_type", to_string(o.value_type)},
            {"needle", needle},
            {"needle_offset", f.offsets.at(0)},
            {"depth", depth},
            {"depth_actual", round_to(f.depths.at(0) * 100.0, 3)},
            {"haystack", haystack::haystack_meta(o.corpus, start, f)}};
  t.meta.update(haystack::length_meta(f, counter, bucket));
  return t;
}

}  // namespace

ValueType parse_value_type(const std::string& text, const std::string& flag) {
  if (text == "numbers") return ValueType::numbers;
  if (text == "uuids") return ValueType::uuids;
  if (text == "words") return ValueType::words;
  throw Error(flag + " " + text + ": unknown value type: use numbers, uuids or words");
}

const char* to_string(ValueType v) { return names_of(v).plural; }

std::vector<Trial> generate_niah(const NiahOptions& o, const TokenCounter& counter) {
  check_buckets(o.lengths, o.per_bucket);
  for (double d : o.depths)
    if (!(d >= 0 && d <= 100)) throw Error("--depths: " + std::to_string(d) + " is not a percent from 0 to 100");
  std::size_t start = 0;
  auto calibration = haystack::make_trial_source(o.corpus, derive_seed(o.seed, "niah/calibration"), &start);
  const double bytes_per_token = haystack::measure_bytes_per_token(counter, *calibration);

  return make_per_bucket(o.lengths, o.per_bucket, o.threads, [&](std::int64_t bucket, std::size_t index) {
    return make_trial(o, counter, bytes_per_token, bucket, index);
  });
}

}  // namespace kvgate::niah
