// The capacity planner (harness/capacity) against the seeds' worked examples:
// seed 000 "Worked capacity example: Qwen3-32B on one H200" and seed 001's Qwen3-8B sizes.
#include "harness/capacity/capacity.h"
#include "harness/capacity/model_dims.h"
#include "tests/catch_compat.hpp"
#include "harness/core/error.h"

using namespace kvgate::capacity;
using kvtest::Approx;
using nlohmann::json;

namespace {

// Published config.json values (seed 000 quotes the first four of Qwen3-32B's).
json qwen3_32b() {
  return {{"model_type", "qwen3"}, {"num_hidden_layers", 64}, {"num_key_value_heads", 8}, {"head_dim", 128},
          {"num_attention_heads", 64}, {"hidden_size", 5120}, {"intermediate_size", 25600}, {"vocab_size", 151936},
          {"tie_word_embeddings", false}};
}
json qwen3_8b() {
  return {{"model_type", "qwen3"}, {"num_hidden_layers", 36}, {"num_key_value_heads", 8}, {"head_dim", 128},
          {"num_attention_heads", 32}, {"hidden_size", 4096}, {"intermediate_size", 12288}, {"vocab_size", 151936},
          {"tie_word_embeddings", false}};
}

double round2(double gb) { return std::round(gb * 100) / 100; }

}  // namespace

TEST_CASE("capacity: Qwen3-32B on one H200 at 32K, BF16 vs FP8 KV (seed 000)", "[capacity]") {
  const ModelDims m = model_dims_from_config(qwen3_32b(), "config.json");
  CapacityOptions o;  // 141 GB, 0.92, 6 GB overhead, 32,768 tokens
  o.weights_gb = 65.52;  // "the BF16 checkpoint's safetensors total 65.52 GB"
  const CapacityRow bf16 = plan_capacity(m, {"bf16", {}}, o), fp8 = plan_capacity(m, {"fp8_e4m3", {}}, o);
  // Step 1-2: 2 x 64 x 8 x 128 = 131,072 elements: 262,144 bytes (256 KiB) in BF16, 131,072 (128 KiB) in FP8.
  CHECK(bf16.bytes_per_token == 262144);
  CHECK(fp8.bytes_per_token == 131072);
  // Step 3: 8.59 GB and 4.29 GB per 32,768-token sequence.
  CHECK(round2(bf16.bytes_per_sequence / 1e9) == 8.59);
  CHECK(round2(fp8.bytes_per_sequence / 1e9) == 4.29);
  // Step 4: 141 x 0.92 = 129.72 GB; 129.72 - 65.52 - 6 = 58.20 GB.
  CHECK(bf16.usable_bytes == Approx(129.72e9));
  CHECK(bf16.kv_budget_bytes == Approx(58.20e9));
  // Step 5: 6 vs 13 sequences.
  CHECK(bf16.sequences == 6);
  CHECK(fp8.sequences == 13);
  CHECK(bf16.tokens == 222015);  // floor(58.2e9 / 262,144)
  CHECK(fp8.tokens == 444030);  // floor(58.2e9 / 131,072 = 444,030.8)
}

TEST_CASE("capacity: the FP8-weights row (34.32 GB) leaves 89.40 GB (seed 000)", "[capacity]") {
  const ModelDims m = model_dims_from_config(qwen3_32b(), "config.json");
  CapacityOptions o;
  o.weights_gb = 34.32;
  const CapacityRow bf16 = plan_capacity(m, {"bf16", {}}, o), fp8 = plan_capacity(m, {"fp8_e4m3", {}}, o);
  CHECK(bf16.kv_budget_bytes == Approx(89.40e9));
  CHECK(bf16.sequences == 10);  // 89.40 / 8.59
  CHECK(fp8.sequences == 20);   // 89.40 / 4.29
}

TEST_CASE("capacity: weights from the config's parameter count, bf16 and fp8", "[capacity]") {
  // 32.76B parameters: 65.52 GB in bf16 (the checkpoint's listing); FP8 linear layers with bf16
  // embeddings, lm_head and norms: 34.32 GB (the FP8 row). Qwen3-8B: 15.3 GiB (seed 001).
  const ModelDims m = model_dims_from_config(qwen3_32b(), "config.json");
  CHECK(round2(m.params() / 1e9) == 32.76);
  CHECK(round2(m.weight_bytes("bf16") / 1e9) == 65.52);
  CHECK(round2(m.weight_bytes("fp8") / 1e9) == 34.32);
  CapacityOptions o;
  o.weights_dtype = "fp8";
  CHECK(plan_capacity(m, {"fp8_e4m3", {}}, o).sequences == 20);
  const ModelDims m8 = model_dims_from_config(qwen3_8b(), "config.json");
  CHECK(std::round(m8.weight_bytes("bf16") / (1 << 30) * 10) / 10 == 15.3);
  REQUIRE_THROWS_WITH(m.weight_bytes("int3"), kvtest::contains("--weights-dtype int3: unknown"));
}

