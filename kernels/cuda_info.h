// What the CUDA side of this build can do; safe to call in a build without CUDA or on a machine
// without a GPU (answers "not built" / "no device").
#pragma once
#include <cstddef>
#include <string>

namespace kvgate::kernels {

bool cuda_built();        // this binary was compiled with the CUDA parts
int cuda_device_count();  // 0 when not built, no driver, or no GPU
std::string cuda_describe();  // "CUDA 13.0, 1 device: NVIDIA H200 (sm_90)" or why not

}  // namespace kvgate::kernels
