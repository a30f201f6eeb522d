// cuda:nchw_column_walk - NCHW, square kernels of 2, 3 or 5 with a row
// stride of 1 or 2 (any column stride, padding, ceil_mode, divisor): the
// overlapping windows of CNNs, in both numerics.
//
// A thread owns one output column of one plane and walks down a run of
// output rows. Each input row under the run is loaded once (its window's K
// elements: the 32 neighbouring columns of a warp make these coalesced loads
// that mostly hit L1) into a register ring holding the last K rows:
//  - fast numerics keep each row's horizontal sum, so an output costs S row
//    loads and K adds of row sums;
//  - pytorch numerics keep the row's K elements and sum the output's window
//    rows then columns, left to right, from the ring: PyTorch's order,
//    bitwise (elements outside the input are +0 in the ring, and
//    acc + 0 == acc for an accumulator that starts at +0).
// The rows of K outputs are loaded together, so each thread keeps K * S * K
// loads in flight (one row at a time left the memory system half idle:
// 2026-11-29, k5 s1 p2 on 1024x1024 planes, 3.34 ms); for 2x2 and 3x3
// windows in fast numerics, the next K outputs' loads too.
// The divisor comes from window.h (per-axis factors, divisor_from_factors).
// No shared memory and no barriers; element offsets in 64 bits, index math
// within an axis in 32 (axes below 2^28); 1-D grid-stride grid.
#include <algorithm>

#include "common.cuh"
#include "impls.h"

