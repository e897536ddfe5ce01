// The CUDA engine (harness/decoder_cuda) against the CPU golden path (Session, generate,
// score_continuation) on make-model checkpoints: the same greedy tokens, logits to 1e-2 relative
// with bf16 GEMMs (1e-4 with fp32 GEMMs), for several architectures and every slot KV format;
// concurrent calls decoded together give each caller its own sequence; decode steps replayed as
// CUDA graphs give what launching every kernel gives. Needs a GPU (label gpu).
#include <algorithm>
#include <cmath>
#include <future>
#include <vector>

#include "catch_compat.hpp"
#include "core/error.h"
#include "core/rng.h"
#include "decoder/engine.h"
#include "decoder/generate.h"
#include "decoder/kernel_switches.h"
#include "decoder/score.h"
#include "decoder_cuda/cuda_forward.h"
#include "decoder_fixtures.h"

using namespace kvgate::decoder;
using kvtest::contains;

namespace {

MakeModelOptions small(const std::string& arch) {
  MakeModelOptions o;
  o.arch = arch;
  o.seed = 11;
  o.layers = 3;
  o.hidden = 128;
  o.heads = 8;
  o.kv_heads = 2;
  o.head_dim = 32;
  o.intermediate = 256;
  o.merges = 64;
  if (arch == "mistral") o.sliding_window = 48;
  return o;
}

std::vector<int> random_prompt(int n, int vocab, std::uint64_t seed) {
  kvgate::Rng rng(seed);
  std::vector<int> p(n);
  for (int& t : p) t = static_cast<int>(rng.below(vocab));
  return p;
}

double rel_error(std::span<const float> a, std::span<const float> b) {
  double num = 0, den = 0;
  for (std::size_t i = 0; i < b.size(); ++i) {
    if (!std::isfinite(a[i])) return INFINITY;
    num += (double(a[i]) - b[i]) * (double(a[i]) - b[i]);
    den += double(b[i]) * b[i];
  }
  return std::sqrt(num / den);
}

struct Compared {
  double worst_logit_error = 0;
  bool same_tokens = false;
  std::vector<int> cpu_tokens, gpu_tokens;
};

// Greedy generation and teacher-forced logits of one prompt on both paths.
// `emulation`: the CPU session's attention emulation, the same switches the engine was given.
Compared compare(const std::shared_ptr<const Model>& model, Engine& engine, const kvgate::kernels::KvStoreOptions& kv,
                 const std::vector<int>& prompt, int max_tokens, const kvgate::kernels::AttentionEmulation& emulation = {}) {
  Session session(model, {.kv = kv, .max_chunk = 64, .threads = 2, .attention = emulation});
  GenerateOptions g;
  g.max_tokens = max_tokens;
  Compared c;
  c.cpu_tokens = generate(session, prompt, g).tokens;
  c.gpu_tokens = engine.generate(prompt, g).tokens;
  c.same_tokens = c.cpu_tokens == c.gpu_tokens;
  // Logits at every position of the CPU's continuation.
  std::vector<std::vector<float>> cpu_logits, gpu_logits;
  score_continuation(session, prompt, c.cpu_tokens,
                     [&](int, std::span<const float> l) { cpu_logits.emplace_back(l.begin(), l.end()); });
  engine.score(prompt, c.cpu_tokens, [&](int, std::span<const float> l) { gpu_logits.emplace_back(l.begin(), l.end()); });
  REQUIRE(cpu_logits.size() == gpu_logits.size());
  for (std::size_t i = 0; i < cpu_logits.size(); ++i)
    c.worst_logit_error = std::max(c.worst_logit_error, rel_error(gpu_logits[i], cpu_logits[i]));
  return c;
}

}  // namespace

TEST_CASE("CUDA engine: greedy tokens and logits match the CPU path", "[cuda]") {
  kvtest::TempDir tmp;
  for (const std::string arch : {"qwen3", "llama", "qwen2", "mistral"}) {
    auto model = kvtest::make_and_load(tmp, arch, small(arch));
    const int vocab = model->config().vocab_size;
    for (const std::string gemm : {"bf16", "fp32"}) {
      EngineOptions o;
      o.device = "cuda";
      o.max_batch = 4;
      o.kernel_switches = {{"gemm", gemm}};
      auto engine = make_cuda_engine(model, o);
      // Prompts shorter than a page, across pages, and past the sliding window.
      for (int n : {5, 150}) {
        const Compared c = compare(model, *engine, {}, random_prompt(n, vocab, 7 + n), 20);
        INFO(arch << " gemm=" << gemm << " prompt=" << n << " worst logit error " << c.worst_logit_error);
        CHECK(c.same_tokens);
        // fp32 GEMMs: K/V differ from the CPU's by rounding, which flips the odd bf16 rounding in
        // the (default bf16) cache: about 1e-4 measured on an H200.
        CHECK(c.worst_logit_error <= (gemm == "fp32" ? 1e-3 : 1e-2));
      }
    }
  }
}

