// decoder-bench: the CPU reference decoder on a ~6M-parameter model (the demo's trial: a 2K-4K token
// prompt, then a short answer, on 2 cores). Reports seconds and tokens/s, and as the ratio that
// travels between machines, the decoder's GFLOP/s over matmul_ref's GFLOP/s on a large product
// measured in the same run (how close the whole pass gets to its own best kernel).
//   decoder-bench [--prompt N] [--generate N] [--threads N] [--kv FORMAT]
#include <chrono>
#include <ctime>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "harness/core/rng.h"
#include "harness/decoder/generate.h"
#include "harness/decoder/make_model.h"
#include "harness/decoder/model.h"
#include "harness/decoder/session.h"
#include "kernels/ops_ref.h"

using namespace kvgate;
using Clock = std::chrono::steady_clock;

namespace {

double seconds_since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

// CPU seconds of the process (all threads): on a shared machine wall time also counts other jobs.
double cpu_seconds() {
  timespec ts{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return ts.tv_sec + ts.tv_nsec * 1e-9;
}

// GFLOP/s of matmul_ref on a 64 x 1024 x 1024 product, single thread: the reference of the ratio.
double matmul_gflops() {
  const int rows = 64, k = 1024, cols = 1024;
  std::vector<float> x(rows * k), w(static_cast<std::size_t>(cols) * k), y(rows * cols);
  Rng rng(1);
  for (auto& v : x) v = static_cast<float>(rng.normal());
  for (auto& v : w) v = static_cast<float>(rng.normal());
  const kernels::MatmulArgs a{.x = x.data(), .w = w.data(), .y = y.data(), .rows = rows, .k = k, .cols = cols};
  kernels::matmul_ref(a);
  int iters = 0;
  const auto t = Clock::now();
  while (seconds_since(t) < 1.0) {
    kernels::matmul_ref(a);
    ++iters;
  }
  return 2.0 * rows * k * cols * iters / seconds_since(t) / 1e9;
}

// Forward-pass FLOPs of n tokens starting at position p0 (projections, attention, lm_head rows).
double pass_flops(const decoder::ModelConfig& c, std::int64_t n, std::int64_t p0, std::int64_t logit_rows) {
  const double h = c.hidden_size, q = double(c.num_heads) * c.head_dim, kv = double(c.num_kv_heads) * c.head_dim;
  const double per_token = 2.0 * c.num_layers * (h * q + 2 * h * kv + q * h + 3 * h * c.intermediate_size);
  double attention = 0;  // QK and PV: 4 * heads * head_dim per cached token
  for (std::int64_t i = 0; i < n; ++i) attention += 4.0 * c.num_layers * q * double(p0 + i + 1);
  return per_token * n + attention + 2.0 * h * c.vocab_size * logit_rows;
}

}  // namespace

int main(int argc, char** argv) {
  int prompt = 4096, gen = 32, threads = 2;
  std::string kv = "bf16";
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!std::strcmp(argv[i], "--prompt")) prompt = std::atoi(argv[i + 1]);
    else if (!std::strcmp(argv[i], "--generate")) gen = std::atoi(argv[i + 1]);
    else if (!std::strcmp(argv[i], "--threads")) threads = std::atoi(argv[i + 1]);
    else if (!std::strcmp(argv[i], "--kv")) kv = argv[i + 1];
  }
  const std::string dir = std::string(std::getenv("TMPDIR") ? std::getenv("TMPDIR") : "/tmp") + "/kvgate-decoder-bench";
  decoder::MakeModelOptions o;
  o.arch = "qwen3";
  o.layers = 8;
  o.hidden = 256;
  o.heads = 4;
  o.kv_heads = 2;
  o.head_dim = 64;
  o.intermediate = 640;
  o.vocab = 2048;
  o.max_position = 8192;
  decoder::make_model(o, dir);
  auto model = decoder::Model::load(dir);
  const auto& c = model->config();
  std::vector<int> tokens(prompt);
  Rng rng(7);
  for (auto& t : tokens) t = static_cast<int>(rng.below(515));

  const double ref = matmul_gflops();
  std::printf("model: qwen3 %d layers, hidden %d, heads %d/%d x %d, vocab %d: %.2fM parameters\n", c.num_layers,
              c.hidden_size, c.num_heads, c.num_kv_heads, c.head_dim, c.vocab_size, model->parameter_count() / 1e6);
  std::printf("reference: matmul_ref 64x1024x1024, 1 thread: %.1f GFLOP/s\n", ref);
  decoder::Session s(model, {.kv = {kv, {}}, .max_chunk = 64, .threads = threads});
  auto t = Clock::now();
  double cpu = cpu_seconds();
  const decoder::Generation g = decoder::generate(s, tokens, {.max_tokens = gen});
  const double total = seconds_since(t), total_cpu = cpu_seconds() - cpu;
  // Prefill and decode apart, for the rates.
  t = Clock::now();
  s.reset();
  s.forward(tokens, 1, {});
  const double prefill = seconds_since(t);
  t = Clock::now();
  for (int i = 0; i < gen; ++i) s.step(g.tokens[i % g.tokens.size()]);
  const double decode = seconds_since(t);
  const double pf = pass_flops(c, prompt, 0, 1), df = pass_flops(c, gen, prompt, gen);
  std::printf("trial (%d-token prompt + %d generated, kv %s, %d threads): %.2f s wall, %.2f s CPU (all threads)\n",
              prompt, gen, kv.c_str(), threads, total, total_cpu);
  std::printf("prefill: %.0f tokens/s, %.1f GFLOP/s = %.2f x matmul_ref\n", prompt / prefill, pf / prefill / 1e9,
              pf / prefill / 1e9 / ref);
  std::printf("decode at %d context: %.1f tokens/s, %.1f GFLOP/s = %.2f x matmul_ref\n", prompt, gen / decode,
              df / decode / 1e9, df / decode / 1e9 / ref);
  return 0;
}
