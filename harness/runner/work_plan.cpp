#include "harness/runner/work_plan.h"

#include <algorithm>

#include "harness/core/error.h"
#include "harness/core/rng.h"

namespace kvgate::runner {

Shard parse_shard(const std::string& text) {
  const std::size_t slash = text.find('/');
  auto bad = [&]() -> Error {
    return Error("--shard " + text + ": expected i/n with 0 <= i < n, e.g. --shard 0/4 (shards are numbered from 0)");
  };
  if (slash == std::string::npos) throw bad();
  Shard s;
  try {
    std::size_t used_i = 0, used_n = 0;
    const std::string a = text.substr(0, slash), b = text.substr(slash + 1);
    s.index = std::stoi(a, &used_i);
    s.count = std::stoi(b, &used_n);
    if (used_i != a.size() || used_n != b.size()) throw bad();
  } catch (const std::logic_error&) {
    throw bad();
  }
  if (s.count < 1 || s.index < 0 || s.index >= s.count) throw bad();
  return s;
}

bool in_shard(std::size_t trial_index, const Shard& shard) {
  return static_cast<int>(trial_index % static_cast<std::size_t>(shard.count)) == shard.index;
}

std::vector<WorkItem> plan_work(const std::vector<Trial>& trials, int repeats, const Shard& shard, const DoneSet& done) {
  std::vector<WorkItem> work;
  for (std::size_t i = 0; i < trials.size(); ++i) {
    if (!in_shard(i, shard)) continue;
    for (int r = 0; r < repeats; ++r)
      if (!done.count({trials[i].id, r})) work.push_back(WorkItem{&trials[i], r});
  }
  return work;
}

std::size_t shard_size(std::size_t trials, int repeats, const Shard& shard) {
  std::size_t n = 0;
  for (std::size_t i = 0; i < trials; ++i) n += in_shard(i, shard);
  return n * static_cast<std::size_t>(repeats);
}

std::uint64_t repeat_seed(std::uint64_t base, const std::string& trial_id, int repeat) {
  return derive_seed(base, trial_id + "#" + std::to_string(repeat)) & 0x7fffffffULL;
}

SamplingParams resolve_sampling(const SamplingParams& base, const Trial& trial, int repeat) {
  SamplingParams s = base;
  if (base.seed) s.seed = repeat_seed(*base.seed, trial.id, repeat);
  if (auto it = trial.input.find("stop"); it != trial.input.end() && it->is_array())
    for (const auto& x : *it)
      if (x.is_string() && std::find(s.stop.begin(), s.stop.end(), x.get<std::string>()) == s.stop.end())
        s.stop.push_back(x.get<std::string>());
  if (auto it = trial.input.find("max_tokens"); it != trial.input.end() && it->is_number_integer())
    s.max_tokens = it->get<int>();
  return s;
}

}  // namespace kvgate::runner