TEST_CASE("CUDA engine: every slot KV format follows the CPU store of that format", "[cuda]") {
  kvtest::TempDir tmp;
  auto model = kvtest::make_and_load(tmp, "qwen3", small("qwen3"));
  const int vocab = model->config().vocab_size;
  for (const std::string f : {"fp32", "fp16", "fp8_e4m3", "fp8_e5m2", "fp8_per_token_head", "int8_per_token_head",
                              "int4_per_token_head", "nvfp4", "q8_0", "q4_0", "turboquant_k8v4", "turboquant_4bit_nc",
                              "turboquant_k3v4_nc", "turboquant_3bit_nc"}) {
    EngineOptions o;
    o.device = "cuda";
    o.max_batch = 2;
    o.kv = {f, nlohmann::json::object()};
    o.kernel_switches = {{"gemm", "fp32"}};  // K/V equal to rounding: the formats' codes agree
    auto engine = make_cuda_engine(model, o);
    const Compared c = compare(model, *engine, o.kv, random_prompt(100, vocab, 3), 12);
    INFO(f << " worst logit error " << c.worst_logit_error);
    CHECK(c.worst_logit_error <= 1e-2);
    CHECK(c.same_tokens);
  }
}

TEST_CASE("CUDA engine: concurrent calls are batched and each gets its own sequence", "[cuda]") {
  kvtest::TempDir tmp;
  auto model = kvtest::make_and_load(tmp, "qwen3", small("qwen3"));
  const int vocab = model->config().vocab_size;
  EngineOptions o;
  o.device = "cuda";
  o.max_batch = 4;  // 6 callers: two wait for a slot
  o.kernel_switches = {{"gemm", "fp32"}};
  auto engine = make_cuda_engine(model, o);
  std::vector<std::vector<int>> prompts;
  std::vector<GenerateOptions> opts;
  for (int i = 0; i < 6; ++i) {
    prompts.push_back(random_prompt(20 + 31 * i, vocab, 100 + i));
    GenerateOptions g;
    g.max_tokens = 10 + 3 * i;
    if (i % 2) {
      g.sampler = {.temperature = 0.8, .top_p = 0.95, .top_k = 40};
      g.seed = 1000 + i;
    }
    opts.push_back(g);
  }
  std::vector<std::future<Generation>> futures;
  for (int i = 0; i < 6; ++i)
    futures.push_back(std::async(std::launch::async, [&, i] { return engine->generate(prompts[i], opts[i]); }));
  for (int i = 0; i < 6; ++i) {
    const Generation gpu = futures[i].get();
    Session session(model, {.max_chunk = 64});
    const Generation cpu = generate(session, prompts[i], opts[i]);
    INFO("caller " << i);
    CHECK(gpu.tokens == cpu.tokens);
    CHECK(gpu.finish_reason == cpu.finish_reason);
    CHECK(gpu.prompt_tokens == cpu.prompt_tokens);
  }
  // The maxima of what was cached are positive and finite for every layer and head.
  const KvAbsmax a = engine->kv_absmax();
  REQUIRE(a.k.size() == 3);
  for (const auto& layer : a.k)
    for (float x : layer) CHECK((x > 0 && std::isfinite(x)));
  CHECK(engine->describe()["gemm"] == "fp32");
}

TEST_CASE("CUDA engine: unsupported formats and switches are errors", "[cuda]") {
  kvtest::TempDir tmp;
  auto model = kvtest::make_and_load(tmp, "qwen3", small("qwen3"));
  EngineOptions o;
  o.device = "cuda";
  o.kv = {"kivi2", nlohmann::json::object()};
  try {
    make_cuda_engine(model, o);
    FAIL("kivi2 was accepted");
  } catch (const kvgate::Error& e) {
    CHECK_THAT(std::string(e.what()), contains("kivi2"));
    CHECK_THAT(std::string(e.what()), contains("--device cpu"));
  }
  o.kv = {};
  o.kernel_switches = {{"q_fp9", true}};
  try {
    make_cuda_engine(model, o);
    FAIL("an unknown switch was accepted");
  } catch (const kvgate::Error& e) {
    CHECK_THAT(std::string(e.what()), contains("q_fp9"));
  }
  o.kernel_switches = nlohmann::json::object();
  auto engine = make_cuda_engine(model, o);
  try {
    engine->generate(std::vector<int>{model->config().vocab_size + 5}, GenerateOptions{});
    FAIL("an out-of-vocabulary token was accepted");
  } catch (const kvgate::Error& e) {
    CHECK_THAT(std::string(e.what()), contains("vocabulary"));
  }
}

