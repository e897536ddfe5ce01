// What the CUDA side of this build can do; safe to call in a build without CUDA or on a machine
// without a GPU (answers "not built" / "no device").
#pragma once
#include <cstddef>
#include <string>

namespace kvgate::kernels {

bool cuda_built();        // this binary was compiled with the CUDA parts
int cuda_device_count();  // 0 when not built, no driver, or no GPU
std::string cuda_describe();  // "CUDA 13.0, 1 device: NVIDIA H200 (sm_90)" or why not
struct CudaDeviceInfo {
  std::string name;         // "NVIDIA H100 80GB HBM3"; empty when there is no device
  std::size_t total_bytes;  // its memory; 0 when there is no device
};
CudaDeviceInfo cuda_current_device();  // the device this thread's CUDA calls use

}  // namespace kvgate::kernels
