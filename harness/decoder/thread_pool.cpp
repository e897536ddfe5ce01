#include "harness/decoder/thread_pool.h"

namespace kvgate::decoder {

ThreadPool::ThreadPool(int threads) {
  for (int i = 1; i < threads; ++i) workers_.emplace_back([this, i] { work(i); });
}

ThreadPool::~ThreadPool() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  wake_.notify_all();
  for (auto& t : workers_) t.join();
}

void ThreadPool::run(int tasks, const std::function<void(int, int)>& fn) {
  if (tasks <= 0) return;
  if (workers_.empty() || tasks == 1) {
    for (int t = 0; t < tasks; ++t) fn(t, 0);
    return;
  }
  std::unique_lock<std::mutex> lock(mu_);
  fn_ = &fn;
  tasks_ = tasks;
  next_ = 0;
  finished_ = 0;
  ++generation_;
  wake_.notify_all();
  while (next_ < tasks_) {  // the caller works too, as worker 0
    const int t = next_++;
    lock.unlock();
    fn(t, 0);
    lock.lock();
    ++finished_;
  }
  done_.wait(lock, [this] { return finished_ == tasks_; });
  fn_ = nullptr;
}

void ThreadPool::work(int worker) {
  unsigned seen = 0;
  std::unique_lock<std::mutex> lock(mu_);
  for (;;) {
    wake_.wait(lock, [&] { return stop_ || (generation_ != seen && fn_ && next_ < tasks_); });
    if (stop_) return;
    seen = generation_;
    while (fn_ && next_ < tasks_) {
      const int t = next_++;
      const auto* fn = fn_;
      lock.unlock();
      (*fn)(t, worker);
      lock.lock();
      if (++finished_ == tasks_) done_.notify_one();
    }
  }
}

}  // namespace kvgate::decoder
