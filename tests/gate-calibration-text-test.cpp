// The ladder's default calibration text (harness/gate/calibration_text.h): prompts of the suite's own
// long-context tasks, generated with a seed that is not the trials', interleaved across buckets,
// never one of the scored trials, and none for a suite without long-context tasks.
#include <filesystem>

#include "tests/catch_compat.hpp"
#include "harness/core/jsonl.h"
#include "harness/core/trial.h"
#include "harness/gate/calibration_text.h"
#include "harness/gate/plan.h"
#include "harness/gate/trial_gen.h"
#include "harness/tokenizer/token_counter.h"
#include "tests/test_util.h"

using kvtest::contains;
namespace fs = std::filesystem;
namespace g = kvgate::gate;

namespace {

g::GateOptions gate_options(const std::string& tasks_yaml, const std::string& out) {
  const std::string yaml = "suite: mini\nseed: 3\nmargin: 0.95\ndefaults: {per_bucket: 2, sampling: {temperature: 0, max_tokens: 16}}\n"
                           "tasks:\n" + tasks_yaml;
  g::LineMap lines;
  g::GateOptions o;
  o.suite = g::parse_suite(g::yaml_to_json(yaml, "mini.yaml", &lines), "mini.yaml", lines);
  o.out_dir = out;
  o.configs = g::make_configurations({.model_dir = "models/demo", .candidate_kv = {"fp8_e4m3"}, .device = "cpu", .threads = 1});
  o.gen_threads = 1;
  return o;
}

const std::string kMulticode = "  - task: multicode\n    lengths: [256, 384]\n    lines: 8\n    ask: 2\n    max_tokens: 16\n";

// The gate's own trials of the suite's multicode task, at `seed`, written where the gate keeps them.
std::vector<kvgate::Trial> write_scored(const g::GateOptions& o, std::uint64_t seed) {
  const g::GatePlan plan = g::plan_gate(o, false);
  const auto counter = kvgate::open_token_counter({.tokenizer_path = "models/demo/tokenizer.json", .tokenize_url = "", .model = ""});
  const auto trials = g::generate_task(*plan.tasks[0].spec, plan.tasks[0].buckets, {.seed = seed, .counter = counter.get(), .threads = 1});
  fs::create_directories(o.out_dir + "/tasks");
  kvgate::write_tasks(plan.tasks[0].tasks_path, trials);
  return trials;
}

std::string content(const kvgate::Trial& t) { return t.input["messages"][0]["content"].get<std::string>(); }

std::string all_contents(const kvgate::Trial& t) {
  std::string out;
  for (const auto& m : t.input["messages"]) out += (out.empty() ? "" : "\n") + m["content"].get<std::string>();
  return out;
}

}  // namespace

TEST_CASE("calibration text: the suite's prompts at another seed, interleaved, none of them scored", "[gate][ladder]") {
  REQUIRE(fs::is_regular_file("models/demo/tokenizer.json"));
  kvtest::TempDir dir;
  const g::GateOptions o = gate_options(kMulticode, dir.file("g"));
  CHECK(g::calibration_seed(3) != 3);
  CHECK(g::calibration_seed(3) == g::calibration_seed(3));
  const auto scored = write_scored(o, o.suite.seed);
  const g::CalibrationPrompts c = g::suite_calibration_prompts(o, 2);
  CHECK(c.seed == g::calibration_seed(3));
  CHECK(c.tasks == "multicode");
  CHECK(c.prompts == 4);  // 2 a bucket, 2 buckets
  CHECK(c.dropped == 0);
  REQUIRE_FALSE(c.text.empty());
  for (const kvgate::Trial& t : scored) CHECK(c.text.find(content(t)) == std::string::npos);
  // Interleaved: the first trial of each bucket, then the second of each.
  const auto counter = kvgate::open_token_counter({.tokenizer_path = "models/demo/tokenizer.json", .tokenize_url = "", .model = ""});
  const g::GatePlan plan = g::plan_gate(o, false);
  auto own = g::generate_task(*plan.tasks[0].spec, plan.tasks[0].buckets, {.seed = c.seed, .counter = counter.get(), .threads = 1});
  std::vector<const kvgate::Trial*> by_bucket[2];
  for (const kvgate::Trial& t : own) by_bucket[t.bucket == 256 ? 0 : 1].push_back(&t);
  REQUIRE(by_bucket[0].size() == 2);
  REQUIRE(by_bucket[1].size() == 2);
  std::string expected;
  for (int i = 0; i < 2; ++i)
    for (int b = 0; b < 2; ++b) expected += (expected.empty() ? "" : "\n\n") + all_contents(*by_bucket[b][static_cast<std::size_t>(i)]);
  CHECK(c.text == expected);
  // More trials a bucket give more text, the first ones unchanged.
  const g::CalibrationPrompts more = g::suite_calibration_prompts(o, 4);
  CHECK(more.prompts == 8);
  CHECK(more.text.size() > c.text.size());
}

TEST_CASE("calibration text: a prompt equal to a scored trial is left out", "[gate][ladder]") {
  REQUIRE(fs::is_regular_file("models/demo/tokenizer.json"));
  kvtest::TempDir dir;
  const g::GateOptions o = gate_options(kMulticode, dir.file("g"));
  // Scored trials made with the calibration seed itself: every calibration prompt is one of them.
  write_scored(o, g::calibration_seed(o.suite.seed));
  const g::CalibrationPrompts c = g::suite_calibration_prompts(o, 2);
  CHECK(c.dropped == 4);
  CHECK(c.prompts == 0);
  CHECK(c.text.empty());
}

TEST_CASE("calibration text: none from a suite without long-context tasks", "[gate][ladder]") {
  kvtest::TempDir dir;
  const g::GateOptions o = gate_options("  - task: golden\n    prompts: none.jsonl\n", dir.file("g"));
  const g::CalibrationPrompts c = g::suite_calibration_prompts(o, 2);
  CHECK(c.text.empty());
  CHECK(c.prompts == 0);
  CHECK(c.tasks.empty());
}
