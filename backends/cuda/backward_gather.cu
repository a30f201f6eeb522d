// cuda:backward_gather - the backward (grad_input from grad_output) of any
// pooling: any kernel, stride, padding, ceil_mode and divisor, NCHW and
// NHWC, every dtype, both numerics.
//
// Each grad_input element gathers the terms g / d of the windows that hold
// it (tests/data/README.md, "Backward"): along each axis the outputs
// axis_outputs_of names (window.h), oh ascending, then ow ascending, into
// one accumulator that starts at 0; elements no window holds get 0.
//
// A lane owns one grad_input column - (plane, x) in NCHW, (n, x, c) in NHWC
// with the channel fastest, so a warp's loads and stores are consecutive
// elements in both layouts - and walks down a segment of its rows. The
// column's windows (ow first..last, at most M of them) and their divisor
// factors are fixed for the walk. Moving down a row, the row's windows
// (oh first..last, at most M) change by at most one at each end; the lane
// keeps the terms of its column for the last M window rows in a register
// ring and computes each window row's terms once, when the walk reaches it
// (M loads of grad_output and M divisions per window row, not per element).
//  - pytorch numerics: the ring holds the M x M terms; an element adds the
//    terms of its window rows in order (oh, then ow ascending), one
//    accumulator: PyTorch's order and rounding, bitwise.
//  - fast numerics: the ring holds one partial per window row, the sum of
//    the row's grad_output values times the correctly rounded reciprocals
//    of their divisors (fused multiply-adds); an element adds its rows'
//    partials (per-row partials: the same terms in another order, each
//    with one more rounding, within the float32 summation bound). The
//    reciprocals are recomputed only when a window row's divisor factor
//    differs from the last one's (edge rows, ceil mode), so interior rows
//    need no division at all.
// M (= the larger of ceil(kh / sh) and ceil(kw / sw)) is a template
// parameter, 1, 2, 3 or 5, with int32 index math within an axis
// (axes_fit_int32). Larger windows per element, or axes of 2^28 and more,
// run the direct variant (M = 0): per element, per window, one load and one
// division, with int64 index math. 64-bit offsets of planes and rows.
#include <algorithm>
#include <type_traits>

#include "backward_common.cuh"
#include "impls.h"

