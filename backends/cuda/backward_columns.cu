// cuda:backward_columns - the backward of windows of a few window rows and
// columns per element (overlapping or not), both numerics, every dtype:
// four grad_input columns (NCHW) or four channels of one pixel column
// (NHWC, below) per thread, walked down a run of rows, with no shared
// memory.
//
// NCHW: a thread owns columns x0..x0 + 3 of one plane. The windows that hold any
// of them along the row are NW consecutive window columns starting at owa
// (NW <= (3 + kw - 1) / sw + 1), and the windows that hold a row y are the
// at most MH = (kh - 1) / sh + 1 consecutive window rows ending at
// (y + ph) / sh. The thread keeps a ring of the last MH window rows: each
// window row is loaded once per thread (NW cached loads of grad_output,
// which neighbouring threads share in L1), one window row before the walk
// reaches it so that the loads' latency overlaps the rows summed meanwhile,
// and turned into its terms when it enters the ring:
//  - pytorch numerics: the NW quotients g / d (backward_term: one true
//    division each, f16/bf16 rounded to the type); an element then adds the
//    quotients of its window rows (oh ascending) and, per row, of its window
//    columns (ow ascending) to an accumulator that starts at +0: PyTorch's
//    order and rounding, bitwise. Slots of windows outside the output hold
//    +0, which leaves such an accumulator unchanged.
//  - fast numerics: one partial per window row and column, the sum of its
//    windows' g * RN(1 / d) (one rounding more than a division per term);
//    an element adds the partials of its window rows.
// Which window columns hold which of the four columns is a per-thread mask
// (the same for every thread when 4 is a multiple of the stride, except at
// the plane's edges); at column stride 1 with kw = NW - 3 it is known at
// compile time (KW) and the sums carry no mask. Divisors come from window.h
// per axis factor, converted once per change of the row factor (edge rows,
// ceil mode). Index math within an axis in int (axes below 2^28), offsets of
// planes and rows in int64; 16-byte (f64: two 16-byte, halves: 8-byte)
// stores where rows are whole groups of four and dst is aligned.
#include <algorithm>
#include <type_traits>

#include "backward_common.cuh"
#include "impls.h"
#include "int_divider.h"

