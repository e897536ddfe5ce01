// The trials of one suite task: the task's generator options (as the suite gives them, validated
// here so a suite file fails before any work), and the call into the generator in datasets/.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "harness/core/trial.h"
#include "harness/gate/suite.h"
#include "harness/tokenizer/token_counter.h"

namespace kvgate::gate {

// The tasks a suite may name, in a stable order.
const std::vector<std::string>& suite_task_names();
// True for tasks with length buckets (niah, multicode, mrcr).
bool is_long_context(const std::string& task);
// The generator keys a task takes in a suite, beside the common ones (lengths, per_bucket, repeats,
// sampling, gate, margin, optional). An Error names the task and lists the known ones when unknown.
const std::vector<std::string>& generator_keys(const std::string& task, const std::string& where);

// Checks the generator options' types and ranges (spec.options), without generating.
void check_generator_options(const TaskSpec& spec);

// New tokens a trial of this task may generate: the generator's max_tokens hint when it writes one
// into each input, else the sampling's max_tokens. Buckets are kept this far under the context.
int generation_reserve(const TaskSpec& spec);

struct GenContext {
  std::uint64_t seed = 1;                // the suite's seed
  const TokenCounter* counter = nullptr;  // exact lengths (long-context tasks)
  std::string golden_prompts{};          // --golden FILE (golden tasks without their own prompts)
  std::string gsm8k_data{};              // --gsm8k-data FILE (gsm8k tasks without their own data)
  int threads = 0;                       // generation threads (0: one per hardware thread)
};

// The task's trials for these buckets (ignored by tasks without lengths). Deterministic from the
// options, the seed and the counter's counts.
std::vector<Trial> generate_task(const TaskSpec& spec, const std::vector<std::int64_t>& buckets, const GenContext& ctx);

}  // namespace kvgate::gate
