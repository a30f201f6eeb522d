// Host-side element types and conversions, shared by the reference and the
// CPU backend. Half types are Eigen's (bit-compatible with IEEE binary16 and
// bfloat16); conversions to them round to nearest even.
#pragma once

#include <math.h>
#include <stdint.h>
#include <string.h>

#include <Eigen/Core>

#include "avgpool/avgpool.h"

namespace avgpool {

using half_t = Eigen::half;
using bf16_t = Eigen::bfloat16;

// The accumulator PyTorch uses for a storage type: float, double for f64.
template <typename T> struct pytorch_acc { using type = float; };
template <> struct pytorch_acc<double> { using type = double; };

template <typename T> inline double to_double(T v) { return static_cast<double>(static_cast<float>(v)); }
template <> inline double to_double<double>(double v) { return v; }

// double -> float rounded to odd: truncate toward zero, then set the last
// bit if anything was lost. Rounding that float to a type with at most
// 24 - 2 significand bits is then the same as rounding the double directly
// (no double rounding).
inline float round_to_odd_float(double d) {
  float f = static_cast<float>(d);
  if (isnan(d) || isinf(f) || static_cast<double>(f) == d) return f;
  if (fabs(static_cast<double>(f)) > fabs(d)) f = nextafterf(f, 0.0f);
  uint32_t bits;
  memcpy(&bits, &f, sizeof bits);
  bits |= 1u;
  memcpy(&f, &bits, sizeof bits);
  return f;
}

// Rounds a double to T once (round to nearest even).
template <typename T> inline T from_double(double d) { return T(round_to_odd_float(d)); }
template <> inline float from_double<float>(double d) { return static_cast<float>(d); }
template <> inline double from_double<double>(double d) { return d; }

// Calls f(T{}) with T the storage type of dtype; returns f's result.
template <typename F> inline auto dispatch_dtype(avgpool_dtype dtype, F&& f) {
  switch (dtype) {
    case AVGPOOL_DTYPE_F16: return f(half_t{});
    case AVGPOOL_DTYPE_BF16: return f(bf16_t{});
    case AVGPOOL_DTYPE_F64: return f(double{});
    case AVGPOOL_DTYPE_F32:
    default: return f(float{});
  }
}

}  // namespace avgpool
