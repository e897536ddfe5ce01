// Per-configuration KV settings in the gate (harness/gate/candidate_kv.h): the --candidate-kv syntax
// (valid and invalid), the labels that say which is which, the settings carried to the reference
// decoder and recorded, endpoints' declared formats checked against what the engine reports, and
// the pinning check listing the KV settings without counting them as differences.
#include <filesystem>
#include <fstream>

#include "tests/catch_compat.hpp"
#include "harness/compare/pinning.h"
#include "harness/core/error.h"
#include "harness/gate/configurations.h"
#include "harness/gate/gate_dir.h"
#include "tests/test_util.h"

using kvtest::contains;
using nlohmann::json;
namespace fs = std::filesystem;
namespace g = kvgate::gate;

namespace {

std::string write(const std::string& path, const std::string& text) {
  std::ofstream(path) << text;
  return path;
}

// kvgate's scales layout for `layers` layers, one scale per layer.
std::string scales_file(const std::string& path, int layers) {
  json l = json::array();
  for (int i = 0; i < layers; ++i) l.push_back({{"k", 0.05}, {"v", 0.02}});
  return write(path, json{{"kvgate_kv_scales", 1}, {"granularity", "tensor"}, {"layers", l}}.dump());
}

}  // namespace

TEST_CASE("candidate kv: formats with settings; a token with '=' belongs to the format before it", "[gate]") {
  kvtest::TempDir dir;
  const std::string cal = scales_file(dir.file("cal.json"), 8);
  const auto v = g::parse_kv_settings({"fp8_e4m3,int8_per_token_head", "fp8_e4m3,scales=" + cal, "fp8_e4m3,skip=0:27",
                                       "fp8_e4m3,switches={\"q_fp8\":true,\"pv_fp8\":true},label=fa3",
                                       "int4_per_token_head,params={\"hadamard\":false}"},
                                      "--candidate-kv");
  REQUIRE(v.size() == 6);
  CHECK(v[0].name() == "fp8_e4m3");
  CHECK(v[0].plain());
  CHECK(v[1].name() == "int8_per_token_head");
  CHECK(v[2].name() == "fp8_e4m3+calibrated");
  CHECK(v[2].scales == cal);
  CHECK(v[2].kv_params() == json{{"scales", cal}});
  CHECK(v[3].name() == "fp8_e4m3+skip(0,27)");
  CHECK(v[3].kv_params() == json{{"skip_layers", {0, 27}}});
  CHECK(v[4].default_label() == "fp8_e4m3+switches(pv_fp8,q_fp8)");
  CHECK(v[4].name() == "fa3");
  CHECK(v[4].kernel_switches == json{{"q_fp8", true}, {"pv_fp8", true}});
  CHECK(v[5].name() == "int4_per_token_head+params(hadamard)");
  CHECK(v[5].kv_params() == json{{"hadamard", false}});
  // Every setting recorded, the scales by content too.
  const json r = v[2].record();
  CHECK(r["scales"] == cal);
  CHECK(r["scales_sha256"].get<std::string>().size() == 64);
  CHECK(g::parse_kv_settings({"fp8_e4m3,skip=-1:0"}, "--candidate-kv")[0].name() == "fp8_e4m3+skip(-1,0)");
  CHECK(g::split_top_level("a,b={\"x\":1,\"y\":[1,2]},c=\"p,q\"") == std::vector<std::string>{"a", "b={\"x\":1,\"y\":[1,2]}", "c=\"p,q\""});
}