namespace avgpool::cuda {
namespace {

constexpr int kThreads = 256;
constexpr int V = 4;  // grad_input columns per thread
constexpr const char* kName = "cuda:backward_columns";

struct ColumnsArgs : Geometry {
  bool vec_out;   // rows of whole groups of four and dst aligned: one vector store per row
  int64_t total;  // planes * runs * nt threads
  int64_t runs;   // runs of grad_input rows per plane
  int64_t run;    // rows per run
  int64_t nt;     // threads across a row (groups of four columns)
  IntDivider by_nt, by_runs;  // thread index -> (plane, run, group): total < 2^31
  IntDivider by_w;            // NHWC: -> (n, run, x, channel group)
  IntDivider by_c;            // NHWC by pixels: -> (n, run, pixel group, channel)
  int64_t channels;           // NHWC: C
  bool fast_quotients;        // every divisor within quotient_divisor_limit: pytorch terms by reciprocal
};

template <typename T> struct alignas(4 * sizeof(T) < 16 ? 4 * sizeof(T) : 16) Group {
  T v[V];
};

__device__ __forceinline__ int floor_div(int a, int b) { return a >= 0 ? a / b : -((-a + b - 1) / b); }

// The window rows that hold grad_input row y, first = floor((y + ph - kh) /
// sh) + 1 .. last = floor((y + ph) / sh), as a walk moves down one row at a
// time: both ends kept as quotient and remainder (each moves by at most one
// per row), no division per row.
struct WindowRows {
  int last, last_r, first1, first_r, sh;  // first1 = first - 1
  __device__ __forceinline__ WindowRows(int y0, int kh, int stride, int ph) : sh(stride) {
    last = floor_div(y0 + ph, sh);
    last_r = y0 + ph - last * sh;
    first1 = floor_div(y0 + ph - kh, sh);
    first_r = y0 + ph - kh - first1 * sh;
  }
  // To the next row; true when a window row enters (it is `last`).
  __device__ __forceinline__ bool next_row() {
    if (++first_r == sh) {
      first_r = 0;
      ++first1;
    }
    if (++last_r != sh) return false;
    last_r = 0;
    ++last;
    return true;
  }
  // Of a ring of m window rows ending at `last`, those before the first
  // that holds the row (the same for every thread of the row).
  __device__ __forceinline__ int skip(int m) const { return m - (last - first1); }
};

// N values as one assignable unit (a ring slot, a fetched window row).
template <class E, int N> struct Array {
  E v[N];
};

// The divisor factors of a thread's window columns: consecutive ones from
// `first` (unclipped; those outside [0, end) get the factor 1 and hold
// only zero terms). WindowColumns recomputes them where the divisors change
// (the full-row and unrolled walks, whose registers are tightest: the
// pytorch 3 x 6 rings' spills went from 16-64 to 8-24 bytes);
// KeptFactors keeps them in registers (the other walks, which spilled
// more when recomputing).
struct WindowColumns {
  int first, end, w, kw, sw, pw;
  bool include_pad;
  __device__ __forceinline__ int factor(int j) const {
    const int o = first + j;
    return o >= 0 && o < end ? axis_divisor_factor(axis_window_of<int>(o, w, kw, sw, pw), include_pad) : 1;
  }
};
template <int N> struct KeptFactors {
  int f[N];
  __device__ __forceinline__ int factor(int j) const { return f[j]; }
};
template <bool KEEP, int N> __device__ __forceinline__ auto column_factors(const WindowColumns& c) {
  if constexpr (KEEP) {
    KeptFactors<N> k;
#pragma unroll
    for (int j = 0; j < N; ++j) k.f[j] = c.factor(j);
    return k;
  } else {
    return c;
  }
}

// The divisors of window row oh's N window columns (pytorch numerics
// backward_divisor's and, for backward_term_fast, their refined reciprocals
// in rcp; fast numerics their correctly rounded reciprocals), converted
// again only when the row's divisor factor differs from the last one's
// (*row_factor_of_div; edge rows, ceil mode).
// Out of line (OUT) in the unrolled and full-row walks: it runs at edge
// rows only, and their copies of the row step would each hold it; inline
// in the others, where the calls cost more than they save (H200,
// 2026-12-01, f32 pytorch numerics, this and divide_terms out of line
// everywhere: NCHW k2 s2 0.165 -> 0.179 ms, k3 s2 p1 ceil 0.087 -> 0.095).
template <typename T, bool PYT, int N> struct RowDivisors {
  typename Elem<T>::acc_t div[N];
  float rcp[N];
};
template <typename T, bool PYT, int N, class Factors>
__device__ __forceinline__ RowDivisors<T, PYT, N> row_divisors(int row_factor, Factors cols, int64_t divisor_override) {
  using A = typename Elem<T>::acc_t;
  RowDivisors<T, PYT, N> r;
#pragma unroll
  for (int j = 0; j < N; ++j) {
    const int64_t d = divisor_from_factors(row_factor, cols.factor(j), divisor_override);
    r.div[j] = PYT ? backward_divisor<T, PYT>(d) : A(1) / static_cast<A>(d);
    r.rcp[j] = PYT && kTermsByReciprocal<T> ? refined_reciprocal(r.div[j]) : 0.0f;
  }
  return r;
}
template <typename T, bool PYT, int N, class Factors>
__device__ __noinline__ RowDivisors<T, PYT, N> row_divisors_out(int row_factor, Factors cols,
                                                                int64_t divisor_override) {
  return row_divisors<T, PYT, N>(row_factor, cols, divisor_override);
}

template <typename T, bool PYT, bool OUT, int N, class Factors>
__device__ __forceinline__ void refresh_divisors(const Geometry& a, int oh, const Factors& cols,
                                                 typename Elem<T>::acc_t (&div)[N], float (&rcp)[N],
                                                 int* row_factor_of_div) {
  const int row_factor =
      axis_divisor_factor(axis_window_of<int>(oh, (int)a.h, (int)a.kh, (int)a.sh, (int)a.ph), a.include_pad);
  if (row_factor == *row_factor_of_div) return;
  *row_factor_of_div = row_factor;
  const RowDivisors<T, PYT, N> r = OUT ? row_divisors_out<T, PYT, N>(row_factor, cols, a.divisor_override)
                                      : row_divisors<T, PYT, N>(row_factor, cols, a.divisor_override);
#pragma unroll
  for (int j = 0; j < N; ++j) {
    div[j] = r.div[j];
    rcp[j] = r.rcp[j];
  }
}

// Pytorch numerics: put(j, k, term) for the term of value(j, k) over
// div[j], j < N, k < K (backward_term_by's value); for float accumulators
// by reciprocal, with one range check for the batch and `/` again, out of
// line (OUT, as row_divisors) or inline, where it fails.
template <typename T, int N, int K>
__device__ __forceinline__ Array<float, N * K> divide_terms(Array<T, N * K> g, Array<float, N> div) {
  Array<float, N * K> q;
#pragma unroll
  for (int j = 0; j < N; ++j)
#pragma unroll
    for (int k = 0; k < K; ++k) q.v[j * K + k] = backward_term_by<T, true>(g.v[j * K + k], div.v[j]);
  return q;
}
template <typename T, int N, int K>
__device__ __noinline__ Array<float, N * K> divide_terms_out(Array<T, N * K> g, Array<float, N> div) {
  return divide_terms<T, N, K>(g, div);
}

template <typename T, bool OUT, int N, int K, class Value, class Put>
__device__ __forceinline__ void pytorch_terms(const typename Elem<T>::acc_t (&div)[N], const float (&rcp)[N],
                                              bool fast_quotients, Value&& value, Put&& put) {
  if constexpr (kTermsByReciprocal<T>) {
    QuotientRange range;
#pragma unroll
    for (int j = 0; j < N; ++j)
#pragma unroll
      for (int k = 0; k < K; ++k) put(j, k, backward_term_fast(value(j, k), div[j], rcp[j], range));
    if (fast_quotients && range.exact()) return;
    Array<T, N * K> g;
    Array<float, N> d;
#pragma unroll
    for (int j = 0; j < N; ++j) {
      d.v[j] = div[j];
#pragma unroll
      for (int k = 0; k < K; ++k) g.v[j * K + k] = value(j, k);
    }
    const Array<float, N * K> q = OUT ? divide_terms_out<T, N, K>(g, d) : divide_terms<T, N, K>(g, d);
#pragma unroll
    for (int j = 0; j < N; ++j)
#pragma unroll
      for (int k = 0; k < K; ++k) put(j, k, q.v[j * K + k]);
  } else {
#pragma unroll
    for (int j = 0; j < N; ++j)
#pragma unroll
      for (int k = 0; k < K; ++k) put(j, k, backward_term_by<T, true>(value(j, k), div[j]));
  }
}

// The walk both layouts make down rows [y0, y1): a ring of MH slots, each
// one window row's terms, filled first; a window row enters when the row's
// window range moves, its values fetched one window row ahead so that
// their latency overlaps the rows summed meanwhile. fetch_row is called
// for consecutive window rows, from rows.last - (MH - 1) on.
// emit(skip, slot) sums row y from the slots of ring rows skip..MH - 1
// (slot(r): ring row r, oldest first; ring row MH - 1 is window row
// rows.last) and stores it; skip is std::integral_constant 0 where no ring
// row is skipped.
// Walks (WALK):
//  - kWalkTurn, for row stride 1 with every ring row holding every row
//    (MH = kh): a window row enters at every row, and the loop is unrolled
//    MH times so that the ring turns by renaming (the entering row
//    overwrites the oldest slot) rather than by MH - 1 slot copies per row;
//  - kWalkFull, the same rows with the slots shifted: no skip tests;
//  - kWalkAny: the slots shift down when a window row enters, and each row
//    skips the ring rows that do not hold it.
enum Walk { kWalkAny, kWalkFull, kWalkTurn };
template <int MH, int WALK, bool AHEAD, class Values, class Slot, class Fetch, class Make, class Emit>
__device__ __forceinline__ void walk_rows(int y0, int y1, WindowRows& rows, Slot (&ring)[MH], Fetch&& fetch_row,
                                          Make&& make_terms, Emit&& emit) {
  Values next;
  if constexpr (AHEAD) {
    // Every load of the first MH + 1 window rows issued before the first
    // terms wait on them: one memory latency at the start of a run, not MH.
    Values first[MH];
#pragma unroll
    for (int r = 0; r < MH; ++r) fetch_row(rows.last - (MH - 1) + r, first[r]);
    fetch_row(rows.last + 1, next);
#pragma unroll
    for (int r = 0; r < MH; ++r) make_terms(rows.last - (MH - 1) + r, first[r], ring[r]);
  } else {
#pragma unroll
    for (int r = 0; r < MH; ++r) {
      Values gv;
      fetch_row(rows.last - (MH - 1) + r, gv);
      make_terms(rows.last - (MH - 1) + r, gv, ring[r]);
    }
    fetch_row(rows.last + 1, next);
  }
  if constexpr (WALK == kWalkTurn) {
    // Row y0 + k: ring row r in slot (r + k) % MH.
    for (int y = y0; y < y1; y += MH) {
#pragma unroll
      for (int k = 0; k < MH; ++k) {
        if (y + k >= y1) break;
        if (y + k > y0) {
          rows.next_row();
          make_terms(rows.last, next, ring[(k + MH - 1) % MH]);
          fetch_row(rows.last + 1, next);
        }
        emit(std::integral_constant<int, 0>(), [&](int r) -> const Slot& { return ring[(r + k) % MH]; });
      }
    }
  } else {
    for (int y = y0; y < y1; ++y) {
      if (y > y0 && rows.next_row()) {
#pragma unroll
        for (int r = 0; r + 1 < MH; ++r) ring[r] = ring[r + 1];
        make_terms(rows.last, next, ring[MH - 1]);
        fetch_row(rows.last + 1, next);
      }
      auto slot = [&](int r) -> const Slot& { return ring[r]; };
      if constexpr (WALK == kWalkFull) emit(std::integral_constant<int, 0>(), slot);
      else emit(rows.skip(MH), slot);
    }
  }
}

// Blocks per SM the registers are planned for: three (at most 85 registers)
// but for f64, the 5 x 8 ring and the unrolled (kWalkTurn) walks, two.
// Tried and not kept: five blocks for the fast 2 x 3 kernel (48 registers,
// 52 bytes spilled, against 60 registers at four): NCHW k3 s2 p1 ceil
// 0.086 -> 0.089 ms, H200, 2026-12-01.
template <typename T, int MH, int NW, int WALK> constexpr int min_blocks() {
  return sizeof(T) == 8 || MH * NW >= 40 || WALK == kWalkTurn ? 2 : 3;
}

// MH window rows, NW window columns; KW: the column kernel when the column
// stride is 1 and KW = NW - V + 1 (masks known at compile time), else 0.
// PIX: NHWC, a thread's four columns are four pixels of one channel (C
// elements apart), neighbouring threads neighbouring channels; else NCHW.
// WALK: walk_rows' walk (Walk).
template <typename T, int MH, int NW, int KW, bool PYT, bool PIX, int WALK>
__global__ void __launch_bounds__(kThreads, (min_blocks<T, MH, NW, WALK>()))
columns_kernel(const T* __restrict__ g, T* __restrict__ dst, ColumnsArgs a) {
  using E = Elem<T>;
  using A = typename E::acc_t;
  constexpr int S = PYT ? NW : V;  // values a window row keeps in the ring
  constexpr bool OUT = WALK != kWalkAny;  // row_divisors, divide_terms out of line
  static_assert(KW == 0 || KW == NW - V + 1, "compile-time masks need NW = V + KW - 1");
  const int h = (int)a.h, w = (int)a.w, oh_n = (int)a.oh, ow_n = (int)a.ow;
  const int kh = (int)a.kh, kw = (int)a.kw, sh = (int)a.sh, sw = (int)a.sw, ph = (int)a.ph, pw = (int)a.pw;
  for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < a.total;
       i += (int64_t)gridDim.x * blockDim.x) {
    // NCHW: (plane, run, group of four columns); NHWC (PIX): (image, run,
    // group of four pixels, channel).
    uint32_t rest = (uint32_t)i, p32;
    int64_t channel = 0;
    if constexpr (PIX) channel = a.by_c.divmod(rest, &rest);
    const int t = (int)a.by_nt.divmod(rest, &rest);
    const int run = (int)a.by_runs.divmod(rest, &p32);
    const int64_t p = p32;
    // Elements between neighbouring columns, and the tensors' row pitches.
    // (int: a row of either tensor has fewer than 2^31 elements.)
    const int col_step = PIX ? (int)a.channels : 1;
    const int64_t g_row_step = a.ow * col_step, out_row_step = a.w * col_step;
    const int y0 = run * (int)a.run, y1 = min(h, y0 + (int)a.run);
    const int x0 = t * V;
    // Window columns owa .. owa + NW - 1 (unclipped indices; those outside
    // [0, ow) hold no element and give +0 terms). Column x0 + c lies in
    // window columns ceil((x0 + c + pw - kw + 1) / sw) .. floor((x0 + c +
    // pw) / sw): one division for each end, then steps of c.
    const int lo_q = floor_div(x0 + pw - kw, sw), lo_r = x0 + pw - kw - lo_q * sw;
    const int hi_q = floor_div(x0 + pw, sw), hi_r = x0 + pw - hi_q * sw;
    const int owa = lo_q + 1;
    unsigned mask[V];  // bit j: window column owa + j holds column x0 + c
#pragma unroll
    for (int c = 0; c < V; ++c) {
      const int lo = (lo_r + c >= sw) + (lo_r + c >= 2 * sw) + (lo_r + c >= 3 * sw);
      const int hi = hi_q - owa + (hi_r + c >= sw) + (hi_r + c >= 2 * sw) + (hi_r + c >= 3 * sw);
      mask[c] = x0 + c < w && hi >= lo ? (((2u << hi) - 1u) & ~((1u << lo) - 1u)) : 0u;
    }
    bool col_in[NW];
#pragma unroll
    for (int j = 0; j < NW; ++j) col_in[j] = owa + j >= 0 && owa + j < ow_n;
    const auto col_factors = column_factors<!OUT, NW>(WindowColumns{owa, ow_n, w, kw, sw, pw, a.include_pad});
    // pytorch numerics: the divisors (backward_divisor); fast: RN(1 / d).
    A div[NW];
    float rcp[NW];
    int div_row_factor = -1;
    const T* g_plane = g + p * a.oh * g_row_step + channel + (int64_t)owa * col_step;

    // Whether window column owa + j holds column x0 + c. Terms it does not
    // hold are skipped (adding their +0 would change nothing: the sums
    // start at +0 and are never -0).
    auto holds = [&](int c, int j) {
      if constexpr (KW > 0) return j >= c && j < c + KW;
      else return ((mask[c] >> j) & 1u) != 0;
    };
    // Window row oh's grad_output values (loads issued, not waited for).
    using Values = Array<T, NW>;
    using Terms = Array<A, S>;
    WindowRows rows(y0, kh, sh, ph);
    // The next window row fetch_row loads (walk_rows fetches consecutive
    // ones): a pointer stepped by a row, no multiplication per row.
    const T* g_next_row = g_plane + (int64_t)(rows.last - (MH - 1)) * g_row_step;
    auto fetch_row = [&](int oh, Values& gv) {
      const T* g_row = g_next_row;
      g_next_row += g_row_step;
      if (oh < 0 || oh >= oh_n) return;
#pragma unroll
      for (int j = 0; j < NW; ++j) gv.v[j] = col_in[j] ? load1<false>(g_row + j * col_step) : T(0);
    };
    // Window row oh's terms from its fetched values into slot (zeros
    // outside the output).
    auto make_terms = [&](int oh, const Values& gv, Terms& slot) {
#pragma unroll
      for (int j = 0; j < S; ++j) slot.v[j] = A(0);
      if (oh < 0 || oh >= oh_n) return;
      refresh_divisors<T, PYT, OUT>(a, oh, col_factors, div, rcp, &div_row_factor);
      if constexpr (PYT) {
        // Columns outside the output hold g = 0: a +0 or -0 term.
        pytorch_terms<T, OUT, NW, 1>(div, rcp, a.fast_quotients, [&](int j, int) { return gv.v[j]; },
                                [&](int j, int, A q) { slot.v[j] = q; });
      } else {
        A q[NW];
#pragma unroll
        for (int j = 0; j < NW; ++j) q[j] = col_in[j] ? E::to_acc(gv.v[j]) * div[j] : A(0);
#pragma unroll
        for (int c = 0; c < V; ++c) {
          A s = A(0);
#pragma unroll
          for (int j = 0; j < NW; ++j)
            if (holds(c, j)) s += q[j];
          slot.v[c] = s;
        }
      }
    };

    Terms ring[MH];
    T* out = dst + (p * a.h + y0) * out_row_step + channel + (int64_t)x0 * col_step;
    // (The first window rows' loads all ahead only for the fast 2 x 3 ring:
    // the larger rings spill with them in flight, and the pytorch 2 x 3
    // ring drops to three blocks per SM.)
    walk_rows<MH, WALK, !PYT && MH * NW <= 6, Values>(y0, y1, rows, ring, fetch_row, make_terms, [&](auto skip, auto&& slot) {
      A acc[V];
#pragma unroll
      for (int c = 0; c < V; ++c) acc[c] = A(0);
#pragma unroll
      for (int r = 0; r < MH; ++r) {
        if (r < skip) continue;
        const Terms& terms = slot(r);
#pragma unroll
        for (int c = 0; c < V; ++c) {
          if constexpr (PYT) {
#pragma unroll
            for (int j = 0; j < NW; ++j)
              if (holds(c, j)) acc[c] += terms.v[j];
          } else {
            acc[c] += terms.v[c];
          }
        }
      }
      if (!PIX && a.vec_out) {
        Group<T> o;
#pragma unroll
        for (int c = 0; c < V; ++c) o.v[c] = E::from_acc(acc[c]);
        *reinterpret_cast<Group<T>*>(out) = o;
      } else {
#pragma unroll
        for (int c = 0; c < V; ++c)
          if (x0 + c < w) out[c * col_step] = E::from_acc(acc[c]);
      }
      out += out_row_step;
    });
  }
}

// NHWC: a thread owns channels c0..c0 + 3 of one pixel column (n, x) and
// walks down a run of rows. The column's windows are the nc <= MW window
// columns from `first` (axis_outputs_of), the same for the walk; the ring
// keeps, per window row, the MW x 4 quotients (pytorch numerics) or the 4
// channels' partials (fast numerics), from 16-byte loads of MW pixels (8
// bytes for halves; f64 two 16-byte loads), one window row ahead.
template <typename T, int MH, int MW, bool PYT> constexpr int channels_min_blocks() {
  // f64's 3 x 3 ring of quotients: one block (bounded to two it spilled 1.1 KB).
  if (sizeof(T) == 8 && PYT && MH * MW >= 9) return 1;
  return sizeof(T) == 8 || (PYT && MH * MW >= 9) ? 2 : 3;
}

template <typename T, int MH, int MW, bool PYT>
__global__ void __launch_bounds__(kThreads, (channels_min_blocks<T, MH, MW, PYT>()))
channels_kernel(const T* __restrict__ g, T* __restrict__ dst, ColumnsArgs a) {
  using E = Elem<T>;
  using A = typename E::acc_t;
  constexpr int S = PYT ? MW : 1;  // groups a window row keeps in the ring
  const int h = (int)a.h, w = (int)a.w, oh_n = (int)a.oh, ow_n = (int)a.ow;
  const int kh = (int)a.kh, kw = (int)a.kw, sh = (int)a.sh, sw = (int)a.sw, ph = (int)a.ph, pw = (int)a.pw;
  const int64_t channels = a.channels;
  for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < a.total;
       i += (int64_t)gridDim.x * blockDim.x) {
    uint32_t rest, rest2, n32;
    const int cg = (int)a.by_nt.divmod((uint32_t)i, &rest);  // channel group
    const int x = (int)a.by_w.divmod(rest, &rest2);
    const int run = (int)a.by_runs.divmod(rest2, &n32);
    const int64_t n = n32;
    const int y0 = run * (int)a.run, y1 = min(h, y0 + (int)a.run);
    const int c0 = cg * V;
    const AxisOutputsOf<int> cols = axis_outputs_of<int>(x, w, ow_n, kw, sw, pw);
    const int nc = cols.last - cols.first + 1;  // <= 0: no window holds the column
    // (Window columns from nc on hold no window of the column: factor 1.)
    const auto col_factors =
        column_factors<true, MW>(WindowColumns{cols.first, cols.first + nc, w, kw, sw, pw, a.include_pad});
    A div[MW];
    float rcp[MW];
    int div_row_factor = -1;
    const T* g_col = g + (n * a.oh * a.ow + cols.first) * channels + c0;

    using Values = Array<Group<T>, MW>;
    using Terms = Array<Array<A, V>, S>;
    WindowRows rows(y0, kh, sh, ph);
    const int64_t g_row_step = a.ow * channels;
    const T* g_next_row = g_col + (int64_t)(rows.last - (MH - 1)) * g_row_step;  // as in columns_kernel
    auto fetch_row = [&](int oh, Values& gv) {
      const T* g_row = g_next_row;
      g_next_row += g_row_step;
      if (oh < 0 || oh >= oh_n) return;
#pragma unroll
      for (int j = 0; j < MW; ++j)
        if (j < nc) gv.v[j] = *reinterpret_cast<const Group<T>*>(g_row + j * channels);
    };
    auto make_terms = [&](int oh, const Values& gv, Terms& slot) {
#pragma unroll
      for (int j = 0; j < S; ++j)
#pragma unroll
        for (int c = 0; c < V; ++c) slot.v[j].v[c] = A(0);
      if (oh < 0 || oh >= oh_n) return;
      refresh_divisors<T, PYT, false>(a, oh, col_factors, div, rcp, &div_row_factor);
      if constexpr (PYT) {
        // Window columns from nc on hold no window: g = 0, a zero term.
        pytorch_terms<T, false, MW, V>(
            div, rcp, a.fast_quotients, [&](int j, int c) { return j < nc ? gv.v[j].v[c] : T(0); },
            [&](int j, int c, A q) { slot.v[j].v[c] = q; });
      } else {
#pragma unroll
        for (int j = 0; j < MW; ++j)
          if (j < nc)
#pragma unroll
            for (int c = 0; c < V; ++c) slot.v[0].v[c] = fma(E::to_acc(gv.v[j].v[c]), div[j], slot.v[0].v[c]);
      }
    };

    Terms ring[MH];
    T* out = dst + ((n * a.h + y0) * a.w + x) * channels + c0;
    const int64_t out_step = a.w * channels;
    walk_rows<MH, kWalkAny, false, Values>(y0, y1, rows, ring, fetch_row, make_terms, [&](auto skip, auto&& slot) {
      A acc[V];
#pragma unroll
      for (int c = 0; c < V; ++c) acc[c] = A(0);
#pragma unroll
      for (int r = 0; r < MH; ++r) {
        if (r < skip) continue;
        const Terms& terms = slot(r);
#pragma unroll
        for (int j = 0; j < S; ++j)
#pragma unroll
          for (int c = 0; c < V; ++c) acc[c] += terms.v[j].v[c];
      }
      Group<T> o;
#pragma unroll
      for (int c = 0; c < V; ++c) o.v[c] = E::from_acc(acc[c]);
      *reinterpret_cast<Group<T>*>(out) = o;
      out += out_step;
    });
  }
}

