// The plain OpenMP loop the CPU benchmarks hold avgpool against: what one
// writes first (PyTorch-CPU-like). One output at a time, the window summed
// element by element into a float accumulator (double for f64), divided
// once; in NHWC one output pixel at a time with its channels innermost.
// Any avgpool_params (non-square windows, ceil_mode, count_include_pad,
// divisor_override), any dtype, NCHW or NHWC.
#pragma once

#include <stdint.h>

#include "avgpool/avgpool.h"

namespace avgpool_bench {

// y (dims p.n, p.c, oh, ow in p.layout) = the pooling of x.
void plain_loop(const avgpool_params& p, int64_t oh, int64_t ow, const void* x, void* y);

}  // namespace avgpool_bench
