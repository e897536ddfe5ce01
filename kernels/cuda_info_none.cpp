// The CUDA entry points of a build without CUDA.
#include "kernels/cuda_info.h"

namespace kvgate::kernels {

bool cuda_built() { return false; }
int cuda_device_count() { return 0; }
std::string cuda_describe() { return "CUDA not built (configure with nvcc on the PATH, or -DKVGATE_CUDA=ON)"; }
CudaDeviceInfo cuda_current_device() { return {"", 0}; }

}  // namespace kvgate::kernels
