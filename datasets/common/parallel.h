// Runs independent jobs (trials) on a few threads. Results go where each job puts them, so the
// output does not depend on the thread count or scheduling.
#pragma once
#include <cstddef>
#include <functional>

namespace kvgate {

// The thread count to use for `requested` (0 = one per hardware thread), never more than `jobs`.
int resolve_threads(int requested, std::size_t jobs);

// Calls fn(i) for every i in [0, n) on `threads` threads. If jobs throw, the exception of the
// lowest index is rethrown after all threads stop (the same error whatever the scheduling).
void parallel_for(std::size_t n, int threads, const std::function<void(std::size_t)>& fn);

}  // namespace kvgate
