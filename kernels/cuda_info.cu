// The runtime queries of a CUDA build (cuda_info.h).
#include <cuda_runtime.h>

#include <string>

#include "kernels/cuda_check.cuh"
#include "kernels/cuda_info.h"

namespace kvgate::kernels {

bool cuda_built() { return true; }

int cuda_device_count() {
  int n = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess) {
    cudaGetLastError();  // clear the sticky "no driver" error
    return 0;
  }
  return n;
}

std::string cuda_describe() {
  int runtime = 0;
  cudaRuntimeGetVersion(&runtime);
  std::string s = "CUDA " + std::to_string(runtime / 1000) + "." + std::to_string((runtime % 1000) / 10);
  int n = cuda_device_count();
  if (n == 0) return s + ", no device";
  s += ", " + std::to_string(n) + (n == 1 ? " device" : " devices");
  for (int d = 0; d < n; ++d) {
    cudaDeviceProp p{};
    if (cudaGetDeviceProperties(&p, d) == cudaSuccess)
      s += std::string(d ? "; " : ": ") + p.name + " (sm_" + std::to_string(p.major) + std::to_string(p.minor) + ")";
  }
  return s;
}

CudaDeviceInfo cuda_current_device() {
  int d = 0;
  cudaDeviceProp p{};
  if (cuda_device_count() == 0 || cudaGetDevice(&d) != cudaSuccess || cudaGetDeviceProperties(&p, d) != cudaSuccess) {
    cudaGetLastError();
    return {"", 0};
  }
  return {p.name, p.totalGlobalMem};
}

}  // namespace kvgate::kernels