// The instantiations, each covering the smaller ones: (window rows, window
// columns) = (2, 3), (3, 4), (3, 6), (5, 8); NHWC (window rows, window
// columns of one pixel) = (2, 2), (3, 3) (a 5 x 5 ring of four channels
// spilled 0.6-2.5 KB).
struct Shape {
  int mh, nw;
};
constexpr Shape kShapes[] = {{2, 3}, {3, 4}, {3, 6}, {5, 8}};

template <typename T, bool PYT, bool PIX, int MH, int NW>
avgpool_status use_shape(KernelConfig<ColumnsArgs>* c, const Problem& q, const DeviceInfo& device, Decline* why) {
  const GridShape grid{ceil_div(c->args.total, kThreads), false};
  constexpr int KW = NW - V + 1;
  // Pytorch numerics' 3 x 3 and 5 x 5 windows at unit strides (not f64):
  // the unrolled walk at 5 x 5; at 3 x 3 it needs more registers than
  // three blocks per SM leave, and two blocks were slower (H200,
  // 2026-12-01, f32 k3 s1 p1 NCHW 0.095 -> 0.108 ms, NHWC 0.103 -> 0.110),
  // so 3 x 3 shifts its slots, without skip tests.
  if constexpr (PYT && sizeof(T) < 8 && (MH == 3 || MH == 5) && KW == MH) {
    constexpr int WALK = MH == 5 ? kWalkTurn : kWalkFull;
    if (q.sw == 1 && q.kw == KW && q.sh == 1 && q.kh == MH)
      return use_kernel<ColumnsArgs, T, columns_kernel<T, MH, NW, KW, PYT, PIX, WALK>>(c, "columns_kernel", kThreads,
                                                                                      0, grid, device, why);
  }
  if (q.sw == 1 && q.kw == KW)
    return use_kernel<ColumnsArgs, T, columns_kernel<T, MH, NW, KW, PYT, PIX, kWalkAny>>(c, "columns_kernel",
                                                                                        kThreads, 0, grid, device, why);
  return use_kernel<ColumnsArgs, T, columns_kernel<T, MH, NW, 0, PYT, PIX, kWalkAny>>(c, "columns_kernel", kThreads,
                                                                                     0, grid, device, why);
}