TEST_CASE("candidate kv: bad settings are refused naming the flag, the token and the fix", "[gate]") {
  kvtest::TempDir dir;
  const auto bad = [](const std::string& v) { return g::parse_kv_settings({v}, "--candidate-kv"); };
  CHECK_THROWS_WITH(bad("fp8_e4m3,scale=x.json"), contains("unknown setting \"scale\": the settings are scales=FILE"));
  CHECK_THROWS_WITH(bad("scales=x.json"), contains("comes before any format"));
  CHECK_THROWS_WITH(bad("fp9_e4m3"), contains("fp9_e4m3: unknown KV format"));
  CHECK_THROWS_WITH(bad("fp8_e4m3,,int8_per_token_head"), contains("an empty entry"));
  CHECK_THROWS_WITH(bad("fp8_e4m3,skip=0:x"), contains("\"x\" is not a layer number"));
  CHECK_THROWS_WITH(bad("fp8_e4m3,skip=0,27"), contains("unknown KV format"));  // ',' separates configurations: 27 is no format
  CHECK_THROWS_WITH(bad("fp8_e4m3,skip=3:3"), contains("layer 3 given twice"));
  CHECK_THROWS_WITH(bad("fp8_e4m3,skip="), contains("no value"));
  CHECK_THROWS_WITH(bad("fp8_e4m3,scales=" + dir.file("missing.json")), contains("--candidate-kv fp8_e4m3,scales=" + dir.file("missing.json")));
  CHECK_THROWS_WITH(bad("fp8_e4m3,scales=" + write(dir.file("bad.json"), "{not json")), contains("bad.json"));
  CHECK_THROWS_WITH(bad("fp8_e4m3,switches={\"q_fp9\":true}"), contains("unknown switch \"q_fp9\""));
  CHECK_THROWS_WITH(bad("fp8_e4m3,switches=[1]"), contains("not a JSON object"));
  CHECK_THROWS_WITH(bad("fp8_e4m3,params={\"skip_layers\":[0]}"), contains("use skip=L:L"));
  CHECK_THROWS_WITH(bad("fp8_e4m3,skip=0,skip=1"), contains("given twice"));
}

TEST_CASE("candidate kv: configurations carry the settings; labels say which is which", "[gate]") {
  kvtest::TempDir dir;
  const std::string cal = scales_file(dir.file("cal.json"), 8);
  const auto c = g::make_configurations(
      {.model_dir = "models/demo", .candidate_kv = {"fp8_e4m3", "fp8_e4m3,scales=" + cal, "fp8_e4m3,skip=0:-1,switches={\"q_fp8\":true}"},
       .device = "cpu"});
  REQUIRE(c.size() == 4);
  CHECK(c[0].label == "bf16");
  CHECK(c[1].label == "fp8_e4m3");
  CHECK(c[2].label == "fp8_e4m3+calibrated");
  CHECK(c[2].backend.reference.kv_params == json{{"scales", cal}});
  CHECK(c[3].label == "fp8_e4m3+skip(0,-1)+switches(q_fp8)");
  CHECK(c[3].backend.reference.kv_params == json{{"skip_layers", {0, -1}}});
  CHECK(c[3].backend.reference.kernel_switches == json{{"q_fp8", true}});
  g::check_kv_settings(c);  // every setting fits the demo model's 8 layers
  // gate.json keeps every setting, and a merged gate reads them back.
  const json rec = g::configuration_record(c[3]);
  CHECK(rec["kv"]["skip_layers"] == json{0, -1});
  const g::Configuration back = g::configuration_from_record(rec, "gate.json");
  CHECK(back.backend.reference.kv_params == c[3].backend.reference.kv_params);
  CHECK(back.backend.reference.kernel_switches == c[3].backend.reference.kernel_switches);

  // Settings the model cannot take: named with the configuration and the model, before any run.
  auto out_of_range = g::make_configurations({.model_dir = "models/demo", .candidate_kv = {"fp8_e4m3,skip=0:27"}, .device = "cpu"});
  CHECK_THROWS_WITH(g::check_kv_settings(out_of_range), contains("fp8_e4m3+skip(0,27) (") && contains("8 layers") && contains("27"));
  auto wrong_scales = g::make_configurations(
      {.model_dir = "models/demo", .candidate_kv = {"fp8_e4m3,scales=" + scales_file(dir.file("four.json"), 4)}, .device = "cpu"});
  CHECK_THROWS_WITH(g::check_kv_settings(wrong_scales), contains("fp8_e4m3+calibrated"));
  // Two calibrated candidates need their own labels.
  CHECK_THROWS_WITH(g::make_configurations({.model_dir = "models/demo",
                                            .candidate_kv = {"fp8_e4m3,scales=" + cal, "fp8_e4m3,scales=" + cal}}),
                    contains("labelled \"fp8_e4m3+calibrated\"") && contains("label=NAME"));
}

