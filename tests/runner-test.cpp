// runner/runner.h with a scripted in-process backend: every pair written once, retries only for
// retryable failures, backoff outside the concurrency slots, Retry-After honoured, cancellation.
#include <atomic>
#include <chrono>
#include <map>
#include <mutex>
#include <set>
#include <thread>

#include "tests/catch_compat.hpp"
#include "harness/core/error.h"
#include "harness/runner/runner.h"

using namespace kvgate::runner;
using kvgate::Backend;
using kvgate::Grade;
using kvgate::GradeInput;
using kvgate::Request;
using kvgate::Response;
using kvgate::ResultRecord;
using kvgate::Trial;
using kvtest::contains;
using Clock = std::chrono::steady_clock;

namespace {

// Fails trial i `failures[i]` times with `kind` (retryable unless kind is http_4xx), then answers its id.
class ScriptedBackend : public Backend {
 public:
  std::map<std::string, int> failures;
  std::string kind = "http_5xx";
  std::optional<double> retry_after;
  int delay_ms = 0;
  std::atomic<int> in_flight{0}, max_in_flight{0}, calls{0};
  std::mutex mu;
  std::map<std::string, std::vector<Clock::time_point>> starts;
  std::map<std::string, std::set<std::uint64_t>> seeds;

  Response complete(const Request& rq) override {
    ++calls;
    const int now = ++in_flight;
    for (int m = max_in_flight.load(); now > m && !max_in_flight.compare_exchange_weak(m, now);) {
    }
    int left = 0;
    {
      std::lock_guard<std::mutex> lock(mu);
      starts[rq.trial->id].push_back(Clock::now());
      if (rq.sampling.seed) seeds[rq.trial->id].insert(*rq.sampling.seed);
      left = failures[rq.trial->id]--;
    }
    if (delay_ms) std::this_thread::sleep_for(std::chrono::milliseconds(delay_ms));
    --in_flight;
    Response r;
    r.latency_ms = delay_ms;
    if (left > 0) {
      r.error = "scripted " + kind;
      r.error_kind = kind;
      r.retryable = kind != "http_4xx";
      r.retry_after_s = retry_after;
      return r;
    }
    if (rq.trial->id == "throws") throw std::runtime_error("backend bug");
    r.text = rq.trial->id;
    r.finish_reason = "stop";
    return r;
  }
  nlohmann::json describe() override { return {{"backend", "scripted"}}; }
};

Grade exact(const GradeInput& in) {
  if (in.trial.id == "bad-grader") throw kvgate::Error("grader exploded");
  Grade g;
  g.passed = in.response == in.trial.target.get<std::string>();
  g.score = g.passed ? 1 : 0;
  g.value = g.passed ? kvgate::GradeValue::correct : kvgate::GradeValue::incorrect;
  return g;
}

std::vector<Trial> make_trials(int n) {
  std::vector<Trial> v;
  for (int i = 0; i < n; ++i) {
    Trial t;
    t.id = "t" + std::to_string(i);
    t.task = "t";
    t.input = {{"prompt", "x"}};
    t.target = i % 3 ? t.id : "other";  // a third of them fail the grade
    t.grader = {{"name", "exact"}};
    v.push_back(t);
  }
  return v;
}

std::vector<WorkItem> all_work(const std::vector<Trial>& ts, int repeats = 1) { return plan_work(ts, repeats, Shard{}, {}); }

struct Collected {
  std::mutex mu;
  std::vector<ResultRecord> lines;
  ResultSink sink() {
    return [this](const ResultRecord& r) {
      std::lock_guard<std::mutex> lock(mu);
      lines.push_back(r);
    };
  }
  std::map<std::pair<std::string, int>, int> counts() {
    std::map<std::pair<std::string, int>, int> c;
    for (const auto& r : lines) ++c[{r.id, r.repeat}];
    return c;
  }
  const ResultRecord& get(const std::string& id) {
    for (const auto& r : lines)
      if (r.id == id) return r;
    throw std::runtime_error("no line for " + id);
  }
};

RunnerOptions opts(int concurrency = 4, int max_retries = 3) {
  RunnerOptions o;
  o.concurrency = concurrency;
  o.retry = RetryPolicy{.max_retries = max_retries, .base_delay_s = 0.001, .max_delay_s = 0.004};
  o.grade = exact;
  return o;
}

}  // namespace

TEST_CASE("runner: every pair is written exactly once and graded as it arrives", "[runner]") {
  const auto ts = make_trials(50);
  ScriptedBackend b;
  Collected c;
  kvgate::SamplingParams s;
  s.seed = 5;
  RunCounters counters;
  RunnerOptions o = opts();
  o.counters = &counters;
  const RunnerStats st = run_work(all_work(ts, 2), b, s, c.sink(), o);
  CHECK(st.written == 100);
  CHECK(st.errors == 0);
  CHECK_FALSE(st.cancelled);
  CHECK(counters.done == 100);
  for (const auto& [pair, n] : c.counts()) CHECK(n == 1);
  CHECK(c.counts().size() == 100);
  CHECK(c.get("t1").passed);
  CHECK_FALSE(c.get("t0").passed);
  CHECK(c.get("t1").grade["value"] == "correct");
  CHECK(c.get("t1").extra["attempts"] == 1);
  CHECK(b.seeds["t1"].size() == 2);  // one seed per repeat
}

