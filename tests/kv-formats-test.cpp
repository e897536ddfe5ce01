// Format resolution (kernels/kv_format.h, kv_scales.h): bytes per token of every format, the
// parameters and their defaults as run.json records them, skip layers, scales files, and the
// errors for bad parameters.
#include "tests/catch_compat.hpp"
#include "harness/core/error.h"
#include "kernels/kv_format.h"
#include "kernels/kv_scales.h"
#include "tests/test_util.h"

using namespace kvgate::kernels;
using nlohmann::json;

namespace {
const KvShape kQwen3_8B{36, 8, 128};   // seed 001
const KvShape kQwen3_32B{64, 8, 128};  // seed 000
double bpt(const std::string& f, const KvShape& s = kQwen3_8B, json params = json::object()) {
  return resolve_kv_format({f, std::move(params)}, s).bytes_per_token();
}
}  // namespace

TEST_CASE("kv formats: bytes per token of every format at Qwen3-8B (36 x 8 x 128)", "[kvformat]") {
  // Seed 001: 36 x 8 x 128 x 2 x 2 = 144 KiB in BF16; per-token-head scales add 36 x 8 x 2 x 4 =
  // 2.25 KiB; the 3-bit TurboQuant preset is 41.5 KiB with its 4 protected bf16 layers (16 KiB).
  CHECK(bpt("bf16") == 144 * 1024);
  CHECK(bpt("fp16") == 144 * 1024);
  CHECK(bpt("fp32") == 288 * 1024);
  CHECK(bpt("fp8_e4m3") == 72 * 1024);
  CHECK(bpt("fp8_e5m2") == 72 * 1024);
  CHECK(bpt("fp8_per_token_head") == 72 * 1024 + 2.25 * 1024);
  CHECK(bpt("int8_per_token_head") == 72 * 1024 + 2.25 * 1024);
  CHECK(bpt("int4_per_token_head") == 36 * 1024 + 2.25 * 1024);  // 3.76x BF16 ("3.7 times")
  CHECK(bpt("nvfp4") == 36 * 8 * 2 * (64 + 8));                   // 40.5 KiB: SGLang's 3.56x BF16
  CHECK(bpt("q8_0") == 36 * 8 * 2 * 4 * 34);
  CHECK(bpt("q4_0") == 36 * 8 * 2 * 4 * 18);
  CHECK(bpt("turboquant_3bit_nc") == 41.5 * 1024);
  // The other presets: slots of 196 (k8v4: 128 + 64 + 4), 134 (4bit: 64 + 2 + 64 + 4), 118 bytes.
  CHECK(bpt("turboquant_k8v4") == 32 * 8 * 196 + 16 * 1024);
  CHECK(bpt("turboquant_4bit_nc") == 32 * 8 * 134 + 16 * 1024);
  CHECK(bpt("turboquant_k3v4_nc") == 32 * 8 * 118 + 16 * 1024);
  // KIVI-2, G = 32: keys 128 x 2 bits + 128 channels x 4 bytes / 32 tokens = 48; values 32 + 4 x 4 = 48.
  CHECK(bpt("kivi2") == 36 * 8 * 96);
}

TEST_CASE("kv formats: Qwen3-32B is 256 KiB per token in BF16 and 128 KiB in FP8", "[kvformat]") {
  CHECK(bpt("bf16", kQwen3_32B) == 262144);
  CHECK(bpt("fp8_e4m3", kQwen3_32B) == 131072);
  // 32K tokens: 8.59 GB vs 4.29 GB per sequence.
  CHECK(resolve_kv_format({"bf16", {}}, kQwen3_32B).bytes_for_sequence(32768) == 8589934592.0);
}

