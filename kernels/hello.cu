// CUDA side of the hello kernel and the runtime queries of a CUDA build.
#include <cuda_runtime.h>

#include <string>

#include "kernels/cuda_check.cuh"
#include "kernels/cuda_info.h"

namespace kvgate::kernels {

__global__ void axpy_kernel(float a, const float* __restrict__ x, float* __restrict__ y, std::size_t n) {
  std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x;
  if (i < n) y[i] = a * x[i] + y[i];
}

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

void axpy_cuda(float a, const float* x, float* y, std::size_t n) {
  DeviceBuffer<float> dx(n), dy(n);
  dx.upload(x);
  dy.upload(y);
  const unsigned threads = 256;
  const unsigned blocks = static_cast<unsigned>((n + threads - 1) / threads);
  axpy_kernel<<<blocks, threads>>>(a, dx.get(), dy.get(), n);
  KV_CUDA_CHECK_LAUNCH();
  dy.download(y);
}

}  // namespace kvgate::kernels
