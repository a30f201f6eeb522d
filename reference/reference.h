// The reference backend: the spec in code. Plain loops, 64-bit indices,
// OpenMP over planes at most, no SIMD and no cleverness.
#pragma once

#include <stdint.h>

#include "problem.h"

namespace avgpool {
namespace reference {

// The output at (n, c, oy, ox) of problem on src (host memory), in the
// problem's numerics, rounded to its dtype and widened to double.
double output_value(const Problem& problem, const void* src, int64_t n, int64_t c, int64_t oy,
                    int64_t ox);

}  // namespace reference
}  // namespace avgpool
