// Every CUDA call's status is checked (METHOD.md): a failure is an Error naming the call and place.
#pragma once
#include <cuda_runtime.h>

#include <string>

#include "harness/core/error.h"

#define KV_CUDA_CHECK(expr)                                                                        \
  do {                                                                                             \
    cudaError_t kv_err_ = (expr);                                                                  \
    if (kv_err_ != cudaSuccess)                                                                    \
      throw ::kvgate::Error(std::string("CUDA error ") + cudaGetErrorString(kv_err_) + " in " #expr \
                                " at " __FILE__ ":" + std::to_string(__LINE__),                    \
                            ::kvgate::kExitInternal);                                             \
  } while (0)

// After a launch: launch-configuration errors now, execution errors at the next sync.
#define KV_CUDA_CHECK_LAUNCH() KV_CUDA_CHECK(cudaGetLastError())

namespace kvgate::kernels {

// Device memory owned by a scope, so an Error thrown mid-way frees it.
template <class T>
class DeviceBuffer {
 public:
  explicit DeviceBuffer(std::size_t n) : n_(n) { KV_CUDA_CHECK(cudaMalloc(&p_, n * sizeof(T))); }
  ~DeviceBuffer() { cudaFree(p_); }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  T* get() const { return p_; }
  std::size_t size() const { return n_; }
  void upload(const T* host) { KV_CUDA_CHECK(cudaMemcpy(p_, host, n_ * sizeof(T), cudaMemcpyHostToDevice)); }
  void download(T* host) const { KV_CUDA_CHECK(cudaMemcpy(host, p_, n_ * sizeof(T), cudaMemcpyDeviceToHost)); }

 private:
  T* p_ = nullptr;
  std::size_t n_;
};

}  // namespace kvgate::kernels
