// The backward's view of the windows: which outputs along one axis have a
// window (window.h's axis_window, clamps included) that contains a given
// input index. Window begins and ends never decrease with the output index,
// so those outputs form one contiguous range.
#pragma once

#include <stdint.h>

#include "window.h"

namespace avgpool {

struct AxisCover {
  int64_t first;  // first output whose window contains the input index
  int64_t last;   // one past the last (first == last: no window contains it)
};

inline bool window_contains(const AxisWindow& w, int64_t i) { return w.begin <= i && i < w.end; }

// The outputs [0, outputs) along one axis whose windows contain input index
// i. windows[o] must be axis_window(o, ...) (Problem::rows or cols). The
// arithmetic only narrows the search to the outputs whose unclamped span
// [o*stride - pad, o*stride - pad + kernel) holds i; membership itself is
// decided by the window table, the one place that knows the clamps.
inline AxisCover axis_cover(int64_t i, int64_t kernel, int64_t stride, int64_t pad, const AxisWindow* windows,
                            int64_t outputs) {
  const int64_t lowest = i + pad - kernel + 1;  // o*stride >= lowest
  int64_t first = lowest <= 0 ? 0 : (lowest + stride - 1) / stride;
  int64_t last = (i + pad) / stride + 1;  // o*stride <= i + pad
  if (last > outputs) last = outputs;
  while (first < last && !window_contains(windows[first], i)) ++first;
  while (last > first && !window_contains(windows[last - 1], i)) --last;
  if (last < first) last = first;
  return AxisCover{first, last};
}

}  // namespace avgpool
