// `kvgate capacity` end to end: the table, --json with one and several formats, errors exit 2.
#include "tests/catch_compat.hpp"
#include "tests/test_util.h"

#include <nlohmann/json.hpp>

using kvtest::contains;
using kvtest::run_kvgate;
using nlohmann::json;

namespace {
const char* kQwen3_32B =
    R"({"model_type": "qwen3", "_name_or_path": "Qwen/Qwen3-32B", "num_hidden_layers": 64, "num_key_value_heads": 8,
        "head_dim": 128, "num_attention_heads": 64, "hidden_size": 5120, "intermediate_size": 25600,
        "vocab_size": 151936, "tie_word_embeddings": false})";
}

TEST_CASE("capacity cli: the seed's table, BF16 vs FP8 on one H200", "[capacity][cli]") {
  kvtest::TempDir dir;
  kvtest::write_text(dir.file("config.json"), kQwen3_32B);
  auto r = run_kvgate({"capacity", "--config", dir.file("config.json"), "--kv-format", "bf16,fp8_e4m3", "--weights-gb", "65.52"});
  REQUIRE(r.exit_code == 0);
  CHECK_THAT(r.out, contains("Qwen/Qwen3-32B: 64 layers, 8 KV heads x 128"));
  CHECK_THAT(r.out, contains("141.00 GB x 0.92 = 129.72 GB - weights 65.52 GB (--weights-gb) - overhead 6.00 GB = 58.20 GB"));
  CHECK_THAT(r.out, contains("256.00 KiB        8.59 GB       222,015          6    1.00x"));
  CHECK_THAT(r.out, contains("128.00 KiB        4.29 GB       444,030         13    2.00x"));
  r = run_kvgate({"capacity", "--config", dir.file("config.json"), "--kv-format", "int4_per_token_head", "--layout"});
  REQUIRE(r.exit_code == 0);
  CHECK_THAT(r.out, contains("layout: after the randomized Hadamard"));
}

TEST_CASE("capacity cli: --json, one format and several", "[capacity][cli]") {
  kvtest::TempDir dir;
  kvtest::write_text(dir.file("config.json"), kQwen3_32B);
  auto r = run_kvgate({"capacity", "--config", dir.file("config.json"), "--kv-format", "fp8_e4m3", "--weights-gb", "34.32", "--json"});
  REQUIRE(r.exit_code == 0);
  const json j = json::parse(r.out);
  CHECK(j["bytes_per_token"] == 131072.0);
  CHECK(j["kv_budget_bytes"].get<double>() == kvtest::Approx(89.40e9));
  CHECK(j["tokens"] == 682067);
  CHECK(j["sequences"] == 20);
  CHECK(j["kv"]["k_scale"] == 1.0);
  r = run_kvgate({"capacity", "--config", dir.file("config.json"), "--kv-format", "bf16,turboquant_3bit_nc", "--json",
                  "--kv-skip-layers", "0,-1"});
  REQUIRE(r.exit_code == 0);
  const json all = json::parse(r.out);
  REQUIRE(all["formats"].size() == 2);
  CHECK(all["formats"][1]["kv"]["skip_layers"] == json::array({0, 63}));
  r = run_kvgate({"capacity", "--config", dir.file("config.json"), "--kv-format", "int8_per_token_head", "--json", "--kv-params",
                  R"({"rounding": "trunc"})"});
  REQUIRE(r.exit_code == 0);
  CHECK(json::parse(r.out)["kv"]["rounding"] == "trunc");
}

TEST_CASE("capacity cli: bad input exits 2 naming it", "[capacity][cli]") {
  kvtest::TempDir dir;
  kvtest::write_text(dir.file("config.json"), kQwen3_32B);
  auto r = run_kvgate({"capacity", "--config", dir.file("missing.json"), "--kv-format", "bf16"});
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.err, contains("missing.json"));
  r = run_kvgate({"capacity", "--config", dir.file("config.json"), "--kv-format", "fp7"});
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.err, contains("--kv-format fp7: unknown KV-cache format"));
  r = run_kvgate({"capacity", "--config", dir.file("config.json"), "--kv-format", "bf16", "--kv-params", "[1]"});
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.err, contains("--kv-params: not a JSON object"));
  kvtest::write_text(dir.file("bad.json"), "{\"num_hidden_layers\": 2");
  r = run_kvgate({"capacity", "--config", dir.file("bad.json"), "--kv-format", "bf16"});
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.err, contains("bad.json: not valid JSON"));
}
