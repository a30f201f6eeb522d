// cuda:any_column_walk - fast numerics, either layout, windows that overlap
// down the plane (row stride < kernel rows), any kernel of up to kMaxRows
// rows, any width, column stride, padding, ceil_mode, divisor.
//
// The column walks of nchw_column_walk.cu with a run-time window: a thread
// owns one output column of one element (NCHW: a column of a plane; NHWC: a
// pixel column and one channel of an image, neighbouring threads on
// neighbouring channels) and walks down a run of output rows. Each input
// row under the run is summed once across its window's columns (kw loads
// that the warp's neighbouring threads make coalesced, mostly L1 hits where
// windows overlap along the row too), and the row sums go to a ring of the
// last kh rows in shared memory, one column of slots per thread (no barrier:
// a thread reads only its own slots). An output then costs sh * kw loads and
// kh shared-memory reads instead of kh * kw loads, which is what windows of
// many rows at small row strides need: one thread per output re-reads each
// input row kh / sh times.
// Fast numerics only: each output is the sum of its rows' sums, times the
// reciprocal of the divisor (one rounding more than a division; the order
// of terms differs from PyTorch's).
// Row sums of a window no wider than 11 are unrolled to a compile-time
// bound (with_width_bound), wider windows run a plain loop; windows of up
// to 4 columns load the rows of several outputs before summing them (a
// ring of kh + (block - 1) * sh slots). AUTO takes it for tall windows at
// row stride 1 (policy.cu, column_walk_before_direct). Element offsets in
// 64 bits, index math within an axis in 32 (axes below 2^28); 1-D
// grid-stride grid.
#include <algorithm>

#include "common.cuh"
#include "impls.h"

