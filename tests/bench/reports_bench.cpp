// Rendering the reports of a large comparison: a baseline and two candidates of 50,000
// results each (NIAH over 8 lengths at Kamradt depths with answers, GSM8K with answers). Reference in
// the same run: the comparison itself (compare_loaded, no bootstrap), which every report needs first;
// each writer is reported against it.
//
//   build/tests/reports_bench [--benchmark_filter=...]
#include <benchmark/benchmark.h>

#include <memory>
#include <string>

#include "harness/compare/compare.h"
#include "harness/core/rng.h"
#include "harness/core/run_dir.h"
#include "reports/report_writer.h"

namespace {

using namespace kvgate;

ResultRecord make(const std::string& id, const char* task, std::int64_t bucket, bool passed, double depth, Rng& rng) {
  ResultRecord r;
  r.id = id;
  r.task = task;
  r.bucket = bucket;
  r.passed = passed;
  r.score = passed ? 1.0 : 0.0;
  r.finish_reason = "stop";
  r.response = "The special magic number for key-" + std::to_string(rng.next() % 100000) + " is " + std::to_string(rng.next() % 10000000) +
               ". <b>" + std::string(80, 'x') + "</b>";
  r.grade = {{"extracted", "1234567"}, {"explanation", passed ? "found" : "not found"}, {"details", {{"depth", depth}}}};
  return r;
}

struct Suite {
  std::vector<std::shared_ptr<const RunDir>> runs;
  compare::Comparison comparison;
};

const Suite& suite() {
  static const Suite s = [] {
    Suite out;
    Rng rng(9);
    const char* labels[] = {"bf16", "fp8", "int4"};
    std::vector<std::shared_ptr<RunDir>> runs;
    for (const char* l : labels) {
      runs.push_back(std::make_shared<RunDir>());
      runs.back()->path = std::string("bench/") + l;
      runs.back()->manifest.label = l;
    }
    for (int k = 0; k < 8; ++k) {
      const std::int64_t bucket = 8192LL << k;
      for (int i = 0; i < 5000; ++i) {
        const std::string id = "niah/" + std::to_string(bucket) + "/" + std::to_string(i);
        const double u = rng.uniform(), depth = 10.0 * (i % 11);
        const bool pass[3] = {u < 0.97 - 0.03 * k, u < 0.965 - 0.03 * k, u < 0.95 - 0.08 * k};
        for (int r = 0; r < 3; ++r) runs[r]->results.records.push_back(make(id, "niah", bucket, pass[r], depth, rng));
      }
    }
    for (int i = 0; i < 10000; ++i) {
      const std::string id = "gsm8k/" + std::to_string(i);
      const double u = rng.uniform();
      const bool pass[3] = {u < 0.9, u < 0.895, u < 0.85};
      for (int r = 0; r < 3; ++r) {
        runs[r]->results.records.push_back(make(id, "gsm8k", 0, pass[r], 0, rng));
        runs[r]->results.records.back().grade.erase("details");
      }
    }
    for (auto& r : runs) out.runs.push_back(r);
    compare::CompareOptions o;
    o.bootstrap_replicates = 0;
    out.comparison = compare::compare_loaded(out.runs, o);
    return out;
  }();
  return s;
}

// Reference: the decision every report renders.
void BM_Compare(benchmark::State& state) {
  const Suite& s = suite();
  compare::CompareOptions o;
  o.bootstrap_replicates = 0;
  for (auto _ : state) {
    const compare::Comparison c = compare::compare_loaded(s.runs, o);
    benchmark::DoNotOptimize(c.verdict);
  }
  state.counters["results_per_run"] = 50000;
}

void BM_Render(benchmark::State& state) {
  const Suite& s = suite();
  const auto format = static_cast<reports::ReportFormat>(state.range(0));
  const auto writer = reports::make_report_writer(format);
  std::size_t bytes = 0;
  for (auto _ : state) {
    const std::string out = writer->render(s.comparison, {.generated_at = "2026-11-29T00:00:00Z"});
    bytes = out.size();
    benchmark::DoNotOptimize(out.data());
  }
  state.SetLabel(reports::to_string(format));
  state.counters["bytes"] = static_cast<double>(bytes);
}

BENCHMARK(BM_Compare)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_Render)
    ->Arg(static_cast<int>(reports::ReportFormat::json))
    ->Arg(static_cast<int>(reports::ReportFormat::markdown))
    ->Arg(static_cast<int>(reports::ReportFormat::html))
    ->Arg(static_cast<int>(reports::ReportFormat::junit))
    ->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
