// The CPU engine (engine.h) and the decoder's text side (model_text.h): the engine gives exactly
// what a lone Session gives, whatever the concurrency; devices are chosen explicitly; streamed text
// is always a prefix of the final text and adds up to it.
#include <future>
#include <thread>

#include "tests/catch_compat.hpp"
#include "harness/core/error.h"
#include "harness/core/rng.h"
#include "kernels/cuda_info.h"
#include "harness/decoder/device.h"
#include "harness/decoder/engine.h"
#include "harness/decoder/kernel_switches.h"
#include "harness/decoder/model_text.h"
#include "tests/decoder_fixtures.h"

using namespace kvgate::decoder;
using nlohmann::json;

namespace {

MakeModelOptions tiny(const std::string& arch = "qwen3") { return {.arch = arch, .seed = 11, .merges = 200}; }

std::vector<int> random_ids(kvgate::Rng& rng, int n, int vocab) {
  std::vector<int> v(n);
  for (int& t : v) t = static_cast<int>(rng.below(static_cast<std::uint64_t>(vocab)));
  return v;
}

}  // namespace

TEST_CASE("cpu engine: the same tokens and scores as a lone Session, at any concurrency", "[engine]") {
  kvtest::TempDir tmp;
  auto model = kvtest::make_and_load(tmp, "m", tiny());
  const int vocab = model->config().vocab_size;
  const kvgate::kernels::KvStoreOptions kv{.format = "fp8_e4m3"};
  auto engine = make_engine(model, {.device = "cpu", .kv = kv, .max_batch = 3});
  kvgate::Rng rng(5);
  std::vector<std::vector<int>> prompts;
  for (int i = 0; i < 6; ++i) prompts.push_back(random_ids(rng, 5 + 3 * i, vocab));
  std::vector<GenerateOptions> opts(prompts.size());
  for (std::size_t i = 0; i < opts.size(); ++i) {
    opts[i].max_tokens = 12;
    opts[i].seed = 100 + i;
    if (i % 2) opts[i].sampler = {.temperature = 0.8, .top_p = 0.9, .top_k = 0};
  }
  // The reference: one Session per call, sequentially.
  std::vector<Generation> expected;
  for (std::size_t i = 0; i < prompts.size(); ++i) {
    Session s(model, {.kv = kv});
    expected.push_back(generate(s, prompts[i], opts[i]));
  }
  // Six calls at once through an engine that runs three at a time.
  std::vector<std::future<Generation>> futures;
  for (std::size_t i = 0; i < prompts.size(); ++i)
    futures.push_back(std::async(std::launch::async, [&, i] { return engine->generate(prompts[i], opts[i]); }));
  for (std::size_t i = 0; i < prompts.size(); ++i) {
    const Generation g = futures[i].get();
    INFO("prompt " << i);
    CHECK(g.tokens == expected[i].tokens);
    CHECK(g.finish_reason == expected[i].finish_reason);
    CHECK(g.prompt_tokens == static_cast<int>(prompts[i].size()));
  }
  // Scores and their per-position logits: the same as score_continuation on a Session.
  const std::vector<int> cont = random_ids(rng, 20, vocab);
  Session s(model, {.kv = kv});
  std::vector<std::vector<float>> a, b;
  const ContinuationScore ref = score_continuation(s, prompts[0], cont, [&](int, std::span<const float> l) { a.emplace_back(l.begin(), l.end()); });
  const ContinuationScore got = engine->score(prompts[0], cont, [&](int, std::span<const float> l) { b.emplace_back(l.begin(), l.end()); });
  CHECK(got.logprobs == ref.logprobs);
  CHECK(a == b);
}