TEST_CASE("candidate kv: endpoints declare their format, one per URL, checked against the engine", "[gate]") {
  using T = g::Targets;
  const auto c = g::make_configurations(T{.baseline_url = "http://127.0.0.1:1/v1",
                                          .candidate_urls = {"http://127.0.0.1:2/v1", "http://127.0.0.1:3/v1"},
                                          .model = "m",
                                          .baseline_kv = "bf16",
                                          .candidate_kv = {"fp8_e4m3,label=fp8", "q8_0"}});
  REQUIRE(c.size() == 3);
  CHECK(c[0].kv_format == "bf16");
  CHECK(c[0].label == "baseline");
  CHECK(c[1].kv_format == "fp8_e4m3");
  CHECK(c[1].label == "fp8");
  CHECK(c[2].kv_format == "q8_0");
  CHECK(c[2].label == "candidate-2");
  CHECK(g::configuration_record(c[1])["kv_format"] == "fp8_e4m3");
  CHECK_THROWS_WITH(g::make_configurations(T{.baseline_url = "http://127.0.0.1:1/v1", .candidate_urls = {"http://127.0.0.1:2/v1"},
                                             .model = "m", .candidate_kv = {"fp8_e4m3,q8_0"}}),
                    contains("2 formats for 1 --candidate endpoints"));
  CHECK_THROWS_WITH(g::make_configurations(T{.baseline_url = "http://127.0.0.1:1/v1", .candidate_urls = {"http://127.0.0.1:2/v1"},
                                             .model = "m", .candidate_kv = {"fp8_e4m3,skip=0"}}),
                    contains("an endpoint's KV format is declared, not set"));

  // The engine's own names map to kvgate's; a mismatch names both.
  CHECK(g::kvgate_format_of("fp8") == "fp8_e4m3");
  CHECK(g::kvgate_format_of("float8_e4m3fn") == "fp8_e4m3");
  CHECK(g::kvgate_format_of("f16") == "fp16");
  CHECK(g::kvgate_format_of("Q8_0") == "q8_0");
  CHECK(g::kvgate_format_of("mystery").empty());
  g::check_declared_kv(c[1], "fp8", "probe");      // the same format in vLLM's words
  g::check_declared_kv(c[0], "auto", "probe");     // the model's dtype
  g::check_declared_kv(c[1], "mystery", "probe");  // unknown: recorded, not checked
  CHECK_THROWS_WITH(g::check_declared_kv(c[2], "q4_0", "engine log server.log type_k"),
                    contains("declared KV format q8_0 but the engine reports q4_0 (engine log server.log type_k)"));
}

TEST_CASE("candidate kv: the pinning check shows the KV settings, never as differences", "[gate][pinning]") {
  kvgate::RunManifest a, b;
  a.kv = {{"format", "bf16"}};
  b.kv = {{"format", "fp8_e4m3"}, {"scales", {{"layers", json::array()}}}, {"skip_layers", {0, 7}}, {"kernel_switches", {{"q_fp8", true}}}};
  b.extra["identity"] = {{"kv", {{"scales_sha256", std::string(64, 'a')}}}};
  const kvgate::compare::Pinning p = kvgate::compare::check_pinning(a, b, "bf16", "fp8");
  CHECK(p.pinned());
  REQUIRE(p.kv_settings.size() == 4);
  CHECK(kvgate::compare::kv_settings_line(p) ==
        "KV format bf16 -> fp8_e4m3; KV scales (not recorded) -> calibrated (sha256 aaaaaaaaaaaa); layers kept in bf16 (not recorded) "
        "-> [0,7]; kernel switches (not recorded) -> {\"q_fp8\":true}");
  // An uncalibrated fp8 run records its scale 1.0.
  b = {};
  b.kv = {{"format", "fp8_e4m3"}, {"k_scale", 1.0}, {"v_scale", 1.0}};
  CHECK_THAT(kvgate::compare::kv_settings_line(kvgate::compare::check_pinning(a, b, "bf16", "fp8")), contains("k_scale 1.0, v_scale 1.0"));
  // Endpoints that declared nothing: the KV format is named as unrecorded rather than "pinned" with nothing known.
  kvgate::RunManifest e1, e2;
  e1.kv = {{"format", nullptr}};
  e2.kv = {{"format", nullptr}};
  const auto q = kvgate::compare::check_pinning(e1, e2, "baseline", "candidate");
  CHECK(std::find(q.unrecorded.begin(), q.unrecorded.end(), "KV format") != q.unrecorded.end());
  CHECK(q.kv_settings.empty());
}
