// kvgate make-model: deterministic files, a checkpoint the decoder loads, a tokenizer whose pieces
// cover every byte, and clear errors.
#include <filesystem>
#include <set>

#include <nlohmann/json.hpp>

#include "tests/catch_compat.hpp"
#include "harness/core/sha256.h"
#include "harness/decoder/model.h"
#include "harness/decoder/synthetic_tokenizer.h"
#include "tests/test_util.h"

using kvtest::contains;
using kvtest::run_kvgate;
using nlohmann::json;

TEST_CASE("make-model: the same options write byte-identical files; another seed other weights", "[make-model]") {
  kvtest::TempDir tmp;
  const std::vector<std::string> args = {"make-model", "--arch", "llama", "--seed", "3", "--layers", "2", "--hidden", "32",
                                         "--heads", "2", "--kv-heads", "1", "--head-dim", "16", "--intermediate", "64"};
  auto with_out = [&](std::vector<std::string> a, const std::string& dir) {
    a.push_back("--out");
    a.push_back(dir);
    return a;
  };
  const auto r1 = run_kvgate(with_out(args, tmp.file("a")));
  REQUIRE(r1.exit_code == 0);
  const json summary = json::parse(r1.out);
  CHECK(summary["vocab_size"] == 515);
  CHECK(summary["tie_word_embeddings"] == false);
  REQUIRE(run_kvgate(with_out(args, tmp.file("b"))).exit_code == 0);
  for (const char* f : {"model.safetensors", "config.json", "generation_config.json", "tokenizer.json", "tokenizer_config.json"})
    CHECK(kvgate::sha256_file(tmp.file("a/") + f) == kvgate::sha256_file(tmp.file("b/") + f));
  std::vector<std::string> other = args;
  other[4] = std::string("4");
  REQUIRE(run_kvgate(with_out(other, tmp.file("c"))).exit_code == 0);
  CHECK(kvgate::sha256_file(tmp.file("a/model.safetensors")) != kvgate::sha256_file(tmp.file("c/model.safetensors")));
  CHECK(kvgate::sha256_file(tmp.file("a/tokenizer.json")) == kvgate::sha256_file(tmp.file("c/tokenizer.json")));

  auto model = kvgate::decoder::Model::load(tmp.file("a"));
  CHECK(model->config().architecture == "LlamaForCausalLM");
  CHECK(model->config().num_kv_heads == 1);
  CHECK(model->config().eos_token_ids == std::vector<int>{514, 512});  // config.json, then generation_config.json
  // Re-writing into the same directory with shards replaces the single file.
  auto sharded = args;
  sharded.insert(sharded.end(), {"--shards", "2"});
  REQUIRE(run_kvgate(with_out(sharded, tmp.file("a"))).exit_code == 0);
  CHECK(!std::filesystem::exists(tmp.file("a/model.safetensors")));
  CHECK(kvgate::decoder::Model::load(tmp.file("a"))->parameter_count() == model->parameter_count());
}

TEST_CASE("make-model: the synthetic tokenizer is byte-level BPE with ChatML specials", "[make-model]") {
  const auto t = kvgate::decoder::make_synthetic_tokenizer(256, 4096);
  CHECK(t.size() == 515);
  CHECK(t.tokenizer["model"]["merges"].size() == 256);
  CHECK(t.tokenizer["model"]["vocab"].size() == 512);
  CHECK(t.token_bytes[t.im_start] == "<|im_start|>");
  CHECK(t.token_bytes[t.im_end] == "<|im_end|>");
  CHECK(t.tokenizer_config["eos_token"] == "<|im_end|>");
  CHECK_THAT(t.tokenizer_config["chat_template"].get<std::string>(), contains("<|im_start|>assistant"));
  // Every byte is a token of its own; GPT-2's order puts '!' first and the space (U+0120) at 220.
  std::set<std::string> singles;
  for (int i = 0; i < 256; ++i) singles.insert(t.token_bytes[i]);
  CHECK(singles.size() == 256);
  CHECK(t.token_bytes[0] == "!");
  CHECK(t.token_bytes[220] == " ");
  CHECK(t.tokenizer["model"]["vocab"][kvgate::decoder::byte_level_char(' ')] == 220);
  // A merged token decodes to its parts' bytes: " the" is learned from the training text.
  bool has_the = false;
  for (int i = 256; i < 512; ++i) has_the |= t.token_bytes[i] == " the";
  CHECK(has_the);
}

TEST_CASE("make-model: bad options exit 2 naming the flag", "[make-model]") {
  kvtest::TempDir tmp;
  auto r = run_kvgate({"make-model", "--heads", "4", "--kv-heads", "3", "--out", tmp.file("x")});
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.err, contains("--heads must be a multiple of --kv-heads"));
  r = run_kvgate({"make-model", "--vocab", "100", "--out", tmp.file("x")});
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.err, contains("--vocab 100 is smaller than the tokenizer"));
  r = run_kvgate({"make-model", "--arch", "gpt2", "--out", tmp.file("x")});
  CHECK(r.exit_code == 2);
  r = run_kvgate({"make-model", "--sliding-window", "8", "--out", tmp.file("x")});
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.err, contains("--sliding-window is for --arch mistral"));
}