TEST_CASE("cpu engine: describe() records the resolved KV format; bad options are errors", "[engine]") {
  kvtest::TempDir tmp;
  auto model = kvtest::make_and_load(tmp, "m", tiny());
  auto engine = make_engine(model, {.device = "cpu", .kv = {.format = "int8_per_token_head"}, .threads = 2});
  const json d = engine->describe();
  CHECK(d["device"] == "cpu");
  CHECK(d["kv"]["format"] == "int8_per_token_head");
  CHECK(d["kv"]["rounding"] == "rne");  // defaults filled in
  CHECK(d["kv"]["bytes_per_token"].get<double>() > 0);
  CHECK(d["threads"] == 2);
  CHECK_THROWS_AS(make_engine(model, {.device = "tpu"}), kvgate::Error);
  CHECK_THROWS_AS(make_engine(model, {.device = "cpu", .kv = {.format = "fp7"}}), kvgate::Error);
  CHECK_THROWS_AS(make_engine(model, {.device = "cpu", .kv = {.format = "bf16", .params = {{"k_scale", 2.0}}}}), kvgate::Error);
  CHECK_THROWS_AS(make_engine(model, {.device = "cpu", .kernel_switches = {{"gemm", "fp32"}}}), kvgate::Error);
  CHECK_THROWS_AS(make_engine(model, {.device = "cpu", .kernel_switches = {{"attention_splits", 2}}}), kvgate::Error);
  CHECK_THROWS_AS(make_engine(model, {.device = "cpu", .kernel_switches = {{"q_fp8", "yes"}}}), kvgate::Error);
  CHECK_THROWS_AS(make_engine(model, {.device = "cpu", .kernel_switches = {{"prefill", "generic"}}}), kvgate::Error);
  CHECK_THROWS_AS(make_engine(model, {.device = "cpu", .kernel_switches = {{"prefill", "fast"}}}), kvgate::Error);
  CHECK_THROWS_AS(make_engine(model, {.device = "cpu", .kernel_switches = {{"cuda_graphs", false}}}), kvgate::Error);
  CHECK_THROWS_AS(resolve_kernel_switches({{"cuda_graphs", 1}}), kvgate::Error);
  CHECK(resolve_kernel_switches({{"cuda_graphs", false}}).cuda_graphs == false);
  CHECK(resolve_kernel_switches(json::object()).cuda_graphs == true);
  CHECK_THROWS_AS(make_engine(model, {.device = "cpu", .kernel_switches = {{"prefill_pool", false}}}), kvgate::Error);
  CHECK_THROWS_AS(resolve_kernel_switches({{"prefill_pool", "off"}}), kvgate::Error);
  CHECK(resolve_kernel_switches({{"prefill_pool", false}}).prefill_pool == false);
  CHECK(resolve_kernel_switches({{"prefill_pool", false}}).has_prefill_pool);
  CHECK(resolve_kernel_switches(json::object()).prefill_pool == true);
  CHECK_THROWS_AS(make_engine(model, {.device = "cpu", .kernel_switches = {{"gemv", false}}}), kvgate::Error);
  CHECK_THROWS_AS(resolve_kernel_switches({{"gemv", "off"}}), kvgate::Error);
  CHECK(resolve_kernel_switches({{"gemv", true}}).gemv_rows == 1);
  CHECK(resolve_kernel_switches({{"gemv", false}}).gemv_rows == 0);
  CHECK(resolve_kernel_switches({{"gemv", 4}}).gemv_rows == 4);
  CHECK(resolve_kernel_switches(json::object()).gemv_rows == 1);
  CHECK_THROWS_AS(resolve_kernel_switches({{"gemv", 5}}), kvgate::Error);
  CHECK_THROWS_AS(resolve_kernel_switches({{"gemv", -1}}), kvgate::Error);
  CHECK(make_engine(model, {.device = "cpu", .kernel_switches = {{"q_fp8", true}}})->describe()["kernel_switches"]["q_fp8"] == true);
  CHECK_THROWS_AS(make_engine(model, {.device = "cpu", .max_batch = 0}), kvgate::Error);
}

