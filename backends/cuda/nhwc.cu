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
// nhwc_column_kernel. A thread walks down a run of
// output rows of one (pixel column, channel group), computing each input
// row's horizontal window sum once and keeping the last K of them in a
// register ring, so an output costs S * K loads instead of K * K.
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
  int64_t total;  // n * runs * ow * cg
  int64_t cg, runs, run;  // channel groups, runs of output rows per column, rows per run
  int64_t c, planes, h, w, oh, ow, kh, kw, sh, sw, ph, pw, divisor_override;
  bool include_pad;
};

// Three blocks per SM up to 5x5 (85 registers; ncu showed 25 % of the warps
// active and long-scoreboard stalls at two: 2026-11-29, H200, k5 s1 p2 f32
// 2.14 -> 1.66 ms), two beyond (larger rings spill at 85).
template <typename T, int K, int S>
__global__ void __launch_bounds__(256, K <= 5 ? 3 : 2)
nhwc_column_kernel(const T* __restrict__ src, T* __restrict__ dst, ColumnArgs a) {
  using E = Elem<T>;
  using A = typename E::acc_t;
  constexpr int V = vec_of<T>();
  for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < a.total;
       i += (int64_t)gridDim.x * blockDim.x) {
    int64_t t = i;
    const int64_t g = t % a.cg; t /= a.cg;
    const int64_t ox = t % a.ow; t /= a.ow;
    const int64_t run = t % a.runs;
    const int64_t n = t / a.runs;
    const int64_t oy0 = run * a.run;
    const int nout = (int)(a.oh - oy0 < a.run ? a.oh - oy0 : a.run);
    const AxisWindow cw = axis_window(ox, a.w, K, a.sw, a.pw);
    const int ncols = (int)(cw.end - cw.begin);
    const int64_t ys = oy0 * S - a.ph;  // first input row of the run's first window
    const T* col = src + ((n * a.h) * a.w + cw.begin) * a.c + g * V;
    // horizontal window sum of input row y (zeros outside the input)
    auto row_sum = [&](int64_t y, A (&out)[V]) {
#pragma unroll
      for (int j = 0; j < V; ++j) out[j] = A(0);
      if (y < 0 || y >= a.h) return;
      const T* row = col + y * a.w * a.c;
      Vec16<T> v[K];
#pragma unroll
      for (int x = 0; x < K; ++x)
        if (x < ncols) v[x] = load16<false>(row + x * a.c);
#pragma unroll
      for (int x = 0; x < K; ++x)
        if (x < ncols) {
#pragma unroll
          for (int j = 0; j < V; ++j) out[j] += lane_acc(v[x], j);
        }
    };
    A ring[K][V];  // ring[r % K]: row sum of input row ys + r
#pragma unroll
    for (int r = 0; r < K - S; ++r) row_sum(ys + r, ring[r]);
    T* out = dst + ((n * a.oh + oy0) * a.ow + ox) * a.c + g * V;
    const int64_t out_step = a.ow * a.c;
    for (int base = 0; base < nout; base += K) {  // base * S is a multiple of K: static ring slots
#pragma unroll
      for (int u = 0; u < K; ++u) {  // output row oy0 + base + u: input rows ys + (base + u) * S + [0, K)
        if (base + u < nout) {
#pragma unroll
          for (int s = 0; s < S; ++s)  // the S rows its window adds
            row_sum(ys + (int64_t)(base + u) * S + K - S + s, ring[(u * S + K - S + s) % K]);
          A acc[V];
#pragma unroll
          for (int j = 0; j < V; ++j) acc[j] = A(0);
#pragma unroll
          for (int r = 0; r < K; ++r)
#pragma unroll
            for (int j = 0; j < V; ++j) acc[j] += ring[(u * S + r) % K][j];
          const AxisWindow rw = axis_window(oy0 + base + u, a.h, K, S, a.ph);
          Vec16<T> o;
#pragma unroll
          for (int j = 0; j < V; ++j) o.v[j] = E::from_acc(finish(acc[j], rw, cw, a.include_pad, a.divisor_override));
          *reinterpret_cast<Vec16<T>*>(out) = o;
          out += out_step;
        }
      }
    }
  }
}

template <typename T, int K, int S>
avgpool_status launch_column(const ColumnArgs& a, const T* src, T* dst, cudaStream_t st) {
  nhwc_column_kernel<T, K, S><<<grid_for(ceil_div(a.total, 256)), 256, 0, st>>>(src, dst, a);
  return check_launch("nhwc_column_kernel");
}

// The column walk applies (see the top of the file); vec: 16-byte channel groups.
bool column_walk(const Problem& q, bool vec) {
  if (!vec || q.numerics != AVGPOOL_NUMERICS_FAST || q.kh != q.kw) return false;
  if (q.kh == 11) return q.sh == 4 && q.element_size >= 4;  // a ring of 11 x 8 halves would spill
  return (q.sh == 1 || q.sh == 2) && (q.kh == 3 || q.kh == 5 || q.kh == 7);
}

avgpool_status execute_column(const Problem& q, const void* src, void* dst, cudaStream_t st) {
  const int64_t V = 16 / q.element_size;
  ColumnArgs a;
  a.cg = q.c / V;
  // Rows per run: long runs re-read fewer rows, while ~128K threads remain
  // (2026-11-29, H200, f32: k5 s1 p2 on 8x64x1024x1024 2.10 ms with 64 rows,
  // 2.94 with 4; k3 s1 p1 on 32x256x56x56 0.087 ms with 8 rows, 0.112 with 64).
  const int64_t columns = q.n * q.ow * a.cg;
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
      case 3: return s2 ? launch_column<T, 3, 2>(a, s_, d_, st) : launch_column<T, 3, 1>(a, s_, d_, st);
      case 5: return s2 ? launch_column<T, 5, 2>(a, s_, d_, st) : launch_column<T, 5, 1>(a, s_, d_, st);
      case 7: return s2 ? launch_column<T, 7, 2>(a, s_, d_, st) : launch_column<T, 7, 1>(a, s_, d_, st);
      default:
        if constexpr (sizeof(T) >= 4) return launch_column<T, 11, 4>(a, s_, d_, st);
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