TEST_CASE("CUDA engine: engine-emulation switches follow the CPU path with the same switches", "[cuda]") {
  kvtest::TempDir tmp;
  auto model = kvtest::make_and_load(tmp, "qwen3", small("qwen3"));
  const int vocab = model->config().vocab_size;
  const std::vector<nlohmann::json> switch_sets = {
      {{"q_fp8", true}},
      {{"q_fp8", true}, {"pv_fp8", true}, {"pv_accum", "reduced"}},
      {{"pv_fp8", true}, {"pv_accum", "two_level"}, {"pv_promote_every", 64}, {"attention_splits", 2}},
  };
  for (const std::string f : {"bf16", "fp8_e4m3"})
    for (const nlohmann::json& sw : switch_sets) {
      EngineOptions o;
      o.device = "cuda";
      o.max_batch = 2;
      o.kv = {f, nlohmann::json::object()};
      o.kernel_switches = sw;
      o.kernel_switches["gemm"] = "fp32";
      auto engine = make_cuda_engine(model, o);
      CHECK(engine->describe()["kernel_switches"] == o.kernel_switches);
      const Compared c = compare(model, *engine, o.kv, random_prompt(150, vocab, 21), 12,
                                 resolve_kernel_switches(sw).attention);
      INFO(f << " " << sw.dump() << " worst logit error " << c.worst_logit_error);
      CHECK(c.worst_logit_error <= 1e-2);
      CHECK(c.same_tokens);
    }
}

namespace {

// A sequence of the step-by-step run below: its tokens so far and whether it still decodes.
struct Seq {
  int slot;
  std::vector<int> tokens;
};

// Prefills, then decodes sequences whose number grows and shrinks (one finishes, one joins, two
// finish) on one CudaForward; per decode step the logits of every row and its greedy id.
struct StepLog {
  std::vector<std::vector<float>> logits;  // one entry per step: [rows][vocab]
  std::vector<std::vector<int>> ids;
};

StepLog run_steps(const std::shared_ptr<const Model>& model, const std::shared_ptr<const CudaWeights>& w, bool graphs,
                  CudaForward::GraphStats& stats) {
  const ModelConfig& c = model->config();
  CudaForward fw(c, w, {.max_rows = 256, .max_seqs = 4, .max_context = 512, .cuda_graphs = graphs});
  StepLog log;
  std::vector<Seq> live;
  auto prefill = [&](int slot, int n, std::uint64_t seed) {
    Seq s{slot, random_prompt(n, c.vocab_size, seed)};
    std::vector<int> seqs(n, slot), pos(n);
    for (int i = 0; i < n; ++i) pos[i] = i;
    fw.forward(s.tokens, seqs, pos, n - 1);
    int id = -1;
    fw.argmax(1, &id);
    s.tokens.push_back(id);
    live.push_back(std::move(s));
  };
  auto step = [&] {
    const int b = static_cast<int>(live.size());
    std::vector<int> tokens(b), seqs(b), pos(b), ids(b);
    for (int i = 0; i < b; ++i) {
      tokens[i] = live[i].tokens.back();
      seqs[i] = live[i].slot;
      pos[i] = static_cast<int>(live[i].tokens.size()) - 1;
    }
    fw.forward(tokens, seqs, pos, 0, /*greedy=*/true);
    fw.ids_to_host(b, ids.data());
    std::vector<float> l(static_cast<std::size_t>(b) * c.vocab_size);
    fw.logits_to_host(b, l.data());
    for (int i = 0; i < b; ++i) live[i].tokens.push_back(ids[i]);
    log.logits.push_back(std::move(l));
    log.ids.push_back(std::move(ids));
  };
  auto finish = [&](int index) {
    fw.cache().release(live[index].slot);
    live.erase(live.begin() + index);
  };
  // 3 sequences (one crosses 64 and 128 tokens: new context buckets), each shape for several steps.
  prefill(0, 50, 1);
  prefill(1, 120, 2);
  prefill(2, 7, 3);
  for (int i = 0; i < 20; ++i) step();
  finish(1);  // batch 3 -> 2
  for (int i = 0; i < 6; ++i) step();
  prefill(1, 30, 4);  // a new trial in the freed slot: batch 3 again
  prefill(3, 64, 5);  // and a fourth
  for (int i = 0; i < 6; ++i) step();
  finish(0);
  finish(1);  // batch 4 -> 2
  for (int i = 0; i < 5; ++i) step();
  finish(0);  // batch 1
  for (int i = 0; i < 5; ++i) step();
  stats = fw.graph_stats();
  return log;
}

}  // namespace

