#include "harness/runner/runner.h"

#include <chrono>
#include <condition_variable>
#include <exception>
#include <mutex>
#include <queue>
#include <thread>

#include "harness/core/error.h"
#include "harness/core/log.h"
#include "harness/core/rng.h"
#include "harness/runner/result_line.h"

namespace kvgate::runner {

namespace {

using Clock = std::chrono::steady_clock;

struct Job {
  std::size_t item = 0;
  int attempts = 0;  // made so far
  Clock::time_point due{};
};
struct LaterFirst {
  bool operator()(const Job& a, const Job& b) const { return a.due > b.due; }
};

double unix_now() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

class Scheduler {
 public:
  Scheduler(const std::vector<WorkItem>& work, Backend& backend, const SamplingParams& sampling, const ResultSink& sink,
            const RunnerOptions& o)
      : work_(work), backend_(backend), sampling_(sampling), sink_(sink), o_(o), rng_(o.jitter_seed) {}

  RunnerStats run() {
    const auto t0 = Clock::now();
    const std::size_t n_workers = std::min<std::size_t>(static_cast<std::size_t>(std::max(1, o_.concurrency)), work_.size());
    std::vector<std::thread> workers;
    workers.reserve(n_workers);
    for (std::size_t i = 0; i < n_workers; ++i) workers.emplace_back([this] { worker(); });
    for (auto& w : workers) w.join();
    if (fatal_) std::rethrow_exception(fatal_);
    stats_.wall_s = std::chrono::duration<double>(Clock::now() - t0).count();
    stats_.cancelled = stats_.written < work_.size();
    return stats_;
  }

 private:
  bool stopping() const { return stop_ || (o_.cancel && o_.cancel->load(std::memory_order_relaxed)); }

  // Next job, or false when there is nothing left (or the run is stopping).
  bool next(Job& job) {
    std::unique_lock<std::mutex> lock(mu_);
    for (;;) {
      if (stopping()) return false;
      const auto now = Clock::now();
      if (!delayed_.empty() && delayed_.top().due <= now) {
        job = delayed_.top();
        delayed_.pop();
        if (o_.counters) --o_.counters->waiting;
        break;
      }
      if (next_fresh_ < work_.size()) {
        job = Job{next_fresh_++, 0, now};
        break;
      }
      if (delayed_.empty() && active_ == 0) {
        cv_.notify_all();  // the others are waiting for work that will not come
        return false;
      }
      // A retry is due later, or a job in flight may yet need one. Wake at least every 100 ms to
      // notice a cancel (a signal handler cannot notify).
      auto until = now + std::chrono::milliseconds(100);
      if (!delayed_.empty() && delayed_.top().due < until) until = delayed_.top().due;
      cv_.wait_until(lock, until);
    }
    ++active_;
    return true;
  }

  void finish_job() {
    std::lock_guard<std::mutex> lock(mu_);
    --active_;
    cv_.notify_all();
  }

  void write(const ResultRecord& line, const Response& last, bool error) {
    sink_(line);
    std::lock_guard<std::mutex> lock(mu_);
    ++stats_.written;
    if (error) {
      ++stats_.errors;
      ++stats_.error_kinds[last.error_kind.empty() ? "backend" : last.error_kind];
    }
    if (o_.counters) {
      ++o_.counters->done;
      if (error) ++o_.counters->errors;
    }
  }