TEST_CASE("kv formats: skip layers, negative from the end, in bf16", "[kvformat]") {
  auto s = resolve_kv_format({"fp8_e4m3", {{"skip_layers", "0,1,-2,-1"}}}, kQwen3_8B);
  CHECK(s.skip_layers == std::vector<int>{0, 1, 34, 35});
  CHECK(s.layers[0].codec == "bf16");
  CHECK(s.layers[2].codec == "fp8_e4m3");
  CHECK(s.bytes_per_token() == 32 * 8 * 2 * 128 + 4 * 8 * 2 * 256);
  CHECK(resolve_kv_format({"fp8_e4m3", {{"skip_layers", json::array({-1, 35, 3})}}}, kQwen3_8B).skip_layers ==
        std::vector<int>{3, 35});
  // TurboQuant protects the first and last two layers by default, capped at layers / 2; [] turns it off.
  CHECK(resolve_kv_format({"turboquant_4bit_nc", {}}, kQwen3_8B).skip_layers == std::vector<int>{0, 1, 34, 35});
  CHECK(resolve_kv_format({"turboquant_4bit_nc", {}}, KvShape{3, 1, 128}).skip_layers == std::vector<int>{0, 2});
  CHECK(resolve_kv_format({"turboquant_4bit_nc", {{"skip_layers", json::array()}}}, kQwen3_8B).skip_layers.empty());
  REQUIRE_THROWS_WITH(resolve_kv_format({"fp8_e4m3", {{"skip_layers", "0,36"}}}, kQwen3_8B),
                      kvtest::contains("layer 36, out of range for a 36-layer model (valid: -36..35)"));
  REQUIRE_THROWS_WITH(resolve_kv_format({"fp8_e4m3", {{"skip_layers", "0,x"}}}, kQwen3_8B),
                      kvtest::contains("\"x\", which is not a layer index"));
}

TEST_CASE("kv formats: the record holds every resolved parameter", "[kvformat]") {
  json r = resolve_kv_format({"int8_per_token_head", {}}, kQwen3_8B).record();
  CHECK(r["format"] == "int8_per_token_head");
  CHECK(r["rounding"] == "rne");
  CHECK(r["input_dtype"] == "bf16");
  CHECK(r["skip_layers"] == json::array());
  CHECK(r["bytes_per_token"] == 76032.0);
  r = resolve_kv_format({"int8_per_token_head", {{"rounding", "trunc"}, {"input_dtype", "fp32"}}}, kQwen3_8B).record();
  CHECK(r["rounding"] == "trunc");
  CHECK(r["input_dtype"] == "fp32");
  r = resolve_kv_format({"fp8_e4m3", {}}, kQwen3_8B).record();
  CHECK(r["k_scale"] == 1.0);
  CHECK(r["v_scale"] == 1.0);
  r = resolve_kv_format({"q8_0", {}}, kQwen3_8B).record();
  CHECK(r["rotate"] == true);  // head_dim 128: llama.cpp rotates by default
  CHECK(resolve_kv_format({"q8_0", {}}, KvShape{2, 2, 96}).record()["rotate"] == false);
  r = resolve_kv_format({"int4_per_token_head", {}}, kQwen3_8B).record();
  CHECK(r["hadamard"] == true);
  CHECK(r["hadamard_seed"] == 2654435769LL);
  CHECK(r["hadamard_signs"].get<std::string>().size() == 128);
  // The same seed gives the same signs; explicit signs are recorded as given.
  CHECK(resolve_kv_format({"int4_per_token_head", {}}, kQwen3_8B).hadamard_signs ==
        resolve_kv_format({"int4_per_token_head", {}}, kQwen3_8B).hadamard_signs);
  const std::string signs(64, '+');
  const auto given = resolve_kv_format({"int4_per_token_head", {{"hadamard_signs", signs + std::string(64, '-')}}}, kQwen3_8B);
  CHECK(given.hadamard_signs[0] == 1.0f);
  CHECK(given.hadamard_signs[127] == -1.0f);
  CHECK(!given.record().contains("hadamard_seed"));
  r = resolve_kv_format({"kivi2", {}}, kQwen3_8B).record();
  CHECK(r["group_size"] == 32);
  CHECK(r["residual"] == 128);
  CHECK(resolve_kv_format({"bf16", {}}, kQwen3_8B).record() == json{{"format", "bf16"}, {"bytes_per_token", 147456.0}});
  CHECK(!resolve_kv_format({"nvfp4", {}}, kQwen3_8B).layout.empty());
}

