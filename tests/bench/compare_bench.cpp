// compare on 100,000 results ("well under a second"): a baseline and a candidate run of
// 50,000 results each (100,000 in all), and of 100,000 each. A mixed suite, as a gate would see it:
// half NIAH over 8 length buckets (binary), 30% MRCR (fractional scores, 3 repeats, clusters), 20%
// GSM8K (binary, no length). Reference in the same run: reading the two results.jsonl files alone.
//
//   build/tests/compare_bench [--benchmark_filter=...]
#include <benchmark/benchmark.h>
#include <unistd.h>

#include <filesystem>
#include <map>
#include <memory>
#include <string>

#include "harness/compare/compare.h"
#include "harness/compare/comparison_json.h"
#include "harness/compare/text_table.h"
#include "harness/core/atomic_file.h"
#include "harness/core/jsonl.h"
#include "harness/core/rng.h"
#include "harness/core/run_dir.h"

namespace {

using namespace kvgate;

struct Suite {
  std::shared_ptr<RunDir> base = std::make_shared<RunDir>(), cand = std::make_shared<RunDir>();
  std::string dir;  // on disk: dir/base, dir/cand
};

ResultRecord make(const std::string& id, const char* task, std::int64_t bucket, int repeat, double score) {
  ResultRecord r;
  r.id = id;
  r.task = task;
  r.bucket = bucket;
  r.repeat = repeat;
  r.score = score;
  r.passed = score >= 0.5;
  return r;
}

// A suite of `per_run` results per run (a multiple of 100).
Suite make_suite(int per_run) {
  const int niah_per_bucket = per_run / 16, mrcr_trials = per_run / 10, gsm8k_trials = per_run / 5;
  Suite s;
  s.base->path = "bench/base", s.base->manifest.label = "bf16";
  s.cand->path = "bench/cand", s.cand->manifest.label = "fp8";
  Rng rng(1);
  auto& b = s.base->results.records;
  auto& c = s.cand->results.records;
  for (int k = 0; k < 8; ++k) {
    const std::int64_t bucket = 8192LL << k;
    const double p = 0.97 - 0.04 * k;
    for (int i = 0; i < niah_per_bucket; ++i) {
      const std::string id = "niah/" + std::to_string(bucket) + "/" + std::to_string(i);
      const double u = rng.uniform();
      b.push_back(make(id, "niah", bucket, 0, u < p ? 1 : 0));
      c.push_back(make(id, "niah", bucket, 0, u < p - 0.005 || (u > 0.99 && u < 0.995) ? 1 : 0));
    }
  }
  for (int i = 0; i < mrcr_trials; ++i)
    for (int rep = 0; rep < 3; ++rep) {
      const std::int64_t bucket = i < mrcr_trials / 2 ? 65536 : 131072;
      const std::string id = "mrcr/" + std::to_string(bucket) + "/" + std::to_string(i);
      const double s0 = std::min(1.0, std::max(0.0, 0.8 + 0.1 * rng.normal()));
      b.push_back(make(id, "mrcr", bucket, rep, s0));
      c.push_back(make(id, "mrcr", bucket, rep, std::min(1.0, std::max(0.0, s0 - 0.01 + 0.05 * rng.normal()))));
      b.back().extra["cluster"] = "conv-" + std::to_string(i / 4);
      c.back().extra["cluster"] = "conv-" + std::to_string(i / 4);
    }
  for (int i = 0; i < gsm8k_trials; ++i) {
    const std::string id = "gsm8k/" + std::to_string(i);
    const double u = rng.uniform();
    b.push_back(make(id, "gsm8k", 0, 0, u < 0.9 ? 1 : 0));
    c.push_back(make(id, "gsm8k", 0, 0, u < 0.895 ? 1 : 0));
  }
  // The same runs on disk, with only the fields compare reads (plus the cluster).
  s.dir = (std::filesystem::temp_directory_path() /
           ("kvgate-compare-bench-" + std::to_string(::getpid()) + "-" + std::to_string(per_run))).string();
  for (const auto& [name, run] : {std::pair{"base", s.base}, {"cand", s.cand}}) {
    const std::string d = s.dir + "/" + name;
    make_directories(d);
    std::string text;
    for (const ResultRecord& r : run->results.records) {
      nlohmann::json j = {{"id", r.id}, {"task", r.task}, {"bucket", r.bucket}, {"repeat", r.repeat},
                          {"score", r.score}, {"passed", r.passed}, {"error", nullptr}};
      if (r.extra.contains("cluster")) j["cluster"] = r.extra["cluster"];
      text += to_jsonl_line(j);
    }
    write_file_atomic(d + "/results.jsonl", text);
    write_file_atomic(d + "/run.json", nlohmann::json{{"label", run->manifest.label}}.dump());
  }
  return s;
}

// Built once per size; the directories are removed at exit.
struct Suites {
  std::map<int, Suite> by_size;
  ~Suites() {
    for (auto& [n, s] : by_size) {
      std::error_code ec;
      std::filesystem::remove_all(s.dir, ec);
    }
  }
};
Suites& suites() {
  static Suites all;
  return all;
}
const Suite& suite(std::int64_t per_run) {
  auto& m = suites().by_size;
  auto it = m.find(static_cast<int>(per_run));
  if (it == m.end()) it = m.emplace(static_cast<int>(per_run), make_suite(static_cast<int>(per_run))).first;
  return it->second;
}

// Reference: reading and validating the two results files, nothing else.
void BM_ReadResults(benchmark::State& state) {
  const Suite& s = suite(state.range(0));
  for (auto _ : state) {
    const ResultsFile a = read_results(s.dir + "/base/results.jsonl");
    const ResultsFile b = read_results(s.dir + "/cand/results.jsonl");
    benchmark::DoNotOptimize(a.records.size() + b.records.size());
  }
  state.counters["results_per_run"] = static_cast<double>(s.base->results.records.size());
}

// The decision on runs already in memory (pairing, every statistic, the verdict).
void BM_CompareInMemory(benchmark::State& state) {
  const Suite& s = suite(state.range(0));
  compare::CompareOptions o;
  o.bootstrap_replicates = static_cast<int>(state.range(1));
  for (auto _ : state) {
    const compare::Comparison c = compare::compare_loaded({s.base, s.cand}, o);
    benchmark::DoNotOptimize(c.verdict);
  }
  state.counters["results_per_run"] = static_cast<double>(s.base->results.records.size());
}

// What `kvgate compare BASE CAND --json F` does: load both directories, decide, JSON and text.
void BM_CompareEndToEnd(benchmark::State& state) {
  const Suite& s = suite(state.range(0));
  for (auto _ : state) {
    const compare::Comparison c = compare::compare_runs({s.dir + "/base", s.dir + "/cand"}, {});
    const std::string json = compare::to_json(c).dump(2);
    const std::string text = compare::format_text(c);
    benchmark::DoNotOptimize(json.size() + text.size());
  }
  state.counters["results_per_run"] = static_cast<double>(s.base->results.records.size());
}

// Arguments: results per run (, bootstrap replicates).
BENCHMARK(BM_ReadResults)->Arg(50000)->Arg(100000)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_CompareInMemory)->Args({50000, 0})->Args({50000, 1000})->Args({100000, 0})->Args({100000, 1000})->Unit(benchmark::kMillisecond);
BENCHMARK(BM_CompareEndToEnd)->Arg(50000)->Arg(100000)->Unit(benchmark::kMillisecond);

}  // namespace

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
