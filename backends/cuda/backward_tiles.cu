// cuda:backward_tiles - the backward (grad_input from grad_output) of
// pooling with overlapping windows (stride < kernel on at least one axis),
// NCHW, every dtype, both numerics, any padding, ceil_mode and divisor.
//
// Each grad_input element is the sum of the terms q = g / d of the windows
// that hold it (tests/data/README.md, "Backward"), oh ascending, then ow
// ascending, into one accumulator that starts at +0.
//
// A block owns a tile of one plane: tw columns (one per thread along x, so
// a warp's stores are coalesced row segments) by th rows. It first stages
// in shared memory the quotients of every window (oh, ow) that can hold an
// element of the tile - one coalesced load and one division per grad_output
// element and tile (backward_term: pytorch numerics' rounding per dtype, or
// the true quotient in fast numerics) - with +0 for the window indices
// outside [0, oh) x [0, ow) that the tile's index ranges reach. A window
// holds input index i of an axis exactly when start <= i < start + kernel
// (window.h, axis_outputs_of), so an element's windows along an axis are the
// n <= m consecutive ones ending at last = (i + pad) / stride, where
// n = last - floor((i + pad - kernel) / stride) (the multiples of the stride
// in (i + pad - kernel, i + pad]); those past the edges are the staged
// zeros, and adding +0 to an accumulator that started at +0 changes nothing
// (it is never -0), NaN and Inf propagate as they do in PyTorch's loop.
//
// A thread takes kRows rows of one column that share their phase modulo the
// row stride (rows y, y + sh, ..., y + (kRows - 1) sh): row r's windows are
// the thread's first row's shifted by r, so the kRows accumulators walk one
// band of kRows + m - 1 staged window rows together. Each staged value is
// read from shared memory once per thread and added to every accumulator
// whose row it holds (m of them):
//  - pytorch numerics: window row j, then its m window columns in order, to
//    each accumulator r with j - r in its row range - PyTorch's order and
//    rounding per element, bitwise. Window columns outside the column's
//    range are selected to +0, rows outside an accumulator's range skipped.
//  - fast numerics: the window row's partial sum over the column's windows
//    first, added once to each accumulator it belongs to (about 2 (kRows +
//    m) adds per kRows elements instead of kRows m^2; the same terms in
//    another order, within the float32 summation bound).
// m (>= ceil(kernel / stride) on both axes) is a template parameter, 2, 3
// or 5, with the loops over the band unrolled; other counts run the same
// scheme with run-time loops (m = 0 instantiation; per element m^2 shared
// loads). Where kernel = m * stride on both axes (k3 s1, k5 s1, k4 s2, ...)
// every element has exactly m windows per axis and the exact instantiation
// drops the masks (a select per staged value read, a predicate per add).
// int32 within a plane (axes_fit_int32), 64-bit plane and row offsets.
#include <algorithm>
#include <type_traits>

#include "backward_common.cuh"
#include "impls.h"

