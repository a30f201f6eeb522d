// cuda:nhwc_column_walk - NHWC (channels_last), any stride, padding,
// ceil_mode, divisor; any element-aligned pointers.
//
// One thread per (output pixel, 16-byte group of consecutive channels): the
// threads of a warp read consecutive channels of the same input pixels, so
// each window element is one coalesced 16-byte load per thread. The window's
// column loop is unrolled for common kernel widths (2, 3, 5, 7, 11), putting
// kw loads in flight per row. Each channel has its own accumulator, summed
// rows then columns left to right: PyTorch's order, bitwise, in both
// numerics. Non-overlapping windows use streaming loads; overlapping ones
// the read-only cache (neighbours re-read the same pixels). A scalar variant
// (one channel per thread) serves C * size not a multiple of 16 bytes, and
// src or dst not 16-byte aligned (the plan carries it beside the vector
// one). 64-bit indices; 1-D grid-stride grid.
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
#include <type_traits>

#include "common.cuh"
#include "impls.h"

namespace avgpool::cuda {
namespace {

constexpr const char* kName = "cuda:nhwc_column_walk";
constexpr int kThreads = 256;  // both kernels' launch bounds

struct NhwcArgs : Geometry {
  int64_t total;  // output pixels * channel groups
  int64_t cg;     // channel groups per pixel
  int64_t c;      // channels
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

struct ColumnArgs : Geometry {
  int64_t total;  // n * runs * oxg * cg
  int64_t cg, runs, run, oxg;  // channel groups, runs of output rows per column, rows per run, column groups
  int64_t c;                   // channels
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
// faster only on 11x11 s4 (2.01 against 2.38 ms), where cuda:nhwc_tile_stream
// measured 1.10 ms.
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

// ---- host ------------------------------------------------------------------------------
// The column walk applies (see the top of the file) to 16-byte channel groups.
bool column_walk(const Problem& q) {
  if (q.numerics != AVGPOOL_NUMERICS_FAST || q.kh != q.kw) return false;
  if (!axes_fit_int32(q)) return false;  // the kernel's int index math
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

void plan_walk(const Problem& q, int r, ColumnArgs* a) {
  const int64_t V = 16 / q.element_size;
  a->c = q.c;
  a->cg = q.c / V;
  a->oxg = ceil_div(q.ow, r);
  // Rows per run: long runs re-read fewer rows, while ~128K threads remain
  // (2026-11-29, H200, f32: k5 s1 p2 on 8x64x1024x1024 2.10 ms with 64 rows,
  // 2.94 with 4; k3 s1 p1 on 32x256x56x56 0.087 ms with 8 rows, 0.112 with 64).
  const int64_t columns = q.n * a->oxg * a->cg;
  a->run = 64;
  while (a->run > 4 && columns * ceil_div(q.oh, a->run) < 128 * 1000) a->run /= 2;
  a->runs = ceil_div(q.oh, a->run);
  a->total = columns * a->runs;
}

// The walk's instantiation: window K (3, 5, 7; 11 for 4- and 8-byte types),
// row stride S (1 or 2; 4 for 11) and r = columns_per_thread outputs side
// by side.
template <typename T>
avgpool_status choose_walk_kernel(KernelConfig<ColumnArgs>* c, int r, const DeviceInfo& device, Decline* why) {
  const ColumnArgs& a = c->args;
  auto use = [&](auto k, auto s, auto rr) {
    return use_kernel<ColumnArgs, T,
                      nhwc_column_kernel<T, decltype(k)::value, decltype(s)::value, decltype(rr)::value>>(
        c, "nhwc_column_kernel", kThreads, 0, GridShape{ceil_div(a.total, kThreads), false}, device, why);
  };
  using One = std::integral_constant<int, 1>;
  using Two = std::integral_constant<int, 2>;
  return dispatch_k<3, 5, 7, 11>(a.kh, [&](auto k) -> avgpool_status {
    constexpr int K = decltype(k)::value;
    if constexpr (K == 3 || K == 5 || K == 7) {
      if (a.sh == 2) return use(k, Two{}, One{});
      if constexpr (K == 3)
        if (r == 4) return use(k, One{}, std::integral_constant<int, 4>{});
      if constexpr (K <= 5)
        if (r == 2) return use(k, One{}, Two{});
      return use(k, One{}, One{});
    } else if constexpr (K == 11 && sizeof(T) >= 4) {
      return use(k, std::integral_constant<int, 4>{}, One{});
    } else {
      return decline(why, AVGPOOL_ERROR_INTERNAL, "%s: no column walk for a %lldx%lld window", kName,
                     (long long)a.kh, (long long)a.kw);
    }
  });
}

// The per-pixel kernel's instantiation: compile-time widths 2, 3, 5, 7 and
// 11 (the others run-time), streaming loads where no input is read twice.
template <typename T, bool VEC>
avgpool_status choose_pixel_kernel(KernelConfig<NhwcArgs>* c, const DeviceInfo& device, Decline* why) {
  const NhwcArgs& a = c->args;
  const bool stream_loads = a.sh >= a.kh && a.sw >= a.kw;  // no input read twice
  auto use = [&](auto k, auto stream) {
    return use_kernel<NhwcArgs, T, nhwc_kernel<T, decltype(k)::value, VEC, decltype(stream)::value>>(
        c, "nhwc_kernel", kThreads, 0, GridShape{ceil_div(a.total, kThreads), false}, device, why);
  };
  return dispatch_k<2, 3, 5, 7, 11>(a.kw, [&](auto k) {
    return stream_loads ? use(k, std::true_type{}) : use(k, std::false_type{});
  });
}

// The per-pixel kernel on 16-byte channel groups (vec) or single channels.
std::unique_ptr<KernelConfig<NhwcArgs>> pixel_config(const Problem& q, const DeviceInfo& device, bool vec,
                                                     Decline* why) {
  auto c = new_config<NhwcArgs>(q, device);
  c->args.c = q.c;
  c->args.cg = vec ? q.c / (16 / q.element_size) : q.c;
  c->args.total = q.n * q.oh * q.ow * c->args.cg;
  const avgpool_status s = dispatch_dtype_cuda(q.dtype, [&](auto zero) {
    using T = decltype(zero);
    return vec ? choose_pixel_kernel<T, true>(c.get(), device, why)
               : choose_pixel_kernel<T, false>(c.get(), device, why);
  });
  return s == AVGPOOL_SUCCESS ? std::move(c) : nullptr;
}

// 16-byte channel groups: the column walk or the vector per-pixel kernel for
// 16-byte-aligned src and dst, the scalar per-pixel kernel for the others;
// else the scalar kernel alone.
avgpool_status init(const Problem& q, const DeviceInfo& device, ConfigPtr* config, Decline* why) {
  if (q.layout != AVGPOOL_LAYOUT_NHWC) return decline(why, AVGPOOL_ERROR_UNSUPPORTED, "%s is NHWC only", kName);
  const bool vec = q.c % (16 / q.element_size) == 0;
  std::unique_ptr<KernelConfig<NhwcArgs>> scalar = pixel_config(q, device, false, why);
  if (scalar == nullptr) return why->status;
  if (!vec) {
    *config = std::move(scalar);
    return AVGPOOL_SUCCESS;
  }
  std::unique_ptr<CudaConfig> vector;
  if (column_walk(q)) {
    auto c = new_config<ColumnArgs>(q, device);
    const int r = columns_per_thread(q);
    plan_walk(q, r, &c->args);
    const avgpool_status s = dispatch_dtype_cuda(q.dtype, [&](auto zero) {
      return choose_walk_kernel<decltype(zero)>(c.get(), r, device, why);
    });
    if (s != AVGPOOL_SUCCESS) return s;
    vector = std::move(c);
  } else {
    vector = pixel_config(q, device, true, why);
    if (vector == nullptr) return why->status;
  }
  vector->vec_align = 16;  // 16-byte loads and stores
  vector->unaligned = std::move(scalar);
  *config = std::move(vector);
  return AVGPOOL_SUCCESS;
}

}  // namespace

const Impl kNhwcColumnWalkImpl = cuda_impl(kName, Direction::kForward, init);

bool nhwc_column_walk_walks(const Problem& q) { return column_walk(q); }

}  // namespace avgpool::cuda
