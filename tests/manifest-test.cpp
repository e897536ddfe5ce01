#include "tests/catch_compat.hpp"
#include "harness/core/error.h"
#include "harness/core/manifest.h"
#include "harness/core/run_dir.h"
#include "harness/core/sampling.h"
#include "tests/test_util.h"

using nlohmann::json;
using kvtest::contains;

TEST_CASE("manifest: only label is required; everything round-trips", "[manifest]") {
  kvgate::RunManifest m = kvgate::manifest_from_json(json{{"label", "fp8"}}, "run.json");
  CHECK(m.label == "fp8");
  CHECK(m.backend.empty());
  m.backend = "openai";
  m.endpoint = "http://localhost:8000/v1";
  m.kv = {{"format", "fp8_e4m3"}, {"scales", "calibrated"}};
  m.sampling = kvgate::to_json(kvgate::SamplingParams{});
  m.started_at = kvgate::utc_now_rfc3339();
  m.extra = {{"custom", {1, 2}}};
  json j = kvgate::to_json(m);
  kvgate::RunManifest back = kvgate::manifest_from_json(j, "run.json");
  CHECK(kvgate::to_json(back) == j);
  CHECK(back.extra["custom"] == json({1, 2}));
  CHECK(back.started_at.size() == 20);
}

TEST_CASE("manifest: wrong types are named", "[manifest]") {
  REQUIRE_THROWS_WITH(kvgate::manifest_from_json(json::object(), "x/run.json"), contains("x/run.json: field \"label\" missing"));
  REQUIRE_THROWS_WITH(kvgate::manifest_from_json(json{{"label", "a"}, {"kv", "fp8"}}, "x/run.json"),
                      contains("field \"kv\" must be an object"));
  REQUIRE_THROWS_WITH(kvgate::manifest_from_json(json{{"label", "a"}, {"model", 3}}, "x/run.json"),
                      contains("field \"model\" must be a string"));
}

TEST_CASE("run dir: a minimal hand-made run directory loads", "[manifest]") {
  kvtest::TempDir dir;
  kvtest::write_text(dir.file("run.json"), "{\"label\": \"base\"}");
  kvtest::write_text(dir.file("results.jsonl"),
                     "{\"id\":\"a\",\"task\":\"niah\",\"bucket\":4096,\"repeat\":0,\"score\":1,\"passed\":true,\"error\":null}\n");
  kvgate::RunDir run = kvgate::load_run_dir(dir.path());
  CHECK(run.manifest.label == "base");
  REQUIRE(run.results.records.size() == 1);
  CHECK(run.results.records[0].passed);
}

TEST_CASE("run dir: missing pieces are named", "[manifest]") {
  kvtest::TempDir dir;
  REQUIRE_THROWS_WITH(kvgate::load_run_dir(dir.file("nope")), contains("not a run directory"));
  REQUIRE_THROWS_WITH(kvgate::load_run_dir(dir.path()), contains("run.json missing"));
  kvtest::write_text(dir.file("run.json"), "{\"label\": \"base\"}");
  REQUIRE_THROWS_WITH(kvgate::load_run_dir(dir.path()), contains("results.jsonl missing"));
  kvtest::write_text(dir.file("run.json"), "{\"label\": ");
  kvtest::write_text(dir.file("results.jsonl"), "");
  REQUIRE_THROWS_WITH(kvgate::load_run_dir(dir.path()), contains("run.json: not valid JSON"));
}

TEST_CASE("sampling: validated and round-tripped", "[sampling]") {
  kvgate::SamplingParams s;
  s.temperature = 0.6;
  s.top_p = 0.95;
  s.seed = 42;
  s.stop = {"</answer>"};
  s.extra_body = {{"chat_template_kwargs", {{"enable_thinking", false}}}};
  json j = kvgate::to_json(s);
  kvgate::SamplingParams back = kvgate::sampling_from_json(j, "s");
  CHECK(kvgate::to_json(back) == j);
  REQUIRE_THROWS_WITH(kvgate::sampling_from_json(json{{"top_p", 0}}, "s"), contains("field \"top_p\" must be in (0, 1]"));
  REQUIRE_THROWS_WITH(kvgate::sampling_from_json(json{{"temperature", -1}}, "s"), contains("must be >= 0"));
}
