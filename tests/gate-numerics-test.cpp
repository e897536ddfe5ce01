// `kvgate gate --numerics`: every reference configuration gets the "numerics" switch (its label
// unchanged: the mode is the gate's, not a KV setting); a candidate switch that says otherwise, or
// --numerics with endpoints only, is an error naming the fix.
#include "harness/core/error.h"
#include "harness/gate/configurations.h"
#include "tests/catch_compat.hpp"

using kvtest::contains;
using nlohmann::json;
namespace g = kvgate::gate;

TEST_CASE("gate --numerics: every reference configuration computes in that mode", "[gate][numerics]") {
  const auto c = g::make_configurations(
      {.model_dir = "models/demo", .candidate_kv = {"fp8_e4m3", "int8_per_token_head,switches={\"q_fp8\":true}"}, .device = "cpu",
       .numerics = "engine"});
  REQUIRE(c.size() == 3);
  for (const g::Configuration& k : c) {
    INFO(k.label);
    CHECK(k.backend.reference.kernel_switches["numerics"] == "engine");
  }
  CHECK(c[0].label == "bf16");
  CHECK(c[1].label == "fp8_e4m3");
  CHECK(c[2].backend.reference.kernel_switches == json{{"q_fp8", true}, {"numerics", "engine"}});
  g::check_kv_settings(c);
  // Without the flag the switches stay as given: each engine's default.
  const auto plain = g::make_configurations({.model_dir = "models/demo", .candidate_kv = {"fp8_e4m3"}, .device = "cpu"});
  CHECK_FALSE(plain[1].backend.reference.kernel_switches.contains("numerics"));
}

TEST_CASE("gate --numerics: contradictions and endpoints are errors", "[gate][numerics]") {
  CHECK_THROWS_WITH(g::make_configurations({.model_dir = "models/demo",
                                            .candidate_kv = {"fp8_e4m3,switches={\"numerics\":\"exact\"}"},
                                            .device = "cpu",
                                            .numerics = "engine"}),
                    contains("--numerics engine contradicts the kernel switch \"numerics\": \"exact\""));
  CHECK_THROWS_WITH(g::make_configurations({.baseline_url = "http://127.0.0.1:1/v1",
                                            .candidate_urls = {"http://127.0.0.1:2/v1"},
                                            .model = "m",
                                            .numerics = "exact"}),
                    contains("--numerics belongs to the reference decoder"));
}
