// The reference backend: the spec in code. Plain loops, 64-bit indices,
// OpenMP over planes at most, no SIMD and no cleverness.
#pragma once

#include <stdint.h>

#include "impl.h"
#include "problem.h"

namespace avgpool {
namespace reference {

// The output at (n, c, oy, ox) of problem on src (host memory), in the
// problem's numerics, rounded to its dtype and widened to double.
double output_value(const Problem& problem, const void* src, int64_t n, int64_t c, int64_t oy,
                    int64_t ox);

// The backward implementation (reference_backward.cpp).
extern const Impl kReferenceBackward;

// grad_input at (n, c, y, x) from grad_output (host memory), in the
// problem's numerics, rounded to its dtype and widened to double.
double grad_input_value(const Problem& problem, const void* grad_output, int64_t n, int64_t c, int64_t y,
                        int64_t x);

}  // namespace reference
}  // namespace avgpool