TEST_CASE("capacity: Qwen3-8B, 144 KiB per token, per-token-head scales +2.25 KiB (seed 001)", "[capacity]") {
  const ModelDims m = model_dims_from_config(qwen3_8b(), "config.json");
  CapacityOptions o;
  CHECK(plan_capacity(m, {"bf16", {}}, o).bytes_per_token == 144 * 1024);
  const double bf16 = plan_capacity(m, {"bf16", {}}, o).bytes_per_token;
  CHECK(plan_capacity(m, {"fp8_e4m3", {}}, o).bytes_per_token == bf16 / 2);
  CHECK(plan_capacity(m, {"int8_per_token_head", {}}, o).bytes_per_token == bf16 / 2 + 2.25 * 1024);
  CHECK(plan_capacity(m, {"fp8_per_token_head", {}}, o).bytes_per_token == bf16 / 2 + 2.25 * 1024);
  CHECK(plan_capacity(m, {"turboquant_3bit_nc", {}}, o).bytes_per_token == 41.5 * 1024);  // 16 KiB of it the 4 bf16 layers
  // "A 32k-token conversation holds 4.5 GiB."
  CHECK(std::round(plan_capacity(m, {"bf16", {}}, o).bytes_per_sequence / (1 << 30) * 10) / 10 == 4.5);
  // "INT4 per token and head holds 3.7 times as many tokens as BF16."
  CHECK(bf16 / plan_capacity(m, {"int4_per_token_head", {}}, o).bytes_per_token == Approx(3.76).margin(0.01));
}

TEST_CASE("capacity: tensor parallelism splits KV heads and weights; blocks round down", "[capacity]") {
  const ModelDims m = model_dims_from_config(qwen3_32b(), "config.json");
  CapacityOptions o;
  o.weights_gb = 65.52;
  o.tp = 2;  // 8 KV heads at TP=2: 4 per GPU, bytes per token halve again
  const CapacityRow r = plan_capacity(m, {"bf16", {}}, o);
  CHECK(r.kv_heads_per_gpu == 4);
  CHECK(r.bytes_per_token == 131072);
  CHECK(r.weights_bytes == Approx(32.76e9));
  CHECK(r.kv_budget_bytes == Approx(129.72e9 - 32.76e9 - 6e9));
  o.tp = 16;  // more ranks than heads: each rank holds one replicated head
  CHECK(plan_capacity(m, {"bf16", {}}, o).kv_heads_per_gpu == 1);
  o.tp = 3;
  REQUIRE_THROWS_WITH(plan_capacity(m, {"bf16", {}}, o), kvtest::contains("--tp 3: the model's 8 KV heads"));
  o.tp = 1;
  o.block_size = 16;
  const CapacityRow b = plan_capacity(m, {"bf16", {}}, o);
  CHECK(b.tokens == 222000);  // 222,015 rounded down to whole 16-token blocks
  CHECK(b.tokens % 16 == 0);
}

TEST_CASE("capacity: no room, bad options and bad configs", "[capacity]") {
  const ModelDims m = model_dims_from_config(qwen3_32b(), "config.json");
  CapacityOptions o;
  o.gpu_mem_gb = 40;  // 36.8 GB usable: the 65.5 GB of weights do not fit
  const CapacityRow r = plan_capacity(m, {"bf16", {}}, o);
  CHECK(r.kv_budget_bytes < 0);
  CHECK(r.tokens == 0);
  CHECK(r.sequences == 0);
  CHECK_THAT(capacity_table({r}, m, o), kvtest::contains("nothing is left for the KV cache"));
  o = CapacityOptions{};
  o.mem_util = 1.5;
  REQUIRE_THROWS_WITH(plan_capacity(m, {"bf16", {}}, o), kvtest::contains("--mem-util must be in (0, 1]"));
  REQUIRE_THROWS_WITH(plan_capacity(m, {"fp9", {}}, CapacityOptions{}), kvtest::contains("--kv-format fp9: unknown"));
  json c = qwen3_8b();
  c.erase("num_hidden_layers");
  REQUIRE_THROWS_WITH(model_dims_from_config(c, "cfg.json"), kvtest::contains("cfg.json: field \"num_hidden_layers\" missing"));
  c = qwen3_8b();
  c["layer_types"] = {"full_attention", "sliding_attention"};
  REQUIRE_THROWS_WITH(model_dims_from_config(c, "cfg.json"), kvtest::contains("every layer is full attention"));
  // Defaults: no num_key_value_heads -> MHA; no head_dim -> hidden / heads; text_config is read.
  json mha = {{"num_hidden_layers", 2}, {"num_attention_heads", 4}, {"hidden_size", 256}, {"intermediate_size", 512}, {"vocab_size", 1000}};
  const ModelDims d = model_dims_from_config({{"text_config", mha}}, "cfg.json");
  CHECK(d.kv_heads == 4);
  CHECK(d.head_dim == 64);
}
