#include "harness/kld/kld_run.h"

#include <condition_variable>
#include <deque>
#include <exception>
#include <mutex>
#include <thread>

#include "harness/core/error.h"

namespace kvgate::kld {

namespace {

// The baseline's logits on their way to the test side, a few rows at a time.
class Channel {
 public:
  explicit Channel(std::size_t capacity) : cap_(capacity) {}
  void push(std::span<const float> row) {
    std::unique_lock<std::mutex> lock(mu_);
    cv_.wait(lock, [&] { return q_.size() < cap_ || aborted_; });
    if (aborted_) throw Error("kld: the test engine stopped", kExitInternal);
    q_.emplace_back(row.begin(), row.end());
    cv_.notify_all();
  }
  bool pop(std::vector<float>& out) {
    std::unique_lock<std::mutex> lock(mu_);
    cv_.wait(lock, [&] { return !q_.empty() || closed_; });
    if (q_.empty()) return false;
    out = std::move(q_.front());
    q_.pop_front();
    cv_.notify_all();
    return true;
  }
  void close() {
    std::lock_guard<std::mutex> lock(mu_);
    closed_ = true;
    cv_.notify_all();
  }
  void abort() {
    std::lock_guard<std::mutex> lock(mu_);
    aborted_ = true;
    cv_.notify_all();
  }

 private:
  std::size_t cap_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::vector<float>> q_;
  bool closed_ = false, aborted_ = false;
};

}  // namespace

KldResult run_kld(decoder::Engine& base, decoder::Engine& test, const std::vector<std::vector<int>>& chunks,
                  const KldRunOptions& o) {
  if (chunks.empty()) throw Error("kld: no chunk to score: the text is shorter than --ctx");
  const int ctx = static_cast<int>(chunks[0].size());
  if (ctx < 2) throw Error("kld: --ctx must be at least 2 tokens");
  if (o.buckets < 1) throw Error("kld: --buckets must be at least 1");
  KldResult r;
  r.ctx = ctx;
  const int nb = std::min(o.buckets, ctx - 1);
  for (int b = 0; b < nb; ++b) r.buckets.push_back({.from = static_cast<int>(static_cast<long long>(ctx) * b / nb),
                                                     .to = static_cast<int>(static_cast<long long>(ctx) * (b + 1) / nb),
                                                     .sums = {}});
  const int first = o.second_half ? ctx / 2 : 0;  // the first position whose prediction is scored
  Accumulator acc;
  for (const std::vector<int>& chunk : chunks) {
    if (static_cast<int>(chunk.size()) != ctx) throw Error("kld: chunks of different lengths", kExitInternal);
    const std::span<const int> prompt(chunk.data(), 1), cont(chunk.data() + 1, chunk.size() - 1);
    Channel channel(64);
    std::exception_ptr base_error;
    std::thread base_thread([&] {
      try {
        base.score(prompt, cont, [&](int i, std::span<const float> logits) {
          if (i >= first) channel.push(logits);
        });
      } catch (...) {
        base_error = std::current_exception();
      }
      channel.close();
    });
    bool baseline_gone = false;
    try {
      std::vector<float> row;
      int expected = first;
      test.score(prompt, cont, [&](int i, std::span<const float> logits) {
        if (i < first) return;
        if (i != expected) throw Error("kld: the engine reported positions out of order", kExitInternal);
        ++expected;
        if (!channel.pop(row)) {
          baseline_gone = true;
          throw Error("kld: the baseline engine stopped before the test engine", kExitInternal);
        }
        const PositionStats s = compare_position(row, logits, cont[i]);
        acc.add(s);
        r.buckets[static_cast<std::size_t>(static_cast<long long>(i) * nb / ctx)].sums.add(s);
      });
    } catch (...) {
      channel.abort();
      base_thread.join();
      if (baseline_gone && base_error) std::rethrow_exception(base_error);  // the root cause
      throw;
    }
    base_thread.join();
    if (base_error) std::rethrow_exception(base_error);
    ++r.chunks;
    if (o.on_chunk) o.on_chunk(r.chunks, running(acc.sums()));
  }
  r.summary = acc.summary();
  return r;
}

}  // namespace kvgate::kld