  void process(Job job) {
    const WorkItem& w = work_[job.item];
    const SamplingParams sampling = resolve_sampling(sampling_, *w.trial, w.repeat);
    Response resp;
    if (o_.counters) ++o_.counters->in_flight;
    try {
      resp = backend_.complete(Request{.trial = w.trial, .repeat = w.repeat, .sampling = sampling});
    } catch (const std::exception& e) {  // a backend bug or bad input for it: this trial's error, the run goes on
      resp = Response{};
      resp.error = std::string("backend failed: ") + e.what();
      resp.error_kind = "backend";
      resp.retryable = false;
    }
    if (o_.counters) --o_.counters->in_flight;
    ++job.attempts;
    {
      std::lock_guard<std::mutex> lock(mu_);
      ++stats_.attempts;
    }
    // An attempt cut short by a stop request says nothing about the trial: it runs again on resume.
    if (resp.error && (resp.error_kind == "cancelled" || stopping())) return;

    Attempts a{.count = job.attempts, .seed = sampling.seed, .finished_at_unix_s = unix_now()};
    if (!resp.error) {
      ResultRecord line;
      bool grader_failed = false;
      try {
        const Grade g = o_.grade(GradeInput{.trial = *w.trial,
                                            .response = resp.text,
                                            .reasoning = resp.reasoning,
                                            .finish_reason = resp.finish_reason,
                                            .tool_calls = resp.tool_calls.is_null() ? nullptr : &resp.tool_calls});
        line = success_line(*w.trial, w.repeat, resp, g, a);
      } catch (const std::exception& e) {
        grader_failed = true;
        resp.error_kind = "grader";
        line = error_line(*w.trial, w.repeat, resp, std::string("grader failed: ") + e.what(), a);
        line.response = resp.text;  // the answer stays visible next to the grader's failure
      }
      write(line, resp, grader_failed);
      return;
    }
    if (resp.retryable && job.attempts <= o_.retry.max_retries) {
      std::lock_guard<std::mutex> lock(mu_);
      const double delay = backoff_delay_s(o_.retry, job.attempts, resp.retry_after_s, rng_);
      if (resp.retry_after_s && *resp.retry_after_s > o_.retry.max_retry_after_s && !warned_retry_after_) {
        warned_retry_after_ = true;
        log_warn("the server asked to wait " + std::to_string(static_cast<long>(*resp.retry_after_s)) +
                 " s (Retry-After); waiting at most " + std::to_string(static_cast<long>(o_.retry.max_retry_after_s)) + " s");
      }
      job.due = Clock::now() + std::chrono::microseconds(static_cast<long long>(delay * 1e6));
      delayed_.push(job);
      ++stats_.retries;
      ++stats_.retry_kinds[resp.error_kind];
      if (o_.counters) {
        ++o_.counters->retries;
        ++o_.counters->waiting;
      }
      cv_.notify_one();
      return;
    }
    std::string message = *resp.error;
    if (resp.retryable)
      message = "gave up after " + std::to_string(job.attempts) + " attempts (--max-retries " +
                std::to_string(o_.retry.max_retries) + "): " + message;
    write(error_line(*w.trial, w.repeat, resp, message, a), resp, true);
  }

  void worker() {
    Job job;
    while (next(job)) {
      try {
        process(job);
      } catch (...) {  // the sink failed (disk full, ...): stop everything, report it once
        std::lock_guard<std::mutex> lock(mu_);
        if (!fatal_) fatal_ = std::current_exception();
        stop_ = true;
      }
      finish_job();
    }
  }

  const std::vector<WorkItem>& work_;
  Backend& backend_;
  const SamplingParams& sampling_;
  const ResultSink& sink_;
  const RunnerOptions& o_;

  std::mutex mu_;
  std::condition_variable cv_;
  std::size_t next_fresh_ = 0;
  std::priority_queue<Job, std::vector<Job>, LaterFirst> delayed_;
  std::size_t active_ = 0;
  std::atomic<bool> stop_{false};
  bool warned_retry_after_ = false;
  std::exception_ptr fatal_;
  Rng rng_;
  RunnerStats stats_;
};

}  // namespace

RunnerStats run_work(const std::vector<WorkItem>& work, Backend& backend, const SamplingParams& sampling,
                     const ResultSink& sink, const RunnerOptions& options) {
  if (!options.grade) throw Error("run_work: no grader function", kExitInternal);
  if (work.empty()) return RunnerStats{};
  Scheduler s(work, backend, sampling, sink, options);
  return s.run();
}

}  // namespace kvgate::runner