TEST_CASE("device: explicit choices are kept; the default is cuda only with a GPU", "[engine]") {
  CHECK(resolve_device("cpu") == "cpu");
  CHECK(resolve_device("cuda") == "cuda");
  CHECK_THROWS_AS(resolve_device("gpu"), kvgate::Error);
  const std::string d = resolve_device("");
  // The default: cuda exactly when this build has the CUDA engine and a GPU is visible.
  const bool gpu_engine = kvgate::decoder::cuda_engine_built() && kvgate::kernels::cuda_device_count() > 0;
  CHECK(d == (gpu_engine ? "cuda" : "cpu"));
  if (!kvgate::kernels::cuda_built()) CHECK_FALSE(kvgate::decoder::cuda_engine_built());
  CHECK(device_record("", d)["requested"].is_null());
  CHECK(device_record("cpu", "cpu")["device"] == "cpu");
  CHECK(device_record("cpu", "cpu")["cuda_engine"] == kvgate::decoder::cuda_engine_built());
  if (!gpu_engine) {  // no GPU, or no CUDA engine in this build: cpu, and cuda says what to do
    CHECK(d == "cpu");
    kvtest::TempDir tmp;
    auto model = kvtest::make_and_load(tmp, "m", tiny());
    try {
      make_engine(model, {.device = "cuda"});
      FAIL("--device cuda made an engine without a GPU or a CUDA engine");
    } catch (const kvgate::Error& e) {
      CHECK_THAT(std::string(e.what()), kvtest::contains("--device cpu"));
    }
  }
}

TEST_CASE("model text: the chat template, eos stop ids, and text that decodes byte for byte", "[engine][text]") {
  kvtest::TempDir tmp;
  const std::string dir = tmp.file("m");
  make_model(tiny(), dir);
  auto model = Model::load(dir);
  const ModelText text = ModelText::load(dir, model->config());
  const auto im_end = text.tokenizer().token_to_id("<|im_end|>");
  REQUIRE(im_end);
  CHECK(std::find(text.stop_token_ids().begin(), text.stop_token_ids().end(), *im_end) != text.stop_token_ids().end());
  const nlohmann::ordered_json msgs = nlohmann::ordered_json::parse(R"([{"role":"user","content":"Hello there"}])");
  const std::vector<int> ids = text.encode_chat(msgs, kvtest::with_generation_prompt());
  CHECK(text.tokenizer().decode(std::vector<std::int32_t>(ids.begin(), ids.end())) ==
        "<|im_start|>user\nHello there<|im_end|>\n<|im_start|>assistant\n");
  // Generated ids -> text: decoding them together equals the generation's text (special tokens skipped).
  auto engine = make_engine(model, {.device = "cpu"});
  GenerateOptions g = text.generate_options({.sampler = {.temperature = 1.0}, .seed = 3, .max_tokens = 40});
  const Generation gen = engine->generate(ids, g);
  std::vector<std::int32_t> out(gen.tokens.begin(), gen.tokens.end());
  if (gen.finish_reason == "stop") out.pop_back();  // the eos id ends it and is not text
  CHECK(ModelText::text_of(gen) == text.tokenizer().decode(out, true));
  CHECK_THROWS_AS(ModelText::load(tmp.path(), model->config()), kvgate::Error);  // no tokenizer.json there
}

TEST_CASE("text streamer: pieces are final, never cut a character, and add up to the text", "[engine][text]") {
  // Token "bytes": a 3-byte character split over two tokens, then a stop string over two tokens.
  const std::vector<std::string> bytes = {"Hi ", "\xE2\x82", "\xAC!", " ST", "OP", "tail"};
  const auto token_text = [&](int id) { return id < static_cast<int>(bytes.size()) ? bytes[id] : std::string(); };
  {
    TextStreamer s(token_text, {99}, {});
    std::string all;
    all += s.push(0);
    CHECK(all == "Hi ");
    all += s.push(1);
    CHECK(all == "Hi ");  // half a character is held back
    all += s.push(2);
    CHECK(all == "Hi \xE2\x82\xAC!");
    CHECK(s.push(99).empty());  // a stop id is not text
    CHECK(s.finish("Hi \xE2\x82\xAC!") .empty());
  }
  {
    // With a stop string, text a stop could still cut is held back; the final text ends before it.
    TextStreamer s(token_text, {}, {"STOP"});
    std::string all;
    for (int id : {0, 1, 2, 3, 4}) all += s.push(id);
    const std::string final_text = "Hi \xE2\x82\xAC! ";  // what generate() leaves: cut before "STOP"
    REQUIRE(final_text.compare(0, all.size(), all) == 0);
    CHECK(all.find("ST") == std::string::npos);
    all += s.finish(final_text);
    CHECK(all == final_text);
  }
  {
    // An invalid byte in the middle is replaced as the whole text's decoding replaces it.
    const std::vector<std::string> b2 = {"a\xFF", "b"};
    TextStreamer s([&](int id) { return b2[id]; }, {}, {});
    std::string all = s.push(0) + s.push(1);
    CHECK(all == "a\xEF\xBF\xBD" "b");
  }
}

