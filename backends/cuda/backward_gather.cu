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
//    with one more rounding, within the float32 summation bound).
// The column's divisors (pytorch: converted to the accumulator type; fast:
// their reciprocals) are recomputed only when a window row's divisor factor
// differs from the last one's (edge rows, ceil mode). At row stride 1 each
// row brings one window row, and the walk unrolls M rows so that the ring
// rotates by register naming instead of moves.
// With M > 0 the walks take their terms from quotients a block stages in
// shared memory, one division per grad_output element and chunk ("staged
// quotients" below): always in NCHW, in NHWC for pytorch numerics and row
// strides above 1; NHWC fast numerics at row stride 1 and the direct
// variant load and divide per lane.
// M (= the larger of ceil(kh / sh) and ceil(kw / sw)) is a template
// parameter, 1, 2, 3 or 5, with int32 index math within an axis
// (axes_fit_int32). Larger windows per element, or axes of 2^28 and more,
// run the direct variant (M = 0): per element, per window, one load and one
// division, with int64 index math. 64-bit offsets of planes and rows.
#include <algorithm>
#include <type_traits>

#include "backward_common.cuh"
#include "impls.h"
#include "int_divider.h"

namespace avgpool::cuda {
namespace {

constexpr const char* kName = "cuda:backward_gather";
constexpr int kThreads = 256;
// Blocks per SM the registers are planned for: three for 2- and 4-byte
// types (at most 85 registers; the M = 5 pytorch ring of NCHW spills 16
// bytes), two for f64 (its M = 5 ring of 25 doubles takes 124).
template <typename T> constexpr int min_blocks() { return sizeof(T) == 8 ? 2 : 3; }

struct GatherArgs : Geometry {
  int64_t c;              // channels
  int64_t columns;        // lanes' columns: planes * w (NCHW) or n * w * c (NHWC)
  int64_t column_blocks;  // ceil(columns / kThreads)
  int64_t seg_rows;       // grad_input rows of one item
  int64_t items;          // column_blocks * ceil(h / seg_rows) (staged: tiles * segments)
  // The staged kernel's tiles. NCHW: plane_group whole planes (w <=
  // kThreads) or tile_w columns of one plane (plane_group 1, col_tiles per
  // plane). NHWC: tile_w pixels x tile_c channels of one image (chan_tiles
  // per pixel; by_tile_c divides by tile_c). Segments of seg_rows rows,
  // staged chunk_rows rows at a time.
  int plane_group;
  int tile_w;
  int col_tiles;
  int tile_c;
  int chan_tiles;
  IntDivider by_tile_c;
  int segments;
  int chunk_rows;
};

// The terms of one grad_input column: its windows (ow first..first + nc - 1,
// nc <= M) and their divisors, and a window row's terms. g_plane:
// grad_output's plane (NCHW) or batch item (NHWC) of the column, at its
// channel; cin: elements between neighbouring pixels of a row (1 in NCHW,
// c in NHWC). int32 within an axis (axes_fit_int32).
template <typename T, int M, bool PYT>
struct ColumnTerms {
  using E = Elem<T>;
  using A = typename E::acc_t;
  static constexpr int R = PYT ? M : 1;  // values a window row keeps in the ring

  const GatherArgs& a;
  const T* g_col;  // grad_output at window row 0, window column `first`
  int64_t cin;
  int nc;
  int col_factor[M];
  // The divisors in the window row of factor div_row_factor (-1: none yet),
  // converted once per change of the row factor (edge rows, ceil mode):
  // pytorch numerics backward_divisor's, fast their correctly rounded
  // reciprocals.
  A div[M];
  int64_t div_row_factor = -1;

  __device__ __forceinline__ ColumnTerms(const GatherArgs& args, const T* g_plane, int x, int64_t channels_in)
      : a(args), cin(channels_in) {
    const int w = (int)a.w, kw = (int)a.kw, sw = (int)a.sw, pw = (int)a.pw;
    const AxisOutputsOf<int> cols = axis_outputs_of<int>(x, w, (int)a.ow, kw, sw, pw);
    nc = cols.last - cols.first + 1;  // <= 0 when no window holds the column
    g_col = g_plane + (int64_t)cols.first * cin;
#pragma unroll
    for (int j = 0; j < M; ++j) {
      col_factor[j] =
          j < nc ? axis_divisor_factor(axis_window_of<int>(cols.first + j, w, kw, sw, pw), a.include_pad) : 1;
      div[j] = A(1);
    }
  }

