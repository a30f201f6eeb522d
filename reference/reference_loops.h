// What the forward and backward references share: the fast-numerics sum
// (float64, compensated for f64 inputs) and the loop that fills a tensor,
// element by element, planes in parallel.
#pragma once

#include <math.h>
#include <stdint.h>

#include "host_types.h"
#include "problem.h"

namespace avgpool {
namespace reference {

// Neumaier's compensated sum: the float64 "fast" result for f64 inputs.
struct CompensatedSum {
  double sum = 0.0, carry = 0.0;
  void add(double v) {
    const double t = sum + v;
    if (fabs(sum) >= fabs(v)) carry += (sum - t) + v;
    else carry += (v - t) + sum;
    sum = t;
  }
  double value() const {
    // Keep Inf and NaN as the plain sum has them (carry would be NaN).
    return isfinite(sum) ? sum + carry : sum;
  }
};

// The fast-numerics sum of term(a, b) over [a0, a1) x [b0, b1): compensated
// for f64 elements, a plain float64 sum for the narrower types.
template <typename T, typename Term>
double wide_sum(int64_t a0, int64_t a1, int64_t b0, int64_t b1, Term term) {
  if constexpr (sizeof(T) == sizeof(double)) {
    CompensatedSum sum;
    for (int64_t a = a0; a < a1; ++a)
      for (int64_t b = b0; b < b1; ++b) sum.add(term(a, b));
    return sum.value();
  } else {
    double sum = 0.0;
    for (int64_t a = a0; a < a1; ++a)
      for (int64_t b = b0; b < b1; ++b) sum += term(a, b);
    return sum;
  }
}

// For q's dtype T: out[offset(n, c, y, x)] = value(in, n, c, y, x) for every
// plane (n, c) and every y < rows, x < cols, planes in parallel.
template <typename Offset, typename Value>
void fill_elements(const Problem& q, int64_t rows, int64_t cols, const void* in, void* out, Offset offset,
                   Value value) {
  dispatch_dtype(q.dtype, [&](auto zero) {
    using T = decltype(zero);
    const T* src = static_cast<const T*>(in);
    T* dst = static_cast<T*>(out);
    const int64_t planes = q.planes();
#if defined(AVGPOOL_WITH_OPENMP)
#pragma omp parallel for schedule(static)
#endif
    for (int64_t plane = 0; plane < planes; ++plane) {
      const int64_t n = plane / q.c, c = plane % q.c;
      for (int64_t y = 0; y < rows; ++y)
        for (int64_t x = 0; x < cols; ++x) dst[offset(n, c, y, x)] = value(src, n, c, y, x);
    }
    return 0;
  });
}

}  // namespace reference
}  // namespace avgpool
