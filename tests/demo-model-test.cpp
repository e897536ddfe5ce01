// models/demo, the demo model trained by scripts/demo-model: kvgate's tokenizer gives the ids and chat
// renders that Hugging Face gives (golden file made with transformers on the GPU machine), the
// checkpoint is the Qwen3 shape the demo asks for and loads in the reference decoder, and greedy
// decoding of a multicode trial answers in the trained format.
#include <filesystem>
#include <regex>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "tests/catch_compat.hpp"
#include "harness/core/jsonl.h"
#include "harness/decoder/generate.h"
#include "harness/decoder/model.h"
#include "harness/tokenizer/tokenizer.h"

using kvgate::Tokenizer;
using ojson = nlohmann::ordered_json;

namespace {

const std::string kDir = "models/demo";

const Tokenizer& demo_tokenizer() {
  static const Tokenizer tok = Tokenizer::load(kDir);
  return tok;
}

std::vector<int> to_int(const std::vector<std::int32_t>& ids) { return {ids.begin(), ids.end()}; }

}  // namespace

TEST_CASE("demo tokenizer: kvgate's ids and chat renders equal transformers'", "[demo-model]") {
  const Tokenizer& tok = demo_tokenizer();
  const ojson golden = ojson::parse(kvgate::read_file("tests/data/demo-model/tokenizer_golden.json"));
  CHECK(tok.vocab_size() == 4096);
  REQUIRE(golden.at("texts").size() >= 10);
  for (const auto& c : golden.at("texts")) {
    const std::string text = c.at("text").get<std::string>();
    INFO("text: " << text.substr(0, 80));
    CHECK(tok.encode(text) == c.at("ids").get<std::vector<std::int32_t>>());
  }
  REQUIRE(golden.at("chats").size() == 4);
  for (const auto& c : golden.at("chats")) {
    kvgate::ChatOptions o;
    o.add_generation_prompt = c.at("add_generation_prompt").get<bool>();
    CHECK(tok.apply_chat_template(c.at("messages"), o) == c.at("text").get<std::string>());
    CHECK(tok.encode_chat(c.at("messages"), o) == c.at("ids").get<std::vector<std::int32_t>>());
  }
  // ChatML special tokens are single ids after the learned vocabulary; eos is <|im_end|>.
  CHECK(tok.token_to_id("<|im_start|>") == 4094);
  CHECK(tok.token_to_id("<|im_end|>") == 4095);
  CHECK(tok.special_tokens().eos.text == "<|im_end|>");
  // Digits are single tokens (Qwen's pre-tokenizer), which the training's code redraw relies on.
  CHECK(tok.encode("951936").size() == 6);
}

TEST_CASE("demo model: a Qwen3 checkpoint of 5-8 M parameters, 16 MB at most, 16K context", "[demo-model]") {
  const auto model = kvgate::decoder::Model::load(kDir);
  const auto& c = model->config();
  CHECK(c.arch == kvgate::decoder::Arch::qwen3);
  CHECK(c.architecture == "Qwen3ForCausalLM");
  CHECK(c.head_dim == 64);
  CHECK(c.qk_norm);
  CHECK(c.num_kv_heads < c.num_heads);  // GQA
  CHECK(c.num_heads % c.num_kv_heads == 0);
  CHECK(c.max_position_embeddings >= 16384);
  CHECK(c.vocab_size == static_cast<int>(demo_tokenizer().vocab_size()));
  CHECK(c.eos_token_ids.front() == 4095);
  CHECK(model->parameter_count() >= 5'000'000);
  CHECK(model->parameter_count() <= 8'000'000);
  CHECK(std::filesystem::file_size(kDir + "/model.safetensors") <= 16u * 1000 * 1000);
  for (const char* f : {"config.json", "generation_config.json", "tokenizer.json", "tokenizer_config.json", "LICENSE",
                        "README.md", "train_log.json"})
    CHECK(std::filesystem::exists(kDir + "/" + f));
}

TEST_CASE("demo model: greedy decoding answers a 1K multicode trial in the trained format", "[demo-model]") {
  const Tokenizer& tok = demo_tokenizer();
  const ojson trial = ojson::parse(kvgate::read_file("tests/data/demo-model/multicode-1k.jsonl"));
  kvgate::ChatOptions o;
  o.add_generation_prompt = true;
  const std::vector<int> prompt = to_int(tok.encode_chat(trial.at("input").at("messages"), o));
  REQUIRE(prompt.size() > 1000);
  REQUIRE(prompt.size() < 1100);

  const auto model = kvgate::decoder::Model::load(kDir);
  kvgate::decoder::Session session(model, {.kv = {"bf16", {}}, .max_chunk = 256, .threads = 2});
  kvgate::decoder::GenerateOptions g;
  g.max_tokens = 80;
  g.stop_token_ids = model->config().eos_token_ids;
  g.token_text = [&tok](int id) { return tok.decode_bytes(std::vector<std::int32_t>{id}); };
  const auto gen = kvgate::decoder::generate(session, prompt, g);
  INFO("answer: " << gen.text);
  CHECK(gen.finish_reason == "stop");
  // One line "<name>: <6 digits>" per asked name, in the asked order.
  std::vector<std::string> names;
  const std::regex line(R"(([A-Za-z]+-[0-9]+): ([0-9]{6}))");
  std::size_t start = 0;
  std::string text = gen.text + "\n";
  for (std::size_t nl; (nl = text.find('\n', start)) != std::string::npos; start = nl + 1) {
    std::smatch m;
    const std::string l = text.substr(start, nl - start);
    REQUIRE(std::regex_match(l, m, line));
    names.push_back(m[1]);
  }
  std::vector<std::string> asked;
  for (const auto& c : trial.at("target").at("codes")) asked.push_back(c.at("name").get<std::string>());
  CHECK(names == asked);
}