TEST_CASE("kv formats: bad formats and parameters name themselves and the fix", "[kvformat]") {
  using kvtest::contains;
  REQUIRE_THROWS_WITH(resolve_kv_format({"fp7", {}}, kQwen3_8B), contains("--kv-format fp7: unknown KV-cache format (known: fp32, bf16"));
  REQUIRE_THROWS_WITH(resolve_kv_format({"fp8_e4m3", {{"k_sacle", 2}}}, kQwen3_8B),
                      contains("unknown parameter \"k_sacle\" (this format takes: "));
  REQUIRE_THROWS_WITH(resolve_kv_format({"bf16", {{"rounding", "rne"}}}, kQwen3_8B), contains("unknown parameter \"rounding\""));
  REQUIRE_THROWS_WITH(resolve_kv_format({"bf16", {{"input_dtype", "fp32"}}}, kQwen3_8B), contains("unknown parameter \"input_dtype\""));
  // bf16 takes a shared skip list as a no-op; fp32 keeps its skipped layers in bf16.
  CHECK(resolve_kv_format({"bf16", {{"skip_layers", "0"}}}, kQwen3_8B).skip_layers.empty());
  CHECK(resolve_kv_format({"fp32", {{"skip_layers", "0"}}}, kQwen3_8B).bytes_per_token() == 288 * 1024 - 8 * 2 * 128 * 2);
  REQUIRE_THROWS_WITH(resolve_kv_format({"int8_per_token_head", {{"rounding", "up"}}}, kQwen3_8B),
                      contains("\"rounding\" must be rne | trunc"));
  REQUIRE_THROWS_WITH(resolve_kv_format({"fp8_e4m3", {{"k_scale", -1}}}, kQwen3_8B), contains("\"k_scale\" must be a positive"));
  REQUIRE_THROWS_WITH(resolve_kv_format({"nvfp4", {}}, KvShape{1, 1, 24}), contains("not a multiple of 16"));
  REQUIRE_THROWS_WITH(resolve_kv_format({"q4_0", {}}, KvShape{1, 1, 48}), contains("not a multiple of 32"));
  REQUIRE_THROWS_WITH(resolve_kv_format({"turboquant_3bit_nc", {}}, KvShape{1, 1, 96}), contains("not a power of two"));
  REQUIRE_THROWS_WITH(resolve_kv_format({"int4_per_token_head", {{"hadamard_signs", "++-"}}}, kQwen3_8B),
                      contains("has 3 signs; the model's head_dim is 128"));
  REQUIRE_THROWS_WITH(resolve_kv_format({"int4_per_token_head", {{"hadamard", false}, {"hadamard_seed", 3}}}, kQwen3_8B),
                      contains("\"hadamard_seed\" needs \"hadamard\": true"));
  REQUIRE_THROWS_WITH(resolve_kv_format({"kivi2", {{"group_size", 24}}}, kQwen3_8B), contains("multiple of 16"));
  REQUIRE_THROWS_WITH(resolve_kv_format({"fp8_e4m3", json::array()}, kQwen3_8B), contains("parameters must be a JSON object"));
  try {
    resolve_kv_format({"fp7", {}}, kQwen3_8B);
  } catch (const kvgate::Error& e) {
    CHECK(e.exit_code() == kvgate::kExitUsage);
  }
}

