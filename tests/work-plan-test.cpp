// runner/work_plan.h: shards, per-repeat seeds, resolved sampling, what is left to run.
#include <set>

#include "tests/catch_compat.hpp"
#include "harness/core/error.h"
#include "harness/runner/work_plan.h"

using namespace kvgate::runner;
using kvgate::Trial;

namespace {
std::vector<Trial> trials(int n) {
  std::vector<Trial> v;
  for (int i = 0; i < n; ++i) {
    Trial t;
    t.id = "t/" + std::to_string(i);
    t.task = "t";
    t.input = {{"prompt", "x"}};
    t.grader = {{"name", "exact"}};
    v.push_back(t);
  }
  return v;
}
}  // namespace

TEST_CASE("plan: shards partition the trials, every pair in exactly one shard", "[plan]") {
  const auto ts = trials(23);
  std::multiset<std::pair<std::string, int>> all;
  std::size_t total = 0;
  for (int i = 0; i < 4; ++i) {
    const Shard s{.index = i, .count = 4};
    const auto work = plan_work(ts, 3, s, {});
    CHECK(work.size() == shard_size(ts.size(), 3, s));
    total += work.size();
    for (const auto& w : work) all.insert({w.trial->id, w.repeat});
  }
  CHECK(total == 23 * 3);
  CHECK(std::set<std::pair<std::string, int>>(all.begin(), all.end()).size() == all.size());
}

TEST_CASE("plan: pairs already in the journal are skipped", "[plan]") {
  const auto ts = trials(3);
  DoneSet done = {{"t/0", 0}, {"t/1", 1}};
  const auto work = plan_work(ts, 2, Shard{}, done);
  CHECK(work.size() == 4);
  for (const auto& w : work) CHECK_FALSE(done.count({w.trial->id, w.repeat}));
}

TEST_CASE("plan: --shard parsing", "[plan]") {
  CHECK(parse_shard("2/5").index == 2);
  CHECK(parse_shard("2/5").count == 5);
  for (const char* bad : {"5/5", "-1/3", "1", "a/b", "1/0", "1/3x", ""}) {
    INFO(bad);
    CHECK_THROWS_AS(parse_shard(bad), kvgate::Error);
  }
}

TEST_CASE("plan: per-repeat seeds are stable, distinct and fit 31 bits", "[plan]") {
  std::set<std::uint64_t> seen;
  for (int r = 0; r < 100; ++r) {
    const auto s = repeat_seed(42, "niah/4096/0001", r);
    CHECK(s < (1ULL << 31));
    CHECK(s == repeat_seed(42, "niah/4096/0001", r));
    seen.insert(s);
  }
  CHECK(seen.size() == 100);
  CHECK(repeat_seed(42, "a", 0) != repeat_seed(43, "a", 0));
}

TEST_CASE("plan: resolved sampling merges the trial's stop strings and max_tokens", "[plan]") {
  kvgate::SamplingParams base;
  base.seed = 1;
  base.stop = {"Question:"};
  base.max_tokens = 100;
  Trial t = trials(1)[0];
  t.input["stop"] = {"Question:", "</s>"};
  t.input["max_tokens"] = 7;
  const auto s = resolve_sampling(base, t, 2);
  CHECK(s.stop == std::vector<std::string>{"Question:", "</s>"});
  CHECK(s.max_tokens == 7);
  CHECK(s.seed.value() == repeat_seed(1, t.id, 2));
  base.seed.reset();
  CHECK_FALSE(resolve_sampling(base, t, 0).seed);
}
