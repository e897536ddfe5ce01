#include "datasets/mrcr/mrcr_gen.h"

#include <cstdio>

#include "datasets/common/parallel.h"
#include "datasets/common/trial_ids.h"
#include "harness/core/error.h"
#include "harness/core/log.h"
#include "harness/core/rng.h"
#include "datasets/mrcr/mrcr_chat.h"
#include "datasets/mrcr/mrcr_conversation.h"
#include "datasets/mrcr/mrcr_fit.h"

namespace kvgate::mrcr {

using nlohmann::json;

Trial generate_trial(const GenOptions& o, std::int64_t bucket, int index) {
  if (!o.counter) throw Error("mrcr: no token counter given", kExitInternal);
  if (o.needles.empty()) throw Error("--needles: give at least one needle count, e.g. 2,4,8");
  Trial t;
  t.id = bucket_trial_id("mrcr", bucket, static_cast<std::size_t>(index));
  t.task = "mrcr";
  t.bucket = bucket;
  const std::uint64_t seed = derive_seed(o.seed, t.id);
  const int needles = o.needles[static_cast<std::size_t>(index) % o.needles.size()];
  Conversation c({.seed = seed, .needles = needles, .target_tokens = bucket});
  const FitResult fit = fit_to_length(c, *o.counter, {.target_tokens = bucket, .merge_user_turns = o.merge_user_turns});
  if (!fit.exact)
    log_warn(t.id + ": " + std::to_string(fit.tokens) + " tokens, not exactly " + std::to_string(bucket) +
             " (no cut of a filler reply lands on it with this tokenizer)");
  const json messages = c.messages(o.merge_user_turns);
  t.input = {{"messages", messages}};
  t.target = c.answer();
  t.grader = {{"name", "mrcr"}, {"prefix", c.prefix()}};
  t.meta = {{"source", "generated"},
            {"version", kGeneratorVersion},
            {"seed", seed},
            {"n_needles", needles},
            {"desired_index", c.k()},
            {"desired_msg_index", c.desired_msg_index(o.merge_user_turns)},
            {"format", c.format()},
            {"topic", c.topic()},
            {"total_messages", messages.size()},
            {"n_chars", content_chars(messages)},
            {"prompt_tokens", fit.tokens},
            {"answer_tokens", o.counter->count_text(c.answer())},
            {"exact_length", fit.exact},
            {"filler_turns", fit.fillers},
            {"cut_replies", fit.cut_replies},
            {"token_count_source", o.counter->source()},
            {"exact_tokens", o.counter->exact()},
            {"merged_user_turns", o.merge_user_turns}};
  return t;
}

std::vector<Trial> generate_trials(const GenOptions& o) {
  check_buckets(o.lengths, o.per_bucket);
  if (o.needles.empty()) throw Error("--needles: give at least one needle count, e.g. 2,4,8");
  for (int n : o.needles)
    if (n < 1 || n > 64) throw Error("--needles: " + std::to_string(n) + " is not a needle count between 1 and 64");
  // Each trial depends only on its own seed, so the threads fill their slots in any order.
  return make_per_bucket(o.lengths, o.per_bucket, o.threads, [&](std::int64_t bucket, std::size_t index) {
    return generate_trial(o, bucket, static_cast<int>(index));
  });
}

}  // namespace kvgate::mrcr
