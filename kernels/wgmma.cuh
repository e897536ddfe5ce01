// Hopper's warpgroup MMA (wgmma.mma_async, sm_90a): the 4 warps of a warpgroup issue one 64 x N x 16
// product that runs asynchronously on the tensor cores, B (and optionally A) read from shared memory
// through 64-bit matrix descriptors. Used by the prefill attention kernel (paged_attention_prefill.cu);
// device code only. PTX ISA, "Asynchronous Warpgroup Level Matrix Multiply-Accumulate".
//
// Shared-memory operands here are 16-bit tiles (bf16; fp16 where a product takes H) in the 128-byte
// swizzle: rows of 64 elements (128 bytes), the 16-byte chunk c of row r stored at chunk c ^ (r % 8),
// from a 1024-byte aligned base (the hardware applies the XOR to address bits 4-6 from bits 7-9). A
// K-major operand (A = Q, B = K: the reduced dimension contiguous) takes SBO = 1024 (the next 8 rows)
// and ignores LBO; an MN-major one (B = V, [token][dim]: N contiguous, read transposed) takes LBO =
// the stride of its 64-column panels and SBO = 1024 (the next 8 rows of K).
//
// The register fragments match mma.sync m16n8k16's: warp w of the warpgroup holds rows 16 w .. 16 w +
// 15 of A and of the fp32 accumulator, and an accumulator's 8-column group n is that warp's m16n8
// fragment (d[n][0..3]).
#pragma once

#include <cstdint>

#include "kernels/cp_async.cuh"  // smem_u32

namespace kvgate::kernels::cuda {

// The wgmma instructions assemble only for sm_90a (arch-specific features); other targets trap, and
// the host launches a wgmma kernel only on a device of compute capability 9.0 in a build that made
// sm_90a code (KVGATE_PREFILL_WGMMA).
#if defined(__CUDA_ARCH__) && defined(__CUDA_ARCH_FEAT_SM90_ALL)
#define KVGATE_WGMMA_ASM 1
#else
#define KVGATE_WGMMA_ASM 0
#endif

// A warpgroup's registers a thread, raised or lowered to N (sm_90a, as wgmma): a producer warpgroup
// gives its registers to the warpgroups that compute.
template <int N>
__device__ __forceinline__ void setmaxnreg_inc() {
#if KVGATE_WGMMA_ASM
  asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;\n" ::"n"(N));
#else
  __trap();
#endif
}
template <int N>
__device__ __forceinline__ void setmaxnreg_dec() {
#if KVGATE_WGMMA_ASM
  asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;\n" ::"n"(N));
#else
  __trap();
#endif
}

// Descriptor of a 128-byte-swizzled operand at shared address `addr` (bits 0-13 address >> 4, 16-29
// LBO >> 4, 32-45 SBO >> 4, 62-63 swizzle mode 1 = 128 bytes).
__device__ __forceinline__ std::uint64_t wgmma_desc(std::uint32_t addr, std::uint32_t lbo, std::uint32_t sbo) {
  return static_cast<std::uint64_t>((addr & 0x3FFFF) >> 4) | static_cast<std::uint64_t>((lbo & 0x3FFFF) >> 4) << 16 |
         static_cast<std::uint64_t>((sbo & 0x3FFFF) >> 4) << 32 | std::uint64_t{1} << 62;
}

// The descriptor of the operand `bytes` (a multiple of 16) past d's: the address field is the low 14
// bits (shared addresses stay below 2^18 bytes, so the add never carries out of it), so one 32-bit
// add of the low word does, where a 64-bit add costs a carry instruction per descriptor.
__device__ __forceinline__ std::uint64_t wgmma_desc_at(std::uint64_t d, int bytes) {
  const std::uint32_t lo = static_cast<std::uint32_t>(d) + static_cast<std::uint32_t>(bytes >> 4);
  return (d & 0xFFFFFFFF00000000ull) | lo;
}

// Orders this thread's generic-proxy writes to shared memory (stores, cp.async) before the async
// proxy's reads (wgmma operands); each writing thread runs it before the barrier that publishes them.
__device__ __forceinline__ void fence_proxy_async() {
#if KVGATE_WGMMA_ASM
  asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
#endif
}
// Before a batch of wgmma: register accumulators and A fragments written by ordinary instructions
// are ready.
__device__ __forceinline__ void wgmma_fence() {
#if KVGATE_WGMMA_ASM
  asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
#endif
}
__device__ __forceinline__ void wgmma_commit() {
#if KVGATE_WGMMA_ASM
  asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
#endif
}
// Waits until at most N committed groups are still running.
template <int N>
__device__ __forceinline__ void wgmma_wait() {
#if KVGATE_WGMMA_ASM
  asm volatile("wgmma.wait_group.sync.aligned %0;\n" ::"n"(N) : "memory");
#endif
}
// Keeps the compiler from moving reads or writes of an accumulator across a wait (the asm statements
// are volatile, so they stay in order among themselves).
template <int N>
__device__ __forceinline__ void wgmma_fence_operand(float (&d)[N][4]) {
#pragma unroll
  for (int n = 0; n < N; ++n)
#pragma unroll
    for (int e = 0; e < 4; ++e) asm volatile("" : "+f"(d[n][e])::"memory");
}

#define KVGATE_WGMMA_D8(d)                                                                                                  \
  "+f"(d[0][0]), "+f"(d[0][1]), "+f"(d[0][2]), "+f"(d[0][3]), "+f"(d[1][0]), "+f"(d[1][1]), "+f"(d[1][2]), "+f"(d[1][3]), \
      "+f"(d[2][0]), "+f"(d[2][1]), "+f"(d[2][2]), "+f"(d[2][3]), "+f"(d[3][0]), "+f"(d[3][1]), "+f"(d[3][2]),           \
      "+f"(d[3][3]), "+f"(d[4][0]), "+f"(d[4][1]), "+f"(d[4][2]), "+f"(d[4][3]), "+f"(d[5][0]), "+f"(d[5][1]),           \
      "+f"(d[5][2]), "+f"(d[5][3]), "+f"(d[6][0]), "+f"(d[6][1]), "+f"(d[6][2]), "+f"(d[6][3]), "+f"(d[7][0]),           \
      "+f"(d[7][1]), "+f"(d[7][2]), "+f"(d[7][3])

// d (64 x 64, fp32) = A B (+ d when accumulate): A (64 x 16) and B (16 x 64) bf16, both K-major in
// shared memory.
__device__ __forceinline__ void wgmma_m64n64k16_ss(float (&d)[8][4], std::uint64_t a, std::uint64_t b, int accumulate) {
#if KVGATE_WGMMA_ASM
  asm volatile(
      "{\n.reg .pred p;\nsetp.ne.b32 p, %34, 0;\n"
      "wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16 "
      "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, "
      "%24, %25, %26, %27, %28, %29, %30, %31}, %32, %33, p, 1, 1, 0, 0;\n}\n"
      : KVGATE_WGMMA_D8(d)
      : "l"(a), "l"(b), "r"(accumulate));
#else
  (void)d, (void)a, (void)b, (void)accumulate;
  __trap();
#endif
}

// d (64 x 128, fp32) = A B (+ d when accumulate): A (64 x 16) and B (16 x 128) bf16, both K-major in
// shared memory.
__device__ __forceinline__ void wgmma_m64n128k16_ss(float (&d)[16][4], std::uint64_t a, std::uint64_t b, int accumulate) {
#if KVGATE_WGMMA_ASM
  float(&lo)[8][4] = *reinterpret_cast<float(*)[8][4]>(&d[0]);
  float(&hi)[8][4] = *reinterpret_cast<float(*)[8][4]>(&d[8]);
  asm volatile(
      "{\n.reg .pred p;\nsetp.ne.b32 p, %66, 0;\n"
      "wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16 "
      "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, "
      "%24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, "
      "%46, %47, %48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63}, %64, %65, p, 1, 1, 0, 0;\n}\n"
      : KVGATE_WGMMA_D8(lo), KVGATE_WGMMA_D8(hi)
      : "l"(a), "l"(b), "r"(accumulate));
#else
  (void)d, (void)a, (void)b, (void)accumulate;
  __trap();
#endif
}

// d (64 x 64, fp32) = A B (+ d when accumulate): A (64 x 16) in registers (the mma.sync A fragment
// of the warp's 16 rows), B (16 x 64) K-major in shared memory; bf16, or fp16 (H).
template <bool H = false>
__device__ __forceinline__ void wgmma_m64n64k16_rs(float (&d)[8][4], const std::uint32_t (&a)[4], std::uint64_t b, int accumulate) {
#if KVGATE_WGMMA_ASM
#define KVGATE_WGMMA_RS64(T)                                                                                               \
  asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %37, 0;\n"                                                               \
               "wgmma.mma_async.sync.aligned.m64n64k16.f32." T                                                            \
               "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, " \
               "%23, %24, %25, %26, %27, %28, %29, %30, %31}, {%32, %33, %34, %35}, %36, p, 1, 1, 0;\n}\n"              \
               : KVGATE_WGMMA_D8(d)                                                                                       \
               : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(b), "r"(accumulate))
  if constexpr (H) KVGATE_WGMMA_RS64("f16.f16 ");
  else KVGATE_WGMMA_RS64("bf16.bf16 ");