namespace avgpool {
namespace cuda {
namespace {

constexpr const char* kName = "cuda:backward_gather";
constexpr int kThreads = 256;
constexpr int kMinBlocks = 2;  // up to 128 registers: the M = 5 ring of f64 terms

struct GatherArgs : Geometry {
  int64_t c;              // channels
  int64_t columns;        // lanes' columns: planes * w (NCHW) or n * w * c (NHWC)
  int64_t column_blocks;  // ceil(columns / kThreads)
  int64_t seg_rows;       // grad_input rows of one item
  int64_t items;          // column_blocks * ceil(h / seg_rows)
};

// The walk of one column over rows [y0, y1) with a ring of the last M window
// rows' terms. g_plane: grad_output's plane (NCHW) or batch item (NHWC) of
// the column, at its channel; out: grad_input at row 0 of the column; cin:
// elements between neighbouring pixels of a row (1 in NCHW, c in NHWC).
template <typename T, int M, bool PYT>
__device__ __forceinline__ void walk_column(const GatherArgs& a, const T* g_plane, T* out, int x, int y0, int y1,
                                            int64_t cin) {
  using E = Elem<T>;
  using A = typename E::acc_t;
  const int h = (int)a.h, w = (int)a.w, oh_count = (int)a.oh, ow_count = (int)a.ow;
  const int kh = (int)a.kh, kw = (int)a.kw, sh = (int)a.sh, sw = (int)a.sw, ph = (int)a.ph, pw = (int)a.pw;
  const int64_t ovr = a.divisor_override;

  // The column's windows, their divisor factors (fast: reciprocals).
  const AxisOutputsOf<int> cols = axis_outputs_of<int>(x, w, ow_count, kw, sw, pw);
  const int nc = cols.last - cols.first + 1;  // <= M; <= 0 when no window holds the column
  const T* g_col = g_plane + (int64_t)cols.first * cin;
  int col_factor[M];
#pragma unroll
  for (int j = 0; j < M; ++j)
    col_factor[j] = j < nc ? axis_divisor_factor(axis_window_of<int>(cols.first + j, w, kw, sw, pw), a.include_pad)
                           : 1;
  // fast: 1 / d of the column's windows in the window row of factor
  // rcp_row_factor (-1: none yet); 0 for columns beyond nc.
  A rcp[M];
  int64_t rcp_row_factor = -1;
#pragma unroll
  for (int j = 0; j < M; ++j) rcp[j] = A(0);

  // The rows' windows first..last, kept as y moves down one row at a time:
  // `first` is the first window still holding y, `next` the last window
  // starting at or before y (last = min(next, oh - 1)).
  const AxisOutputsOf<int> rows0 = axis_outputs_of<int>(y0, h, oh_count, kh, sh, ph);
  int first = rows0.first;
  int first_start = first * sh - ph;
  int next = (y0 + ph) / sh;
  int next_start = next * sh - ph;
  int top = first - 1;  // the last window row in the ring

  // Ring slot i holds window row top - (M - 1) + i; columns j >= nc hold 0,
  // which leaves an accumulator that started at +0 unchanged.
  constexpr int R = PYT ? M : 1;
  A ring[M][R];
#pragma unroll
  for (int i = 0; i < M; ++i)
#pragma unroll
    for (int j = 0; j < R; ++j) ring[i][j] = A(0);

  const int64_t g_row_stride = (int64_t)ow_count * cin, out_row_stride = (int64_t)w * cin;
  T* o = out + (int64_t)y0 * out_row_stride;
  for (int y = y0; y < y1; ++y, o += out_row_stride) {
    if (y > y0) {
      if (first_start + kh <= y) {
        ++first;
        first_start += sh;
      }
      if (next_start + sh <= y) {
        ++next;
        next_start += sh;
      }
    }
    const int last = next < oh_count - 1 ? next : oh_count - 1;
    while (top < last) {  // at most once per row after the first
      ++top;
#pragma unroll
      for (int i = 0; i + 1 < M; ++i)
#pragma unroll
        for (int j = 0; j < R; ++j) ring[i][j] = ring[i + 1][j];
      const int64_t row_factor = axis_divisor_factor(axis_window_of<int>(top, h, kh, sh, ph), a.include_pad);
      const T* g = g_col + (int64_t)top * g_row_stride;
      if constexpr (PYT) {
#pragma unroll
        for (int j = 0; j < M; ++j)
          ring[M - 1][j] = j < nc ? backward_term<T, true>(load1<false>(g + j * cin),
                                                           divisor_from_factors(row_factor, col_factor[j], ovr))
                                  : A(0);
      } else {
        if (row_factor != rcp_row_factor) {
          rcp_row_factor = row_factor;
#pragma unroll
          for (int j = 0; j < M; ++j)
            if (j < nc) rcp[j] = A(1) / static_cast<A>(divisor_from_factors(row_factor, col_factor[j], ovr));
        }
        A partial = A(0);
#pragma unroll
        for (int j = 0; j < M; ++j)
          if (j < nc) partial = fma(E::to_acc(load1<false>(g + j * cin)), rcp[j], partial);
        ring[M - 1][0] = partial;
      }
    }
    // Window rows first..top are this row's (top == last, or none when
    // top < first); oh ascending, then ow ascending.
    A acc = A(0);
#pragma unroll
    for (int i = 0; i < M; ++i)
      if (top - (M - 1) + i >= first)
#pragma unroll
        for (int j = 0; j < R; ++j) acc += ring[i][j];
    store_stream(o, E::from_acc(acc));
  }
}

// The direct walk (any window count, int64 index math): per element, per
// window, one load and one term.
template <typename T, bool PYT>
__device__ __forceinline__ void direct_column(const GatherArgs& a, const T* g_plane, T* out, int64_t x, int64_t y0,
                                              int64_t y1, int64_t cin) {
  using E = Elem<T>;
  using A = typename E::acc_t;
  const AxisOutputsOf<int64_t> cols = axis_outputs_of<int64_t>(x, a.w, a.ow, a.kw, a.sw, a.pw);
  const int64_t out_row_stride = a.w * cin;
  T* o = out + y0 * out_row_stride;
  for (int64_t y = y0; y < y1; ++y, o += out_row_stride) {
    const AxisOutputsOf<int64_t> rows = axis_outputs_of<int64_t>(y, a.h, a.oh, a.kh, a.sh, a.ph);
    A acc = A(0);
    for (int64_t oh = rows.first; oh <= rows.last; ++oh) {
      const int64_t row_factor = axis_divisor_factor(axis_window(oh, a.h, a.kh, a.sh, a.ph), a.include_pad);
      const T* g = g_plane + oh * a.ow * cin;
      for (int64_t ow = cols.first; ow <= cols.last; ++ow) {
        const int64_t d = divisor_from_factors(
            row_factor, axis_divisor_factor(axis_window(ow, a.w, a.kw, a.sw, a.pw), a.include_pad),
            a.divisor_override);
        acc += backward_term<T, PYT>(load1<false>(g + ow * cin), d);
      }
    }
    store_stream(o, E::from_acc(acc));
  }
}

// Items are (block of kThreads columns, segment of seg_rows rows), columns
// fastest; a lane walks its column down the segment. T: element type;
// NHWC: layout; M: the ring's window rows and columns (0: the direct walk);
// PYT: PyTorch's numerics.
template <typename T, bool NHWC, int M, bool PYT>
__global__ void __launch_bounds__(kThreads, kMinBlocks)
gather_kernel(const T* __restrict__ gout, T* __restrict__ gin, GatherArgs a) {
  for (int64_t item = blockIdx.x; item < a.items; item += gridDim.x) {
    const int64_t f = (item % a.column_blocks) * kThreads + threadIdx.x;
    if (f >= a.columns) continue;
    const int64_t y0 = (item / a.column_blocks) * a.seg_rows;
    const int64_t y1 = y0 + a.seg_rows < a.h ? y0 + a.seg_rows : a.h;
    int64_t outer, x, c, cin;
    if constexpr (NHWC) {
      c = f % a.c;
      const int64_t t = f / a.c;
      x = t % a.w;
      outer = t / a.w;
      cin = a.c;
    } else {
      c = 0;
      x = f % a.w;
      outer = f / a.w;
      cin = 1;
    }
    const T* g_plane = gout + outer * a.oh * a.ow * cin + c;
    T* out = gin + outer * a.h * a.w * cin + x * cin + c;
    if constexpr (M > 0) walk_column<T, M, PYT>(a, g_plane, out, (int)x, (int)y0, (int)y1, cin);
    else direct_column<T, PYT>(a, g_plane, out, x, y0, y1, cin);
  }
}

// ---- host ------------------------------------------------------------------------------
// The ring size for q: 1, 2, 3 or 5, or 0 for the direct walk.
int ring_size(const Problem& q) {
  if (!axes_fit_int32(q)) return 0;
  const int64_t m = std::max(ceil_div(q.kh, q.sh), ceil_div(q.kw, q.sw));
  return m <= 3 ? (int)m : m <= 5 ? 5 : 0;
}

template <typename T, bool PYT>
avgpool_status choose_kernel(const Problem& q, KernelConfig<GatherArgs>* c, const DeviceInfo& device,
                             Decline* why) {
  const int m = ring_size(q);
  auto use = [&](auto nhwc, auto ring) {
    return use_kernel<GatherArgs, T, gather_kernel<T, decltype(nhwc)::value, decltype(ring)::value, PYT>>(
        c, "gather_kernel", kThreads, 0, GridShape{c->args.items, false}, device, why);
  };
  auto with_layout = [&](auto nhwc) {
    switch (m) {
      case 1: return use(nhwc, std::integral_constant<int, 1>{});
      case 2: return use(nhwc, std::integral_constant<int, 2>{});
      case 3: return use(nhwc, std::integral_constant<int, 3>{});
      case 5: return use(nhwc, std::integral_constant<int, 5>{});
      default: return use(nhwc, std::integral_constant<int, 0>{});
    }
  };
  return q.layout == AVGPOOL_LAYOUT_NHWC ? with_layout(std::true_type{}) : with_layout(std::false_type{});
}

avgpool_status init(const Problem& q, const DeviceInfo& device, ConfigPtr* config, Decline* why) {
  auto c = new_config<GatherArgs>(q, device);
  GatherArgs& a = c->args;
  a.c = q.c;
  a.columns = q.layout == AVGPOOL_LAYOUT_NHWC ? q.n * q.w * q.c : q.planes() * q.w;
  a.column_blocks = ceil_div(a.columns, kThreads);
  // Rows per item: the whole column where the columns alone give the grid
  // several waves; else segments (of 16 rows at least, each re-reads up to
  // M - 1 window rows above it) until they do.
  const int64_t target_items = 16 * (int64_t)std::max(device.sms, 1);
  const int64_t max_segments = std::max<int64_t>(1, q.h / 16);
  const int64_t segments = std::min(max_segments, std::max<int64_t>(1, ceil_div(target_items, a.column_blocks)));
  a.seg_rows = ceil_div(q.h, segments);
  a.items = a.column_blocks * ceil_div(q.h, a.seg_rows);
  const avgpool_status s =
      dispatch_dtype_flag(q.dtype, q.numerics == AVGPOOL_NUMERICS_PYTORCH, [&](auto zero, auto pyt) {
        return choose_kernel<decltype(zero), decltype(pyt)::value>(q, c.get(), device, why);
      });
  if (s != AVGPOOL_SUCCESS) return s;
  *config = std::move(c);
  return AVGPOOL_SUCCESS;
}

}  // namespace

const Impl kBackwardGatherImpl = {
    /* .name      = */ kName,
    /* .backend   = */ AVGPOOL_BACKEND_CUDA,
    /* .direction = */ Direction::kBackward,
    /* .init      = */ init,
    /* .execute   = */ execute_config,
};

}  // namespace cuda
}  // namespace avgpool
