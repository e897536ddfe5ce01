#include "tests/catch_compat.hpp"
#include "harness/core/error.h"
#include "harness/core/result.h"
#include "tests/test_util.h"

using nlohmann::json;
using kvtest::contains;

static json minimal() {
  return json{{"id", "gsm8k/0001"}, {"task", "gsm8k"}, {"bucket", 0}, {"repeat", 2},
              {"score", 1.0},       {"passed", true},  {"error", nullptr}};
}

TEST_CASE("result: the seven fields compare needs are enough", "[result]") {
  kvgate::ResultRecord r = kvgate::result_from_json(minimal(), "r:1");
  CHECK(r.id == "gsm8k/0001");
  CHECK(r.repeat == 2);
  CHECK(r.passed);
  CHECK_FALSE(r.error.has_value());
  CHECK_FALSE(r.latency_ms.has_value());
}

TEST_CASE("result: a full record round-trips, unknown fields kept", "[result]") {
  kvgate::ResultRecord r;
  r.id = "mrcr/8192/0003";
  r.task = "mrcr";
  r.bucket = 8192;
  r.repeat = 1;
  r.score = 0.8125;
  r.passed = false;
  r.error = "HTTP 400: context too long";
  r.response = "abc\n\"quoted\"";
  r.reasoning = "thinking...";
  r.finish_reason = "length";
  r.prompt_tokens = 8100;
  r.completion_tokens = 91;
  r.latency_ms = 1234.5;
  r.ttft_ms = 88.0;
  r.grade = {{"value", "partial"}, {"extracted", "abc"}};
  r.extra = {{"depth", 0.25}, {"codes_right", 3}};
  json j = kvgate::to_json(r);
  kvgate::ResultRecord back = kvgate::result_from_json(j, "r:1");
  CHECK(kvgate::to_json(back) == j);
  CHECK(back.error == r.error);
  CHECK(back.ttft_ms == 88.0);
  CHECK(back.extra["codes_right"] == 3);
}

TEST_CASE("result: malformed fields are named", "[result]") {
  struct Case {
    const char* name;
    std::function<void(json&)> mutate;
    const char* expect;
  };
  std::vector<Case> cases = {
      {"no error field", [](json& j) { j.erase("error"); }, "field \"error\" missing"},
      {"score above 1", [](json& j) { j["score"] = 1.5; }, "field \"score\" must be between 0 and 1"},
      {"score a string", [](json& j) { j["score"] = "1"; }, "field \"score\" must be a number"},
      {"passed a number", [](json& j) { j["passed"] = 1; }, "field \"passed\" must be true or false"},
      {"negative repeat", [](json& j) { j["repeat"] = -1; }, "field \"repeat\" must be between"},
      {"error a number", [](json& j) { j["error"] = 3; }, "field \"error\" must be a string"},
      {"missing task", [](json& j) { j.erase("task"); }, "field \"task\" missing"},
  };
  for (const Case& c : cases) {
    INFO(c.name);
    json j = minimal();
    c.mutate(j);
    REQUIRE_THROWS_WITH(kvgate::result_from_json(j, "run/results.jsonl:9"), contains("run/results.jsonl:9: " + std::string(c.expect)));
  }
}
