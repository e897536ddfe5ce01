// `--shard auto` (harness/gate/shard_env.h): the index and count from a Slurm job array's or a
// Kubernetes Indexed Job's variables, and a clear refusal when neither scheduler started us.
#include <map>
#include <string>

#include "tests/catch_compat.hpp"
#include "harness/core/error.h"
#include "harness/gate/shard_env.h"

using kvtest::contains;
namespace g = kvgate::gate;

namespace {

struct Env {
  std::map<std::string, std::string> vars;
  g::EnvLookup lookup() const {
    return [this](const char* name) -> const char* {
      auto it = vars.find(name);
      return it == vars.end() ? nullptr : it->second.c_str();
    };
  }
};

std::string error_of(const std::string& text, std::optional<int> count, const Env& env) {
  try {
    g::resolve_shard(text, count, env.lookup());
  } catch (const kvgate::Error& e) {
    CHECK(e.exit_code() == 2);
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("shard env: Slurm arrays give the index from the id and the count from COUNT or MIN/MAX", "[gate][shards]") {
  Env zero{{{"SLURM_ARRAY_TASK_ID", "2"}, {"SLURM_ARRAY_TASK_COUNT", "4"}, {"SLURM_ARRAY_TASK_MIN", "0"}}};
  auto s = g::resolve_shard("auto", std::nullopt, zero.lookup());
  CHECK(s.index == 2);
  CHECK(s.count == 4);
  // --array=1-8: ids 1..8 are shards 0..7, the count from MIN/MAX when COUNT is absent.
  Env one{{{"SLURM_ARRAY_TASK_ID", "1"}, {"SLURM_ARRAY_TASK_MIN", "1"}, {"SLURM_ARRAY_TASK_MAX", "8"}}};
  s = g::resolve_shard("auto", std::nullopt, one.lookup());
  CHECK(s.index == 0);
  CHECK(s.count == 8);
  one.vars["SLURM_ARRAY_TASK_ID"] = "8";
  CHECK(g::resolve_shard("auto", std::nullopt, one.lookup()).index == 7);
  // --array=0-12:4: ids 0, 4, 8, 12 are shards 0..3.
  Env step{{{"SLURM_ARRAY_TASK_ID", "8"}, {"SLURM_ARRAY_TASK_MIN", "0"}, {"SLURM_ARRAY_TASK_MAX", "12"}, {"SLURM_ARRAY_TASK_STEP", "4"}}};
  s = g::resolve_shard("auto", std::nullopt, step.lookup());
  CHECK(s.index == 2);
  CHECK(s.count == 4);
  CHECK_THAT(g::describe_shard_source("auto", zero.lookup()), contains("SLURM_ARRAY_TASK_ID=2"));
}

TEST_CASE("shard env: Kubernetes Indexed Jobs give the index; the count from --shard-count or KVGATE_SHARD_COUNT", "[gate][shards]") {
  Env k8s{{{"JOB_COMPLETION_INDEX", "3"}}};
  auto s = g::resolve_shard("auto", 5, k8s.lookup());
  CHECK(s.index == 3);
  CHECK(s.count == 5);
  CHECK_THAT(error_of("auto", std::nullopt, k8s), contains("KVGATE_SHARD_COUNT"));
  k8s.vars["KVGATE_SHARD_COUNT"] = "4";
  s = g::resolve_shard("auto", std::nullopt, k8s.lookup());
  CHECK(s.index == 3);
  CHECK(s.count == 4);
  CHECK(g::resolve_shard("auto", 6, k8s.lookup()).count == 6);  // the flag wins over the variable
  k8s.vars["JOB_COMPLETION_INDEX"] = "4";
  CHECK_THAT(error_of("auto", std::nullopt, k8s), contains("index 4 is not below the count 4"));
}

TEST_CASE("shard env: refused with the fix when no scheduler, both, or bad values", "[gate][shards]") {
  CHECK_THAT(error_of("auto", std::nullopt, Env{}), contains("neither a Slurm job array (SLURM_ARRAY_TASK_ID) nor a Kubernetes Indexed Job"));
  CHECK_THAT(error_of("auto", std::nullopt, Env{}), contains("pass --shard i/n"));
  CHECK_THAT(error_of("auto", 4, Env{{{"SLURM_ARRAY_TASK_ID", "0"}, {"JOB_COMPLETION_INDEX", "0"}}}), contains("both"));
  CHECK_THAT(error_of("auto", std::nullopt, Env{{{"SLURM_ARRAY_TASK_ID", "x1"}, {"SLURM_ARRAY_TASK_COUNT", "2"}}}),
             contains("SLURM_ARRAY_TASK_ID=\"x1\" is not a non-negative integer"));
  CHECK_THAT(error_of("auto", std::nullopt, Env{{{"SLURM_ARRAY_TASK_ID", "3"}}}), contains("pass --shard-count N"));
  CHECK_THAT(error_of("auto", std::nullopt, Env{{{"SLURM_ARRAY_TASK_ID", "5"}, {"SLURM_ARRAY_TASK_MIN", "0"}, {"SLURM_ARRAY_TASK_STEP", "2"},
                                                  {"SLURM_ARRAY_TASK_COUNT", "4"}}}),
             contains("not on the array's range"));
}

TEST_CASE("shard env: an explicit i/n is kvgate run's, and must agree with --shard-count", "[gate][shards]") {
  Env none;
  auto s = g::resolve_shard("1/3", std::nullopt, none.lookup());
  CHECK(s.index == 1);
  CHECK(s.count == 3);
  CHECK(g::describe_shard_source("1/3", none.lookup()).empty());
  CHECK_THAT(error_of("3/3", std::nullopt, none), contains("expected i/n with 0 <= i < n"));
  CHECK_THAT(error_of("1/3", 4, none), contains("disagree"));
}
