// cuda:nhwc - NHWC (channels_last), any stride, padding, ceil_mode, divisor.
//
// One thread per (output pixel, 16-byte group of consecutive channels): the
// threads of a warp read consecutive channels of the same input pixels, so
// each window element is one coalesced 16-byte load per thread. The window's
// column loop is unrolled for common kernel widths (2, 3, 5, 7, 11), putting
// kw loads in flight per row. Each channel has its own accumulator, summed
// rows then columns left to right: PyTorch's order, bitwise, in both
// numerics. Non-overlapping windows use streaming loads; overlapping ones
// the read-only cache (neighbours re-read the same pixels). A scalar variant
// (one channel per thread) serves C * size not a multiple of 16 bytes or
// unaligned pointers. 64-bit indices; 1-D grid-stride grid.
//
// Fast numerics, square kernels of 3, 5 or 7 with a row stride S of 1 or 2,
// and 11 with stride 4 for 4- and 8-byte types (the overlapping shapes where
// re-reading kh * kw pixels per output made the kernel above cache-bound):
// the column walk. A thread walks down a run of output rows of one (pixel
// column, channel group), computing each input row's horizontal window sum
// once and keeping the last K of them in a register ring, so an output
// costs S * K loads instead of K * K. A thread takes R pixel columns side by
// side (4 for 3x3 and 2 for 5x5 at stride 1, else 1), loading a row's
// (R - 1) * S + K pixels once for all R windows (zeros outside the input),
// with every load of a row issued before its sums and index math in int.
// AUTO sends most of these shapes to cuda:nhwc_stream (16-byte channel
// groups); the walk keeps fast row stride 2 and 7x7, and whatever that
// implementation declines (rows of a tile too wide for shared memory).
#include <type_traits>

#include "common.cuh"