TEST_CASE("kernel switches: \"prefill\" picks the CUDA prefill kernel; bad values are errors", "[engine]") {
  using kvgate::decoder::resolve_kernel_switches;
  CHECK(resolve_kernel_switches(json::object()).prefill.empty());
  for (const char* k : {"tensor_core", "bf16x3", "mma_sync", "generic"}) CHECK(resolve_kernel_switches({{"prefill", k}}).prefill == k);
  CHECK_THROWS_AS(resolve_kernel_switches({{"prefill", "fast"}}), kvgate::Error);
  CHECK_THROWS_AS(resolve_kernel_switches({{"prefill", true}}), kvgate::Error);
}

TEST_CASE("kernel switches: \"q_vec_dot\" rounds Q as llama.cpp's CPU attention; bad values and q_fp8 with it are errors",
          "[engine]") {
  using kvgate::kernels::QVecDot;
  using kvtest::contains;
  CHECK(resolve_kernel_switches(json::object()).attention.q_vec_dot == QVecDot::kNone);
  const auto q8 = resolve_kernel_switches({{"q_vec_dot", "q8_0"}}).attention;
  CHECK(q8.q_vec_dot == QVecDot::kQ8_0);
  CHECK(q8.active());   // the CUDA engine runs the emulating kernel for it
  CHECK(!q8.online());  // Q rounding only: exact attention over the rounded Q
  CHECK(resolve_kernel_switches({{"q_vec_dot", "f16"}}).attention.q_vec_dot == QVecDot::kF16);
  CHECK(resolve_kernel_switches({{"q_vec_dot", "q8_0"}, {"pv_fp8", true}}).attention.online());
  for (const json& bad : {json("q4_0"), json("Q8_0"), json(true), json(8)}) {
    INFO(bad.dump());
    CHECK_THROWS_WITH(resolve_kernel_switches({{"q_vec_dot", bad}}), contains("\"q_vec_dot\" = " + bad.dump() + " is not valid"));
    CHECK_THROWS_WITH(resolve_kernel_switches({{"q_vec_dot", bad}}), contains("\"q8_0\" (Q in q8_0 blocks of 32"));
  }
  CHECK_THROWS_WITH(resolve_kernel_switches({{"q_vec_dot", "q8_0"}, {"q_fp8", true}}), contains("keep one"));
  CHECK_NOTHROW(resolve_kernel_switches({{"q_vec_dot", "f16"}, {"q_fp8", false}}));
  CHECK_THAT(kernel_switches_help(), contains("\"q_vec_dot\": \"q8_0\"|\"f16\""));
  // The CPU engine takes it alone: an emulation switch, not a CUDA-only one.
  kvtest::TempDir tmp;
  auto model = kvtest::make_and_load(tmp, "m", tiny());
  auto engine = make_engine(model, {.device = "cpu", .kernel_switches = {{"q_vec_dot", "q8_0"}}});
  CHECK(engine->describe()["kernel_switches"]["q_vec_dot"] == "q8_0");
  CHECK_THAT(engine->describe()["precision"].get<std::string>(), contains("emulating an engine kernel"));
}