// The smallest of kShapes that holds the problem's windows per four
// columns, or -1.
int columns_shape(const Problem& q) {
  const int64_t mh = (q.kh - 1) / q.sh + 1, nw = (V + q.kw - 2) / q.sw + 1;
  for (int s = 0; s < 4; ++s)
    if (kShapes[s].mh >= mh && kShapes[s].nw >= nw) return s;
  return -1;
}

avgpool_status decline_columns_shape(const Problem& q, Decline* why) {
  return decline(why, AVGPOOL_ERROR_UNSUPPORTED,
                 "%s takes at most 5 window rows per grad_input row and 8 window columns per four columns "
                 "(kernel %lldx%lld, stride %lldx%lld: %lld and %lld)",
                 kName, (long long)q.kh, (long long)q.kw, (long long)q.sh, (long long)q.sw,
                 (long long)((q.kh - 1) / q.sh + 1), (long long)((V + q.kw - 2) / q.sw + 1));
}

template <typename T, bool PYT, bool PIX>
avgpool_status use_columns_shape(KernelConfig<ColumnsArgs>* c, int shape, const Problem& q, const DeviceInfo& device,
                                 Decline* why) {
  switch (shape) {
    case 0: return use_shape<T, PYT, PIX, 2, 3>(c, q, device, why);
    case 1: return use_shape<T, PYT, PIX, 3, 4>(c, q, device, why);
    case 2: return use_shape<T, PYT, PIX, 3, 6>(c, q, device, why);
    default: return use_shape<T, PYT, PIX, 5, 8>(c, q, device, why);
  }
}