namespace avgpool::cuda {
namespace {

constexpr int kThreads = 256;

constexpr const char* kName = "cuda:nchw_column_walk";

struct ColumnArgs : Geometry {
  int64_t total;  // planes * runs * ow threads
  int64_t runs;   // runs of output rows per column
  int64_t run;    // output rows per run
};

template <typename T, int K, int S, bool PYT>
__global__ void __launch_bounds__(kThreads)
nchw_columns_kernel(const T* __restrict__ src, T* __restrict__ dst, ColumnArgs a) {
  using E = Elem<T>;
  using A = typename E::acc_t;
  constexpr int W = PYT ? K : 1;  // values kept per ring row
  // Axis sizes fit in 32 bits (shape_supported): index math per output in
  // int, element offsets in int64 (planes may be huge).
  const int h = (int)a.h, w = (int)a.w, ph = (int)a.ph;
  for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < a.total;
       i += (int64_t)gridDim.x * blockDim.x) {
    const int64_t rest = i / a.ow, p = rest / a.runs;
    const int ox = (int)(i - rest * a.ow), run = (int)(rest - p * a.runs);
    const int oy0 = run * (int)a.run;
    const int nout = (int)(a.oh - oy0 < a.run ? a.oh - oy0 : a.run);
    const AxisWindowOf<int> cw = axis_window_of<int>(ox, w, K, (int)a.sw, (int)a.pw);
    const int ncols = cw.end - cw.begin;
    const int col_factor = axis_divisor_factor(cw, a.include_pad);

    // Rows are kept as W values each (the row sum, or the K elements). A block
    // of K outputs needs rows base * S + [0, NR); the first K - S are carried
    // over from the previous block, the K * S new ones are loaded together
    // (K * S * K loads in flight per thread). Rows are loaded in order: y and
    // its row pointer advance by one row per load.
    constexpr int NEW = K * S, NR = K - S + NEW;
    int y = oy0 * S - ph;
    const T* row = src + (p * a.h + y) * a.w + cw.begin;  // dereferenced only for 0 <= y < h
    // Loads one row's K window elements (+0 outside the input); the sums
    // come after a block's loads are all issued (summing each row as it
    // arrives stalled the next row's loads: 2026-11-29, H200, k3 s1 p1 fast
    // 0.090 ms against 0.083 for pytorch numerics, which sum later).
    auto load_row = [&](A (&v)[K]) {
      const bool in = (unsigned)y < (unsigned)h;
#pragma unroll
      for (int c = 0; c < K; ++c) v[c] = (in && c < ncols) ? E::to_acc(load1<false>(row + c)) : A(0);
      ++y;
      row += w;
    };
    auto keep_row = [&](const A (&v)[K], A (&slot)[W]) {
      if constexpr (PYT) {
#pragma unroll
        for (int c = 0; c < K; ++c) slot[c] = v[c];
      } else {
        A s = v[0];  // fast numerics: no +0 to start (the sign of a zero sum may differ from PyTorch's)
#pragma unroll
        for (int c = 1; c < K; ++c) s += v[c];
        slot[0] = s;
      }
    };
    A rows[NR][W];
    {
      A first[K - S > 0 ? K - S : 1][K];
#pragma unroll
      for (int r = 0; r < K - S; ++r) load_row(first[r]);
#pragma unroll
      for (int r = 0; r < K - S; ++r) keep_row(first[r], rows[r]);
    }

    T* out = dst + (p * a.oh + oy0) * a.ow + ox;
    // The divisor while the row factor stays the same (it changes only at the
    // top and bottom edges): its reciprocal (fast) or itself (pytorch).
    int last_row_factor = -1;
    A div = A(1), inv = A(1);
    // One block of K outputs from its NEW freshly loaded rows.
    auto outputs = [&](const A (&fresh)[NEW][K], int base) {
#pragma unroll
      for (int r = 0; r < NEW; ++r) keep_row(fresh[r], rows[K - S + r]);
#pragma unroll
      for (int u = 0; u < K; ++u) {
        if (base + u < nout) {
          A sum = PYT ? A(0) : rows[u * S][0];
#pragma unroll
          for (int r = 0; r < K; ++r)
#pragma unroll
            for (int c = 0; c < W; ++c)
              if (PYT || r > 0) sum += rows[u * S + r][c];
          const int row_factor =
              axis_divisor_factor(axis_window_of<int>(oy0 + base + u, h, K, S, ph), a.include_pad);
          if (row_factor != last_row_factor) {
            last_row_factor = row_factor;
            div = static_cast<A>(divisor_from_factors(row_factor, col_factor, a.divisor_override));
            inv = A(1) / div;
          }
          // fast: one rounding more than a division, within its bound (1 ulp + the sum's)
          *out = E::from_acc(PYT ? sum / div : sum * inv);
          out += a.ow;
        }
      }
#pragma unroll
      for (int r = 0; r < K - S; ++r)  // the next block's first rows
#pragma unroll
        for (int c = 0; c < W; ++c) rows[r][c] = rows[NEW + r][c];
    };
    auto load_block = [&](A (&fresh)[NEW][K]) {
#pragma unroll
      for (int r = 0; r < NEW; ++r) load_row(fresh[r]);
    };
    A fresh0[NEW][K];
    if constexpr (!PYT && NEW * K <= 9) {
      // Small windows, fast numerics: two blocks' loads in flight, the next
      // block's rows requested before this block's are summed (double buffer,
      // unrolled by two; 2026-11-29, H200, k3 s1 p1 on 56x56 planes: 0.077 ms
      // against 0.090). Larger windows would hold too many registers; pytorch
      // numerics (K values per row) measured slower with it (0.088 vs 0.083).
      A fresh1[NEW][K];
      load_block(fresh0);
      for (int base = 0; base < nout; base += 2 * K) {
        if (base + K < nout) load_block(fresh1);
        outputs(fresh0, base);
        if (base + K >= nout) break;
        if (base + 2 * K < nout) load_block(fresh0);
        outputs(fresh1, base + K);
      }
    } else {
      for (int base = 0; base < nout; base += K) {
        load_block(fresh0);
        outputs(fresh0, base);
      }
    }
  }
}

avgpool_status init(const Problem& q, const DeviceInfo& device, ConfigPtr* config, Decline* why) {
  if (q.layout != AVGPOOL_LAYOUT_NCHW) return decline(why, AVGPOOL_ERROR_UNSUPPORTED, "%s is NCHW only", kName);
  const bool k_ok = q.kh == q.kw && (q.kh == 2 || q.kh == 3 || q.kh == 5);
  if (!k_ok || !(q.sh == 1 || q.sh == 2) || q.sh > q.kh || !axes_fit_int32(q))
    return decline(why, AVGPOOL_ERROR_UNSUPPORTED,
                   "%s takes square kernels of 2, 3 or 5 with a row stride of 1 or 2 and axes below 2^28 "
                   "(kernel %lldx%lld, stride %lld)",
                   kName, (long long)q.kh, (long long)q.kw, (long long)q.sh);
  auto c = new_config<ColumnArgs>(q, device);
  ColumnArgs& a = c->args;
  // Rows per run: long runs re-read fewer rows (K - S per run) but leave
  // fewer, longer threads. Measured (2026-11-29, H200, f32): runs as long as
  // ~800K threads remain, split evenly (k3 s1 p1 on 56x56 planes: 2 runs of
  // 28 rows 0.074 ms, 64 and 32 rows 0.077, 16 rows 0.082; k3 s2 p1 ceil on
  // 112x112 planes: 16 rows 0.081, 32 rows 0.083); without overlap (stride ==
  // kernel, nothing re-read) ~3.2M threads (k2 s2 on 112x112: 8 rows 0.128,
  // 28 rows 0.135, 56 rows 0.150). Runs stay within 4-64 rows.
  const int64_t columns = q.planes() * q.ow;
  const int64_t min_threads = q.kh == q.sh ? 3200 * 1000 : 800 * 1000;
  a.runs = std::min<int64_t>(ceil_div(q.oh, 4), std::max(ceil_div(q.oh, 64), ceil_div(min_threads, columns)));
  a.run = ceil_div(q.oh, a.runs);
  a.runs = ceil_div(q.oh, a.run);
  a.total = columns * a.runs;
  // Fast numerics take the element path too for 2x2 windows and row stride 2,
  // where it measured faster than row sums (2026-11-29, H200, f32: k2 s2 on
  // 64x128x112x112 0.149 vs 0.176 ms; k3 s2 p1 ceil 0.083 vs 0.089 ms).
  const bool elements = q.numerics == AVGPOOL_NUMERICS_PYTORCH || q.kh == 2 || q.sh == 2;
  const avgpool_status s = dispatch_dtype_flag(q.dtype, elements, [&](auto zero, auto pyt) {
    using T = decltype(zero);
    return dispatch_k<2, 3, 5>(q.kh, [&](auto k) {
      constexpr int K = decltype(k)::value;
      if constexpr (K == 0) {
        return decline(why, AVGPOOL_ERROR_INTERNAL, "%s: no instantiation for kernel %lld", kName, (long long)q.kh);
      } else {
        const GridShape grid{ceil_div(a.total, kThreads), false};
        return q.sh == 2 ? use_kernel<ColumnArgs, T, nchw_columns_kernel<T, K, 2, decltype(pyt)::value>>(
                               c.get(), "nchw_columns_kernel", kThreads, 0, grid, device, why)
                         : use_kernel<ColumnArgs, T, nchw_columns_kernel<T, K, 1, decltype(pyt)::value>>(
                               c.get(), "nchw_columns_kernel", kThreads, 0, grid, device, why);
      }
    });
  });
  return hand_over(s, std::move(c), config);
}

}  // namespace

const Impl kNchwColumnWalkImpl = cuda_impl(kName, Direction::kForward, init);

}  // namespace avgpool::cuda
