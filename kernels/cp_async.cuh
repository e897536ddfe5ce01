// cp.async (sm_80+): 16-byte copies from global to shared memory that complete in the background,
// grouped by commit and awaited by group; shared by the decode and prefill attention kernels' page
// rings, and the mbarriers a ring's copies can complete onto. Device code only.
#pragma once

#include <cstdint>

namespace kvgate::kernels::cuda {

// The shared-state-space address of a generic pointer into shared memory (what PTX's .shared
// operands take).
__device__ __forceinline__ std::uint32_t smem_u32(const void* p) { return static_cast<std::uint32_t>(__cvta_generic_to_shared(p)); }

__device__ __forceinline__ void cp_async16(void* smem, const void* gmem) {
  const unsigned s = smem_u32(smem);
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(s), "l"(gmem) : "memory");
}
// As cp_async16, but writes 16 zero bytes (reading nothing) when !valid.
__device__ __forceinline__ void cp_async16_or_zero(void* smem, const void* gmem, bool valid) {
  const unsigned s = smem_u32(smem);
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(s), "l"(gmem), "r"(valid ? 16 : 0) : "memory");
}
__device__ __forceinline__ void cp_async_commit() { asm volatile("cp.async.commit_group;\n" ::: "memory"); }
// Waits until at most N of this thread's committed groups are still in flight.
template <int N>
__device__ __forceinline__ void cp_async_wait() {
  asm volatile("cp.async.wait_group %0;\n" ::"n"(N) : "memory");
}

// mbarrier (sm_80+): a 64-bit shared-memory barrier whose current phase completes once `count`
// arrivals came; a waiter names the phase by its parity. Lets a ring's producers and consumers wait on
// one slot instead of a whole-block barrier per page.
__device__ __forceinline__ void mbar_init(std::uint64_t* bar, unsigned count) {
  asm volatile("mbarrier.init.shared.b64 [%0], %1;\n" ::"r"(smem_u32(bar)), "r"(count) : "memory");
}
// One arrival (release: this thread's earlier shared-memory reads and writes happen before the phase
// completes); returns the barrier's state token, which the parity waits here do not need.
__device__ __forceinline__ std::uint64_t mbar_arrive(std::uint64_t* bar) {
  std::uint64_t state;
  asm volatile("mbarrier.arrive.shared.b64 %0, [%1];\n" : "=l"(state) : "r"(smem_u32(bar)) : "memory");
  return state;
}
// One arrival once every cp.async this thread issued so far has landed (the barrier's count includes
// it: .noinc).
__device__ __forceinline__ void cp_async_arrive_noinc(std::uint64_t* bar) {
  asm volatile("cp.async.mbarrier.arrive.noinc.shared.b64 [%0];\n" ::"r"(smem_u32(bar)) : "memory");
}
// One arrival that also expects `bytes` more of asynchronous copies (complete_tx) in this phase (sm_90+).
__device__ __forceinline__ void mbar_arrive_expect_tx(std::uint64_t* bar, unsigned bytes) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(smem_u32(bar)), "r"(bytes) : "memory");
#else
  (void)bar, (void)bytes;
  __trap();
#endif
}
// A bulk copy (sm_90+: the copy engine, one instruction) of `bytes` (a multiple of 16, both addresses
// 16-byte aligned) from global to shared memory, completing its bytes on `bar`.
__device__ __forceinline__ void bulk_copy_g2s(void* smem, const void* gmem, unsigned bytes, std::uint64_t* bar) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];\n" ::"r"(smem_u32(smem)),
               "l"(gmem), "r"(bytes), "r"(smem_u32(bar))
               : "memory");
#else
  (void)smem, (void)gmem, (void)bytes, (void)bar;
  __trap();
#endif
}
// A tensor copy (sm_90+: TMA, one instruction) of the box at coordinates (c0, c1) of the 2-D tensor
// map at `map` (the generic address of a __grid_constant__ kernel parameter) from global to shared
// memory, laid out and swizzled as the map says, completing its bytes on `bar`.
__device__ __forceinline__ void tma_load_2d(void* smem, const void* map, int c0, int c1, std::uint64_t* bar) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3}], [%4];\n" ::"r"(
                   smem_u32(smem)),
               "l"(map), "r"(c0), "r"(c1), "r"(smem_u32(bar))
               : "memory");
#else
  (void)smem, (void)map, (void)c0, (void)c1, (void)bar;
  __trap();
#endif
}
// Waits until the phase of parity `parity` has completed (acquire).
__device__ __forceinline__ void mbar_wait(std::uint64_t* bar, unsigned parity) {
  unsigned done = 0;
  do {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    asm volatile("{\n .reg .pred p;\n mbarrier.try_wait.parity.shared.b64 p, [%1], %2;\n selp.u32 %0, 1, 0, p;\n}\n"
                 : "=r"(done) : "r"(smem_u32(bar)), "r"(parity) : "memory");
#else
    asm volatile("{\n .reg .pred p;\n mbarrier.test_wait.parity.shared.b64 p, [%1], %2;\n selp.u32 %0, 1, 0, p;\n}\n"
                 : "=r"(done) : "r"(smem_u32(bar)), "r"(parity) : "memory");
#endif
  } while (!done);
}

}  // namespace kvgate::kernels::cuda
