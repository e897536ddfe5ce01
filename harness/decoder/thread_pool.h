// A small fixed pool for the CPU decoder: run(n, fn) calls fn(task, worker) for tasks 0..n-1 on the
// caller and threads-1 workers, and returns when all are done. Work is split so that each output
// element is computed by exactly the same code whatever the thread count: results are identical
// for 1 or N threads.
#pragma once
#include <condition_variable>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace kvgate::decoder {

class ThreadPool {
 public:
  explicit ThreadPool(int threads);
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;
  int size() const { return static_cast<int>(workers_.size()) + 1; }
  // worker is in [0, size()): index per-thread scratch with it.
  void run(int tasks, const std::function<void(int task, int worker)>& fn);

 private:
  void work(int worker);
  std::vector<std::thread> workers_;
  std::mutex mu_;
  std::condition_variable wake_, done_;
  const std::function<void(int, int)>* fn_ = nullptr;
  int tasks_ = 0, next_ = 0, finished_ = 0;
  unsigned generation_ = 0;
  bool stop_ = false;
};

}  // namespace kvgate::decoder