namespace avgpool::cuda {
namespace {

constexpr int kThreads = 256;
constexpr int kMaxRows = 32;    // window rows: a ring of at most 32 slots * kThreads accumulators (64 KB in f64)
constexpr int kRingSlots = 24;  // the ring's slots where blocks of outputs load together
constexpr int kMaxBlock = 8;

constexpr const char* kName = "cuda:any_column_walk";

struct WalkArgs : Geometry {
  int64_t cs;        // elements per pixel: 1 (NCHW), C (NHWC)
  int64_t columns;   // threads across one output row: ow * cs
  int64_t plane_in;  // elements of one input plane (NCHW) or image (NHWC): h * w * cs
  int64_t total;     // planes (or images) * runs * columns
  int64_t runs;      // runs of output rows per column
  int64_t run;       // output rows per run
  int block;         // outputs whose rows are loaded together
  int ring;          // ring slots: kh + (block - 1) * sh
};

// Windows up to kBlockWidth wide load the rows of several outputs together
// (blocks), up to 64 bytes of loaded values in flight per thread (16
// floats, 8 doubles): their few loads per row left the memory system idle
// (H100, 2026-12-05, forced: 4x179x1308x81 k2 s1 bf16 NHWC 0.579 ms one
// row at a time, 0.390 in blocks; 9x203x133x239 k3x1 s1 f32 0.522, 0.319).
// Wider windows load one row at a time into a ring of one output's kh rows:
// the blocks' index math and registers (4 blocks of threads per SM instead
// of 5) cost them 0.74-0.85 of that speed (8x67x870x1875 k9x7 s1x3 bf16
// 2.29 ms against 3.12 in blocks).
constexpr int kBlockWidth = 4;
template <int KW> constexpr bool blocks_of_outputs() { return KW > 0 && KW <= kBlockWidth; }
template <typename A, int KW> constexpr int rows_together() {
  return blocks_of_outputs<KW>() ? 64 / (int)sizeof(A) / KW : 1;
}

template <typename T, int KW>
__global__ void __launch_bounds__(kThreads) any_columns_kernel(const T* __restrict__ src, T* __restrict__ dst,
                                                               WalkArgs a) {
  using E = Elem<T>;
  using A = typename E::acc_t;
  constexpr int G = rows_together<A, KW>();
  constexpr bool kBlocks = blocks_of_outputs<KW>();
  extern __shared__ unsigned char smem_raw[];
  A* const ring = reinterpret_cast<A*>(smem_raw) + threadIdx.x;  // slot s at ring[s * kThreads]
  const int h = (int)a.h, w = (int)a.w, kh = (int)a.kh, sh = (int)a.sh, ph = (int)a.ph, slots = a.ring;
  const int64_t cs = a.cs, in_row = a.w * a.cs;
  for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < a.total;
       i += (int64_t)gridDim.x * blockDim.x) {
    const int64_t rest = i / a.columns, p = rest / a.runs;
    const int64_t j = i - rest * a.columns;  // ox * cs + channel
    const int run = (int)(rest - p * a.runs);
    const int ox = (int)(j / cs);
    const int64_t ch = j - ox * cs;
    const int oy0 = run * (int)a.run;
    const int nout = (int)(a.oh - oy0 < a.run ? a.oh - oy0 : a.run);
    const AxisWindowOf<int> cw = axis_window_of<int>(ox, w, (int)a.kw, (int)a.sw, (int)a.pw);
    const int ncols = cw.end - cw.begin;
    const int col_factor = axis_divisor_factor(cw, a.include_pad);
    // The window's first column in input row y is at column + y * in_row.
    const T* const column = src + p * a.plane_in + cw.begin * cs + ch;

    // Input rows enter the ring in order: y is the next row, slot its place.
    int y = oy0 * sh - ph, slot = 0;
    auto add_rows = [&](int n) {
      for (int r0 = 0; r0 < n; r0 += G) {
        if constexpr (KW > 0) {
          A v[G][KW];
#pragma unroll
          for (int g = 0; g < G; ++g) {
            const bool in = r0 + g < n && (unsigned)(y + g) < (unsigned)h;
            const T* row = column + (int64_t)(y + g) * in_row;  // dereferenced only inside the input
#pragma unroll
            for (int x = 0; x < KW; ++x) v[g][x] = (in && x < ncols) ? E::to_acc(load1<false>(row + x * cs)) : A(0);
          }
#pragma unroll
          for (int g = 0; g < G; ++g) {
            if (r0 + g < n) {
              A s = v[g][0];
#pragma unroll
              for (int x = 1; x < KW; ++x) s += v[g][x];  // +0 past ncols
              ring[slot * kThreads] = s;
              if (++slot == slots) slot = 0;
            }
          }
          y += G < n - r0 ? G : n - r0;
        } else {
          A s = A(0);
          if ((unsigned)y < (unsigned)h) {
            const T* row = column + (int64_t)y * in_row;
            s = E::to_acc(load1<false>(row));
            for (int x = 1; x < ncols; ++x) s += E::to_acc(load1<false>(row + x * cs));
          }
          ring[slot * kThreads] = s;
          if (++slot == slots) slot = 0;
          ++y;
        }
      }
    };

    T* out = dst + (p * a.oh + oy0) * a.columns + j;
    int last_row_factor = -1;
    A inv = A(1);
    auto store = [&](int u, A sum) {
      const int row_factor = axis_divisor_factor(axis_window_of<int>(oy0 + u, h, kh, sh, ph), a.include_pad);
      if (row_factor != last_row_factor) {
        last_row_factor = row_factor;
        inv = A(1) / static_cast<A>(divisor_from_factors(row_factor, col_factor, a.divisor_override));
      }
      *out = E::from_acc(sum * inv);  // one rounding more than a division: within the fast bound
      out += a.columns;
    };
    if constexpr (!kBlocks) {
      // The ring holds one output's kh rows (in any order).
      add_rows(kh);
      for (int u = 0;;) {
        A sum = ring[0];
        for (int r = 1; r < kh; ++r) sum += ring[r * kThreads];
        store(u, sum);
        if (++u == nout) break;
        add_rows(sh);
      }
    } else {
      int loaded = 0, first = 0;  // rows in the ring so far; the slot of the next output's first row
      for (int b = 0; b < nout; b += a.block) {
        // The rows of this block's outputs, all loads issued before the sums.
        const int u_end = b + a.block < nout ? b + a.block : nout;
        const int need = (u_end - 1) * sh + kh;
        add_rows(need - loaded);
        loaded = need;
        for (int u = b; u < u_end; ++u) {
          A sum = ring[first * kThreads];
          for (int r = 1, s = first; r < kh; ++r) {
            if (++s == slots) s = 0;
            sum += ring[s * kThreads];
          }
          if ((first += sh) >= slots) first -= slots;
          store(u, sum);
        }
      }
    }
  }
}

avgpool_status init(const Problem& q, const DeviceInfo& device, ConfigPtr* config, Decline* why) {
  if (q.numerics != AVGPOOL_NUMERICS_FAST)
    return decline(why, AVGPOOL_ERROR_UNSUPPORTED, "%s sums rows first: fast numerics only", kName);
  if (q.sh >= q.kh || q.kh > kMaxRows)
    return decline(why, AVGPOOL_ERROR_UNSUPPORTED,
                   "%s takes windows of at most %d rows that overlap down the plane (kernel rows %lld, row "
                   "stride %lld)",
                   kName, kMaxRows, (long long)q.kh, (long long)q.sh);
  if (!axes_fit_int32(q)) return decline_axes_int32(kName, why);
  auto c = new_config<WalkArgs>(q, device);
  WalkArgs& a = c->args;
  const bool nhwc = q.layout == AVGPOOL_LAYOUT_NHWC;
  a.cs = nhwc ? q.c : 1;
  a.columns = q.ow * a.cs;
  a.plane_in = q.h * q.w * a.cs;
  const int64_t planes = nhwc ? q.n : q.planes();
  // Runs of up to 64 rows (each re-reads the kh - sh rows it shares with
  // the run above), as many as give ~800K threads (the column walks'
  // measure), down to one output row. Runs of at least 2 * (kh - sh) rows
  // left small problems a few thousand threads (H100, 2026-12-05, forced:
  // 1x170x806x43 k11x8 s8x7 f64 0.053 ms against 0.024 with these runs).
  const int64_t columns = planes * a.columns;
  a.runs = std::min<int64_t>(q.oh, std::max(ceil_div(q.oh, 64), ceil_div(800 * 1000, columns)));
  a.run = ceil_div(q.oh, a.runs);
  a.runs = ceil_div(q.oh, a.run);
  a.total = columns * a.runs;
  // Blocks of outputs whose rows are loaded together, as many as keep the
  // ring within kRingSlots (kh alone beyond it), at most kMaxBlock.
  a.block = q.kw > kBlockWidth ? 1 : (int)std::clamp<int64_t>((kRingSlots - q.kh) / q.sh + 1, 1, kMaxBlock);
  a.ring = (int)(q.kh + (a.block - 1) * q.sh);
  const int64_t smem = a.ring * kThreads * (q.element_size == 8 ? 8 : 4);
  const avgpool_status s = dispatch_dtype_cuda(q.dtype, [&](auto zero) {
    using T = decltype(zero);
    return with_width_bound(q.kw, [&](auto bound) {
      constexpr int KW = decltype(bound)::value;
      const GridShape grid{ceil_div(a.total, kThreads), false};
      return use_kernel<WalkArgs, T, any_columns_kernel<T, KW>>(c.get(), "any_columns_kernel", kThreads, smem, grid,
                                                                device, why);
    });
  });
  return hand_over(s, std::move(c), config);
}

}  // namespace

const Impl kAnyColumnWalkImpl = cuda_impl(kName, Direction::kForward, init);

}  // namespace avgpool::cuda
