// Suites (harness/gate/suite.h): the built-in ones, YAML and JSON files, and every kind of bad
// input named with its file, line and key; length buckets up to the model's context.
#include "tests/catch_compat.hpp"
#include "harness/core/error.h"
#include "harness/gate/lengths.h"
#include "harness/gate/suite.h"
#include "harness/gate/trial_gen.h"
#include "tests/test_util.h"

using kvgate::Error;
using kvtest::contains;
using nlohmann::json;
namespace g = kvgate::gate;

namespace {

// The message of the Error that parsing `yaml` (as file "s.yaml") throws; "" when none.
std::string yaml_error(const std::string& yaml) {
  try {
    g::LineMap lines;
    const json doc = g::yaml_to_json(yaml, "s.yaml", &lines);
    g::parse_suite(doc, "s.yaml", lines);
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

const g::TaskSpec& task(const g::Suite& s, const std::string& name) {
  for (const g::TaskSpec& t : s.tasks)
    if (t.task == name) return t;
  FAIL("no task " << name);
  throw 0;
}

}  // namespace

TEST_CASE("suite: the built-in suites load and say what they gate", "[suite]") {
  REQUIRE(g::builtin_suites().size() == 4);

  const g::Suite quick = g::load_suite("quick");
  CHECK(quick.name == "quick");
  CHECK(quick.source == "built-in");
  CHECK(quick.compare.margin == 0.95);
  REQUIRE(quick.tasks.size() == 2);
  CHECK(quick.tasks[0].task == "niah");
  CHECK(quick.tasks[1].task == "multicode");
  for (const g::TaskSpec& t : quick.tasks) {
    REQUIRE(t.lengths);
    CHECK_FALSE(t.lengths->ladder());
    CHECK(t.lengths->list.back() <= 4096);  // quick: small buckets, few trials
    CHECK(t.per_bucket <= 16);
    CHECK(t.sampling.temperature == 0.0);
  }
  CHECK(quick.tasks[0].gate);  // NIAH gates
  CHECK(quick.tasks[1].gate);  // and multi-code (the demo model retrieves since v3)

  // demo: one gated task, two buckets of at least 26 trials, so that a format without a loss can
  // PASS (64 lossless trials bound the AUC ratio at 0.959; 52 at one bucket's 0.950).
  const g::Suite demo = g::load_suite("demo");
  REQUIRE(demo.tasks.size() == 1);
  CHECK(demo.tasks[0].task == "multicode");
  CHECK(demo.tasks[0].gate);
  REQUIRE(demo.tasks[0].lengths);
  CHECK(demo.tasks[0].lengths->list.size() == 2);
  CHECK(demo.tasks[0].per_bucket * 2 >= 52);
  CHECK(demo.tasks[0].sampling.temperature == 0.0);

  const g::Suite ship = g::load_suite("ship");
  CHECK_FALSE(ship.history);
  CHECK(ship.compare.margin == 0.95);
  CHECK(ship.compare.alpha == 0.05);
  CHECK(task(ship, "golden").optional);
  for (const char* t : {"niah", "multicode", "mrcr"}) {
    REQUIRE(task(ship, t).lengths);
    CHECK(task(ship, t).lengths->ladder());
    CHECK(task(ship, t).lengths->to == 0);  // up to the model's maximum context
  }
  const g::TaskSpec& gsm = task(ship, "gsm8k");
  CHECK(gsm.repeats == 5);
  CHECK(gsm.sampling.temperature > 0.0);
  CHECK(gsm.sampling.seed.has_value());

  const g::Suite nightly = g::load_suite("nightly");
  CHECK(nightly.history);
  for (const g::TaskSpec& t : nightly.tasks) CHECK(t.task != "golden");
  CHECK(nightly.tasks.size() == ship.tasks.size() - 1);
}

TEST_CASE("suite: YAML and JSON files give the same suite; defaults, margins and gate flags", "[suite]") {
  kvtest::TempDir dir;
  const std::string yaml = R"(suite: mine
description: two tasks
seed: 7
margin: 0.9
alpha: 0.1
max_error_rate: 0.05
defaults:
  per_bucket: 12
  sampling: {temperature: 0, max_tokens: 64}
tasks:
  - task: niah
    lengths: [1k, 2048, "4K"]
    depths: random
    margin: 0.97
  - task: multicode
    lengths: {from: 1024, to: max}
    lines: 16
    ask: 2
    gate: false
    sampling: {temperature: 0.7, seed: 3, max_tokens: 99}
    repeats: 4
)";
  kvtest::write_text(dir.file("mine.yaml"), yaml);
  const g::Suite y = g::load_suite(dir.file("mine.yaml"));
  CHECK(y.name == "mine");
  CHECK(y.seed == 7);
  CHECK(y.compare.margin == 0.9);
  CHECK(y.compare.alpha == 0.1);
  CHECK(y.compare.max_error_rate == 0.05);
  const g::TaskSpec& n = y.tasks[0];
  CHECK(n.lengths->list == std::vector<std::int64_t>{1024, 2048, 4096});
  CHECK(n.per_bucket == 12);
  CHECK(n.sampling.max_tokens == 64);
  REQUIRE(n.margin);
  CHECK(*n.margin == 0.97);
  CHECK(n.options["depths"] == "random");
  const g::TaskSpec& m = y.tasks[1];
  CHECK(m.lengths->ladder());
  CHECK(m.lengths->from == 1024);
  CHECK_FALSE(m.gate);
  CHECK(m.repeats == 4);
  CHECK(m.sampling.temperature == 0.7);
  CHECK(m.sampling.seed == 3u);
  CHECK(m.options["lines"] == 16);

  kvtest::write_text(dir.file("mine.json"), y.document.dump());
  const g::Suite j = g::load_suite(dir.file("mine.json"));
  CHECK(j.document == y.document);
  CHECK(j.tasks[1].options == m.options);
}

TEST_CASE("suite: bad input is named with file, line, key and fix", "[suite]") {
  CHECK_THAT(yaml_error("suite: x\ntasks:\n  - task: niah\n    lengths: [1024]\n    dephts: [10]\n"),
             contains("s.yaml:5: tasks[0].dephts: unknown key for a niah task (known: "));
  CHECK_THAT(yaml_error("suite: x\ntasks:\n  - task: nia\n"), contains("s.yaml:3: tasks[0].task: unknown task \"nia\" (known: niah, multicode"));
  CHECK_THAT(yaml_error("suite: x\ntasks: [{task: niah}]\n"), contains("`lengths` missing"));
  CHECK_THAT(yaml_error("suite: x\ntasks:\n  - task: niah\n    lengths: [2048, 1024]\n"), contains("ascending"));
  CHECK_THAT(yaml_error("suite: x\ntasks:\n  - task: niah\n    lengths: [1024]\n    per_bucket: -3\n"),
             contains("s.yaml:5: tasks[0].per_bucket: must be in [1, "));
  CHECK_THAT(yaml_error("suite: x\ntasks:\n  - task: niah\n    lengths: [1024]\n  - task: niah\n    lengths: [2048]\n"),
             contains("appears twice"));
  CHECK_THAT(yaml_error("suite: x\ntasks:\n  - task: gsm8k\n    repeats: 5\n"), contains("repeat the same greedy answer"));
  CHECK_THAT(yaml_error("suite: x\ntasks:\n  - task: gsm8k\n    lengths: [1024]\n"), contains("gsm8k has no length buckets"));
  CHECK_THAT(yaml_error("suite: x\ntasks:\n  - task: golden\n    sampling: {temperature: 0.5}\n"), contains("golden prompts run at temperature 0"));
  CHECK_THAT(yaml_error("suite: x\nmargin: 1.5\ntasks: [{task: gsm8k}]\n"), contains("s.yaml:2: margin: must be in [0, 1]"));
  CHECK_THAT(yaml_error("suite: x\nmargin: \"0.9\"\ntasks: [{task: gsm8k}]\n"), contains("margin: must be a number, got string"));
  CHECK_THAT(yaml_error("suite: x\ntasks: [{task: gsm8k, sampling: {temprature: 0}}]\n"), contains("unknown key for sampling"));
  CHECK_THAT(yaml_error("suite: x\ntasks:\n  - task: niah\n    lengths: [1024]\n    depths: [10, 150]\n"), contains("percents from 0"));
  CHECK_THAT(yaml_error("suite: x\ntasks:\n  - task: multicode\n    lengths: [1024]\n    lines: 4\n    ask: 9\n"), contains("ask"));
  CHECK_THAT(yaml_error("suite: x\ntasks:\n  - task: gsm8k\n    style: poetry\n"), contains("poetry"));
  CHECK_THAT(yaml_error("tasks: [{task: gsm8k}]\n"), contains("`suite` missing"));
  CHECK_THAT(yaml_error("suite: x\ntasks: []\n"), contains("tasks: must be a non-empty list"));
  CHECK_THAT(yaml_error("suite: x\nsuite: y\ntasks: [{task: gsm8k}]\n"), contains("s.yaml:2: key \"suite\" given twice"));
  CHECK_THAT(yaml_error("suite: x\ntasks: [{task: gsm8k}\n"), contains("s.yaml:"));
  CHECK_THAT(yaml_error("suite: x\ntasks: [{task: gsm8k}]\nhistroy: true\n"), contains("s.yaml:3: histroy: unknown key for a suite"));
  CHECK(yaml_error("suite: x\ntasks: [{task: gsm8k, style: chat, limit: 5}]\n").empty());

  kvtest::TempDir dir;
  CHECK_THROWS_WITH(g::load_suite("qick"), contains("not a built-in suite (demo, nightly, quick, ship)"));
  CHECK_THROWS_WITH(g::load_suite(dir.file("none.yaml")), contains("no such file"));
  kvtest::write_text(dir.file("bad.json"), "{suite: x}");
  CHECK_THROWS_WITH(g::load_suite(dir.file("bad.json")), contains("not valid JSON"));
}

TEST_CASE("suite: YAML scalars are typed as YAML 1.2 core; quoted ones stay strings", "[suite]") {
  const json j = g::yaml_to_json("a: 12\nb: '12'\nc: 1.5e3\nd: true\ne: ~\nf: yes\ng: -7\nh: 0.25\n", "t.yaml");
  CHECK(j["a"] == 12);
  CHECK(j["b"] == "12");
  CHECK(j["c"] == 1500.0);
  CHECK(j["d"] == true);
  CHECK(j["e"].is_null());
  CHECK(j["f"] == "yes");  // YAML 1.1's yes is a string in 1.2
  CHECK(j["g"] == -7);
  CHECK(j["h"] == 0.25);
}

TEST_CASE("lengths: a ladder goes up to the maximum context less the generated tokens", "[suite]") {
  const g::LengthSpec ladder{.from = 4096};
  // 128K context, 128 tokens generated: doublings to 64K, then the usable context rounded to 1K.
  auto r = g::resolve_lengths(ladder, 131072, 128, "t");
  CHECK(r.buckets == std::vector<std::int64_t>{4096, 8192, 16384, 32768, 65536, 130048});
  CHECK(r.limit == 131072 - 128);
  // 40960 (Qwen3): 32K, then 39K (more than 10% above 32K).
  CHECK(g::resolve_lengths(ladder, 40960, 256, "t").buckets == std::vector<std::int64_t>{4096, 8192, 16384, 32768, 39936});
  // 32K context: 32K itself does not fit beside the answer; the usable 31K does.
  CHECK(g::resolve_lengths(ladder, 32768, 256, "t").buckets == std::vector<std::int64_t>{4096, 8192, 16384, 31744});
  // A ladder capped by `to`.
  CHECK(g::resolve_lengths({.from = 1024, .to = 4096}, 131072, 64, "t").buckets == std::vector<std::int64_t>{1024, 2048, 4096});
  CHECK(g::resolve_lengths({.from = 1024, .to = 4096}, 0, 64, "t").buckets == std::vector<std::int64_t>{1024, 2048, 4096});
  // Unknown context and no `to`: say how to give it.
  CHECK_THROWS_WITH(g::resolve_lengths(ladder, 0, 128, "s.yaml: tasks[0]"), contains("pass --max-context N"));
  CHECK_THROWS_WITH(g::resolve_lengths(ladder, 2048, 128, "t"), contains("beyond the model's usable context"));
  // A list keeps what fits and says what it dropped.
  const g::LengthSpec list{.list = {1024, 2048, 8192}};
  r = g::resolve_lengths(list, 4096, 32, "t");
  CHECK(r.buckets == std::vector<std::int64_t>{1024, 2048});
  CHECK(r.dropped == std::vector<std::int64_t>{8192});
  CHECK(g::resolve_lengths(list, 0, 32, "t").buckets == list.list);
  CHECK_THROWS_WITH(g::resolve_lengths(list, 900, 32, "t"), contains("every bucket is beyond the model's context"));
}

TEST_CASE("trial generation: each task of a suite makes its trials at the resolved buckets", "[suite]") {
  const std::string yaml = R"(suite: gen
tasks:
  - task: mrcr
    lengths: [2048]
    per_bucket: 3
    needles: [2]
  - task: multicode
    lengths: [1024]
    per_bucket: 2
    lines: 8
    ask: 2
)";
  g::LineMap lines;
  const g::Suite s = g::parse_suite(g::yaml_to_json(yaml, "gen.yaml", &lines), "gen.yaml", lines);
  const auto counter = kvgate::make_estimating_token_counter();
  const g::GenContext ctx{.seed = 4, .counter = counter.get(), .threads = 1};
  const auto mrcr = g::generate_task(s.tasks[0], {2048}, ctx);
  REQUIRE(mrcr.size() == 3);
  for (const auto& t : mrcr) {
    CHECK(t.task == "mrcr");
    CHECK(t.bucket == 2048);
  }
  CHECK(g::generation_reserve(s.tasks[0]) == s.tasks[0].sampling.max_tokens);  // MRCR writes no limit into trials
  const auto mc = g::generate_task(s.tasks[1], {1024}, ctx);
  REQUIRE(mc.size() == 2);
  CHECK(mc[0].id == "multicode/1024/0000");
  CHECK(g::generation_reserve(s.tasks[1]) == 256);  // the multi-code generator's default answer limit
  // Deterministic from the seed.
  CHECK(kvgate::to_json(g::generate_task(s.tasks[1], {1024}, ctx)[1]) == kvgate::to_json(mc[1]));
  CHECK_THAT(yaml_error("suite: x\ntasks:\n  - task: mrcr\n    lengths: [1024]\n    needles: [0]\n"), contains("needle counts from 1 to 64"));
}
