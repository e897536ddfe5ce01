// The runner: sends (trial, repeat) pairs to a backend with N requests in flight, retries what is
// worth retrying (429 honouring Retry-After, 5xx, timeouts, connection errors, cut-short bodies)
// with backoff and jitter, grades each answer as it arrives and hands the line to the journal.
// A retry waits in a queue, not in a worker, so backoff never holds a concurrency slot.
#pragma once
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "harness/core/backend.h"
#include "harness/core/grade.h"
#include "harness/core/result.h"
#include "harness/runner/retry_policy.h"
#include "harness/runner/work_plan.h"

namespace kvgate::runner {

// Live counts, read by the progress display while the run goes on.
struct RunCounters {
  std::atomic<std::size_t> done{0};       // lines written this session
  std::atomic<std::size_t> errors{0};     // of which errors
  std::atomic<std::size_t> retries{0};    // attempts that were retried
  std::atomic<std::size_t> in_flight{0};  // requests at the backend now
  std::atomic<std::size_t> waiting{0};    // retries waiting out their backoff
};

using GradeFn = std::function<Grade(const GradeInput&)>;
using ResultSink = std::function<void(const ResultRecord&)>;  // thread-safe (ResultsWriter::append)

struct RunnerOptions {
  int concurrency = 8;
  RetryPolicy retry;
  std::uint64_t jitter_seed = 0;
  const std::atomic<bool>* cancel = nullptr;  // set: stop dispatching; cancelled attempts are not written
  GradeFn grade;                               // datasets' grade_trial in the product
  RunCounters* counters = nullptr;
};

struct RunnerStats {
  std::size_t written = 0;
  std::size_t errors = 0;
  std::size_t retries = 0;
  std::size_t attempts = 0;
  std::map<std::string, std::size_t> error_kinds;  // of the lines written as errors
  std::map<std::string, std::size_t> retry_kinds;  // of the attempts that were retried
  bool cancelled = false;                          // stopped before every pair was written
  double wall_s = 0.0;
};

// Runs every item once to a written line (an answer or an error), unless cancelled. An exception
// from the sink (a full disk) stops the run and is rethrown here.
RunnerStats run_work(const std::vector<WorkItem>& work, Backend& backend, const SamplingParams& sampling,
                     const ResultSink& sink, const RunnerOptions& options);

}  // namespace kvgate::runner
