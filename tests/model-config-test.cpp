// config.json of the four families: transformers' defaults, rope in both config styles, sliding
// windows, and clear errors for what the reference decoder cannot run faithfully.
#include <nlohmann/json.hpp>

#include "tests/catch_compat.hpp"
#include "harness/core/error.h"
#include "harness/decoder/model_config.h"

using namespace kvgate::decoder;
using kvgate::kernels::RopeType;
using kvtest::contains;
using nlohmann::json;

namespace {

json base(const char* cls) {
  return {{"architectures", {cls}}, {"hidden_size", 64},       {"intermediate_size", 128}, {"num_hidden_layers", 2},
          {"num_attention_heads", 4}, {"vocab_size", 100}};
}

ModelConfig parse(const json& j) { return parse_model_config(j, "m/config.json"); }

}  // namespace

TEST_CASE("config: families and transformers' defaults", "[config]") {
  const ModelConfig llama = parse(base("LlamaForCausalLM"));
  CHECK(llama.arch == Arch::llama);
  CHECK(llama.num_kv_heads == 4);  // defaults to the heads
  CHECK(llama.head_dim == 16);     // hidden / heads
  CHECK(llama.rope.type == RopeType::standard);
  CHECK(llama.rope.theta == 10000.0);
  CHECK(llama.rms_norm_eps == 1e-6f);
  CHECK(!llama.qkv_bias);
  CHECK(!llama.tie_word_embeddings);
  CHECK(llama.layer_window == std::vector<int>{0, 0});

  const ModelConfig qwen3 = parse(base("Qwen3ForCausalLM"));
  CHECK(qwen3.head_dim == 128);  // Qwen3Config's default, not hidden / heads
  CHECK(qwen3.qk_norm);
  CHECK(!qwen3.qkv_bias);

  const ModelConfig qwen2 = parse(base("Qwen2ForCausalLM"));
  CHECK(qwen2.qkv_bias);
  CHECK(!qwen2.o_bias);

  json m = base("MistralForCausalLM");
  m["num_attention_heads"] = 16;
  m["hidden_size"] = 256;
  CHECK(parse(m).num_kv_heads == 8);                         // MistralConfig's default
  CHECK(parse(m).layer_window == std::vector<int>{4096, 4096});  // sliding_window defaults to 4096
  m["num_key_value_heads"] = 2;
  m["sliding_window"] = nullptr;
  CHECK(parse(m).layer_window == std::vector<int>{0, 0});

  json l = base("LlamaForCausalLM");
  l["attention_bias"] = true;
  l["mlp_bias"] = true;
  l["eos_token_id"] = json::array({7, 9, 7});
  l["torch_dtype"] = "bfloat16";
  const ModelConfig lb = parse(l);
  CHECK(lb.qkv_bias);
  CHECK(lb.o_bias);
  CHECK(lb.mlp_bias);
  CHECK(lb.eos_token_ids == std::vector<int>{7, 9});
  CHECK(lb.dtype == "bfloat16");
  CHECK(lb.to_json()["architecture"] == "LlamaForCausalLM");
}

TEST_CASE("config: rope scaling in the legacy and the transformers 5 style", "[config]") {
  json j = base("LlamaForCausalLM");
  j["rope_theta"] = 500000.0;
  j["rope_scaling"] = {{"rope_type", "llama3"}, {"factor", 8.0}, {"low_freq_factor", 1.0}, {"high_freq_factor", 4.0},
                       {"original_max_position_embeddings", 8192}};
  ModelConfig c = parse(j);
  CHECK(c.rope.type == RopeType::llama3);
  CHECK(c.rope.theta == 500000.0);
  CHECK(c.rope.original_max_position_embeddings == 8192);

  j = base("Qwen3ForCausalLM");
  j["max_position_embeddings"] = 4096;
  j["rope_parameters"] = {{"rope_type", "yarn"}, {"rope_theta", 1e6}, {"factor", 4.0}};
  c = parse(j);
  CHECK(c.rope.type == RopeType::yarn);
  CHECK(c.rope.theta == 1e6);
  CHECK(c.rope.original_max_position_embeddings == 4096);  // standardize_rope_params' default

  j["rope_scaling"] = {{"type", "linear"}, {"factor", 2.0}};  // legacy "type"; a non-empty rope_scaling wins
  c = parse(j);
  CHECK(c.rope.type == RopeType::linear);
  CHECK(c.rope.factor == 2.0);
  CHECK(c.rope.theta == 10000.0);  // the legacy dict has no theta and there is no top-level one

  j = base("LlamaForCausalLM");
  j["rope_scaling"] = nullptr;
  CHECK(parse(j).rope.type == RopeType::standard);
}

TEST_CASE("config: Qwen sliding windows follow use_sliding_window and layer_types", "[config]") {
  json j = base("Qwen2ForCausalLM");
  j["num_hidden_layers"] = 4;
  j["sliding_window"] = 32;
  j["max_window_layers"] = 2;
  CHECK(parse(j).layer_window == std::vector<int>{0, 0, 0, 0});  // use_sliding_window is off
  j["use_sliding_window"] = true;
  CHECK(parse(j).layer_window == std::vector<int>{0, 0, 32, 32});
  j["layer_types"] = {"sliding_attention", "full_attention", "sliding_attention", "full_attention"};
  CHECK(parse(j).layer_window == std::vector<int>{32, 0, 32, 0});
  j["layer_types"] = {"sliding_attention"};
  REQUIRE_THROWS_WITH(parse(j), contains("one entry per layer"));
}

TEST_CASE("config: what the decoder cannot run is an error naming the field", "[config]") {
  const auto rejected = [](json j, const std::string& message) {
    INFO(message);
    REQUIRE_THROWS_WITH(parse(j), contains("m/config.json") && contains(message));
  };
  rejected(base("GPT2LMHeadModel"), "model class \"GPT2LMHeadModel\" is not supported");
  json j = base("LlamaForCausalLM");
  j.erase("hidden_size");
  rejected(j, "field \"hidden_size\" missing");
  j = base("LlamaForCausalLM");
  j["num_key_value_heads"] = 3;
  rejected(j, "must be a multiple of num_key_value_heads");
  j = base("LlamaForCausalLM");
  j["hidden_act"] = "gelu";
  rejected(j, "\"hidden_act\" must be \"silu\"");
  j = base("LlamaForCausalLM");
  j["rope_scaling"] = {{"rope_type", "dynamic"}, {"factor", 2.0}};
  rejected(j, "rope type \"dynamic\" is not supported");
  j["rope_scaling"] = {{"rope_type", "linear"}};
  rejected(j, "field \"factor\" missing");
  j["rope_scaling"] = {{"rope_type", "linear"}, {"factor", 0.5}};
  rejected(j, "must be at least 1");
  j = base("LlamaForCausalLM");
  j["partial_rotary_factor"] = 0.5;
  rejected(j, "partial_rotary_factor");
  j = base("LlamaForCausalLM");
  j["quantization_config"] = {{"quant_method", "awq"}};
  rejected(j, "quantized checkpoints");
  j = base("LlamaForCausalLM");
  j["head_dim"] = 15;
  rejected(j, "must be even");
  j = base("LlamaForCausalLM");
  j["vocab_size"] = -5;
  rejected(j, "must be a positive integer");
  j = base("LlamaForCausalLM");
  j["eos_token_id"] = "x";
  rejected(j, "eos_token_id must be");
}