// Rows per run: about 800K threads, runs of 4-256 rows (each run loads the
// MH - 1 window rows above its first row again). Measured (H200,
// 2026-12-01, f32 NCHW, threads 200K / 400K / 800K / 1.6M / 3.2M, fast
// numerics, ms): k3 s2 p1 ceil 0.093 / 0.093 / 0.088 / 0.092 / 0.120, k3 s1
// p1 0.094 / 0.089 / 0.086 / 0.097 / 0.097, k5 s1 p2 1.66 / 1.66 / 1.68 /
// 1.73 / 1.79, k11 s4 1.33 / 1.33 / 1.33 / 1.31 / 1.30. Around 800K the
// waves of resident blocks decide (the same, 23:09 UTC, k3 s2 p1 ceil, 600K
// / 800K / 1M / 1.2M threads: 0.104 / 0.087 / 0.098 / 0.099 ms; at four
// blocks per SM 800K threads are 5.94 waves, 600K 4.4, 1M 7.4).
void plan_runs(const Problem& q, int64_t columns, ColumnsArgs* a) {
  const int64_t min_threads = 800 * 1000;
  a->runs = std::min<int64_t>(ceil_div(q.h, 4), std::max(ceil_div(q.h, 256), ceil_div(min_threads, columns)));
  a->run = ceil_div(q.h, a->runs);
  a->runs = ceil_div(q.h, a->run);
  a->total = columns * a->runs;
}