  // slot = window row oh's terms (pytorch: M, columns j >= nc 0) or its
  // partial (fast: sum over j of g * (1 / d), fused multiply-adds); zeros
  // for a row outside [0, oh). Zeros leave an accumulator that started at
  // +0 unchanged (it is never -0).
  __device__ __forceinline__ void load(int oh, A (&slot)[R]) {
#pragma unroll
    for (int j = 0; j < R; ++j) slot[j] = A(0);
    if (oh < 0 || oh >= (int)a.oh) return;
    const int64_t row_factor =
        axis_divisor_factor(axis_window_of<int>(oh, (int)a.h, (int)a.kh, (int)a.sh, (int)a.ph), a.include_pad);
    if (row_factor != div_row_factor) {
      div_row_factor = row_factor;
#pragma unroll
      for (int j = 0; j < M; ++j) {
        if (j < nc) {
          const int64_t d = divisor_from_factors(row_factor, col_factor[j], a.divisor_override);
          div[j] = PYT ? backward_divisor<T, PYT>(d) : A(1) / static_cast<A>(d);
        }
      }
    }
    const T* g = g_col + (int64_t)oh * a.ow * cin;
    if constexpr (PYT) {
#pragma unroll
      for (int j = 0; j < M; ++j)
        if (j < nc) slot[j] = backward_term_by<T, true>(load1<false>(g + j * cin), div[j]);
    } else {
#pragma unroll
      for (int j = 0; j < M; ++j)
        if (j < nc) slot[0] = fma(E::to_acc(load1<false>(g + j * cin)), div[j], slot[0]);
    }
  }
};

// The window rows that hold input row y, kept as a walk moves down one
// column a row at a time (any row stride): `first` is the first window still
// holding y, `next` the last starting at or before y (last = min(next,
// oh - 1)); ring slot i holds window row top - (M - 1) + i's terms.
template <typename A, int M, int R>
struct WindowRowRing {
  int oh_count, kh, sh;
  int first, first_start, next, next_start, top;
  A ring[M][R];

  __device__ __forceinline__ WindowRowRing(int y0, int h, int oh_count_, int kh_, int sh_, int ph)
      : oh_count(oh_count_), kh(kh_), sh(sh_) {
    first = axis_outputs_of<int>(y0, h, oh_count, kh, sh, ph).first;
    first_start = first * sh - ph;
    next = (y0 + ph) / sh;
    next_start = next * sh - ph;
    top = first - 1;
#pragma unroll
    for (int i = 0; i < M; ++i)
#pragma unroll
      for (int j = 0; j < R; ++j) ring[i][j] = A(0);
  }

