// Programmatic dependent launch (Hopper): a kernel launched with `pdl` may start while the kernel
// before it in the stream still runs; it does what does not depend on that kernel (loading weights)
// and then waits in pdl_wait() until the earlier kernel has completed and its writes are visible.
// Decode steps are chains of short kernels, each paying a launch gap and a memory ramp; with PDL
// the next kernel's blocks are resident and loading when the previous one ends. Every kernel
// launched with pdl = true must call pdl_wait() before it reads or writes anything an earlier
// kernel touches; both calls are no-ops in a kernel launched without it. Graph capture keeps the
// dependency (a programmatic edge).
#pragma once
#include <cuda_runtime.h>

#include <utility>

#include "kernels/cuda_check.cuh"

namespace kvgate::kernels::cuda {

// Hopper's griddepcontrol (sm_90+); on older GPUs PDL launches are ordinary ones, so both are empty.
__device__ __forceinline__ void pdl_wait() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
}
// Lets the next kernel (launched with pdl) be scheduled once every block of this one has called it.
__device__ __forceinline__ void pdl_launch_dependents() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
#endif
}

template <class... Params, class... Args>
void launch_kernel(bool pdl, void (*kernel)(Params...), dim3 grid, dim3 block, std::size_t smem, cudaStream_t s, Args&&... args) {
  cudaLaunchConfig_t cfg{};
  cfg.gridDim = grid;
  cfg.blockDim = block;
  cfg.dynamicSmemBytes = smem;
  cfg.stream = s;
  cudaLaunchAttribute attr[1];
  attr[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;
  attr[0].val.programmaticStreamSerializationAllowed = 1;
  cfg.attrs = attr;
  cfg.numAttrs = pdl ? 1 : 0;
  KV_CUDA_CHECK(cudaLaunchKernelEx(&cfg, kernel, std::forward<Args>(args)...));
}

}  // namespace kvgate::kernels::cuda
