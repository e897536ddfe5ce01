// Runs independent jobs (trials) on a few threads. Results go where each job puts them, so the
// output does not depend on the thread count or scheduling.
#pragma once
#include <cstddef>
#include <cstdint>
#include <functional>
#include <type_traits>
#include <vector>

namespace kvgate {

// The thread count to use for `requested` (0 = one per hardware thread), never more than `jobs`.
int resolve_threads(int requested, std::size_t jobs);

// Calls fn(i) for every i in [0, n) on `threads` threads. If jobs throw, the exception of the
// lowest index is rethrown after all threads stop (the same error whatever the scheduling).
void parallel_for(std::size_t n, int threads, const std::function<void(std::size_t)>& fn);

// The trials of a length-bucketed task: make(bucket, index) for index in [0, per_bucket) of every
// bucket, on `threads` threads, returned bucket by bucket in index order whatever the scheduling.
template <class Make>
auto make_per_bucket(const std::vector<std::int64_t>& lengths, int per_bucket, int threads, Make&& make) {
  using T = std::invoke_result_t<Make&, std::int64_t, std::size_t>;
  const std::size_t per = static_cast<std::size_t>(per_bucket), jobs = lengths.size() * per;
  std::vector<T> out(jobs);
  parallel_for(jobs, resolve_threads(threads, jobs), [&](std::size_t j) { out[j] = make(lengths[j / per], j % per); });
  return out;
}

}  // namespace kvgate