// A walk's threads: nt across a row (IntDivider by_nt), `columns` thread
// columns in all, runs by plan_runs; and whether every divisor takes the
// pytorch terms by reciprocal. Declines 2^31 threads or more (the thread
// index is decoded in 32 bits).
avgpool_status plan_walk(const Problem& q, int64_t nt, int64_t columns, ColumnsArgs* a, Decline* why) {
  a->nt = nt;
  a->fast_quotients = q.max_divisor() <= quotient_divisor_limit(q.dtype);
  plan_runs(q, columns, a);
  if (a->total >= (int64_t(1) << 31))
    return decline(why, AVGPOOL_ERROR_UNSUPPORTED, "%s: %lld threads (2^31 and more)", kName, (long long)a->total);
  a->by_nt = IntDivider::of((uint32_t)a->nt);
  a->by_runs = IntDivider::of((uint32_t)a->runs);
  return AVGPOOL_SUCCESS;
}

constexpr Shape kChannelShapes[] = {{2, 2}, {3, 3}};

// NHWC in pytorch numerics, four pixels of one channel per thread (PIX):
// each window column's quotient serves the four columns, where the
// channels walk divides each one per pixel.
avgpool_status init_nhwc_pixels(const Problem& q, int shape, const DeviceInfo& device, ConfigPtr* config,
                                Decline* why) {
  auto c = new_config<ColumnsArgs>(q, device);
  ColumnsArgs& a = c->args;
  a.channels = q.c;
  const int64_t nt = ceil_div(q.w, V);
  if (avgpool_status s = plan_walk(q, nt, q.n * nt * q.c, &a, why); s != AVGPOOL_SUCCESS) return s;
  a.by_c = IntDivider::of((uint32_t)q.c);
  avgpool_status s = for_problem_types(q, [&](auto zero, auto pyt) {
    if constexpr (decltype(pyt)::value) return use_columns_shape<decltype(zero), true, true>(c.get(), shape, q, device, why);
    else return decline(why, AVGPOOL_ERROR_UNSUPPORTED, "%s: NHWC by pixels is for pytorch numerics", kName);
  });
  return hand_over(s, std::move(c), config);
}

