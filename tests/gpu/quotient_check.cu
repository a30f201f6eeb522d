// Device side of the quotient_by test: every float g (bit patterns 0 ..
// 2^32 - 1 in steps of `step`) divided by each divisor both ways.
#include <cuda_runtime.h>

#include "backends/cuda/quotient.cuh"
#include "quotient_check.h"

namespace {

using avgpool::cuda::QuotientRange;

__global__ void compare_kernel(const float* divisors, int count, uint32_t step, QuotientCheck* out) {
  const uint64_t n = (uint64_t(1) << 32) / step;
  unsigned long long in_domain = 0, mismatches = 0, misclassified = 0;
  for (int k = 0; k < count; ++k) {
    const float d = divisors[k], r = avgpool::cuda::refined_reciprocal(d);
    for (uint64_t i = blockIdx.x * (uint64_t)blockDim.x + threadIdx.x; i < n; i += (uint64_t)gridDim.x * blockDim.x) {
      const uint32_t bits = (uint32_t)(i * step);
      const float g = __uint_as_float(bits);
      QuotientRange range;
      range.note(g);
      const uint32_t m = bits & 0x7fffffffu;
      const bool domain = m == 0 || (m >= 0x0d800000u && m < 0x71000000u);
      if (range.exact() != domain) ++misclassified;
      if (!domain) continue;
      ++in_domain;
      const float fast = avgpool::cuda::quotient_by(g, d, r), ieee = g / d;
      // The sign of a zero quotient is not promised (quotient.cuh).
      const bool same = __float_as_uint(fast) == __float_as_uint(ieee) || (fast == 0.0f && ieee == 0.0f);
      if (!same) {
        ++mismatches;
        // One word, so that the divisor and g reported belong together.
        atomicCAS(&out->first_bad, ~0ull, (unsigned long long)(unsigned)d << 32 | bits);
      }
    }
  }
  atomicAdd(&out->in_domain, in_domain);
  atomicAdd(&out->mismatches, mismatches);
  atomicAdd(&out->misclassified, misclassified);
}

}  // namespace

const char* run_quotient_check(const float* divisors, int count, uint32_t step, QuotientCheck* result) {
  float* d_div = nullptr;
  QuotientCheck* d_out = nullptr;
  QuotientCheck init{};
  init.first_bad = ~0ull;
  cudaError_t e = cudaMalloc(&d_div, sizeof(float) * count);
  if (e == cudaSuccess) e = cudaMalloc(&d_out, sizeof(QuotientCheck));
  if (e == cudaSuccess) e = cudaMemcpy(d_div, divisors, sizeof(float) * count, cudaMemcpyHostToDevice);
  if (e == cudaSuccess) e = cudaMemcpy(d_out, &init, sizeof init, cudaMemcpyHostToDevice);
  if (e == cudaSuccess) {
    compare_kernel<<<132 * 8, 256>>>(d_div, count, step, d_out);
    e = cudaGetLastError();
  }
  if (e == cudaSuccess) e = cudaMemcpy(result, d_out, sizeof *result, cudaMemcpyDeviceToHost);
  cudaFree(d_div);
  cudaFree(d_out);
  return e == cudaSuccess ? nullptr : cudaGetErrorString(e);
}