  // Row y's sum (y0 on the first call, then each next row): windows
  // first..top, oh ascending, then ow ascending; terms.load fills the ring.
  template <class Terms>
  __device__ __forceinline__ A row_sum(int y, bool moved, Terms& terms) {
    if (moved) {
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
      terms.load(top, ring[M - 1]);
    }
    // top == last, or no window holds y when top < first.
    A acc = A(0);
#pragma unroll
    for (int i = 0; i < M; ++i)
      if (top - (M - 1) + i >= first)
#pragma unroll
        for (int j = 0; j < R; ++j) acc += ring[i][j];
    return acc;
  }
};

// The walk of one column over rows [y0, y1) with a ring of the last M window
// rows' terms (any row stride). out: grad_input at row 0 of the column.
template <typename T, int M, bool PYT>
__device__ __forceinline__ void walk_column(const GatherArgs& a, const T* g_plane, T* out, int x, int y0, int y1,
                                            int64_t cin) {
  using E = Elem<T>;
  using A = typename E::acc_t;
  constexpr int R = ColumnTerms<T, M, PYT>::R;
  const int h = (int)a.h, oh_count = (int)a.oh, kh = (int)a.kh, sh = (int)a.sh, ph = (int)a.ph;
  ColumnTerms<T, M, PYT> terms(a, g_plane, x, cin);

  WindowRowRing<A, M, R> rows(y0, h, oh_count, kh, sh, ph);
  const int64_t out_row_stride = a.w * cin;
  T* o = out + (int64_t)y0 * out_row_stride;
  for (int y = y0; y < y1; ++y, o += out_row_stride) store_stream(o, E::from_acc(rows.row_sum(y, y > y0, terms)));
}

// Row stride 1 (walk_column_stride1 says how the ring turns): before step 0
// of the first round, slot p (1..M-1) holds window row y0 + ph - M + p.
template <typename A, int M, int R, class Terms>
__device__ __forceinline__ void prime_stride1(A (&ring)[M][R], int y0, int ph, Terms& terms) {
#pragma unroll
  for (int j = 0; j < R; ++j) ring[0][j] = A(0);
#pragma unroll
  for (int p = 1; p < M; ++p) terms.load(y0 + ph - M + p, ring[p]);
}

// Step c of a round: window row newest (logical slot M - 1) goes to physical
// slot c; logical slot i (physical (c + 1 + i) % M) holds window row
// newest - (M - 1) + i, and the row's windows start at max(0, newest - kh + 1).
template <typename A, int M, int R, class Terms>
__device__ __forceinline__ A stride1_step(A (&ring)[M][R], int c, int newest, int kh, Terms& terms) {
  terms.load(newest, ring[c]);
  const int first = newest - kh + 1 > 0 ? newest - kh + 1 : 0;
  const int lowest = first - (newest - (M - 1));
  A acc = A(0);
#pragma unroll
  for (int i = 0; i < M; ++i)
    if (i >= lowest)
#pragma unroll
      for (int j = 0; j < R; ++j) acc += ring[(c + 1 + i) % M][j];
  return acc;
}

// The walk at row stride 1: row y's windows are first..y + ph (clamped to
// the last window row; rows past it load as zeros), so every row brings
// exactly one new window row. The loop is unrolled M times and step c of a
// round keeps window row y + ph in ring slot c: the ring rotates by naming,
// with no register moves.
template <typename T, int M, bool PYT>
__device__ __forceinline__ void walk_column_stride1(const GatherArgs& a, const T* g_plane, T* out, int x, int y0,
                                                    int y1, int64_t cin) {
  using E = Elem<T>;
  using A = typename E::acc_t;
  constexpr int R = ColumnTerms<T, M, PYT>::R;
  const int kh = (int)a.kh, ph = (int)a.ph;
  ColumnTerms<T, M, PYT> terms(a, g_plane, x, cin);
  A ring[M][R];
  prime_stride1(ring, y0, ph, terms);
  const int64_t out_row_stride = a.w * cin;
  T* o = out + (int64_t)y0 * out_row_stride;
  for (int y = y0; y < y1; y += M, o += M * out_row_stride) {
#pragma unroll
    for (int c = 0; c < M; ++c)
      if (y + c < y1) store_stream(o + c * out_row_stride, E::from_acc(stride1_step(ring, c, y + c + ph, kh, terms)));
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
__global__ void __launch_bounds__(kThreads, min_blocks<T>())
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
    if constexpr (M > 0) {
      if (a.sh == 1) walk_column_stride1<T, M, PYT>(a, g_plane, out, (int)x, (int)y0, (int)y1, cin);
      else walk_column<T, M, PYT>(a, g_plane, out, (int)x, (int)y0, (int)y1, cin);
    } else {
      direct_column<T, PYT>(a, g_plane, out, x, y0, y1, cin);
    }
  }
}


// ---- staged quotients ------------------------------------------------------------------
// The ring walks read their terms from shared memory: a block takes a tile of
// grad_input (NCHW: plane_group whole planes of w <= kThreads columns, or
// tile_w columns of one plane; NHWC: tile_w pixels x tile_c channels of one
// image, a warp's lanes a pixel's channels) and a segment of its rows, and
// stages, a chunk of chunk_rows input rows at a time, the quotients q = g / d
// of every window that holds an element of the chunk's tile (pytorch numerics:
// backward_term, rounded to the type for f16/bf16 - each once per grad_output
// element and chunk instead of once per window row and lane; fast numerics the
// same true quotient in the accumulator type). The staging (stage_quotients;
// NHWC stage_quotients_channels) is one coalesced pass over grad_output, warps
// over rows and lanes over columns with the divisor factors of a row and a
// column computed once (a flat pass that decoded every element's plane, row and
// column by integer division ran the staged kernel at 72% of the SM's issue
// rate: k3 s1 p1 0.198 ms, 0.24 of the copy roofline); the walks then read the
// quotients at shared-memory latency and only store to global memory. The ring
// keeps, per window row, the quotients of the lane's window columns (pytorch:
// added in order, oh then ow ascending, as PyTorch does, bitwise) or their sum
// (fast).

// A lane's window columns in the staged quotients of the current chunk.
template <typename T, int M, bool PYT>
struct StagedTerms {
  using A = typename Elem<T>::acc_t;
  static constexpr int R = PYT ? M : 1;
  const A* col;  // the lane's plane, staged window row r_lo, its first window column
  int nc;        // window columns of the lane (<= 0: none; inactive lanes)
  int pitch;     // staged values per window row
  int cstride;   // staged values between window columns (1; NHWC: the tile's channels)
  int r_lo, r_hi;