avgpool_status init_nhwc(const Problem& q, const DeviceInfo& device, ConfigPtr* config, Decline* why) {
  const int64_t mh = (q.kh - 1) / q.sh + 1, mw = (q.kw - 1) / q.sw + 1;
  int shape = -1;
  for (int s = 0; s < 2 && shape < 0; ++s)
    if (kChannelShapes[s].mh >= mh && kChannelShapes[s].nw >= mw) shape = s;
  // Pytorch numerics by pixels where the channels walk would divide each
  // window's value three times or more (or cannot take the windows): H200,
  // 2026-12-01, f32, ms, channels → pixels: k3 s1 p1 0.126 → 0.103, k11 s4
  // 1.95 → 1.73, k5 s1 p2 (gather) 4.39 → 2.01; k3 s2 p1 ceil (two windows
  // per pixel) 0.090 → 0.096 stays on the channels.
  const int pixels_shape = columns_shape(q);
  if (q.numerics == AVGPOOL_NUMERICS_PYTORCH && pixels_shape >= 0 && (shape < 0 || q.c % V != 0 || mw >= 3))
    return init_nhwc_pixels(q, pixels_shape, device, config, why);
  if (shape < 0 || q.c % V != 0)
    return decline(why, AVGPOOL_ERROR_UNSUPPORTED,
                   "%s takes NHWC with channels in groups of four and at most 3 windows per element along each "
                   "axis (c %lld, kernel %lldx%lld, stride %lldx%lld)",
                   kName, (long long)q.c, (long long)q.kh, (long long)q.kw, (long long)q.sh, (long long)q.sw);
  auto c = new_config<ColumnsArgs>(q, device);
  ColumnsArgs& a = c->args;
  a.channels = q.c;
  if (avgpool_status s = plan_walk(q, q.c / V, q.n * q.w * (q.c / V), &a, why); s != AVGPOOL_SUCCESS) return s;
  a.by_w = IntDivider::of((uint32_t)q.w);
  // Group loads and stores: other pointers run another implementation.
  c->src_align = c->dst_align = std::min<int64_t>(16, V * q.element_size);
  const GridShape grid{ceil_div(a.total, kThreads), false};
  avgpool_status s = for_problem_types(q, [&](auto zero, auto pyt) {
    using T = decltype(zero);
    constexpr bool PYT = decltype(pyt)::value;
    switch (shape) {
      case 0: return use_kernel<ColumnsArgs, T, channels_kernel<T, 2, 2, PYT>>(c.get(), "channels_kernel", kThreads, 0, grid, device, why);
      default: return use_kernel<ColumnsArgs, T, channels_kernel<T, 3, 3, PYT>>(c.get(), "channels_kernel", kThreads, 0, grid, device, why);
    }
  });
  return hand_over(s, std::move(c), config);
}

