// The two anchors a pooling kernel is measured against, shared by
// avgpool_gpu_bench and avgpool_read_probe: the read-only pass (the ceiling
// the targets are stated against) and the read pass plus the output's bytes
// written.
#pragma once

#include <cuda_runtime.h>
#include <stdint.h>

// The ceiling: every byte of src read once with 16-byte streaming loads, four
// in flight per thread, a warp reduction, one value per warp written.
__global__ void __launch_bounds__(256) read_kernel(const float4* __restrict__ p, int64_t n16, float* sink) {
  float acc = 0.f;
  const int64_t stride = (int64_t)gridDim.x * blockDim.x;
  int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
  for (; i + 3 * stride < n16; i += 4 * stride) {
    float4 a = __ldcs(p + i), b = __ldcs(p + i + stride), c = __ldcs(p + i + 2 * stride),
           d = __ldcs(p + i + 3 * stride);
    acc += (a.x + a.y + a.z + a.w) + (b.x + b.y + b.z + b.w) + (c.x + c.y + c.z + c.w) + (d.x + d.y + d.z + d.w);
  }
  for (; i < n16; i += stride) {
    float4 a = __ldcs(p + i);
    acc += a.x + a.y + a.z + a.w;
  }
  for (int o = 16; o > 0; o >>= 1) acc += __shfl_xor_sync(0xffffffffu, acc, o);
  if ((threadIdx.x & 31) == 0 && acc == 123.456f) sink[0] = acc;  // keeps the loads alive
}

// The data-movement floor of a pooling kernel: the read pass above plus the
// output's bytes written, as the input is read (each grid-wide step of reads
// writes its proportional, contiguous share of dst, coalesced, whole lines).
// Measured 2026-11-29 (H200, bench/gpu/read_probe.cu): the seed's 0.8 % of
// written bytes costs the read pass 5 % of its speed, so this pass, not the
// read-only one, is what a pooling kernel can reach.
__global__ void __launch_bounds__(256) read_write_kernel(const float4* __restrict__ p, int64_t n16, float4* out,
                                                         int64_t out16) {
  float acc = 0.f;
  const int64_t stride = (int64_t)gridDim.x * blockDim.x;
  const int64_t t = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
  const double share = (double)out16 / (double)n16;
  for (int64_t base = 0; base < n16; base += 4 * stride) {
    const int64_t i = base + t;
    if (i + 3 * stride < n16) {
      float4 a = __ldcs(p + i), b = __ldcs(p + i + stride), c = __ldcs(p + i + 2 * stride),
             d = __ldcs(p + i + 3 * stride);
      acc += (a.x + a.y + a.z + a.w) + (b.x + b.y + b.z + b.w) + (c.x + c.y + c.z + c.w) + (d.x + d.y + d.z + d.w);
    } else {
      for (int64_t j = i; j < n16; j += stride) {
        float4 a = __ldcs(p + j);
        acc += a.x + a.y + a.z + a.w;
      }
    }
    const int64_t o_end = base + 4 * stride >= n16 ? out16 : (int64_t)((double)(base + 4 * stride) * share);
    for (int64_t o = (int64_t)((double)base * share) + t; o < o_end; o += stride) out[o] = make_float4(acc, acc, acc, acc);
  }
}
