#include "datasets/common/parallel.h"

#include <algorithm>
#include <atomic>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

namespace kvgate {

int resolve_threads(int requested, std::size_t jobs) {
  int t = requested > 0 ? requested : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  return static_cast<int>(std::max<std::size_t>(1, std::min<std::size_t>(static_cast<std::size_t>(t), jobs)));
}

void parallel_for(std::size_t n, int threads, const std::function<void(std::size_t)>& fn) {
  std::atomic<std::size_t> next{0};
  std::mutex m;
  std::size_t failed_at = n;
  std::exception_ptr failure;
  auto worker = [&] {
    for (;;) {
      const std::size_t i = next.fetch_add(1);
      if (i >= n) return;
      {
        std::lock_guard<std::mutex> lock(m);
        if (i > failed_at) return;  // a lower index failed already: no need to go on
      }
      try {
        fn(i);
      } catch (...) {
        std::lock_guard<std::mutex> lock(m);
        if (i < failed_at) {
          failed_at = i;
          failure = std::current_exception();
        }
      }
    }
  };
  const int t = std::max(1, threads);
  if (t == 1 || n <= 1) {
    worker();
  } else {
    std::vector<std::thread> pool;
    for (int k = 0; k < t; ++k) pool.emplace_back(worker);
    for (auto& th : pool) th.join();
  }
  if (failure) std::rethrow_exception(failure);
}

}  // namespace kvgate