TEST_CASE("CUDA graphs: replayed decode steps give the tokens and logits of launched kernels", "[cuda]") {
  kvtest::TempDir tmp;
  for (const std::string arch : {"qwen3", "qwen2"}) {  // q/k norm; biases in the fused QKV GEMM
    auto model = kvtest::make_and_load(tmp, arch, small(arch));
    for (const auto gemm : {kvgate::kernels::cuda::GemmType::kBf16, kvgate::kernels::cuda::GemmType::kF32}) {
      auto w = CudaWeights::upload(*model, gemm);
      CudaForward::GraphStats off_stats, on_stats;
      const StepLog off = run_steps(model, w, false, off_stats);
      const StepLog on = run_steps(model, w, true, on_stats);
      INFO(arch << " gemm=" << kvgate::kernels::cuda::gemm_type_name(gemm));
      CHECK(off_stats.captured == 0);
      CHECK(off_stats.replayed == 0);
      // Shapes (rows, context bucket): 3 rows x 3 buckets, 2, 3, 4, 2, 1 rows; each captured on its
      // second step, replayed from then on.
      CHECK(on_stats.captured >= 6);
      CHECK(on_stats.replayed >= 30);
      REQUIRE(on.ids.size() == off.ids.size());
      double worst = 0;
      bool identical = true;
      for (std::size_t i = 0; i < on.ids.size(); ++i) {
        CHECK(on.ids[i] == off.ids[i]);
        worst = std::max(worst, rel_error(on.logits[i], off.logits[i]));
        identical = identical && on.logits[i] == off.logits[i];
      }
      INFO("worst relative logit difference " << worst << (identical ? " (bit-identical)" : ""));
      CHECK(worst <= 1e-6);
    }
  }
}

TEST_CASE("CUDA graphs: batched callers joining and finishing get the same tokens with graphs on and off", "[cuda]") {
  kvtest::TempDir tmp;
  auto model = kvtest::make_and_load(tmp, "qwen3", small("qwen3"));
  const int vocab = model->config().vocab_size;
  std::vector<std::vector<int>> prompts;
  std::vector<GenerateOptions> opts;
  for (int i = 0; i < 7; ++i) {
    prompts.push_back(random_prompt(10 + 23 * i, vocab, 300 + i));
    GenerateOptions g;
    g.max_tokens = 6 + 5 * i;  // finish at different steps: the batch shrinks, waiting callers join
    if (i == 3) {
      g.sampler = {.temperature = 0.7, .top_k = 20};
      g.seed = 77;
    }
    opts.push_back(g);
  }
  std::vector<std::vector<int>> tokens[2];
  for (int graphs = 0; graphs < 2; ++graphs) {
    EngineOptions o;
    o.device = "cuda";
    o.max_batch = 3;
    o.kernel_switches = {{"gemm", "fp32"}, {"cuda_graphs", graphs == 1}};
    auto engine = make_cuda_engine(model, o);
    CHECK(engine->describe()["cuda_graphs"] == (graphs == 1));
    std::vector<std::future<Generation>> futures;
    for (int i = 0; i < 7; ++i)
      futures.push_back(std::async(std::launch::async, [&, i] { return engine->generate(prompts[i], opts[i]); }));
    for (auto& f : futures) tokens[graphs].push_back(f.get().tokens);
  }
  for (int i = 0; i < 7; ++i) {
    Session session(model, {.max_chunk = 64});
    const Generation cpu = generate(session, prompts[i], opts[i]);
    INFO("caller " << i);
    CHECK(tokens[1][i] == tokens[0][i]);
    CHECK(tokens[1][i] == cpu.tokens);
  }
  // The switch is validated: a non-boolean is an Error naming it.
  EngineOptions bad;
  bad.device = "cuda";
  bad.kernel_switches = {{"cuda_graphs", "no"}};
  try {
    make_cuda_engine(model, bad);
    FAIL("a non-boolean cuda_graphs was accepted");
  } catch (const kvgate::Error& e) {
    CHECK_THAT(std::string(e.what()), contains("cuda_graphs"));
  }
}
