// MRCR benchmarks, each reported as a ratio against a reference measured in the same run:
//  1. difflib: kvgate's SequenceMatcher.ratio() vs CPython's difflib on the same MRCR-like pairs
//     (Python times only its own loop);
//  2. generation: 50 trials of 128K tokens with exact lengths vs one count_chat of each final
//     input (the least any exact-length generator must spend).
//   bench-mrcr [--tokenizer tokenizer.json] [--trials 50] [--length 131072] [--pairs 400]
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "harness/core/rng.h"
#include "datasets/mrcr/mrcr_conversation.h"
#include "datasets/mrcr/mrcr_fit.h"
#include "datasets/mrcr/mrcr_gen.h"
#include "datasets/mrcr/mrcr_text.h"
#include "datasets/mrcr/sequence_matcher.h"
#include "harness/tokenizer/token_counter.h"

namespace {

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

std::string mutate(const std::string& s, kvgate::Rng& rng) {
  std::string out;
  std::size_t start = 0;
  for (std::size_t i = 0; i <= s.size(); ++i) {
    if (i < s.size() && s[i] != ' ') continue;
    const std::string w = s.substr(start, i - start);
    start = i + 1;
    const double u = rng.uniform();
    if (u < 0.03) continue;                            // drop
    out += (u < 0.06 ? std::string("changed") : w) + " ";  // substitute or keep
  }
  return out;
}

void bench_difflib(int pairs) {
  kvgate::Rng rng(1);
  std::vector<std::pair<std::string, std::string>> items;
  for (int i = 0; i < pairs; ++i) {
    const std::size_t f = rng.below(kvgate::mrcr::formats().size());
    const std::string answer = kvgate::mrcr::write_reply(f, rng.pick(kvgate::mrcr::topics()), 150 + static_cast<int>(rng.below(500)), rng);
    items.emplace_back(mutate(answer, rng), answer);
  }
  const char* tmp = std::getenv("TMPDIR");
  const std::string path = std::string(tmp && *tmp ? tmp : "/tmp") + "/bench-mrcr-pairs.jsonl";
  {
    std::ofstream out(path);
    for (const auto& [a, b] : items) out << nlohmann::json{{"a", a}, {"b", b}}.dump() << "\n";
  }
  const auto t0 = std::chrono::steady_clock::now();
  double sum = 0;
  for (const auto& [a, b] : items) sum += kvgate::sequence_ratio(a, b);
  const double cpp_s = seconds_since(t0);
  const char* py = std::getenv("KVGATE_PYTHON");
  const std::string cmd = std::string(py && *py ? py : "python3") +
                          " -c \"import json,sys,time\nfrom difflib import SequenceMatcher as S\n"
                          "p=[json.loads(l) for l in open(sys.argv[1])]\nt=time.perf_counter()\n"
                          "s=sum(S(None,x['a'],x['b']).ratio() for x in p)\nprint(time.perf_counter()-t, repr(s))\" " + path;
  double py_s = -1;
  char py_sum[64] = "?";
  if (FILE* f = popen(cmd.c_str(), "r")) {
    if (std::fscanf(f, "%lf %63s", &py_s, py_sum) != 2) py_s = -1;
    pclose(f);
  }
  std::printf("difflib ratio, %d MRCR-like pairs (answers of 150-650 words):\n", pairs);
  std::printf("  kvgate   %8.1f ms  (sum of ratios %.17g)\n", cpp_s * 1e3, sum);
  if (py_s > 0)
    std::printf("  CPython  %8.1f ms  (sum of ratios %s)\n  speedup  %.1fx\n", py_s * 1e3, py_sum, py_s / cpp_s);
  else
    std::printf("  CPython  not run (no python3: run scripts/setup)\n");
}

void bench_generation(const std::string& tokenizer, int trials, std::int64_t length) {
  kvgate::TokenCounterOptions co;
  co.tokenizer_path = tokenizer;
  const std::unique_ptr<kvgate::TokenCounter> counter = kvgate::open_token_counter(co);
  kvgate::mrcr::GenOptions o{.seed = 1, .lengths = {length}, .per_bucket = trials, .needles = {2, 4, 8}, .counter = counter.get(),
                              .threads = 1};  // serial, as the count_chat reference
  const auto t0 = std::chrono::steady_clock::now();
  const std::vector<kvgate::Trial> out = kvgate::mrcr::generate_trials(o);
  const double gen_s = seconds_since(t0);
  const auto t1 = std::chrono::steady_clock::now();
  int exact = 0;
  for (const kvgate::Trial& t : out) exact += counter->count_chat(t.input["messages"]) == static_cast<std::size_t>(length);
  const double count_s = seconds_since(t1);
  std::printf("generation, %d trials of %lld tokens, counter %s:\n", trials, static_cast<long long>(length), counter->source().c_str());
  std::printf("  generate with exact fitting  %8.3f s  (%d/%d exact)\n", gen_s, exact, trials);
  std::printf("  one count_chat per trial     %8.3f s\n", count_s);
  std::printf("  ratio                        %8.1fx\n", gen_s / count_s);
  long counts = 0;  // count_chat calls the fitter spends per trial
  for (int i = 0; i < trials; ++i) {
    kvgate::mrcr::Conversation c({.seed = kvgate::derive_seed(1, out[static_cast<std::size_t>(i)].id),
                                  .needles = o.needles[static_cast<std::size_t>(i) % 3], .target_tokens = length});
    counts += kvgate::mrcr::fit_to_length(c, *counter, {.target_tokens = length}).full_counts;
  }
  std::printf("  count_chat calls per trial   %8.1f\n", static_cast<double>(counts) / trials);
}

}  // namespace

int main(int argc, char** argv) {
  std::string tokenizer;
  int trials = 50, pairs = 400;
  std::int64_t length = 131072;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string k = argv[i], v = argv[i + 1];
    if (k == "--tokenizer") tokenizer = v;
    else if (k == "--trials") trials = std::stoi(v);
    else if (k == "--length") length = std::stoll(v);
    else if (k == "--pairs") pairs = std::stoi(v);
  }
  bench_difflib(pairs);
  bench_generation(tokenizer, trials, length);
  return 0;
}