namespace avgpool::cuda {
namespace {

constexpr const char* kName = "cuda:backward_tiles";
constexpr int kRows = 8;             // grad_input rows per thread (one column, one phase of the row stride)
constexpr int kMaxThreads = 512;     // tw * sh * groups: 64 x 8 or 32 x 16 at most
constexpr int kTargetThreads = 256;  // block size aimed at: 4 groups of 64 x 8 rows at row stride 1
constexpr int64_t kMaxStageBytes = 48 * 1024;
constexpr int kMaxRowStride = 16;
// Blocks of kMaxThreads per SM the registers are planned for: two (64
// registers) for 2- and 4-byte types; one for f64, whose accumulators and
// band values take twice the registers (64 spilled).
template <typename T> constexpr int min_blocks() { return sizeof(T) == 8 ? 1 : 2; }

struct TilesArgs : Geometry {
  int m;             // window rows and columns per element the walk covers: >= ceil(k / s) on both axes
  int tw;            // tile columns (= threads along x): 32 or 64; at unit strides 97 - m (96 staged columns)
  int th;            // tile rows: groups * kRows * sh
  int pitch;         // staged quotients per window row: (tw - 1) / sw + 1 + m
  int walkers;       // threads that sum: tw * sh * groups (the block is whole warps, for the staging)
  int64_t tiles_x;   // ceil(w / tw)
  int64_t tiles;     // tiles per plane: tiles_x * ceil(h / th)
  int64_t items;     // planes * tiles
};

// floor(a / b) for b > 0 and any sign of a.
__device__ __forceinline__ int floor_div(int a, int b) { return a >= 0 ? a / b : -((-a + b - 1) / b); }

// The sums of kRows elements of one column (rows y + r sh) from the staged
// quotients, m = M compile-time. base: the staged quotient of window row
// last(y) - M + 1, column last(x) - M + 1; the element's windows are the
// last nh rows and nw columns of its M x M square (window row j of the band
// belongs to accumulator r when 0 <= j - r < M and j - r >= M - nh).
// EXACT: nh = nw = M for every element (no masks).
template <typename A, int M, bool PYT, bool EXACT>
__device__ __forceinline__ void walk_band(const A* base, int pitch, int nh, int nw, A (&acc)[kRows]) {
  bool row_ok[M], col_ok[M];
#pragma unroll
  for (int d = 0; d < M; ++d) {
    row_ok[d] = EXACT || d >= M - nh;
    col_ok[d] = EXACT || d >= M - nw;
  }
#pragma unroll
  for (int r = 0; r < kRows; ++r) acc[r] = A(0);
#pragma unroll
  for (int j = 0; j < kRows + M - 1; ++j) {
    const A* row = base + j * pitch;
    A v[M];
#pragma unroll
    for (int dw = 0; dw < M; ++dw) {
      const A x = row[dw];
      v[dw] = col_ok[dw] ? x : A(0);  // a select, not a product: an unused quotient may be Inf or NaN
    }
    if constexpr (PYT) {
#pragma unroll
      for (int r = 0; r < kRows; ++r) {
        const int dh = j - r;
        if (dh >= 0 && dh < M && row_ok[dh]) {
#pragma unroll
          for (int dw = 0; dw < M; ++dw) acc[r] += v[dw];
        }
      }
    } else {
      A s = v[0];
#pragma unroll
      for (int dw = 1; dw < M; ++dw) s += v[dw];
#pragma unroll
      for (int r = 0; r < kRows; ++r) {
        const int dh = j - r;
        if (dh >= 0 && dh < M && row_ok[dh]) acc[r] += s;
      }
    }
  }
}

// walk_band with a run-time m: per window (row, then column, ascending), the
// kRows accumulators' quotients (PyTorch's order in both numerics).
template <typename A>
__device__ __forceinline__ void walk_band_runtime(const A* base, int pitch, int m, int nh, int nw,
                                                  A (&acc)[kRows]) {
#pragma unroll
  for (int r = 0; r < kRows; ++r) acc[r] = A(0);
  for (int dh = m - nh; dh < m; ++dh) {
    for (int dw = m - nw; dw < m; ++dw) {
      const A* p = base + dh * pitch + dw;
#pragma unroll
      for (int r = 0; r < kRows; ++r) acc[r] += p[r * pitch];
    }
  }
}

// The grad_output region of one item: window rows [oh_lo, oh_lo + nr) x
// columns [ow_lo, ow_lo + nc) of one plane - from the last window of row y0
// less m - 1 to the last window of row y0 + th - 1 (nr <= groups * kRows +
// m), columns likewise (nc <= pitch).
struct TileRegion {
  int64_t plane;
  int y0, x0, oh_lo, nr, ow_lo, nc;
};

__device__ __forceinline__ TileRegion region_of(const TilesArgs& a, int64_t item, int m) {
  TileRegion g;
  g.plane = item / a.tiles;
  const int64_t rest = item - g.plane * a.tiles;
  const int tile_y = (int)(rest / a.tiles_x);
  const int tile_x = (int)(rest - (int64_t)tile_y * a.tiles_x);
  g.y0 = tile_y * a.th;
  g.x0 = tile_x * a.tw;
  const int oh_top = (g.y0 + (int)a.ph) / (int)a.sh;
  g.oh_lo = oh_top - m + 1;
  g.nr = (g.y0 + a.th - 1 + (int)a.ph) / (int)a.sh - oh_top + m;
  const int ow_left = (g.x0 + (int)a.pw) / (int)a.sw;
  g.ow_lo = ow_left - m + 1;
  g.nc = (g.x0 + a.tw - 1 + (int)a.pw) / (int)a.sw - ow_left + m;
  return g;
}

// Stages the quotients q = g / d (backward_term) of region r of one plane
// (g_plane: its grad_output) in stage, rows pitch apart, +0 outside the
// output. stage_quotients (backward_common.cuh) does the same for several
// planes; this one-plane form is leaner per row and per element:
//  - a warp's row pointers move by a fixed step (no 64-bit index math per
//    row);
//  - the divisor is the product of its two factors in the accumulator type
//    (exact: init declines windows of more than 2^24 elements), not an
//    int64 product converted per element;
//  - out-of-output values are predicated loads selected to +0, and the
//    division is skipped by branches uniform over the warp (rows outside
//    the output, groups of 32 columns past nc).
// At unit strides a tile's nc is 96: one pass of kStageCols columns per lane.
// Measured on the H200 against stage_quotients with the same changes
// (2026-12-01, f32 k5 s1 p2 NCHW): 2.93 against 3.73 ms fast, 3.26 against
// 3.56 pytorch. In the gather (several planes per block) the changes were
// slower (k3 s1 p1 0.165 -> 0.180 ms), so the gather keeps stage_quotients.
template <typename T, bool PYT>
__device__ __forceinline__ void stage_tile_quotients(const TilesArgs& a, const T* __restrict__ g_plane,
                                                     typename Elem<T>::acc_t* stage, const TileRegion& r) {
  using A = typename Elem<T>::acc_t;
  const int lane = (int)threadIdx.x & 31, warp = (int)threadIdx.x >> 5, nwarps = (int)blockDim.x >> 5;
  const int oh_count = (int)a.oh, ow_count = (int)a.ow;
  const bool overridden = a.divisor_override != 0;
  const A override_divisor = static_cast<A>(a.divisor_override);
  for (int c0 = 0; c0 < r.nc; c0 += 32 * kStageCols) {
    A col_factor[kStageCols];  // 1 with an override (the row's factor is the override)
    bool col_in[kStageCols];
#pragma unroll
    for (int k = 0; k < kStageCols; ++k) {
      const int ow = r.ow_lo + c0 + lane + 32 * k;
      col_in[k] = c0 + lane + 32 * k < r.nc && ow >= 0 && ow < ow_count;
      const int f = axis_divisor_factor(axis_window_of<int>(ow, (int)a.w, (int)a.kw, (int)a.sw, (int)a.pw),
                                        a.include_pad);
      col_factor[k] = overridden || !col_in[k] ? A(1) : static_cast<A>(f);
    }
    const T* g_row = g_plane + (int64_t)(r.oh_lo + warp) * ow_count + r.ow_lo + c0 + lane;
    A* srow = stage + warp * a.pitch + c0 + lane;
    const int64_t g_step = (int64_t)nwarps * ow_count;
    const int s_step = nwarps * a.pitch;
#pragma unroll 2
    for (int i = warp; i < r.nr; i += nwarps, g_row += g_step, srow += s_step) {
      const int oh = r.oh_lo + i;
      const bool row_in = oh >= 0 && oh < oh_count;
      const int f =
          axis_divisor_factor(axis_window_of<int>(oh, (int)a.h, (int)a.kh, (int)a.sh, (int)a.ph), a.include_pad);
      const A row_factor = overridden ? override_divisor : row_in ? static_cast<A>(f) : A(1);
      T gv[kStageCols];
#pragma unroll
      for (int k = 0; k < kStageCols; ++k) gv[k] = row_in && col_in[k] ? load1<false>(g_row + 32 * k) : T(0.0f);
#pragma unroll
      for (int k = 0; k < kStageCols; ++k) {
        A q = A(0);
        if (row_in && c0 + 32 * k < r.nc)
          q = backward_term_by<T, PYT>(gv[k], backward_divisor_of<T, PYT>(row_factor * col_factor[k]));
        if (c0 + lane + 32 * k < r.nc) srow[32 * k] = row_in && col_in[k] ? q : A(0);
      }
    }
  }
}

// The kRows sums of the thread's column in the staged quotients of region
// g, stored to grad_input.
template <typename T, int M, bool PYT, bool EXACT>
__device__ __forceinline__ void sum_and_store(const TilesArgs& a, const typename Elem<T>::acc_t* stage,
                                              const TileRegion& g, int tx, int row_in_tile, T* __restrict__ gin) {
  using E = Elem<T>;
  using A = typename E::acc_t;
  const int m = M > 0 ? M : a.m;
  const int h = (int)a.h, w = (int)a.w;
  const int kh = (int)a.kh, kw = (int)a.kw, sh = (int)a.sh, sw = (int)a.sw, ph = (int)a.ph, pw = (int)a.pw;
  const int x = g.x0 + tx;
  if (x >= w) return;
  const int y = g.y0 + row_in_tile;
  const int last_h = (y + ph) / sh, last_w = (x + pw) / sw;
  const int nh = last_h - floor_div(y + ph - kh, sh);  // <= m
  const int nw = last_w - floor_div(x + pw - kw, sw);
  // In the stage: rows last_h - m + 1 .. last_h + kRows - 1 and columns
  // last_w - m + 1 .. last_w, all within [0, nr) x [0, nc).
  const A* base = stage + (last_h - m + 1 - g.oh_lo) * a.pitch + (last_w - m + 1 - g.ow_lo);
  A acc[kRows];
  if constexpr (M > 0) walk_band<A, M, PYT, EXACT>(base, a.pitch, nh, nw, acc);
  else walk_band_runtime<A>(base, a.pitch, m, nh, nw, acc);
  // The rows' addresses by pointer steps, the stores predicated on the rows
  // inside the plane (no 64-bit index math per row).
  T* out = gin + g.plane * a.h * a.w + (int64_t)y * w + x;
  const int64_t row_step = (int64_t)sh * w;
  const int rows_in = y < h ? (h - y + sh - 1) / sh : 0;
#pragma unroll
  for (int r = 0; r < kRows; ++r, out += row_step)
    if (r < rows_in) store_stream(out, E::from_acc(acc[r]));
}

// One item per tile (column tiles fastest, then row tiles, then planes):
// stage the tile's window quotients, then each thread sums its kRows
// elements and stores them. Threads: tw along x, then sh phases, then
// groups of kRows * sh rows. T: element type; M: windows per axis (0:
// run-time a.m); PYT: PyTorch's numerics; EXACT: kernel = M * stride on
// both axes.
template <typename T, int M, bool PYT, bool EXACT>
__global__ void __launch_bounds__(kMaxThreads, min_blocks<T>())
tiles_kernel(const T* __restrict__ gout, T* __restrict__ gin, TilesArgs a) {
  using A = typename Elem<T>::acc_t;
  extern __shared__ __align__(16) unsigned char smem_raw[];
  A* stage = reinterpret_cast<A*>(smem_raw);
  const int m = M > 0 ? M : a.m;
  const int t = (int)threadIdx.x;
  const int ty = t / a.tw, tx = t - ty * a.tw;
  const int group = ty / (int)a.sh, phase = ty - group * (int)a.sh;
  const int row_in_tile = group * kRows * (int)a.sh + phase;  // the thread's first row in the tile

  for (int64_t item = blockIdx.x; item < a.items; item += gridDim.x) {
    const TileRegion g = region_of(a, item, m);
    __syncthreads();  // the previous item's reads of the stage are done
    stage_tile_quotients<T, PYT>(a, gout + g.plane * a.oh * a.ow, stage, g);
    __syncthreads();
    if (t < a.walkers) sum_and_store<T, M, PYT, EXACT>(a, stage, g, tx, row_in_tile, gin);
  }
}

// ---- host ------------------------------------------------------------------------------
// The compile-time window count for q: 2, 3 or 5 (4 runs 5, its first row
// and column masked), or 0 for the run-time loops.
int compile_time_m(int64_t m) { return m <= 3 ? (int)m : m <= 5 ? 5 : 0; }

avgpool_status init(const Problem& q, const DeviceInfo& device, ConfigPtr* config, Decline* why) {
  if (q.layout != AVGPOOL_LAYOUT_NCHW)
    return decline(why, AVGPOOL_ERROR_UNSUPPORTED, "%s takes NCHW only; cuda:backward_gather takes NHWC", kName);
  if (q.sh >= q.kh && q.sw >= q.kw)
    return decline(why, AVGPOOL_ERROR_UNSUPPORTED,
                   "%s needs overlapping windows (stride < kernel on an axis); cuda:backward_broadcast takes the "
                   "others",
                   kName);
  if (!axes_fit_int32(q)) return decline_axes_int32(kName, why);
  if (!divisor_products_exact(q.kh, q.kw))
    return decline(why, AVGPOOL_ERROR_UNSUPPORTED,
                   "%s: windows of %lld x %lld elements, above 2^24 (divisors are formed as products of floats)",
                   kName, (long long)q.kh, (long long)q.kw);
  if (q.sh > kMaxRowStride)
    return decline(why, AVGPOOL_ERROR_UNSUPPORTED,
                   "%s: row stride %lld above %d (a block has 32 threads per column tile and stride phase)", kName,
                   (long long)q.sh, kMaxRowStride);
  auto c = new_config<TilesArgs>(q, device);
  TilesArgs& a = c->args;
  const int64_t m = std::max(ceil_div(q.kh, q.sh), ceil_div(q.kw, q.sw));  // >= 2
  const int mc = compile_time_m(m);
  a.m = mc > 0 ? mc : (int)m;
  // Tiles of 64 columns (32 for narrow planes and row strides above 8, so
  // that a block stays within kMaxThreads), and as many groups of kRows
  // rows per stride phase as reach kTargetThreads without exceeding the
  // plane's rows. At unit strides with m <= 5, 97 - m columns: a tile's
  // window columns are then exactly the 96 that a warp stages per pass
  // (stage_tile_quotients), where 64 columns staged 68 of 96 lanes' values.
  const bool unit_strides = q.sh == 1 && q.sw == 1 && mc > 0;
  a.tw = unit_strides && q.w > 64 ? 97 - a.m : q.w <= 32 || q.sh > 8 ? 32 : 64;
  const int64_t groups = std::max<int64_t>(
      1, std::min<int64_t>((kTargetThreads + a.tw * q.sh / 2) / (a.tw * q.sh), ceil_div(q.h, kRows * q.sh)));
  a.walkers = (int)(a.tw * q.sh * groups);
  const int threads = (int)ceil_div(a.walkers, 32) * 32;
  a.th = (int)(groups * kRows * q.sh);
  a.pitch = (int)((a.tw - 1) / q.sw + 1 + a.m);
  const int64_t stage_rows = groups * kRows + a.m;
  const int64_t acc_size = q.dtype == AVGPOOL_DTYPE_F64 ? 8 : 4;
  const int64_t smem = stage_rows * a.pitch * acc_size;
  if (smem > kMaxStageBytes)
    return decline(why, AVGPOOL_ERROR_UNSUPPORTED,
                   "%s: the quotients of a tile's windows (%lld x %d) take %lld bytes of shared memory, above %lld "
                   "(windows of %lld rows or columns per element)",
                   kName, (long long)stage_rows, a.pitch, (long long)smem, (long long)kMaxStageBytes, (long long)m);
  a.tiles_x = ceil_div(q.w, a.tw);
  a.tiles = a.tiles_x * ceil_div(q.h, a.th);
  a.items = q.planes() * a.tiles;
  const avgpool_status s = for_problem_types(q, [&](auto zero, auto pyt) {
    using T = decltype(zero);
    constexpr bool P = decltype(pyt)::value;
    auto use = [&](auto mm, auto exact) {
      return use_kernel<TilesArgs, T, tiles_kernel<T, decltype(mm)::value, P, decltype(exact)::value>>(
          c.get(), exact ? "tiles_kernel<exact>" : "tiles_kernel", threads, smem, GridShape{a.items, false}, device,
          why);
    };
    auto with_m = [&](auto mm) {
      if (q.kh == mm * q.sh && q.kw == mm * q.sw) return use(mm, std::true_type{});
      return use(mm, std::false_type{});
    };
    switch (mc) {
      case 2: return with_m(std::integral_constant<int, 2>{});
      case 3: return with_m(std::integral_constant<int, 3>{});
      case 5: return with_m(std::integral_constant<int, 5>{});
      default: return use(std::integral_constant<int, 0>{}, std::false_type{});
    }
  });
  return hand_over(s, std::move(c), config);
}

}  // namespace

const Impl kBackwardTilesImpl = cuda_impl(kName, Direction::kBackward, init);

}  // namespace avgpool::cuda
