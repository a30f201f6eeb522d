// The one place that says which inputs an output averages, and what it is
// divided by. Host and device code (CUDA kernels) include this header; no
// backend re-derives a window, a pad clamp or a divisor.
//
// PyTorch (aten/src/ATen/native/AvgPoolKernel.cpp, AveragePool2d.cu):
//   start = o * stride - pad
//   padded_end = min(start + kernel, size + pad)   -> count_include_pad extent
//   begin = max(start, 0), end = min(padded_end, size)  -> summed inputs
//   divisor = override ? override
//           : include_pad ? (padded rows) * (padded cols)
//           : (rows) * (cols)
#pragma once

#include <stdint.h>

#if defined(__CUDACC__)
#define AVGPOOL_HD __host__ __device__ __forceinline__
#else
#define AVGPOOL_HD inline
#endif

namespace avgpool {

// One output index along one axis (rows or columns). I is the index type:
// int64_t everywhere, int32 in kernels that have checked their axis sizes
// fit (fewer instructions per output; same formulas).
template <typename I>
struct AxisWindowOf {
  I begin;       // first input index summed, in [0, size)
  I end;         // one past the last input index summed
  I padded_len;  // window length clamped to [-pad, size + pad)
};
using AxisWindow = AxisWindowOf<int64_t>;

template <typename I>
AVGPOOL_HD AxisWindowOf<I> axis_window_of(I out_index, I size, I kernel, I stride, I pad) {
  const I start = out_index * stride - pad;
  const I padded_end = (start + kernel < size + pad) ? start + kernel : size + pad;
  AxisWindowOf<I> w;
  w.begin = start > 0 ? start : 0;
  w.end = padded_end < size ? padded_end : size;
  w.padded_len = padded_end - start;
  return w;
}

// True if input index `in` is one of the inputs window `out_index` sums.
template <typename I>
AVGPOOL_HD bool axis_window_holds(I out_index, I in, I size, I kernel, I stride, I pad) {
  const AxisWindowOf<I> w = axis_window_of<I>(out_index, size, kernel, stride, pad);
  return w.begin <= in && in < w.end;
}

// The backward's inverse of axis_window_of: the outputs [first, last] whose
// windows hold input index `in` (0 <= in < size) along one axis, in
// ascending order; empty when first > last. Window o starts at
// o * stride - pad and, for an index inside the input, holds it exactly when
// start <= in < start + kernel (clipping to the input or, in ceil mode, to
// size + pad changes the window's divisor, never whether it holds an index
// of [0, size)). Both ends are confirmed with axis_window_of.
template <typename I>
struct AxisOutputsOf {
  I first, last;
};

template <typename I>
AVGPOOL_HD AxisOutputsOf<I> axis_outputs_of(I in, I size, I out_size, I kernel, I stride, I pad) {
  const I hi = in + pad;  // >= 0
  I last = hi / stride;   // the last window starting at or before `in`
  if (last > out_size - 1) last = out_size - 1;
  const I lo = hi - kernel + 1;  // the first window must start at or after in - kernel + 1
  I first = lo <= 0 ? I(0) : (lo + stride - 1) / stride;
  while (first <= last && !axis_window_holds<I>(first, in, size, kernel, stride, pad)) ++first;
  while (last >= first && !axis_window_holds<I>(last, in, size, kernel, stride, pad)) --last;
  AxisOutputsOf<I> r;
  r.first = first;
  r.last = last;
  return r;
}

AVGPOOL_HD AxisWindow axis_window(int64_t out_index, int64_t size, int64_t kernel,
                                  int64_t stride, int64_t pad) {
  return axis_window_of<int64_t>(out_index, size, kernel, stride, pad);
}

// The divisor of one output, as PyTorch computes it (an integer, converted
// to the accumulator type only at the division): the override, or the
// product of one factor per axis (the padded window length when padding
// counts, else the clipped length). Kernels that walk a row or a column may
// keep the per-axis factors and call divisor_from_factors per output.
template <typename I>
AVGPOOL_HD I axis_divisor_factor(const AxisWindowOf<I>& w, bool count_include_pad) {
  return count_include_pad ? w.padded_len : w.end - w.begin;
}

AVGPOOL_HD int64_t divisor_from_factors(int64_t row_factor, int64_t col_factor, int64_t divisor_override) {
  return divisor_override != 0 ? divisor_override : row_factor * col_factor;
}

AVGPOOL_HD int64_t window_divisor(const AxisWindow& row, const AxisWindow& col,
                                  bool count_include_pad, int64_t divisor_override) {
  return divisor_from_factors(axis_divisor_factor(row, count_include_pad),
                              axis_divisor_factor(col, count_include_pad), divisor_override);
}

// PyTorch's pooling_output_shape (Pool.h) for dilation 1: floor division,
// and in ceil mode the last window must start inside the input or the left
// padding. Callers have checked kernel, stride >= 1 and the sizes' range.
AVGPOOL_HD int64_t pooled_size(int64_t size, int64_t kernel, int64_t stride, int64_t pad,
                               bool ceil_mode) {
  const int64_t numerator = size + 2 * pad - kernel + (ceil_mode ? stride - 1 : 0);
  // floor division (numerator may be negative when the kernel is too big)
  int64_t q = numerator / stride;
  if ((numerator % stride != 0) && (numerator < 0)) --q;
  int64_t out = q + 1;
  if (ceil_mode && (out - 1) * stride >= size + pad) --out;
  return out;
}

}  // namespace avgpool
