// IEEE float division g / d (round to nearest) by a divisor that many
// quotients share, without a branch per quotient.
//
// CUDA's `/` (div.rn.f32) is a reciprocal approximation refined by two FMAs,
// a product and a two-FMA correction, guarded by FCHK, which sends operands
// whose intermediates could under- or overflow to an out-of-line slow path.
// Per quotient that is a branch, a convergence barrier and a call site: the
// pytorch-numerics walks of the backward, which divide every term, spilled
// registers and could not overlap one division with the next. Here the
// divisor's part (the refined reciprocal) is computed once, each quotient
// is the same product and correction as CUDA's (three FMAs, no branch), and
// the guard is a range over all the values of a batch (QuotientRange): a
// caller divides a batch by quotient_by, and when the range says the batch
// held a value outside the exact domain, divides that batch again with `/`.
//
// Exact domain: divisors 1 <= d <= 2^24 and g zero or 2^-100 <= |g| < 2^99
// (quotients stay normal, intermediates finite). Checked bit for bit
// against `/` on every float g in the domain and divisors 1..2048, 2^k,
// 2^24 - 1 and random integers up to 2^24, every divisor exponent
// (tests/gpu/test_quotient_gpu.cpp). A zero g may give a zero of
// the other sign; the callers add quotients to sums that start at +0,
// where the sign of a zero term never shows.
#pragma once

#include <cstdint>

namespace avgpool::cuda {

// Largest divisor for which quotient_by is exact on its domain.
constexpr int64_t kQuotientMaxDivisor = int64_t(1) << 24;

// 1 / d refined as div.rn.f32 refines it.
__device__ __forceinline__ float refined_reciprocal(float d) {
  float r;
  asm("rcp.approx.ftz.f32 %0, %1;" : "=f"(r) : "f"(d));
  return fmaf(r, fmaf(-d, r, 1.0f), r);
}

// g / d from r = refined_reciprocal(d): exact on the domain above.
__device__ __forceinline__ float quotient_by(float g, float d, float r) {
  const float q = __fmul_rn(g, r);
  return fmaf(r, fmaf(-d, q, g), q);
}

// The magnitudes of a batch of dividends, as bit patterns: lo the smallest
// nonzero one minus one (zeros wrap to the top and drop out of the
// minimum), hi the largest (infinities and NaNs are above every finite).
struct QuotientRange {
  uint32_t lo = ~0u, hi = 0u;
  __device__ __forceinline__ void note(float g) {
    const uint32_t m = __float_as_uint(g) & 0x7fffffffu;
    lo = min(lo, m - 1u);
    hi = max(hi, m);
  }
  // Every noted value zero or 2^-100 <= |g| < 2^99 (bit patterns 0x0d800000
  // and 0x71000000).
  __device__ __forceinline__ bool exact() const { return lo >= 0x0d7fffffu && hi < 0x71000000u; }
};

}  // namespace avgpool::cuda
