// The problem object: validated parameters, output size and per-axis window
// tables, computed once at plan creation and handed to every implementation.
#pragma once

#include <stddef.h>
#include <stdint.h>

#include <vector>

#include "avgpool/avgpool.h"
#include "window.h"

namespace avgpool {

struct Problem {
  // Input dims (N, C, H, W whatever the layout) and pooling parameters, with
  // the default stride (0, 0) already replaced by the kernel.
  int64_t n = 0, c = 0, h = 0, w = 0;
  int64_t kh = 0, kw = 0, sh = 0, sw = 0, ph = 0, pw = 0;
  bool ceil_mode = false;
  bool count_include_pad = true;
  int64_t divisor_override = 0;  // 0 = none
  avgpool_dtype dtype = AVGPOOL_DTYPE_F32;
  avgpool_layout layout = AVGPOOL_LAYOUT_NCHW;
  avgpool_backend backend = AVGPOOL_BACKEND_AUTO;
  avgpool_numerics numerics = AVGPOOL_NUMERICS_FAST;

  // Derived.
  int64_t oh = 0, ow = 0;
  int64_t src_elements = 0, dst_elements = 0;
  int64_t element_size = 0;          // bytes
  std::vector<AxisWindow> rows;      // oh entries
  std::vector<AxisWindow> cols;      // ow entries

  int64_t planes() const { return n * c; }
  bool stride_equals_kernel() const { return sh == kh && sw == kw; }
  bool has_padding() const { return ph != 0 || pw != 0; }
  // Inputs of the largest window as clipped to the input (min(kh, h) x
  // min(kw, w)): the most any output sums.
  int64_t window_inputs() const { return (kh < h ? kh : h) * (kw < w ? kw : w); }
  // The largest divisor of any window: the override, else at most the
  // kernel's area (a window clipped to the padded input only shrinks).
  int64_t max_divisor() const { return divisor_override != 0 ? divisor_override : kh * kw; }

  AxisWindow row_window(int64_t oy) const { return axis_window(oy, h, kh, sh, ph); }
  AxisWindow col_window(int64_t ox) const { return axis_window(ox, w, kw, sw, pw); }
  int64_t divisor(int64_t oy, int64_t ox) const {
    return window_divisor(rows[oy], cols[ox], count_include_pad, divisor_override);
  }

  // Element offsets of (n, c, y, x) in src and dst, honouring the layout.
  int64_t src_offset(int64_t in, int64_t ic, int64_t y, int64_t x) const {
    return layout == AVGPOOL_LAYOUT_NCHW ? ((in * c + ic) * h + y) * w + x
                                         : ((in * h + y) * w + x) * c + ic;
  }
  int64_t dst_offset(int64_t in, int64_t ic, int64_t y, int64_t x) const {
    return layout == AVGPOOL_LAYOUT_NCHW ? ((in * c + ic) * oh + y) * ow + x
                                         : ((in * oh + y) * ow + x) * c + ic;
  }

  // The same problem on a batch of `batch` images (the element counts follow).
  Problem with_batch(int64_t batch) const {
    Problem b = *this;
    b.n = batch;
    b.src_elements = batch * c * h * w;
    b.dst_elements = batch * c * oh * ow;
    return b;
  }

  // The inverse of dst_offset: the coordinates of dense dst element index.
  void dst_coords(int64_t index, int64_t* in, int64_t* ic, int64_t* oy, int64_t* ox) const {
    if (layout == AVGPOOL_LAYOUT_NCHW) {
      *ox = index % ow; index /= ow;
      *oy = index % oh; index /= oh;
      *ic = index % c;  *in = index / c;
    } else {
      *ic = index % c;  index /= c;
      *ox = index % ow; index /= ow;
      *oy = index % oh; *in = index / oh;
    }
  }
};

// Validates p and builds the problem. On failure returns the status, sets
// the thread's error message, and leaves *out untouched.
avgpool_status make_problem(const avgpool_params* p, Problem* out);

int64_t dtype_size(avgpool_dtype dtype);
const char* dtype_name(avgpool_dtype dtype);
const char* layout_name(avgpool_layout layout);
const char* backend_name(avgpool_backend backend);
const char* numerics_name(avgpool_numerics numerics);

}  // namespace avgpool
