// `kvgate gate --dry-run` (harness/gate/dry_run.h): the plan counted from the suite alone, per task
// and bucket, per configuration, in all, and per shard; nothing generated or asked of a server.
#include "tests/catch_compat.hpp"
#include "harness/core/error.h"
#include "harness/gate/dry_run.h"

using kvtest::contains;
using nlohmann::json;
namespace g = kvgate::gate;

namespace {

// Endpoints nobody listens on: a dry run must not need them.
g::GateOptions ship_on_endpoints(std::int64_t max_context) {
  g::GateOptions o;
  o.suite = g::load_suite("ship");
  o.out_dir = "unused";
  o.configs = g::make_configurations(
      {.baseline_url = "http://127.0.0.1:9/v1", .candidate_urls = {"http://127.0.0.1:9/v1", "http://127.0.0.1:9/v1"}, .model = "m"});
  o.max_context = max_context;
  return o;
}

}  // namespace

TEST_CASE("dry run: the ship suite on a 128K model, bucket by bucket", "[gate][dry-run]") {
  const json p = g::dry_run_plan(ship_on_endpoints(131072), 0);
  CHECK(p["schema"] == "kvgate-gate-plan/1");
  CHECK(p["max_context"] == 131072);
  CHECK(p["max_context_source"] == "--max-context");
  CHECK(p["skipped_tasks"] == json::array({"golden"}));  // no --golden
  CHECK(p["configurations"].size() == 3);
  REQUIRE(p["tasks"].size() == 4);
  const json& niah = p["tasks"][0];
  CHECK(niah["task"] == "niah");
  std::vector<std::int64_t> buckets;
  for (const json& b : niah["buckets"]) {
    buckets.push_back(b["bucket"].get<std::int64_t>());
    CHECK(b["trials"] == 55);
    CHECK(b["prompt_tokens"] == b["bucket"]);  // exact-length trials
    CHECK(b["max_output_tokens"] == 128);
  }
  CHECK(buckets == std::vector<std::int64_t>{4096, 8192, 16384, 32768, 65536, 130048});
  CHECK(niah["requests"] == 6 * 55);
  const json& mrcr = p["tasks"][2];
  CHECK(mrcr["buckets"][0]["max_output_tokens"] == 1024);
  const json& gsm8k = p["tasks"][3];
  CHECK(gsm8k["trials"] == 400);
  CHECK(gsm8k["repeats"] == 5);
  CHECK(gsm8k["requests"] == 2000);
  CHECK(gsm8k["buckets"][0]["prompt_tokens"].is_null());
  CHECK(gsm8k["buckets"][0]["max_output_tokens"] == 2048);
  const std::size_t per_config = 6 * 55 + 6 * 50 + 6 * 50 + 2000;
  CHECK(p["per_configuration"]["requests"] == per_config);
  CHECK(p["per_configuration"]["requests_prompt_uncounted"] == 2000);
  CHECK(p["total"]["requests"].get<double>() == 3.0 * per_config);
  CHECK(p["shards"].is_null());

  const std::string text = g::dry_run_text(p);
  CHECK_THAT(text, contains("maximum context 131072 tokens (--max-context); nothing is sent"));
  CHECK_THAT(text, contains("niah         130048      55"));
  CHECK_THAT(text, contains("per configuration: " + std::to_string(per_config) + " requests"));
}

TEST_CASE("dry run: a split gives every shard its share of every task, adding up to the whole", "[gate][dry-run]") {
  g::GateOptions o = ship_on_endpoints(131072);
  o.shard = {.index = 2, .count = 8};
  const json p = g::dry_run_plan(o, 0);
  REQUIRE(p["shards"]["count"] == 8);
  CHECK(p["shards"]["this_shard"] == "2/8");
  std::size_t niah = 0, requests = 0;
  for (const json& s : p["shards"]["per_shard"]) {
    niah += s["tasks"]["niah"]["trials"].get<std::size_t>();
    requests += s["requests_per_configuration"].get<std::size_t>();
    CHECK(s["tasks"]["gsm8k"]["requests"] == 50 * 5);
  }
  CHECK(niah == 330);
  CHECK(requests == p["per_configuration"]["requests"].get<std::size_t>());
  CHECK(p["shards"]["per_shard"][0]["tasks"]["niah"]["trials"] == 42);  // 330 = 8 * 41 + 2
  CHECK(p["shards"]["per_shard"][7]["tasks"]["niah"]["trials"] == 41);
  CHECK_THAT(g::dry_run_text(p), contains("* shard 2/8"));
  // --shard-count alone: the split, no shard of ours.
  const json q = g::dry_run_plan(ship_on_endpoints(131072), 3);
  CHECK(q["shards"]["count"] == 3);
  CHECK(q["shards"]["this_shard"].is_null());
}

TEST_CASE("dry run: URL,URL,... is one configuration served by replicas", "[gate][dry-run]") {
  g::GateOptions o = ship_on_endpoints(32768);
  o.configs = g::make_configurations({.baseline_url = "http://a:8000/v1,http://b:8000/v1", .candidate_urls = {"http://c:8000/v1"}, .model = "m"});
  REQUIRE(o.configs[0].backend.http.endpoints == std::vector<std::string>{"http://a:8000/v1", "http://b:8000/v1"});
  const json p = g::dry_run_plan(o, 0);
  CHECK(p["configurations"].size() == 2);
  CHECK(p["configurations"][0]["target"] == "http://a:8000/v1 http://b:8000/v1 model m");
  try {
    g::make_configurations({.baseline_url = "http://a:8000/v1,", .candidate_urls = {"http://c:8000/v1"}, .model = "m"});
    FAIL("no error");
  } catch (const kvgate::Error& e) {
    CHECK_THAT(std::string(e.what()), contains("--baseline http://a:8000/v1,: an empty URL"));
  }
}

TEST_CASE("dry run: endpoints without --max-context are not asked; the error says to pass it", "[gate][dry-run]") {
  try {
    g::dry_run_plan(ship_on_endpoints(0), 0);
    FAIL("no error");
  } catch (const kvgate::Error& e) {
    CHECK_THAT(std::string(e.what()), contains("a dry run asks no server: pass --max-context N"));
  }
}

TEST_CASE("dry run: the reference decoder's context comes from the checkpoint", "[gate][dry-run]") {
  g::GateOptions o;
  o.suite = g::load_suite("quick");
  o.configs = g::make_configurations({.model_dir = "models/demo", .baseline_kv = "bf16", .candidate_kv = {"fp8_e4m3"}, .device = "cpu"});
  const json p = g::dry_run_plan(o, 0);
  CHECK(p["max_context_source"].get<std::string>().find("max_position_embeddings") != std::string::npos);
  CHECK(p["configurations"][1]["target"].get<std::string>().find("kv fp8_e4m3") != std::string::npos);
  CHECK(p["tasks"][0]["buckets"][0]["bucket"] == 1024);
}