avgpool_status init(const Problem& q, const DeviceInfo& device, ConfigPtr* config, Decline* why) {
  if (!axes_fit_int32(q)) return decline_axes_int32(kName, why);
  if (q.layout == AVGPOOL_LAYOUT_NHWC) return init_nhwc(q, device, config, why);
  const int shape = columns_shape(q);
  if (shape < 0) return decline_columns_shape(q, why);
  return hand_over_vector_and_scalar<ColumnsArgs>(q, device, config, [&](KernelConfig<ColumnsArgs>* c, bool vectors) {
    ColumnsArgs& a = c->args;
    a.vec_out = vectors && q.w % V == 0;
    if (a.vec_out) c->vec_align = std::min<int64_t>(16, V * q.element_size);
    const int64_t nt = ceil_div(q.w, V);
    if (avgpool_status s = plan_walk(q, nt, q.planes() * nt, &a, why); s != AVGPOOL_SUCCESS) return s;
    return for_problem_types(q, [&](auto zero, auto pyt) {
      return use_columns_shape<decltype(zero), decltype(pyt)::value, false>(c, shape, q, device, why);
    });
  });
}

}  // namespace

const Impl kBackwardColumnsImpl = cuda_impl(kName, Direction::kBackward, init);

}  // namespace avgpool::cuda
