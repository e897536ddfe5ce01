// What a run has to do: the (trial, repeat) pairs of this shard that the journal does not hold
// yet, and the sampling each one is sent with (per-repeat seeds, the trial's own stop strings and
// token limit).
#pragma once
#include <cstdint>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "harness/core/sampling.h"
#include "harness/core/trial.h"

namespace kvgate::runner {

struct Shard {
  int index = 0;  // 0-based
  int count = 1;
  bool active() const { return count > 1; }
};
// "i/n" with 0 <= i < n; Error naming --shard otherwise.
Shard parse_shard(const std::string& text);
// Trial k (in tasks-file order) belongs to shard k mod n: every shard gets every length bucket.
bool in_shard(std::size_t trial_index, const Shard& shard);

struct WorkItem {
  const Trial* trial = nullptr;
  int repeat = 0;
};

using DoneSet = std::set<std::pair<std::string, int>>;  // (id, repeat) already in the journal

// The pairs left to run, trial by trial, repeats of one trial together.
std::vector<WorkItem> plan_work(const std::vector<Trial>& trials, int repeats, const Shard& shard, const DoneSet& done);
// How many pairs this shard holds in all.
std::size_t shard_size(std::size_t trials, int repeats, const Shard& shard);

// The seed sent for repeat r of a trial: derive_seed(base, id + "#" + r), kept to 31 bits because
// engines differ (vLLM takes int64, llama.cpp uint32 with 0xFFFFFFFF meaning "random").
std::uint64_t repeat_seed(std::uint64_t base, const std::string& trial_id, int repeat);

// The run's sampling resolved for one (trial, repeat): the repeat's seed, the trial's "stop"
// strings after the run's (duplicates dropped), the trial's own "max_tokens" when it has one.
SamplingParams resolve_sampling(const SamplingParams& base, const Trial& trial, int repeat);

}  // namespace kvgate::runner