TEST_CASE("kv scales: kvgate's file per layer and per head, SGLang's layout, errors", "[kvformat][scales]") {
  const KvShape s{2, 2, 64};
  json own = {{"kvgate_kv_scales", 1}, {"layers", {{{"k", 0.5}, {"v", 0.25}}, {{"k", {1.0, 2.0}}, {"v", 4}}}}};
  const KvScaleTable t = parse_kv_scales(own, s, "scales.json");
  CHECK(t.granularity == "head");
  CHECK(t.k_at(0, 1) == 0.5f);
  CHECK(t.v_at(0, 0) == 0.25f);
  CHECK(t.k_at(1, 1) == 2.0f);
  CHECK(t.v_at(1, 1) == 4.0f);
  // Round trip through kvgate's format.
  const KvScaleTable back = parse_kv_scales(kv_scales_to_json(t), s, "x");
  CHECK(back.k == t.k);
  CHECK(back.v == t.v);
  json sg = {{"model_type", "qwen3"}, {"kv_cache", {{"dtype", "float8_e4m3fn"}, {"scaling_factor", {{"0", {{"0", 0.1}, {"1", 0.2}}}}}}}};
  const KvScaleTable st = parse_kv_scales(sg, s, "sglang.json");
  CHECK(st.k_at(1, 0) == 0.2f);
  CHECK(st.v_at(1, 1) == 0.2f);
  using kvtest::contains;
  REQUIRE_THROWS_WITH(parse_kv_scales({{"kvgate_kv_scales", 1}, {"layers", {{{"k", 1}, {"v", 1}}}}}, s, "a.json"),
                      contains("a.json: scales for 1 layers, but the model has 2"));
  REQUIRE_THROWS_WITH(parse_kv_scales({{"kvgate_kv_scales", 1}, {"layers", {{{"k", 1}, {"v", 0}}, {{"k", 1}, {"v", 1}}}}}, s, "a.json"),
                      contains("a.json: layers[0].v: a scale must be finite and positive"));
  REQUIRE_THROWS_WITH(parse_kv_scales({{"kvgate_kv_scales", 1}, {"layers", {{{"k", {1, 2, 3}}, {"v", 1}}, {{"k", 1}, {"v", 1}}}}}, s, "a.json"),
                      contains("3 per-head scales for a model with 2 KV heads"));
  REQUIRE_THROWS_WITH(parse_kv_scales(json::object({{"foo", 1}}), s, "b.json"), contains("b.json: not a KV scales file"));
  REQUIRE_THROWS_WITH(parse_kv_scales({{"kv_cache", {{"scaling_factor", {{"0", {{"0", 0.1}}}}}}}}, s, "c.json"),
                      contains("no scale for layer 1"));
  // A format takes the scales inline or as a file path, and records the values.
  kvtest::TempDir dir;
  const std::string path = dir.path() + "/scales.json";
  kvtest::write_text(path, own.dump());
  const auto spec = resolve_kv_format({"fp8_e4m3", {{"scales", path}}}, s);
  CHECK(spec.scales.k_at(1, 1) == 2.0f);
  CHECK(spec.record()["scales"]["granularity"] == "head");
  REQUIRE_THROWS_WITH(resolve_kv_format({"fp8_e4m3", {{"scales", own}, {"k_scale", 2}}}, s), contains("conflicts with \"scales\""));
  REQUIRE_THROWS_WITH(resolve_kv_format({"fp8_e4m3", {{"scales", dir.path() + "/none.json"}}}, s), contains("none.json"));
}

TEST_CASE("kv formats: docs/kv-formats.md names every format and parameter", "[kvformat][docs]") {
  const std::string doc = kvtest::read_text("docs/kv-formats.md");
  for (const auto& f : kv_format_names()) CHECK_THAT(doc, kvtest::contains("`" + f + "`"));
  for (const char* p : {"skip_layers", "input_dtype", "k_scale", "v_scale", "k_tensor_scale", "v_tensor_scale", "scales", "rounding",
                        "hadamard", "hadamard_signs", "hadamard_seed", "rotate", "group_size", "residual"})
    CHECK_THAT(doc, kvtest::contains("`" + std::string(p) + "`"));
}
