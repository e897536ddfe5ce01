// Runs a kernel header's warp-level __device__ code on 32 host threads, one a lane, so that the CPU
// (and CI, which has no GPU) checks its arithmetic: __shfl_sync, __shfl_xor_sync and __syncwarp
// become a barrier over the 32 threads, full-warp masks only. Include it first, in a translation
// unit of its own, then the .cuh under test; only the intrinsics that code uses are emulated.
#pragma once
#include <barrier>
#include <cstdint>
#include <cstring>
#include <functional>
#include <thread>
#include <vector>

#include <cuda_runtime.h>  // the CUDA types the headers name; their __device__ code then compiles as host code
#undef __device__
#define __device__
#undef __forceinline__
#define __forceinline__ inline

namespace kvtest::warp {

inline thread_local int lane = 0;
inline std::barrier<>* barrier = nullptr;
inline std::uint64_t slots[32];

// Every lane's v published, then lane src's read: a shuffle, with the barrier on both sides.
template <class T>
T shuffle(T v, int src) {
  static_assert(sizeof(T) <= sizeof(std::uint64_t));
  std::uint64_t bits = 0;
  std::memcpy(&bits, &v, sizeof(T));
  slots[lane] = bits;
  barrier->arrive_and_wait();
  bits = slots[src];
  barrier->arrive_and_wait();
  T out;
  std::memcpy(&out, &bits, sizeof(T));
  return out;
}

// fn(lane) on 32 threads at once.
inline void run(const std::function<void(int)>& fn) {
  std::barrier<> b(32);
  barrier = &b;
  std::vector<std::thread> lanes;
  for (int l = 0; l < 32; ++l)
    lanes.emplace_back([&fn, l] {
      lane = l;
      fn(l);
    });
  for (auto& t : lanes) t.join();
  barrier = nullptr;
}

}  // namespace kvtest::warp

#define __shfl_sync(mask, v, src) ::kvtest::warp::shuffle((v), (src))
#define __shfl_xor_sync(mask, v, o) ::kvtest::warp::shuffle((v), ::kvtest::warp::lane ^ (o))
#define __syncwarp() ::kvtest::warp::barrier->arrive_and_wait()
// The cache writer's absmax update (a test calls the encoders below it, not write_vector).
#define atomicMax(p, v) ((void)(p), (void)(v))
#define __float_as_int(f) static_cast<int>(f)
using std::min;
