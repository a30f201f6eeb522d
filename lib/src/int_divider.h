// Division of 32-bit indices by a divisor fixed at plan creation: a
// multiply-high, an add and a shift instead of the ~20 instructions of a
// run-time integer division. Kernels that decode a flat output index into
// (plane, row, column) spend most of a small window's work there.
//
// The scheme (Granlund and Montgomery, "Division by invariant integers using
// multiplication", 1994): with s = ceil(log2 d) and m = floor(2^32 (2^s - d)
// / d) + 1, n / d = (mulhi(n, m) + n) >> s for every n < 2^31 (mulhi(n, m) <
// n, so the sum stays below 2^32). Divisors from 1 to 2^31 - 1.
#pragma once

#include <stdint.h>

#include "window.h"  // AVGPOOL_HD

namespace avgpool {

struct IntDivider {
  uint32_t divisor = 1;
  uint32_t multiplier = 1;
  uint32_t shift = 0;

  static IntDivider of(uint32_t d) {
    IntDivider r;
    r.divisor = d;
    while ((uint64_t(1) << r.shift) < d) ++r.shift;
    r.multiplier = uint32_t(((uint64_t(1) << 32) * ((uint64_t(1) << r.shift) - d)) / d + 1);
    return r;
  }

  AVGPOOL_HD uint32_t div(uint32_t n) const {
#if defined(__CUDA_ARCH__)
    const uint32_t high = __umulhi(n, multiplier);
#else
    const uint32_t high = uint32_t((uint64_t(n) * multiplier) >> 32);
#endif
    return (high + n) >> shift;
  }

  // n / d into *quotient, n % d returned.
  AVGPOOL_HD uint32_t divmod(uint32_t n, uint32_t* quotient) const {
    *quotient = div(n);
    return n - *quotient * divisor;
  }
};

}  // namespace avgpool