#undef KVGATE_WGMMA_RS64
#else
  (void)d, (void)a, (void)b, (void)accumulate;
  __trap();
#endif
}

// d (64 x 128, fp32) += A B: A (64 x 16) in registers (the mma.sync A fragment of the warp's 16
// rows), B (16 x 128) in shared memory, MN-major (read transposed); bf16, or fp16 (H).
template <bool H = false>
__device__ __forceinline__ void wgmma_m64n128k16_rs_tn(float (&d)[16][4], const std::uint32_t (&a)[4], std::uint64_t b) {
#if KVGATE_WGMMA_ASM
  float(&lo)[8][4] = *reinterpret_cast<float(*)[8][4]>(&d[0]);
  float(&hi)[8][4] = *reinterpret_cast<float(*)[8][4]>(&d[8]);
#define KVGATE_WGMMA_RS128(T)                                                                                              \
  asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %69, 0;\n"                                                               \
               "wgmma.mma_async.sync.aligned.m64n128k16.f32." T                                                           \
               "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, " \
               "%23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, " \
               "%44, %45, %46, %47, %48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63}, "      \
               "{%64, %65, %66, %67}, %68, p, 1, 1, 1;\n}\n"                                                             \
               : KVGATE_WGMMA_D8(lo), KVGATE_WGMMA_D8(hi)                                                                 \
               : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(b), "n"(1))
  if constexpr (H) KVGATE_WGMMA_RS128("f16.f16 ");
  else KVGATE_WGMMA_RS128("bf16.bf16 ");
#undef KVGATE_WGMMA_RS128
#else
  (void)d, (void)a, (void)b;
  __trap();
#endif
}

#undef KVGATE_WGMMA_D8

}  // namespace kvgate::kernels::cuda