  __device__ __forceinline__ void load(int oh, A (&slot)[R]) const {
#pragma unroll
    for (int j = 0; j < R; ++j) slot[j] = A(0);
    if (oh < r_lo || oh > r_hi) return;  // outside [0, oh), or a row no element of the chunk uses
    const A* row = col + (oh - r_lo) * pitch;
#pragma unroll
    for (int j = 0; j < M; ++j) {
      if (j < nc) {
        if constexpr (PYT) slot[j] = row[j * cstride];
        else slot[0] += row[j * cstride];
      }
    }
  }
};

// Loads in flight per lane in the NHWC staging (H200, 2026-12-01, f32
// NHWC, ms, fast / pytorch numerics, one load at a time -> 2 -> 4):
// k5 s1 p2 pytorch 6.15 -> 4.82 -> 4.40; k3 s1 p1 pytorch 0.204 -> 0.200 ->
// 0.187; k11 s4 2.67 / 2.92 -> 2.57 / 3.00 -> 2.75 / 2.98; k3 s2 p1 ceil
// 0.192 / 0.195 -> 0.183 / 0.182 -> 0.204 / 0.203. Four where pytorch
// numerics keep M >= 3 terms per window row in the ring; two elsewhere,
// where four raised the registers past an occupancy step (56 -> 72 at
// M = 2: four blocks of 256 threads per SM became three).
constexpr int stage_batch(int m, bool pytorch) { return pytorch && m >= 3 ? 4 : 2; }

// NHWC: stages the quotients of window rows [oh_lo, oh_lo + nr) x columns
// [ow_lo, ow_lo + ne) x channels [0, chn) of one image (g: its grad_output
// at the tile's first channel; cin: channels per pixel) into stage, laid out
// [row][column][ch] (channels chn..ch - 1 +0). Warps over rows, lanes over
// (column, channel) pairs: a warp's loads are a pixel's consecutive
// channels. Staged rows and columns lie within the output. A lane issues
// U loads before it divides (one load in flight per lane, each waited for
// before its division, left the staging latency-bound), and forms each
// divisor as the float product of its factors (exact: the staged path is
// taken for windows of at most 2^24 elements). U is stage_batch(M, PYT).
template <typename T, bool PYT, int U>
__device__ __forceinline__ void stage_quotients_channels(const Geometry& a, const T* __restrict__ g, int64_t cin,
                                                         typename Elem<T>::acc_t* stage, int ch, int chn,
                                                         IntDivider by_ch, int oh_lo, int nr, int ow_lo, int ne) {
  using A = typename Elem<T>::acc_t;
  const int lane = (int)threadIdx.x & 31, warp = (int)threadIdx.x >> 5, nwarps = (int)blockDim.x >> 5;
  const int row_len = ne * ch;
  const bool overridden = a.divisor_override != 0;
  const A override_divisor = static_cast<A>(a.divisor_override);
  for (int r = warp; r < nr; r += nwarps) {
    const int oh = oh_lo + r;
    const int row_f =
        axis_divisor_factor(axis_window_of<int>(oh, (int)a.h, (int)a.kh, (int)a.sh, (int)a.ph), a.include_pad);
    const A row_factor = overridden ? override_divisor : static_cast<A>(row_f);
    const T* g_row = g + ((int64_t)oh * a.ow + ow_lo) * cin;
    A* srow = stage + r * row_len;
    for (int k0 = lane; k0 < row_len; k0 += 32 * U) {
      T gv[U];
      A col_factor[U];
      bool in[U];
#pragma unroll
      for (int u = 0; u < U; ++u) {
        const int k = k0 + 32 * u;
        uint32_t e;
        const int c = (int)by_ch.divmod((uint32_t)k, &e);
        in[u] = k < row_len && c < chn;
        gv[u] = in[u] ? load1<false>(g_row + (int64_t)e * cin + c) : T(0.0f);
        const int f = axis_divisor_factor(
            axis_window_of<int>(ow_lo + (int)e, (int)a.w, (int)a.kw, (int)a.sw, (int)a.pw), a.include_pad);
        col_factor[u] = overridden ? A(1) : static_cast<A>(f);
      }
#pragma unroll
      for (int u = 0; u < U; ++u) {
        const int k = k0 + 32 * u;
        if (k < row_len) {
          const A q = backward_term_by<T, PYT>(gv[u], backward_divisor_of<T, PYT>(row_factor * col_factor[u]));
          srow[k] = in[u] ? q : A(0);
        }
      }
    }
  }
}

template <typename T, int M, bool PYT, bool NHWC>
__global__ void __launch_bounds__(kThreads, min_blocks<T>())
gather_staged_kernel(const T* __restrict__ gout, T* __restrict__ gin, GatherArgs a) {
  using E = Elem<T>;
  using A = typename E::acc_t;
  constexpr int R = PYT ? M : 1;
  extern __shared__ __align__(16) unsigned char smem_raw[];
  A* stage_buf = reinterpret_cast<A*>(smem_raw);
  const int h = (int)a.h, w = (int)a.w, oh_count = (int)a.oh, ow_count = (int)a.ow;
  const int kh = (int)a.kh, kw = (int)a.kw, sh = (int)a.sh, sw = (int)a.sw, ph = (int)a.ph, pw = (int)a.pw;
  const int t = (int)threadIdx.x;
  // NCHW: the lane's plane within the group and column within the tile;
  // NHWC: its pixel within the tile (lx) and channel (lc).
  const int lp = !NHWC && a.plane_group > 1 ? t / w : 0;
  const int lx = NHWC ? t / a.tile_c : a.plane_group > 1 ? t - lp * w : t;
  const int lc = NHWC ? t - lx * a.tile_c : 0;
  const int64_t plane_elems = (int64_t)oh_count * ow_count;
  const int64_t cin = NHWC ? a.c : 1;

  for (int64_t item = blockIdx.x; item < a.items; item += gridDim.x) {
    const int ct = (int)(item % a.col_tiles);
    int64_t rest = item / a.col_tiles;
    int c0 = 0;
    if constexpr (NHWC) {
      c0 = (int)(rest % a.chan_tiles) * a.tile_c;
      rest /= a.chan_tiles;
    }
    const int chn = NHWC ? min(a.tile_c, (int)(a.c - c0)) : 1;
    const int seg = (int)(rest % a.segments);
    const int64_t plane0 = (rest / a.segments) * a.plane_group;  // NHWC: the image
    const int xa = a.plane_group > 1 ? 0 : ct * a.tile_w;
    const int xe = a.plane_group > 1 ? w : min(w, xa + a.tile_w);
    const int x = xa + lx;
    const bool active = NHWC ? lx < a.tile_w && x < xe && lc < chn
                             : lp < a.plane_group && plane0 + lp < a.planes && x < xe;
    // The tile's window columns [e_lo, e_hi] (a superset of those holding
    // its elements).
    const int e_lo = max(0, xa + pw - kw + 1 > 0 ? (xa + pw - kw + 1 + sw - 1) / sw : 0);
    const int e_hi = min(ow_count - 1, (xe - 1 + pw) / sw);
    const int ne = e_hi - e_lo + 1;
    const int y0 = seg * (int)a.seg_rows;
    const int y1 = min(h, y0 + (int)a.seg_rows);
    const int64_t planes_here = min((int64_t)a.plane_group, a.planes - plane0);
    const T* g_group = gout + plane0 * plane_elems * cin + c0;

    StagedTerms<T, M, PYT> terms;
    terms.pitch = NHWC ? ne * a.tile_c : ne;
    terms.cstride = NHWC ? a.tile_c : 1;
    terms.nc = 0;
    int col_first = 0;
    if (active) {
      const AxisOutputsOf<int> cols = axis_outputs_of<int>(x, w, ow_count, kw, sw, pw);
      terms.nc = cols.last - cols.first + 1;
      col_first = cols.first;
    }
    // Stages the quotients of the windows holding rows [ya, ya + chunk_rows)
    // of the tile; every lane of the block calls it at the same rows.
    auto stage = [&](int ya) {
      const int yb = min(y1, ya + a.chunk_rows);
      const int r_lo = ya + ph - kh + 1 > 0 ? (ya + ph - kh + 1 + sh - 1) / sh : 0;
      const int r_hi = min(oh_count - 1, (yb - 1 + ph) / sh);
      const int nr = r_hi - r_lo + 1 > 0 ? r_hi - r_lo + 1 : 0;
      const int per_plane = nr * (ne > 0 ? ne : 0);
      __syncthreads();  // the previous chunk's reads are done
      if constexpr (NHWC)
        stage_quotients_channels<T, PYT, stage_batch(M, PYT)>(a, g_group, cin, stage_buf, a.tile_c, chn, a.by_tile_c,
                                                              r_lo, nr, e_lo, ne);
      else
        stage_quotients<T, PYT>(a, g_group, plane_elems, stage_buf, ne, per_plane, (int)planes_here, r_lo, nr, e_lo,
                                ne);
      __syncthreads();
      terms.r_lo = r_lo;
      terms.r_hi = r_lo + nr - 1;
      terms.col = NHWC ? stage_buf + (col_first - e_lo) * a.tile_c + lc
                       : stage_buf + lp * per_plane + (col_first - e_lo);
    };

    const int64_t out_row_stride = w * cin;
    T* o = NHWC ? gin + ((plane0 * h + y0) * w + x) * cin + c0 + lc
                : gin + (plane0 + (active ? lp : 0)) * (int64_t)h * w + x + (int64_t)y0 * out_row_stride;
    if (sh == 1) {
      // Row stride 1: step c of a round keeps window row y + ph in ring
      // slot c (chunk_rows is a multiple of M, so chunks start at step 0).
      stage(y0);
      A ring[M][R];
      prime_stride1(ring, y0, ph, terms);
      int next_stage = y0 + a.chunk_rows;
      for (int y = y0; y < y1; y += M, o += M * out_row_stride) {
        if (y == next_stage) {
          stage(y);
          next_stage += a.chunk_rows;
        }
#pragma unroll
        for (int c = 0; c < M; ++c) {
          if (y + c < y1) {
            const A acc = stride1_step(ring, c, y + c + ph, kh, terms);
            if (active) store_stream(o + c * out_row_stride, E::from_acc(acc));
          }
        }
      }
    } else {
      WindowRowRing<A, M, R> rows(y0, h, oh_count, kh, sh, ph);
      int next_stage = y0;
      for (int y = y0; y < y1; ++y, o += out_row_stride) {
        if (y == next_stage) {
          stage(y);
          next_stage += a.chunk_rows;
        }
        const A acc = rows.row_sum(y, y > y0, terms);
        if (active) store_stream(o, E::from_acc(acc));
      }
    }
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

// The staged kernel's tiles (GatherArgs) and shared memory; M > 0.
template <typename T, int M, bool PYT>
avgpool_status choose_staged(const Problem& q, KernelConfig<GatherArgs>* c, const DeviceInfo& device,
                             Decline* why) {
  using A = typename Elem<T>::acc_t;
  GatherArgs& a = c->args;
  const bool nhwc = q.layout == AVGPOOL_LAYOUT_NHWC;
  a.c = q.c;
  a.tile_c = 1;
  a.chan_tiles = 1;
  int threads;
  if (nhwc) {
    // A warp's lanes are 32 channels of a pixel (all of them when fewer),
    // a block 8 or more pixels: each staged quotient serves the lanes of
    // (tile_w + kw - 1) / tile_w pixels' windows at most.
    a.plane_group = 1;
    a.tile_c = (int)std::min<int64_t>(q.c, 32);
    a.chan_tiles = (int)ceil_div(q.c, a.tile_c);
    a.tile_w = (int)std::min<int64_t>(q.w, kThreads / a.tile_c);
    a.col_tiles = (int)ceil_div(q.w, a.tile_w);
    threads = (int)ceil_div(a.tile_w * a.tile_c, 32) * 32;
  } else if (q.w <= kThreads) {
    a.plane_group = (int)std::min<int64_t>(kThreads / q.w, q.planes());
    a.tile_w = (int)q.w;
    a.col_tiles = 1;
    threads = (int)ceil_div(a.plane_group * q.w, 32) * 32;
  } else {
    a.plane_group = 1;
    a.col_tiles = (int)ceil_div(q.w, kThreads);
    a.tile_w = (int)(ceil_div(ceil_div(q.w, a.col_tiles), 32) * 32);
    a.col_tiles = (int)ceil_div(q.w, a.tile_w);
    threads = a.tile_w;
  }
  a.by_tile_c = IntDivider::of((uint32_t)a.tile_c);
  const int64_t groups = nhwc ? q.n : ceil_div(q.planes(), a.plane_group);
  const int64_t tiles = groups * a.col_tiles * a.chan_tiles;
  // Segments of rows until the grid has several waves (each re-stages the
  // window rows above it).
  const int64_t target_items = 16 * (int64_t)std::max(device.sms, 1);
  const int64_t max_segments = std::max<int64_t>(1, q.h / 16);
  a.segments = (int)std::min(max_segments, std::max<int64_t>(1, ceil_div(target_items, tiles)));
  a.seg_rows = ceil_div(q.h, a.segments);
  a.segments = (int)ceil_div(q.h, a.seg_rows);
  a.items = tiles * a.segments;
  // Staged window columns per plane: those of the tile's columns.
  const int64_t cols = a.plane_group > 1 ? q.ow : std::min<int64_t>(q.ow, (a.tile_w + q.kw - 2) / q.sw + 1);
  auto stage_rows = [&](int64_t rows) { return std::min<int64_t>(q.oh, (rows + q.kh - 2) / q.sh + 1); };
  auto smem_of = [&](int64_t rows) {
    return a.plane_group * stage_rows(rows) * cols * a.tile_c * (int64_t)sizeof(A);
  };
  // Chunks: a multiple of M rows, the whole segment where 32 KiB hold it.
  constexpr int64_t kStageBytes = 32 * 1024;
  int64_t chunk = ceil_div(a.seg_rows, M) * M;
  while (chunk > M && smem_of(chunk) > kStageBytes) chunk -= M;
  a.chunk_rows = (int)chunk;
  if (nhwc)
    return use_kernel<GatherArgs, T, gather_staged_kernel<T, M, PYT, true>>(
        c, "gather_staged_kernel<nhwc>", threads, smem_of(chunk), GridShape{a.items, false}, device, why);
  return use_kernel<GatherArgs, T, gather_staged_kernel<T, M, PYT, false>>(
      c, "gather_staged_kernel", threads, smem_of(chunk), GridShape{a.items, false}, device, why);
}

avgpool_status init(const Problem& q, const DeviceInfo& device, ConfigPtr* config, Decline* why) {
  auto c = new_config<GatherArgs>(q, device);
  // Staged quotients: NCHW; NHWC in pytorch numerics (each lane's walk
  // divides M terms per window row: k5 s1 p2 10.0 -> 6.3 ms, k3 s1 p1 0.256
  // -> 0.207, k11 s4 3.80 -> 2.92 on the H200) and at row strides above 1
  // (fast k11 s4 3.12 -> 2.67). Fast numerics at row stride 1 keep the walk,
  // whose ring turns by naming with M fused multiply-adds per window row
  // (staged: k3 s1 p1 0.164 -> 0.205, k5 s1 p2 3.94 -> 4.91; with the
  // batched NHWC staging 0.186 and 4.05). The NHWC staging forms divisors as
  // float products: windows of more than 2^24 elements walk.
  const bool staged = q.layout == AVGPOOL_LAYOUT_NCHW ||
                      ((q.numerics == AVGPOOL_NUMERICS_PYTORCH || q.sh > 1) && divisor_products_exact(q.kh, q.kw));
  if (ring_size(q) > 0 && staged) {
    const int m = ring_size(q);
    const avgpool_status s = for_problem_types(q, [&](auto zero, auto pyt) {
      using T = decltype(zero);
      constexpr bool P = decltype(pyt)::value;
      switch (m) {
        case 1: return choose_staged<T, 1, P>(q, c.get(), device, why);
        case 2: return choose_staged<T, 2, P>(q, c.get(), device, why);
        case 3: return choose_staged<T, 3, P>(q, c.get(), device, why);
        default: return choose_staged<T, 5, P>(q, c.get(), device, why);
      }
    });
    return hand_over(s, std::move(c), config);
  }
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

const Impl kBackwardGatherImpl = cuda_impl(kName, Direction::kBackward, init);

}  // namespace avgpool::cuda
