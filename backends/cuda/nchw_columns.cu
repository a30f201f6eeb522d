// cuda:nchw_columns - NCHW, square kernels of 2, 3, 5 or 7 (pytorch
// numerics: up to 5) with a row stride of 1 or 2 (any column stride,
// padding, ceil_mode, divisor): the overlapping windows of CNNs.
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
// 2026-11-29, k5 s1 p2 on 1024x1024 planes, 3.34 ms).
// The divisor comes from window.h (per-axis factors, divisor_from_factors).
// No shared memory and no barriers; 64-bit offsets; 1-D grid-stride grid.
#include <algorithm>

#include "common.cuh"

namespace avgpool {
namespace cuda {
namespace {

constexpr int kThreads = 256;

struct ColumnArgs {
  int64_t planes, h, w, oh, ow, kh, kw, sh, sw, ph, pw, divisor_override;
  bool include_pad;
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
  for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < a.total;
       i += (int64_t)gridDim.x * blockDim.x) {
    const int64_t ox = i % a.ow, rest = i / a.ow;
    const int64_t run = rest % a.runs, p = rest / a.runs;
    const int64_t oy0 = run * a.run;
    const int nout = (int)(a.oh - oy0 < a.run ? a.oh - oy0 : a.run);
    const AxisWindow cw = axis_window(ox, a.w, K, a.sw, a.pw);
    const int ncols = (int)(cw.end - cw.begin);
    const int64_t col_factor = axis_divisor_factor(cw, a.include_pad);
    const T* col = src + p * a.h * a.w + cw.begin;
    const int64_t ys = oy0 * S - a.ph;  // input row of ring row 0

    // Rows are kept as W values each (the row sum, or the K elements). A block
    // of K outputs needs rows base * S + [0, NR); the first K - S are carried
    // over from the previous block, the K * S new ones are loaded together
    // (K * S * K loads in flight per thread).
    constexpr int NEW = K * S, NR = K - S + NEW;
    auto load_row = [&](int64_t y, A (&slot)[W]) {
      A v[K];
      const bool in = y >= 0 && y < a.h;
      const T* row = col + y * a.w;
#pragma unroll
      for (int c = 0; c < K; ++c) v[c] = (in && c < ncols) ? E::to_acc(load1<false>(row + c)) : A(0);
      if constexpr (PYT) {
#pragma unroll
        for (int c = 0; c < K; ++c) slot[c] = v[c];
      } else {
        A s = A(0);
#pragma unroll
        for (int c = 0; c < K; ++c) s += v[c];
        slot[0] = s;
      }
    };
    A rows[NR][W];
#pragma unroll
    for (int r = 0; r < K - S; ++r) load_row(ys + r, rows[r]);

    T* out = dst + (p * a.oh + oy0) * a.ow + ox;
    int64_t last_row_factor = -1;  // fast numerics: reciprocal of the divisor while it stays the same
    A inv = A(0);
    for (int base = 0; base < nout; base += K) {
#pragma unroll
      for (int r = 0; r < NEW; ++r) load_row(ys + (int64_t)base * S + K - S + r, rows[K - S + r]);
#pragma unroll
      for (int u = 0; u < K; ++u) {
        if (base + u < nout) {
          A sum = A(0);
#pragma unroll
          for (int r = 0; r < K; ++r)
#pragma unroll
            for (int c = 0; c < W; ++c) sum += rows[u * S + r][c];
          const int64_t row_factor =
              axis_divisor_factor(axis_window(oy0 + base + u, a.h, K, S, a.ph), a.include_pad);
          if constexpr (PYT) {
            *out = E::from_acc(sum / static_cast<A>(divisor_from_factors(row_factor, col_factor, a.divisor_override)));
          } else {
            // one rounding more than a division: within fast numerics' bound (1 ulp + the sum's)
            if (row_factor != last_row_factor) {
              inv = A(1) / static_cast<A>(divisor_from_factors(row_factor, col_factor, a.divisor_override));
              last_row_factor = row_factor;
            }
            *out = E::from_acc(sum * inv);
          }
          out += a.ow;
        }
      }
#pragma unroll
      for (int r = 0; r < K - S; ++r)  // the next block's first rows
#pragma unroll
        for (int c = 0; c < W; ++c) rows[r][c] = rows[NEW + r][c];
    }
  }
}

// pytorch numerics keep K elements per row: up to 5x5 (7x7 would spill)
bool shape_supported(const Problem& q) {
  const bool pyt = q.numerics == AVGPOOL_NUMERICS_PYTORCH;
  const bool k_ok = q.kh == q.kw && (q.kh == 2 || q.kh == 3 || q.kh == 5 || (q.kh == 7 && !pyt));
  return k_ok && (q.sh == 1 || q.sh == 2) && q.sh <= q.kh;
}

avgpool_status accepts(const Problem& q) {
  avgpool_status s = device_usable();
  if (s != AVGPOOL_SUCCESS) return s;
  if (q.layout != AVGPOOL_LAYOUT_NCHW)
    return set_error(AVGPOOL_ERROR_UNSUPPORTED, "cuda:nchw_columns is NCHW only");
  if (!shape_supported(q))
    return set_error(AVGPOOL_ERROR_UNSUPPORTED,
                     "cuda:nchw_columns takes square kernels of 2, 3, 5 or 7 (pytorch numerics: up to 5) "
                     "with a row stride of 1 or 2 (kernel %lldx%lld, stride %lld)",
                     (long long)q.kh, (long long)q.kw, (long long)q.sh);
  return AVGPOOL_SUCCESS;
}

template <typename T, int K, int S, bool PYT>
avgpool_status launch_kernel(const ColumnArgs& a, const T* src, T* dst, cudaStream_t st) {
  nchw_columns_kernel<T, K, S, PYT><<<grid_for(ceil_div(a.total, kThreads)), kThreads, 0, st>>>(src, dst, a);
  return check_launch("nchw_columns_kernel");
}

template <typename T, int K, bool PYT>
avgpool_status launch_k(const ColumnArgs& a, const T* src, T* dst, cudaStream_t st) {
  return a.sh == 2 ? launch_kernel<T, K, 2, PYT>(a, src, dst, st) : launch_kernel<T, K, 1, PYT>(a, src, dst, st);
}

template <typename T, bool PYT>
avgpool_status launch(const ColumnArgs& a, const T* src, T* dst, cudaStream_t st) {
  switch (a.kh) {
    case 2: return launch_k<T, 2, PYT>(a, src, dst, st);
    case 3: return launch_k<T, 3, PYT>(a, src, dst, st);
    case 5: return launch_k<T, 5, PYT>(a, src, dst, st);
    default:
      if constexpr (!PYT) return launch_k<T, 7, PYT>(a, src, dst, st);
      return set_error(AVGPOOL_ERROR_INTERNAL, "cuda:nchw_columns: unexpected kernel %lld", (long long)a.kh);
  }
}

avgpool_status execute(const Problem& q, const void* src, void* dst, void* stream) {
  avgpool_status s = check_device_pointers(src, dst);
  if (s != AVGPOOL_SUCCESS) return s;
  if (!shape_supported(q)) return set_error(AVGPOOL_ERROR_UNSUPPORTED, "cuda:nchw_columns: shape not supported");
  ColumnArgs a;
  copy_geometry(q, &a);
  // Rows per run: long runs re-read fewer rows (K - S per run) and measured
  // faster as long as ~400K threads remain (2026-11-29, H200, f32: k3 s1 p1 on
  // 56x56 planes 0.107 ms with 16 rows, 0.089 with 64; k3 s2 p1 ceil on
  // 112x112 0.080-0.093 with 32 or 64 rows, 0.111-0.115 with 4).
  const int64_t columns = q.planes() * q.ow;
  a.run = 64;
  while (a.run > 4 && columns * ceil_div(q.oh, a.run) < 400 * 1000) a.run /= 2;
  a.runs = ceil_div(q.oh, a.run);
  a.total = columns * a.runs;
  // Fast numerics take the element path too for 2x2 windows and row stride 2,
  // where it measured faster than row sums (2026-11-29, H200, f32: k2 s2 on
  // 64x128x112x112 0.149 vs 0.176 ms; k3 s2 p1 ceil 0.083 vs 0.089 ms).
  // (the element path holds K * K values: up to 5x5)
  const bool pyt = q.numerics == AVGPOOL_NUMERICS_PYTORCH || ((q.kh == 2 || q.sh == 2) && q.kh <= 5);
  return dispatch_dtype_flag(q.dtype, pyt, [&](auto zero, auto pytorch_order) {
    using T = decltype(zero);
    return launch<T, decltype(pytorch_order)::value>(a, static_cast<const T*>(src), static_cast<T*>(dst),
                                                     (cudaStream_t)stream);
  });
}

// AUTO passes over this kernel for windows of 5x5 and more, where
// cuda:generic measured faster (2026-11-29, H200, k5 s1 p2 on 8x64x1024x1024
// f32: 1.93 ms there, 2.86 ms here).
bool auto_skip(const Problem& q) { return q.kh >= 5; }

}  // namespace

const Impl kNchwColumnsImpl = {
    /* .name     = */ "cuda:nchw_columns",
    /* .backend  = */ AVGPOOL_BACKEND_CUDA,
    /* .accepts  = */ accepts,
    /* .execute  = */ execute,
    /* .auto_skip= */ auto_skip,
};

}  // namespace cuda
}  // namespace avgpool
