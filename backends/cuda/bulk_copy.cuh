// Hopper's bulk copy engine (cp.async.bulk, global -> shared) and the
// mbarriers its copies complete on: the PTX the pipelined kernels share
// (cuda:nchw_row_bulk, cuda:nchw_row_stream, cuda:nhwc_tile_stream). sm_90 and later.
//
// Device code for older architectures (a default build also targets sm_75 to
// sm_89) compiles without this PTX: there AVGPOOL_BULK_COPY_DEVICE is 0, the
// helpers below trap, and each bulk-copy kernel's body is a trap too (its
// `#if !AVGPOOL_BULK_COPY_DEVICE` branch). Those kernels are never launched
// there: their inits decline devices below sm_90 (require_bulk_copy in
// common.cuh), and AUTO goes on to the portable implementations.
#pragma once

#include <stdint.h>

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 900
#define AVGPOOL_BULK_COPY_DEVICE 0
#else
#define AVGPOOL_BULK_COPY_DEVICE 1
#endif

namespace avgpool::cuda {

__device__ __forceinline__ uint32_t smem_addr(const void* p) {
  return (uint32_t)__cvta_generic_to_shared(p);
}
__device__ __forceinline__ void mbar_init(uint64_t* bar, uint32_t count) {
#if AVGPOOL_BULK_COPY_DEVICE
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(smem_addr(bar)), "r"(count) : "memory");
#else
  __trap();
#endif
}
__device__ __forceinline__ void mbar_arrive(uint64_t* bar) {
#if AVGPOOL_BULK_COPY_DEVICE
  asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];" ::"r"(smem_addr(bar)) : "memory");
#else
  __trap();
#endif
}
__device__ __forceinline__ void mbar_arrive_expect_tx(uint64_t* bar, uint32_t bytes) {
#if AVGPOOL_BULK_COPY_DEVICE
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(smem_addr(bar)), "r"(bytes)
               : "memory");
#else
  __trap();
#endif
}
__device__ __forceinline__ void mbar_wait(uint64_t* bar, uint32_t parity) {
#if AVGPOOL_BULK_COPY_DEVICE
  asm volatile(
      "{\n\t.reg .pred p;\n"
      "WAIT_%=:\n\t"
      "mbarrier.try_wait.parity.shared::cta.b64 p, [%0], %1;\n\t"
      "@!p bra WAIT_%=;\n}" ::"r"(smem_addr(bar)),
      "r"(parity)
      : "memory");
#else
  __trap();
#endif
}
__device__ __forceinline__ void bulk_copy_g2s(void* dst, const void* src, uint32_t bytes, uint64_t* bar) {
#if AVGPOOL_BULK_COPY_DEVICE
  asm volatile(
      "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];" ::"r"(
          smem_addr(dst)),
      "l"(src), "r"(bytes), "r"(smem_addr(bar))
      : "memory");
#else
  __trap();
#endif
}

}  // namespace avgpool::cuda