namespace avgpool {
namespace cuda {
namespace {

struct NhwcArgs {
  int64_t total;  // output pixels * channel groups
  int64_t cg;     // channel groups per pixel
  int64_t c, planes, h, w, oh, ow, kh, kw, sh, sw, ph, pw, divisor_override;
  bool include_pad;
};

// Three blocks per SM (85 registers) put more loads in flight; bf16's
// conversions need more registers, so two for it (spills otherwise).
template <typename T> constexpr int nhwc_min_blocks() { return std::is_same<T, __nv_bfloat16>::value ? 2 : 3; }

template <typename T, int K, bool VEC, bool STREAM>
__global__ void __launch_bounds__(256, nhwc_min_blocks<T>())
nhwc_kernel(const T* __restrict__ src, T* __restrict__ dst, NhwcArgs a) {
  using E = Elem<T>;
  using A = typename E::acc_t;
  constexpr int V = VEC ? vec_of<T>() : 1;
  using L = typename std::conditional<VEC, Vec16<T>, T>::type;
  for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < a.total;
       i += (int64_t)gridDim.x * blockDim.x) {
    int64_t t = i;
    const int64_t g = t % a.cg; t /= a.cg;
    const int64_t ox = t % a.ow; t /= a.ow;
    const int64_t oy = t % a.oh;
    const int64_t n = t / a.oh;
    const AxisWindow rw = axis_window(oy, a.h, a.kh, a.sh, a.ph);
    const AxisWindow cw = axis_window(ox, a.w, a.kw, a.sw, a.pw);
    const T* base = src + ((n * a.h) * a.w + cw.begin) * a.c + g * V;
    const int ncols = (int)(cw.end - cw.begin);
    A acc[V];
#pragma unroll
    for (int j = 0; j < V; ++j) acc[j] = A(0);
    for (int64_t y = rw.begin; y < rw.end; ++y) {
      const T* row = base + y * a.w * a.c;
      if constexpr (K > 0) {
        L v[K];
#pragma unroll
        for (int x = 0; x < K; ++x) {
          if (x < ncols) {
            if constexpr (VEC) v[x] = load16<STREAM>(row + x * a.c);
            else v[x] = load1<STREAM>(row + x * a.c);
          }
        }
#pragma unroll
        for (int x = 0; x < K; ++x) {
          if (x < ncols) {
            if constexpr (VEC) {
#pragma unroll
              for (int j = 0; j < V; ++j) acc[j] += lane_acc(v[x], j);
            } else {
              acc[0] += E::to_acc(v[x]);
            }
          }
        }
      } else {
        for (int x = 0; x < ncols; ++x) {
          if constexpr (VEC) {
            const Vec16<T> v = load16<STREAM>(row + x * a.c);
#pragma unroll
            for (int j = 0; j < V; ++j) acc[j] += lane_acc(v, j);
          } else {
            acc[0] += E::to_acc(load1<STREAM>(row + x * a.c));
          }
        }
      }
    }
    if constexpr (VEC) {
      Vec16<T> o;
#pragma unroll
      for (int j = 0; j < V; ++j) o.v[j] = E::from_acc(finish(acc[j], rw, cw, a.include_pad, a.divisor_override));
      *reinterpret_cast<Vec16<T>*>(dst + i * V) = o;
    } else {
      dst[i] = E::from_acc(finish(acc[0], rw, cw, a.include_pad, a.divisor_override));
    }
  }
}

struct ColumnArgs {
  int64_t total;  // n * runs * oxg * cg
  int64_t cg, runs, run, oxg;  // channel groups, runs of output rows per column, rows per run, column groups
  int64_t c, planes, h, w, oh, ow, kh, kw, sh, sw, ph, pw, divisor_override;
  bool include_pad;
};

// Three blocks per SM while the ring and a row's pixels are small (85
// registers; ncu showed 25 % of the warps active and long-scoreboard stalls
// at two: 2026-11-29, H200, k5 s1 p2 f32 2.14 -> 1.66 ms), two beyond
// (larger rings spill at 85).
template <int K, int R> constexpr int column_min_blocks() { return K * R <= 6 ? 3 : 2; }

// R outputs side by side per thread (column stride S when R > 1): a row's
// NP pixels are loaded once for all R windows. One kernel for every window
// width: the clipped-window variant it replaced for 7x7 and 11x11 measured
// slower on 7x7 (2026-11-29, H200, NHWC 8x64x512x512: k7 s1 p3 f32 0.596
// against 0.551 ms here, f16 0.500 against 0.437; s2 even or slower) and
// faster only on 11x11 s4 (2.01 against 2.38 ms), which AUTO now sends to
// cuda:nhwc_stream (1.10 ms).
template <typename T, int K, int S, int R>
__global__ void __launch_bounds__(256, column_min_blocks<K, R>())
nhwc_column_kernel(const T* __restrict__ src, T* __restrict__ dst, ColumnArgs a) {
  using E = Elem<T>;
  using A = typename E::acc_t;
  constexpr int V = vec_of<T>();
  constexpr int NP = (R - 1) * S + K;  // pixels of an input row under the R windows
  constexpr int SB = S * NP <= 10 ? S : 1;  // rows loaded together (more would spill)
  // Axis sizes fit in 32 bits (column_walk): index math in int, offsets in int64.
  const int h = (int)a.h, w = (int)a.w, ph = (int)a.ph, pw = (int)a.pw;
  const int sw = R > 1 ? S : (int)a.sw;
  for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < a.total;
       i += (int64_t)gridDim.x * blockDim.x) {
    int64_t t = i;
    const int64_t g = t % a.cg; t /= a.cg;
    const int ox0 = (int)(t % a.oxg) * R; t /= a.oxg;
    const int run = (int)(t % a.runs);
    const int64_t n = t / a.runs;
    const int oy0 = run * (int)a.run;
    const int nout = (int)(a.oh - oy0 < a.run ? a.oh - oy0 : a.run);
    const int x0 = ox0 * sw - pw;  // first pixel column under the windows (may be padding)
    int col_factor[R];
#pragma unroll
    for (int r = 0; r < R; ++r)
      col_factor[r] = axis_divisor_factor(axis_window_of<int>(ox0 + r, w, K, sw, pw), a.include_pad);
    const int ys = oy0 * S - ph;  // first input row of the run's first window
    const T* col = src + ((n * a.h) * a.w + x0) * a.c + g * V;  // dereferenced only inside the input
    const int64_t row_step = a.w * a.c;
    // SB input rows from y, every pixel of them loaded (zero outside the
    // input) before any sum
    auto load_rows = [&](int y, Vec16<T> (&v)[SB][NP]) {
#pragma unroll
      for (int s = 0; s < SB; ++s) {
        const T* row = col + (int64_t)(y + s) * row_step;
        if ((unsigned)(y + s) < (unsigned)h) {
#pragma unroll
          for (int x = 0; x < NP; ++x)
            v[s][x] = (unsigned)(x0 + x) < (unsigned)w ? load16<false>(row + (int64_t)x * a.c) : zero16<T>();
        } else {
#pragma unroll
          for (int x = 0; x < NP; ++x) v[s][x] = zero16<T>();
        }
      }
    };
    // horizontal window sums of one loaded row, for each of the R outputs;
    // pixel by pixel, so each pixel's registers die early
    auto row_sums = [&](const Vec16<T> (&v)[NP], A (&out)[R][V]) {
#pragma unroll
      for (int r = 0; r < R; ++r) {
#pragma unroll
        for (int j = 0; j < V; ++j) out[r][j] = lane_acc(v[r * S], j);
#pragma unroll
        for (int x = 1; x < K; ++x)
#pragma unroll
          for (int j = 0; j < V; ++j) out[r][j] += lane_acc(v[r * S + x], j);
      }
    };
    A ring[K][R][V];  // ring[r % K]: row sums of input row ys + r
#pragma unroll
    for (int r = 0; r < K - S; ++r) {  // the rows before the first output's S new ones
      Vec16<T> v[SB][NP];
      load_rows(ys + r, v);  // (SB rows: the compiler drops the unused loads)
      row_sums(v[0], ring[r]);
    }
    T* out = dst + ((n * a.oh + oy0) * a.ow + ox0) * a.c + g * V;
    const int64_t out_step = a.ow * a.c;
    for (int base = 0; base < nout; base += K) {  // base * S is a multiple of K: static ring slots
#pragma unroll
      for (int u = 0; u < K; ++u) {  // output row oy0 + base + u: input rows ys + (base + u) * S + [0, K)
        if (base + u < nout) {
#pragma unroll
          for (int s0 = 0; s0 < S; s0 += SB) {  // the S rows its window adds, SB at a time
            Vec16<T> v[SB][NP];
            const int y = ys + (base + u) * S + K - S + s0;
            load_rows(y, v);
#pragma unroll
            for (int s = 0; s < SB; ++s) row_sums(v[s], ring[(u * S + K - S + s0 + s) % K]);
          }
          const int row_factor =
              axis_divisor_factor(axis_window_of<int>(oy0 + base + u, h, K, S, ph), a.include_pad);
#pragma unroll
          for (int r = 0; r < R; ++r) {
            if (R == 1 || ox0 + r < (int)a.ow) {
              const A div = static_cast<A>(divisor_from_factors(row_factor, col_factor[r], a.divisor_override));
              Vec16<T> o;
#pragma unroll
              for (int j = 0; j < V; ++j) {
                A acc = ring[(u * S) % K][r][j];
#pragma unroll
                for (int q = 1; q < K; ++q) acc += ring[(u * S + q) % K][r][j];
                o.v[j] = E::from_acc(acc / div);
              }
              *reinterpret_cast<Vec16<T>*>(out + (int64_t)r * a.c) = o;
            }
          }
          out += out_step;
        }
      }
    }
  }
}

template <typename T, int K, int S, int R>
avgpool_status launch_column(const ColumnArgs& a, const T* src, T* dst, cudaStream_t st) {
  nhwc_column_kernel<T, K, S, R><<<grid_for(ceil_div(a.total, 256)), 256, 0, st>>>(src, dst, a);
  return check_launch("nhwc_column_kernel");
}

// The column walk applies (see the top of the file); vec: 16-byte channel groups.
bool column_walk(const Problem& q, bool vec) {
  if (!vec || q.numerics != AVGPOOL_NUMERICS_FAST || q.kh != q.kw) return false;
  const int64_t axis_max = int64_t(1) << 30;  // the kernel's int index math
  if (q.h >= axis_max || q.w >= axis_max || q.oh >= axis_max || q.ow >= axis_max) return false;
  if (q.kh == 11) return q.sh == 4 && q.element_size >= 4;  // a ring of 11 x 8 halves would spill
  return (q.sh == 1 || q.sh == 2) && (q.kh == 3 || q.kh == 5 || q.kh == 7);
}

// Outputs per thread side by side: at stride 1 on both axes 4 for 3x3 and 2
// for 5x5 (2026-11-29, H200, f32: k3 s1 p1 0.076 ms with 1, 0.074 with 2,
// 0.071 with 4; k5 s1 p2 1.49 / 1.47 / 1.49 with 1 / 2 / 4); else 1 (k3 s2
// p1 ceil: 0.073 with 1, 0.080 with 2).
int columns_per_thread(const Problem& q) {
  if (q.sw != q.sh || q.sh != 1 || q.kh > 5) return 1;
  return q.kh == 3 ? 4 : 2;
}

template <typename T, int K, int S>
avgpool_status launch_column_r(const ColumnArgs& a, int r, const T* src, T* dst, cudaStream_t st) {
  if constexpr (S == 1) {
    if (r == 2) return launch_column<T, K, S, 2>(a, src, dst, st);
    if constexpr (K == 3)
      if (r == 4) return launch_column<T, K, S, 4>(a, src, dst, st);
  }
  return launch_column<T, K, S, 1>(a, src, dst, st);
}

avgpool_status execute_column(const Problem& q, const void* src, void* dst, cudaStream_t st) {
  const int64_t V = 16 / q.element_size;
  const int r = columns_per_thread(q);
  ColumnArgs a;
  a.cg = q.c / V;
  a.oxg = ceil_div(q.ow, r);
  // Rows per run: long runs re-read fewer rows, while ~128K threads remain
  // (2026-11-29, H200, f32: k5 s1 p2 on 8x64x1024x1024 2.10 ms with 64 rows,
  // 2.94 with 4; k3 s1 p1 on 32x256x56x56 0.087 ms with 8 rows, 0.112 with 64).
  const int64_t columns = q.n * a.oxg * a.cg;
  a.run = 64;
  while (a.run > 4 && columns * ceil_div(q.oh, a.run) < 128 * 1000) a.run /= 2;
  a.runs = ceil_div(q.oh, a.run);
  a.total = columns * a.runs;
  copy_geometry(q, &a);
  a.c = q.c;
  return dispatch_dtype_cuda(q.dtype, [&](auto zero) {
    using T = decltype(zero);
    const T* s_ = static_cast<const T*>(src);
    T* d_ = static_cast<T*>(dst);
    const bool s2 = q.sh == 2;
    switch (q.kh) {
      case 3: return s2 ? launch_column_r<T, 3, 2>(a, r, s_, d_, st) : launch_column_r<T, 3, 1>(a, r, s_, d_, st);
      case 5: return s2 ? launch_column_r<T, 5, 2>(a, r, s_, d_, st) : launch_column_r<T, 5, 1>(a, r, s_, d_, st);
      case 7: return s2 ? launch_column<T, 7, 2, 1>(a, s_, d_, st) : launch_column<T, 7, 1, 1>(a, s_, d_, st);
      default:
        if constexpr (sizeof(T) >= 4) return launch_column<T, 11, 4, 1>(a, s_, d_, st);
        return set_error(AVGPOOL_ERROR_INTERNAL, "nhwc column walk: unexpected kernel %lld", (long long)q.kh);
    }
  });
}

avgpool_status accepts(const Problem& q) {
  avgpool_status s = device_usable();
  if (s != AVGPOOL_SUCCESS) return s;
  if (q.layout != AVGPOOL_LAYOUT_NHWC)
    return set_error(AVGPOOL_ERROR_UNSUPPORTED, "cuda:nhwc is NHWC only");
  return AVGPOOL_SUCCESS;
}

template <typename T, int K, bool VEC, bool STREAM>
avgpool_status launch_k(const NhwcArgs& a, const T* src, T* dst, cudaStream_t st) {
  nhwc_kernel<T, K, VEC, STREAM><<<grid_for(ceil_div(a.total, 256)), 256, 0, st>>>(src, dst, a);
  return check_launch("nhwc_kernel");
}

template <typename T, bool VEC, bool STREAM>
avgpool_status launch(const NhwcArgs& a, const T* src, T* dst, cudaStream_t st) {
  switch (a.kw) {
    case 2: return launch_k<T, 2, VEC, STREAM>(a, src, dst, st);
    case 3: return launch_k<T, 3, VEC, STREAM>(a, src, dst, st);
    case 5: return launch_k<T, 5, VEC, STREAM>(a, src, dst, st);
    case 7: return launch_k<T, 7, VEC, STREAM>(a, src, dst, st);
    case 11: return launch_k<T, 11, VEC, STREAM>(a, src, dst, st);
    default: return launch_k<T, 0, VEC, STREAM>(a, src, dst, st);
  }
}

avgpool_status execute(const Problem& q, const void* src, void* dst, void* stream) {
  avgpool_status s = check_device_pointers(src, dst);
  if (s != AVGPOOL_SUCCESS) return s;
  const int64_t V = 16 / q.element_size;
  const bool vec = (q.c % V == 0) && (uintptr_t)src % 16 == 0 && (uintptr_t)dst % 16 == 0;
  if (column_walk(q, vec)) return execute_column(q, src, dst, (cudaStream_t)stream);
  const bool stream_loads = q.sh >= q.kh && q.sw >= q.kw;  // no input read twice
  NhwcArgs a;
  a.cg = vec ? q.c / V : q.c;
  a.total = q.n * q.oh * q.ow * a.cg;
  copy_geometry(q, &a);
  a.c = q.c;
  return dispatch_dtype_cuda(q.dtype, [&](auto zero) {
    using T = decltype(zero);
    const T* s_ = static_cast<const T*>(src);
    T* d_ = static_cast<T*>(dst);
    cudaStream_t st = (cudaStream_t)stream;
    if (vec) return stream_loads ? launch<T, true, true>(a, s_, d_, st) : launch<T, true, false>(a, s_, d_, st);
    return stream_loads ? launch<T, false, true>(a, s_, d_, st) : launch<T, false, false>(a, s_, d_, st);
  });
}

}  // namespace

const Impl kNhwcImpl = {
    /* .name     = */ "cuda:nhwc",
    /* .backend  = */ AVGPOOL_BACKEND_CUDA,
    /* .accepts  = */ accepts,
    /* .execute  = */ execute,
};

}  // namespace cuda
}  // namespace avgpool