TEST_CASE("runner: retryable failures are retried, then answered; attempts are recorded", "[runner]") {
  const auto ts = make_trials(20);
  ScriptedBackend b;
  for (int i = 0; i < 20; i += 2) b.failures["t" + std::to_string(i)] = 2;
  Collected c;
  const RunnerStats st = run_work(all_work(ts), b, {}, c.sink(), opts(4, 3));
  CHECK(st.written == 20);
  CHECK(st.errors == 0);
  CHECK(st.retries == 20);
  CHECK(st.retry_kinds.at("http_5xx") == 20);
  CHECK(c.get("t2").extra["attempts"] == 3);
  CHECK(c.get("t3").extra["attempts"] == 1);
  CHECK(b.calls == 40);
}

TEST_CASE("runner: exhausted retries become an error line and the run goes on", "[runner]") {
  const auto ts = make_trials(10);
  ScriptedBackend b;
  b.kind = "timeout";
  b.failures["t4"] = 100;
  Collected c;
  const RunnerStats st = run_work(all_work(ts), b, {}, c.sink(), opts(4, 2));
  CHECK(st.written == 10);
  CHECK(st.errors == 1);
  CHECK(st.error_kinds.at("timeout") == 1);
  const ResultRecord& e = c.get("t4");
  REQUIRE(e.error);
  CHECK_THAT(*e.error, contains("gave up after 3 attempts (--max-retries 2): scripted timeout"));
  CHECK(e.extra["error_kind"] == "timeout");
  CHECK(e.score == 0);
  CHECK_FALSE(e.passed);
  CHECK(b.starts["t4"].size() == 3);
}

TEST_CASE("runner: a 4xx is recorded at once, without retries", "[runner]") {
  const auto ts = make_trials(3);
  ScriptedBackend b;
  b.kind = "http_4xx";
  b.failures["t1"] = 1;
  Collected c;
  const RunnerStats st = run_work(all_work(ts), b, {}, c.sink(), opts(2, 5));
  CHECK(st.errors == 1);
  CHECK(st.retries == 0);
  CHECK(*c.get("t1").error == "scripted http_4xx");
  CHECK(c.get("t1").extra["attempts"] == 1);
}

TEST_CASE("runner: at most --concurrency requests are in flight, and that many are used", "[runner]") {
  const auto ts = make_trials(60);
  ScriptedBackend b;
  b.delay_ms = 50;  // long enough that all 6 slots fill even on a loaded 2-core machine
  Collected c;
  run_work(all_work(ts), b, {}, c.sink(), opts(6));
  CHECK(b.max_in_flight <= 6);
  CHECK(b.max_in_flight >= 5);
}

TEST_CASE("runner: Retry-After is honoured, and a waiting retry does not hold a slot", "[runner]") {
  const auto ts = make_trials(21);
  ScriptedBackend b;
  b.delay_ms = 10;
  b.retry_after = 0.3;
  b.kind = "http_429";
  b.failures["t0"] = 1;
  Collected c;
  const auto t0 = Clock::now();
  run_work(all_work(ts), b, {}, c.sink(), opts(2));
  const double wall = std::chrono::duration<double>(Clock::now() - t0).count();
  REQUIRE(b.starts["t0"].size() == 2);
  const double waited = std::chrono::duration<double>(b.starts["t0"][1] - b.starts["t0"][0]).count();
  CHECK(waited >= 0.3);
  // 20 other trials of 10 ms on 2 slots take ~0.1 s, done while t0 waits: the whole run is ~0.31 s.
  // The upper bounds leave room for a loaded CI machine running tests in parallel.
  CHECK(waited < 1.5);
  CHECK(wall < 1.5);
  const auto t0_retry = b.starts["t0"][1];
  for (const auto& [id, starts] : b.starts)
    if (id != "t0") CHECK(starts.front() < t0_retry);  // nobody waited behind t0's retry
  CHECK(c.lines.size() == 21);
}

TEST_CASE("runner: a backend exception or a grader failure is that trial's error, the run goes on", "[runner]") {
  auto ts = make_trials(4);
  ts[1].id = "throws";
  ts[2].id = "bad-grader";
  ScriptedBackend b;
  Collected c;
  const RunnerStats st = run_work(all_work(ts), b, {}, c.sink(), opts());
  CHECK(st.written == 4);
  CHECK(st.errors == 2);
  CHECK_THAT(*c.get("throws").error, contains("backend failed: backend bug"));
  CHECK(c.get("throws").extra["error_kind"] == "backend");
  CHECK_THAT(*c.get("bad-grader").error, contains("grader failed: grader exploded"));
  CHECK(c.get("bad-grader").extra["error_kind"] == "grader");
  CHECK(c.get("bad-grader").response == "bad-grader");
}

TEST_CASE("runner: a cancel stops dispatching; cut-short attempts are not written", "[runner]") {
  const auto ts = make_trials(200);
  ScriptedBackend b;
  b.delay_ms = 2;
  std::atomic<bool> cancel{false};
  Collected c;
  RunnerOptions o = opts(4);
  o.cancel = &cancel;
  std::thread stopper([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(30));
    cancel = true;
  });
  const RunnerStats st = run_work(all_work(ts), b, {}, c.sink(), o);
  stopper.join();
  CHECK(st.cancelled);
  CHECK(st.written < 200);
  CHECK(st.written == c.lines.size());
  for (const auto& [pair, n] : c.counts()) CHECK(n == 1);
}

TEST_CASE("runner: a failing sink (disk full) stops the run and surfaces the error", "[runner]") {
  const auto ts = make_trials(50);
  ScriptedBackend b;
  std::atomic<int> n{0};
  ResultSink sink = [&](const ResultRecord&) {
    if (++n == 10) throw kvgate::Error("results.jsonl: write failed (No space left on device)");
  };
  CHECK_THROWS_WITH(run_work(all_work(ts), b, {}, sink, opts()), contains("No space left"));
  CHECK(b.calls < 50);
}
