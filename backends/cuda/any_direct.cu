// cuda:any_direct - one thread per output (or per group_size outputs that
// share their window rows: group_kernel; NHWC pixel packs, the same kernel
// with vector loads; or per column_group_size outputs of an output column
// that share window rows: column_group_kernel; or per V outputs of an NCHW
// output row at column stride 1, from one load of their window rows'
// columns: row_run_kernel; or one output with its NCHW window rows loaded
// as 16-byte chunks: chunk_row_kernel), any layout, any window: the
// fallback that accepts every problem (PyTorch's own CUDA scheme), and the
// fastest kernel where little is shared between windows (windows with gaps
// between them, narrow planes, few channels per pixel: see policy.cu). Sums
// in PyTorch's order (rows then columns, acc_t accumulator), so it serves
// both numerics. Any element-aligned pointers; a grid-stride grid.
// Indices are 32-bit when both tensors have fewer than 2^31 elements, and
// the flat output index is decoded by multiply-high dividers fixed at plan
// creation (int_divider.h): on small windows the decode is most of the work
// (PyTorch's kernel divides at run time). Larger tensors run in batches
// of planes or images that fit (BatchesConfig); 64-bit indices only for an
// NHWC image of 2^31 elements or more.
//
// The 32-bit kernel is held to 32 registers (NCHW f64 and the column groups
// below: 40; f64 column groups: 64), so that 2048 threads (the SM's
// maximum) stay resident: the kernel waits on loads, and at the 40
// registers the compiler chose by itself only 1536 fit. Its loads are plain
// indexing of the restrict-qualified source, which the compiler unrolls and
// schedules further than the bit-copying load1. With block_threads' block
// sizes, on 147 sweep configurations (H200, 2026-12-02, forced, against
// PyTorch in the same process): geomean 1.19x -> 1.35x PyTorch,
// configurations below 0.97x 31 -> 0 (worst 0.99x).
//
// Each window row is KW predicated loads, KW a compile-time bound on the
// width (with_width_bound). Before, a 3x3 window took ~220 instructions an
// output, most of them the prologue of each row's run-time loop, and the
// kernel was bound by issue (Nsight Compute: 72 % of issue slots). AUTO
// sweeps of seeds 37-40 (H200, 2026-12-02, the library before and after in
// the same device calls): 1.16x faster on the 346 configurations it runs,
// 1.61x -> 1.83x PyTorch over all 400 in fast numerics.
#include <algorithm>
#include <memory>
#include <type_traits>

#include "common.cuh"
#include "impls.h"
#include "int_divider.h"

namespace avgpool::cuda {
namespace {

constexpr const char* kName = "cuda:any_direct";
constexpr int kThreads = 256;     // a block, usually (block_threads)
constexpr int kMaxThreads = 512;  // direct_kernel's launch bounds: the largest block
constexpr int kMinBlocks = 4;     // 4 x 512 threads per SM: at most 32 registers a thread
// 32-bit indices when every index (and i plus a grid's stride) stays below this.
constexpr int64_t kNarrowLimit = (int64_t(1) << 31) - (int64_t(1) << 28);
// NCHW f64: 3 x 512 threads, 40 registers. At 32 its window rows, unrolled
// to the width bound, spilled; with the run-time loop instead it ran 1.10x
// slower in geomean over the 79 NCHW f64 configurations AUTO gives this
// kernel in the sweeps of seeds 33-40 (H200, 2026-12-02, device time, best
// of two runs each; 51 faster by more than 3 %, 10 slower, down to 0.84x on
// 5533x11x12x12 k5 s5x6; below 0.97x PyTorch 10 -> 4 over both numerics).
// NHWC f64 fits 32 registers unrolled; at 40 (3 x 512 threads) it ran
// 1.01x over 88 random NHWC f64 configurations (windows of 6+ columns
// 1.025x over 72, 2 slower by more than 10 %; 2-column windows 0.92x) and
// stays at 32 (H100, 2026-12-07, device time, best of two, both numerics;
// bench/gpu/results/h100-2026-12-07-nhwc-f64-direct-40-registers.json).
constexpr int kMinBlocksNchwF64 = 3;
// chunk_row_kernel: 3 x 512 threads, 40 registers (f32/f64 rows of 6-11
// columns take 34-40).
constexpr int kMinBlocksChunkRows = 3;
template <typename T, bool NHWC>
constexpr int direct_min_blocks() {
  return sizeof(T) == 8 && !NHWC ? kMinBlocksNchwF64 : kMinBlocks;
}

struct DirectArgs : Geometry {
  int64_t total;  // outputs
  int64_t c;      // channels
  // The decode's divisors, in the order the flat index is taken apart:
  // NCHW ow, oh; NHWC c, ow, oh (32-bit kernels only).
  IntDivider inner, middle, outer;
};

// Sums the window of output (oy, ox) of the plane (NCHW) or pixel channel
// (NHWC) at base and returns the average: elements (y, x) at base + y * ys
// + x * xs, xs = 1 in NCHW and C in NHWC. Window bounds in I, the divisor
// in int64 (padded lengths can multiply past 2^31).
// KW > 0: a bound on the window's width known at compile time (kw <= KW);
// each window row is then KW predicated loads with no loop of its own. With
// a run-time inner loop the compiler unrolls by four and pays a prologue on
// every window row, which was most of a 3x3 window's ~220 instructions.
template <int KW, typename T, typename I>
__device__ __forceinline__ T average_window(const T* base, I oy, I ox, I ys, I xs, const DirectArgs& a) {
  using E = Elem<T>;
  using A = typename E::acc_t;
  const AxisWindowOf<I> r = axis_window_of<I>(oy, (I)a.h, (I)a.kh, (I)a.sh, (I)a.ph);
  const AxisWindowOf<I> c = axis_window_of<I>(ox, (I)a.w, (I)a.kw, (I)a.sw, (I)a.pw);
  A sum = 0;
  if constexpr (KW > 0) {
    const I cols = c.end - c.begin;
    const T* row = base + r.begin * ys + c.begin * xs;
    for (I y = r.begin; y < r.end; ++y, row += ys) for_upto<KW>(cols, [&](int j) { sum += E::to_acc(row[j * xs]); });
  } else {
    for (I y = r.begin; y < r.end; ++y)
      for (I x = c.begin; x < c.end; ++x) sum += E::to_acc(base[y * ys + x * xs]);
  }
  const AxisWindow r64{r.begin, r.end, r.padded_len}, c64{c.begin, c.end, c.padded_len};
  return E::from_acc(finish(sum, r64, c64, a.include_pad, a.divisor_override));
}

// 32-bit indices: each thread computes outputs i, i + grid, ... (dense dst
// index in the problem's layout).
template <typename T, bool NHWC, int KW>
__global__ void __launch_bounds__(kMaxThreads, direct_min_blocks<T, NHWC>())
    direct_kernel(const T* __restrict__ src, T* __restrict__ dst, DirectArgs a) {
  const int32_t total = (int32_t)a.total, H = (int32_t)a.h, W = (int32_t)a.w, C = (int32_t)a.c;
  for (int32_t i = blockIdx.x * blockDim.x + threadIdx.x; i < total; i += gridDim.x * blockDim.x) {
    uint32_t t, oy, ox;
    const T* base;
    if constexpr (!NHWC) {
      ox = a.inner.divmod(i, &t);
      oy = a.middle.divmod(t, &t);  // t: the plane
      base = src + (int32_t)t * H * W;
      dst[i] = average_window<KW, T, int32_t>(base, oy, ox, W, 1, a);
    } else {
      const uint32_t ic = a.inner.divmod(i, &t);
      ox = a.middle.divmod(t, &t);
      oy = a.outer.divmod(t, &t);  // t: the batch item
      base = src + (int32_t)t * H * W * C + ic;
      dst[i] = average_window<KW, T, int32_t>(base, oy, ox, W * C, C, a);
    }
  }
}

// Window rows from 16-byte chunks (NCHW, chunk_rows below). At a column
// stride of 16 bytes or more, the 32 threads of a warp load elements at
// least a chunk apart, so each of direct_kernel's kw loads per window row
// touches a chunk per thread and the kernel waits on L1 (Nsight Compute,
// 2177x147x32x32 k11 s8 bf16: L1 99 % busy, 19 % of issue slots used).
// Here a thread loads the chunks that hold its window row, at most
// row_chunks of them (3 for 11 f16/bf16 columns instead of 11 loads), and
// picks its elements out of the words in registers: two selects by the
// row's word offset, a funnel shift for 2-byte types. Each output still
// adds its terms in PyTorch's order. Needs the source 16-byte aligned (the
// plan's scalar kernel runs other pointers) and a whole number of chunks
// (a chunk holding the last element then ends inside the tensor).
template <typename T, int KW> constexpr int row_chunks() {
  return (16 - (int)sizeof(T) + KW * (int)sizeof(T) + 15) / 16;
}
constexpr int kMaxRowChunks = 5;

// Element j of a window row whose words were shifted to start at the row's
// first element, widened to the accumulator.
template <typename T> __device__ __forceinline__ typename Elem<T>::acc_t word_element(const uint32_t* a, int j) {
  if constexpr (sizeof(T) == 8) {
    return __hiloint2double((int)a[2 * j + 1], (int)a[2 * j]);
  } else if constexpr (sizeof(T) == 4) {
    return __uint_as_float(a[j]);
  } else {
    const uint32_t w = a[j >> 1];
    const unsigned short h = (unsigned short)((j & 1) ? (w >> 16) : (w & 0xffffu));
    if constexpr (std::is_same_v<T, __half>) return __half2float(__ushort_as_half(h));
    else return __uint_as_float(uint32_t(h) << 16);  // bf16: exact, as __bfloat162float
  }
}

// Adds the cols (<= KW) elements at p to sum, left to right.
template <int KW, typename T>
__device__ __forceinline__ void add_row_from_chunks(const T* p, int cols, typename Elem<T>::acc_t& sum) {
  constexpr int es = sizeof(T);
  constexpr int kChunks = row_chunks<T, KW>();
  static_assert(kChunks <= kMaxRowChunks, "chunk_rows keeps wider rows on direct_kernel");
  constexpr int kWords = 4 * kChunks + 4;                    // the chunks' words, then zeros
  constexpr int kRowWords = (KW * es + 3) / 4 + (es == 2);   // words from the first element on
  const uintptr_t addr = reinterpret_cast<uintptr_t>(p);
  const uint4* chunk = reinterpret_cast<const uint4*>(addr & ~uintptr_t(15));
  const int offset = int(addr & 15);  // bytes
  const int end = offset + cols * es;
  uint32_t w[kWords];
#pragma unroll
  for (int k = 0; k < kChunks; ++k) {
    uint4 v = make_uint4(0u, 0u, 0u, 0u);
    if (k * 16 < end) v = __ldg(chunk + k);  // only chunks holding an element of the row
    w[4 * k] = v.x;
    w[4 * k + 1] = v.y;
    w[4 * k + 2] = v.z;
    w[4 * k + 3] = v.w;
  }
#pragma unroll
  for (int k = 4 * kChunks; k < kWords; ++k) w[k] = 0u;
  // a[m] = w[m + offset / 4], by the two bits of the word offset.
  const int word = offset >> 2;
  uint32_t u[kRowWords + 2], a[kRowWords];
#pragma unroll
  for (int m = 0; m < kRowWords + 2; ++m) u[m] = (word & 1) ? w[m + 1] : w[m];
#pragma unroll
  for (int m = 0; m < kRowWords; ++m) a[m] = (word & 2) ? u[m + 2] : u[m];
  if constexpr (es == 2) {
    const unsigned shift = (offset & 2) ? 16u : 0u;  // a row starting at the upper half of a word
#pragma unroll
    for (int m = 0; m + 1 < kRowWords; ++m) a[m] = __funnelshift_r(a[m], a[m + 1], shift);
  }
  for_upto<KW>(cols, [&](int j) { sum += word_element<T>(a, j); });
}

// direct_kernel's NCHW branch with its window rows from chunks.
template <typename T, int KW>
__global__ void __launch_bounds__(kMaxThreads, kMinBlocksChunkRows)
    chunk_row_kernel(const T* __restrict__ src, T* __restrict__ dst, DirectArgs a) {
  using E = Elem<T>;
  const int32_t total = (int32_t)a.total, H = (int32_t)a.h, W = (int32_t)a.w;
  for (int32_t i = blockIdx.x * blockDim.x + threadIdx.x; i < total; i += gridDim.x * blockDim.x) {
    uint32_t t;
    const uint32_t ox = a.inner.divmod(i, &t);
    const uint32_t oy = a.middle.divmod(t, &t);  // t: the plane
    const AxisWindowOf<int32_t> r = axis_window_of<int32_t>(oy, H, (int32_t)a.kh, (int32_t)a.sh, (int32_t)a.ph);
    const AxisWindowOf<int32_t> c = axis_window_of<int32_t>(ox, W, (int32_t)a.kw, (int32_t)a.sw, (int32_t)a.pw);
    typename E::acc_t sum = 0;
    const int cols = c.end - c.begin;
    const T* row = src + (int32_t)t * H * W + r.begin * W + c.begin;
    for (int32_t y = r.begin; y < r.end; ++y, row += W) add_row_from_chunks<KW>(row, cols, sum);
    const AxisWindow r64{r.begin, r.end, r.padded_len}, c64{c.begin, c.end, c.padded_len};
    dst[i] = E::from_acc(finish(sum, r64, c64, a.include_pad, a.divisor_override));
  }
}

// V elements of T loaded or stored as one aligned vector.
template <typename T, int V> struct alignas(sizeof(T) * V) Pack {
  T v[V];
};

// V outputs per thread that share their window rows: V channels of one
// pixel (NHWC) or V neighbouring outputs of one output row (NCHW). The
// thread decodes its index and its row window once, and its V loads per
// window element are independent, in flight together. Each output still
// sums its own inputs rows then columns, in PyTorch's order (an NCHW
// output skips the columns outside its window, it does not add zeros).
// Thread g owns group g of the (item, oy, ox, channel group) or (plane,
// oy, column group) index; the last group of a pixel or row may be short.
// KW: NCHW's compile-time bound on the window width (as direct_kernel's);
// the NHWC branch loops over the columns at run time.
// PACK (NHWC, channels a multiple of V, pointers aligned to the pack): each
// pixel's V channels loaded and stored as one vector (nhwc_packed).
template <typename T, bool NHWC, int V, int KW, bool PACK = false>
__global__ void __launch_bounds__(kThreads) group_kernel(const T* __restrict__ src, T* __restrict__ dst, DirectArgs a) {
  using E = Elem<T>;
  using A = typename E::acc_t;
  const int32_t groups = (int32_t)a.total, H = (int32_t)a.h, W = (int32_t)a.w, C = (int32_t)a.c;
  const int32_t OH = (int32_t)a.oh, OW = (int32_t)a.ow;
  for (int32_t g = blockIdx.x * blockDim.x + threadIdx.x; g < groups; g += gridDim.x * blockDim.x) {
    uint32_t t;
    const uint32_t lane_group = a.inner.divmod(g, &t);
    A sum[V];
#pragma unroll
    for (int v = 0; v < V; ++v) sum[v] = 0;
    if constexpr (NHWC) {
      const uint32_t ox = a.middle.divmod(t, &t);
      const uint32_t oy = a.outer.divmod(t, &t);  // t: the batch item
      const int32_t c0 = (int32_t)lane_group * V, n = C - c0 < V ? C - c0 : V;
      const T* base = src + (int32_t)t * H * W * C + c0;
      const AxisWindowOf<int32_t> r = axis_window_of<int32_t>(oy, H, (int32_t)a.kh, (int32_t)a.sh, (int32_t)a.ph);
      const AxisWindowOf<int32_t> c = axis_window_of<int32_t>(ox, W, (int32_t)a.kw, (int32_t)a.sw, (int32_t)a.pw);
      for (int32_t y = r.begin; y < r.end; ++y)
        for (int32_t x = c.begin; x < c.end; ++x) {
          const T* p = base + (y * W + x) * C;
          if constexpr (PACK) {
            const Pack<T, V> e = *reinterpret_cast<const Pack<T, V>*>(p);
#pragma unroll
            for (int v = 0; v < V; ++v) sum[v] += E::to_acc(e.v[v]);
          } else {
#pragma unroll
            for (int v = 0; v < V; ++v)
              if (v < n) sum[v] += E::to_acc(p[v]);
          }
        }
      const AxisWindow r64{r.begin, r.end, r.padded_len}, c64{c.begin, c.end, c.padded_len};
      T* out = dst + (((int32_t)t * OH + (int32_t)oy) * OW + (int32_t)ox) * C + c0;
      if constexpr (PACK) {
        Pack<T, V> o;
#pragma unroll
        for (int v = 0; v < V; ++v) o.v[v] = E::from_acc(finish(sum[v], r64, c64, a.include_pad, a.divisor_override));
        *reinterpret_cast<Pack<T, V>*>(out) = o;
      } else {
#pragma unroll
        for (int v = 0; v < V; ++v)
          if (v < n) out[v] = E::from_acc(finish(sum[v], r64, c64, a.include_pad, a.divisor_override));
      }
    } else {
      const uint32_t oy = a.middle.divmod(t, &t);  // t: the plane
      const int32_t ox0 = (int32_t)lane_group * V, n = OW - ox0 < V ? OW - ox0 : V;
      const int32_t kw = (int32_t)a.kw, sw = (int32_t)a.sw, x0 = ox0 * sw - (int32_t)a.pw;
      const T* base = src + (int32_t)t * H * W;
      const AxisWindowOf<int32_t> r = axis_window_of<int32_t>(oy, H, (int32_t)a.kh, (int32_t)a.sh, (int32_t)a.ph);
      for (int32_t y = r.begin; y < r.end; ++y) {
        const T* row = base + y * W;
        for_upto<KW>(kw, [&](int j) {
#pragma unroll
          for (int v = 0; v < V; ++v) {
            const int32_t x = x0 + v * sw + j;  // inside output v's window; inside the row?
            if (v < n && (uint32_t)x < (uint32_t)W) sum[v] += E::to_acc(row[x]);
          }
        });
      }
      const AxisWindow r64{r.begin, r.end, r.padded_len};
      T* out = dst + ((int32_t)t * OH + (int32_t)oy) * OW + ox0;
#pragma unroll
      for (int v = 0; v < V; ++v)
        if (v < n) {
          const AxisWindowOf<int32_t> c = axis_window_of<int32_t>(ox0 + v, W, kw, sw, (int32_t)a.pw);
          const AxisWindow c64{c.begin, c.end, c.padded_len};
          out[v] = E::from_acc(finish(sum[v], r64, c64, a.include_pad, a.divisor_override));
        }
    }
  }
}

// V outputs of one output column per thread (oy0 .. oy0 + V - 1 at one ox,
// and in NHWC one channel) where windows overlap along the column (kh >
// sh): the union of their window rows, (V - 1) * sh + kh rows instead of
// V * kh, is loaded once, each row's KW-bounded window row into registers,
// and added to every output whose window holds the row. Each output still
// sums its own elements rows then columns, in PyTorch's order. Thread g
// owns group g of the (plane, output row group, ox) index (NHWC: (item,
// output row group, ox, channel)); the last group of a column may be
// short.
// 40 registers (64 in f64): at direct_kernel's 32 its window rows spilled.
constexpr int kMinBlocksColumnGroups = 3;     // 3 x 512 threads: 40 registers
constexpr int kMinBlocksColumnGroupsF64 = 2;  // 2 x 512 threads: 64 registers
template <typename T, bool NHWC, int V, int KW>
__global__ void __launch_bounds__(kMaxThreads, sizeof(T) == 8 ? kMinBlocksColumnGroupsF64 : kMinBlocksColumnGroups)
    column_group_kernel(const T* __restrict__ src, T* __restrict__ dst, DirectArgs a) {
  using E = Elem<T>;
  using A = typename E::acc_t;
  const int32_t groups = (int32_t)a.total, H = (int32_t)a.h, W = (int32_t)a.w, C = (int32_t)a.c;
  const int32_t OH = (int32_t)a.oh, OW = (int32_t)a.ow;
  const int32_t kh = (int32_t)a.kh, sh = (int32_t)a.sh, ph = (int32_t)a.ph;
  for (int32_t g = blockIdx.x * blockDim.x + threadIdx.x; g < groups; g += gridDim.x * blockDim.x) {
    uint32_t t, ic = 0, ox, oyg;
    if constexpr (NHWC) {
      ic = a.inner.divmod(g, &t);
      ox = a.middle.divmod(t, &t);
    } else {
      ox = a.inner.divmod(g, &t);
    }
    oyg = a.outer.divmod(t, &t);  // t: the plane (NCHW) or batch item (NHWC)
    const int32_t oy0 = (int32_t)oyg * V, n = OH - oy0 < V ? OH - oy0 : V;
    const int32_t xs = NHWC ? C : 1, ys = W * xs;
    const T* base = src + (int32_t)t * H * ys + (int32_t)ic;
    const AxisWindowOf<int32_t> c = axis_window_of<int32_t>(ox, W, (int32_t)a.kw, (int32_t)a.sw, (int32_t)a.pw);
    const int32_t cols = c.end - c.begin;
    const AxisWindowOf<int32_t> first = axis_window_of<int32_t>(oy0, H, kh, sh, ph);
    const AxisWindowOf<int32_t> last = axis_window_of<int32_t>(oy0 + n - 1, H, kh, sh, ph);
    A sum[V];
#pragma unroll
    for (int v = 0; v < V; ++v) sum[v] = 0;
    const T* row = base + first.begin * ys + c.begin * xs;
    for (int32_t y = first.begin; y < last.end; ++y, row += ys) {
      A e[KW];
#pragma unroll
      for (int j = 0; j < KW; ++j) e[j] = j < cols ? E::to_acc(row[j * xs]) : A(0);
      // Output v's window rows start at (oy0 + v) * sh - ph: y belongs to
      // it when 0 <= y - that < kh (the clipping to [0, H) is the loop's).
      const int32_t d0 = y - (oy0 * sh - ph);
#pragma unroll
      for (int v = 0; v < V; ++v) {
        const int32_t d = d0 - v * sh;
        if (v < n && d >= 0 && d < kh) {
#pragma unroll
          for (int j = 0; j < KW; ++j)
            if (j < cols) sum[v] += e[j];
        }
      }
    }
    const AxisWindow c64{c.begin, c.end, c.padded_len};
#pragma unroll
    for (int v = 0; v < V; ++v)
      if (v < n) {
        const AxisWindowOf<int32_t> r = axis_window_of<int32_t>(oy0 + v, H, kh, sh, ph);
        const AxisWindow r64{r.begin, r.end, r.padded_len};
        const int32_t oy = oy0 + v;
        const int32_t o = NHWC ? (((int32_t)t * OH + oy) * OW + (int32_t)ox) * C + (int32_t)ic
                               : ((int32_t)t * OH + oy) * OW + (int32_t)ox;
        dst[o] = E::from_acc(finish(sum[v], r64, c64, a.include_pad, a.divisor_override));
      }
  }
}

// V consecutive outputs of an NCHW output row per thread at column stride
// 1: their windows cover V - 1 + kw consecutive columns of each window row,
// loaded once into registers (V * kw loads one output per thread) and added
// to each output in PyTorch's order (rows, then columns). Columns outside
// the input load as +0, which changes no sum: the accumulator starts at +0
// and is never -0, and acc + (+0) == acc for every other acc, NaN and Inf
// included. Thread g owns group g of the (plane, oy, column group) index;
// the last group of a row may be short.
template <typename T, int V, int KW>
__global__ void __launch_bounds__(kThreads) row_run_kernel(const T* __restrict__ src, T* __restrict__ dst,
                                                          DirectArgs a) {
  using E = Elem<T>;
  using A = typename E::acc_t;
  constexpr int U = V - 1 + KW;  // columns of the run, at most
  const int32_t groups = (int32_t)a.total, H = (int32_t)a.h, W = (int32_t)a.w;
  const int32_t OH = (int32_t)a.oh, OW = (int32_t)a.ow, kw = (int32_t)a.kw, pw = (int32_t)a.pw;
  for (int32_t g = blockIdx.x * blockDim.x + threadIdx.x; g < groups; g += gridDim.x * blockDim.x) {
    uint32_t t;
    const uint32_t lane_group = a.inner.divmod(g, &t);
    const uint32_t oy = a.middle.divmod(t, &t);  // t: the plane
    const int32_t ox0 = (int32_t)lane_group * V, n = OW - ox0 < V ? OW - ox0 : V;
    const int32_t x0 = ox0 - pw, run = n - 1 + kw;
    const T* base = src + (int32_t)t * H * W;
    const AxisWindowOf<int32_t> r = axis_window_of<int32_t>(oy, H, (int32_t)a.kh, (int32_t)a.sh, (int32_t)a.ph);
    A sum[V];
#pragma unroll
    for (int v = 0; v < V; ++v) sum[v] = 0;
    for (int32_t y = r.begin; y < r.end; ++y) {
      const T* row = base + y * W;
      A e[U];
#pragma unroll
      for (int u = 0; u < U; ++u) {
        const int32_t x = x0 + u;
        e[u] = u < run && (uint32_t)x < (uint32_t)W ? E::to_acc(row[x]) : A(0);
      }
#pragma unroll
      for (int v = 0; v < V; ++v) {
#pragma unroll
        for (int j = 0; j < KW; ++j)
          if (j < kw) sum[v] += e[v + j];
      }
    }
    const AxisWindow r64{r.begin, r.end, r.padded_len};
    T* out = dst + ((int32_t)t * OH + (int32_t)oy) * OW + ox0;
#pragma unroll
    for (int v = 0; v < V; ++v)
      if (v < n) {
        const AxisWindowOf<int32_t> c = axis_window_of<int32_t>(ox0 + v, W, kw, 1, pw);
        const AxisWindow c64{c.begin, c.end, c.padded_len};
        out[v] = E::from_acc(finish(sum[v], r64, c64, a.include_pad, a.divisor_override));
      }
  }
}

// 64-bit indices (a tensor of 2^31 elements or more).
template <typename T, bool NHWC>
__global__ void __launch_bounds__(256) direct_kernel_wide(const T* __restrict__ src, T* __restrict__ dst,
                                                          DirectArgs a) {
  const int64_t total = a.total, C = a.c, H = a.h, W = a.w, OH = a.oh, OW = a.ow;
  for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < total; i += (int64_t)gridDim.x * blockDim.x) {
    int64_t t = i;
    if constexpr (!NHWC) {
      const int64_t ox = t % OW;
      t /= OW;
      const int64_t oy = t % OH;
      t /= OH;
      dst[i] = average_window<0, T, int64_t>(src + t * H * W, oy, ox, W, 1, a);
    } else {
      const int64_t ic = t % C;
      t /= C;
      const int64_t ox = t % OW;
      t /= OW;
      const int64_t oy = t % OH;
      t /= OH;
      dst[i] = average_window<0, T, int64_t>(src + t * H * W * C + ic, oy, ox, W * C, C, a);
    }
  }
}

// Threads per block of the 32-bit kernel: 256, or 512 on NCHW planes whose
// output rows are short (under 16: a warp's outputs span rows and planes)
// or when 256 threads cover fewer output rows than read each input row
// (ow * ceil(kh / sh) > 256), so that the outputs sharing inputs share an
// SM's L1. Same 147 configurations: 256 everywhere 1.357x, 3 below 0.97x
// (worst 0.62x: 69507x37x21x8 k5 s4 f32, ow 1, at 1.09x on 512); 512 on
// all NCHW planes 1.340x, none below; this rule 1.350x, none below.
int block_threads(const Problem& q) {
  if (q.layout != AVGPOOL_LAYOUT_NCHW) return kThreads;
  const int64_t rows_sharing_an_input_row = ceil_div(q.kh, q.sh);
  return q.ow < 16 || q.ow * rows_sharing_an_input_row > kThreads ? kMaxThreads : kThreads;
}

// Outputs per thread: group_kernel's V, or 1 (direct_kernel). A thread
// takes 8 bytes of outputs (4 f16/bf16, 2 f32; f64 stays at one) that share
// their window rows:
//  - NHWC, channels of at least kMinGroupsPerPixel groups, so that short
//    last groups stay rare; windows of more than kGroupWindow inputs only
//    with kMinGroupsPerPixelWide groups or more;
//  - NCHW, windows at most kGroupWindowCols wide, or kGroupSmallWindowCols
//    wide when they hold at most kGroupSmallWindow inputs and have no gaps
//    between them along the row (sw <= kw); wider or larger ones, each
//    output's kw loads strided sw apart, measured slower: the group's loads
//    spread over more lines;
// and only while every thread slot of the device still gets kGroupsPerSlot
// groups: below that, fewer threads leave the SMs idle.
// Forced on the 378 configurations of the AUTO sweeps of seeds 7, 8, 10
// and 16 that AUTO gives this kernel or that are NHWC (H200, 2026-12-02,
// pytorch numerics, all bitwise PyTorch), time with one output per thread
// over time grouped, on those AUTO gives this kernel and the rule groups:
// NHWC 1.37x geomean over 37 (1716x1021x11x11 k1 f16 1.98x, 558x297x66x66
// k2 s2 bf16 2.06x), NCHW 1.34x over 20 (969x46x92x92 k5x1 s2x1 bf16
// 1.62x, 6380x3x65x173 k1 bf16 1.53x; worst 1.12x). Not kept: 16 bytes per
// thread (NHWC 0.99x over all 202 NHWC configurations), groups on small
// problems (1x35x113x1461 k8 s9 bf16 NHWC 0.50x), NCHW windows 3 wide with
// a run-time loop over each window row (one of the 176 NCHW configurations
// then below 0.97x, for a geomean within noise of this rule's; with the
// rows unrolled, see below), and wide NHWC windows over few groups: the AUTO sweeps
// of seeds 17-20 had 3246x13x58x39 k10x8 s4x7 f32 at 0.52x, 284x17x448x448
// k9 s8 bf16 at 0.72x and 1431x20x71x47 k10 s6 f16 at 0.76x of their
// ungrouped speed, while 25x298x114x114 k9 s3 f32 ran 1.21x faster and
// 382x401x24x8 k11 s2 f16 1.37x.
// Windows 3 wide, with the window rows unrolled (KW), forced on NCHW
// configurations large enough to group (H200, 2026-12-02, device time,
// ungrouped time over grouped): 28 random ones with 3 columns, 1.06-1.41x
// faster for kh <= 3, about even for kh = 4 and 0.57-0.99x for most taller
// windows (2032x297x45x8 k11x3 s7x2 f16 0.57x); in the AUTO sweeps of seeds
// 37-39, k3 s3 1.04-1.31x, k3 s3x5 (gaps) 0.82x. Checked on 24 more with
// kh <= 3 and sw <= 3, not tuned on: 1.18x in geomean, 20 faster, worst
// 0.91x (bench/gpu/results/h200-2026-12-02-group-three-columns.json).
constexpr int64_t kGroupBytes = 8;
constexpr int64_t kMinGroupsPerPixel = 4;
constexpr int64_t kGroupWindow = 49;
constexpr int64_t kMinGroupsPerPixelWide = 16;
constexpr int64_t kGroupWindowCols = 2;
constexpr int64_t kGroupSmallWindowCols = 3;
constexpr int64_t kGroupSmallWindow = 9;
constexpr int64_t kGroupsPerSlot = 2;
constexpr int64_t kThreadSlotsPerSm = 2048;
// Whether groups of v outputs still give every thread slot of the device
// per_slot groups.
bool groups_fill_device(const Problem& q, const DeviceInfo& device, int64_t v,
                        int64_t per_slot = kGroupsPerSlot) {
  return q.dst_elements / v >= per_slot * kThreadSlotsPerSm * device.sms;
}
int group_size(const Problem& q, const DeviceInfo& device) {
  const int64_t v = kGroupBytes / q.element_size;
  if (v < 2 || !groups_fill_device(q, device, v)) return 1;
  if (q.layout == AVGPOOL_LAYOUT_NHWC) {
    const int64_t groups = q.c / v;
    return groups >= (q.window_inputs() > kGroupWindow ? kMinGroupsPerPixelWide : kMinGroupsPerPixel) ? int(v) : 1;
  }
  const bool narrow = q.kw <= kGroupWindowCols ||
                      (q.kw <= kGroupSmallWindowCols && q.kh * q.kw <= kGroupSmallWindow && q.sw <= q.kw);
  return narrow && q.ow >= v ? int(v) : 1;
}

// NHWC pixel packs: group_size's channel groups (kGroupBytes: 4 f16/bf16,
// 2 f32) loaded and stored as one aligned vector each, where the channels
// split into whole groups (c % V == 0: no short group), every thread slot of
// the device still gets kGroupsPerSlot groups, and either the elements are
// 2 bytes (one output per thread would read 64 bytes a warp load) or
// group_size groups the problem anyway. The pointers' alignment is checked
// per call (execute_config runs the plan's scalar configuration on others).
// Forced on the 150 NHWC configurations of the sweeps of seeds 33-48 that
// AUTO gives this kernel and whose channels split into packs (H200,
// 2026-12-03, device time, best of two alternated runs), the 67 this rule
// packs: 1.20x faster in geomean (2.43x -> 2.92x PyTorch), 55 faster by
// more than 3 %, 5 slower (worst 0.90x: 619x8x232x712 k11 s11 f16);
// 1557x8x119x119 k1 s2x1 f16 2.72x, 36x100x78x78 k9 s2 f16 2.34x. Not
// kept: f32 packs on fewer channels than group_size groups (C = 2-6:
// 0.93x over 19, 0.78-1.39x, 12 slower), f64 packs of 16 bytes (0.91x over
// 43), and 16-byte f16/bf16 packs (faster on 5 of 6 with 8+ channels, up to
// 1.32x over 8-byte packs, but 0.68x on 619x8x232x712 k11 s11: too few to
// rule).
bool nhwc_packed(const Problem& q, const DeviceInfo& device, int group) {
  const int64_t v = kGroupBytes / q.element_size;
  if (q.layout != AVGPOOL_LAYOUT_NHWC || v < 2 || q.c % v != 0 || !groups_fill_device(q, device, v)) return false;
  return q.element_size == 2 || group > 1;
}

// PACK: NHWC pixel packs (nhwc_packed); pointers must then be aligned to a
// group's bytes (vec_align).
template <typename T, bool NHWC, int V, bool PACK = false>
avgpool_status use_group_kernel(KernelConfig<DirectArgs>* c, const DeviceInfo& device, Decline* why) {
  static_assert(NHWC || !PACK, "pixel packs are NHWC");
  DirectArgs& a = c->args;
  if constexpr (PACK) c->vec_align = V * int64_t(sizeof(T));
  const int64_t per_unit = NHWC ? a.c : a.ow;  // channels of a pixel, outputs of a row
  const int64_t groups_per_unit = ceil_div(per_unit, V);
  a.total = a.total / (per_unit > 0 ? per_unit : 1) * groups_per_unit;
  a.inner = IntDivider::of(uint32_t(groups_per_unit > 0 ? groups_per_unit : 1));
  const GridShape grid{ceil_div(a.total, kThreads), false};
  // NCHW groups: windows of at most kGroupSmallWindowCols columns, one
  // predicated load each. NHWC groups keep their run-time column loop (KW =
  // 0), which measured faster there (see with_width_bound).
  auto launch = [&](auto kw_bound) {
    return use_kernel<DirectArgs, T, group_kernel<T, NHWC, V, decltype(kw_bound)::value, PACK>>(
        c, PACK ? "group_kernel_packed" : "group_kernel", kThreads, 0, grid, device, why);
  };
  if constexpr (NHWC) {
    return launch(std::integral_constant<int, 0>{});
  } else {
    if (a.kw <= 1) return launch(std::integral_constant<int, 1>{});
    if (a.kw <= 2) return launch(std::integral_constant<int, 2>{});
    return launch(std::integral_constant<int, int(kGroupSmallWindowCols)>{});
  }
}

// Outputs per thread along an output column (column_group_kernel's V), or
// 1: where each window row is shared by at least kColumnShare outputs of a
// column (kh >= 3 * sh, more than one output row), no row or channel group
// applies, the window row fits a compile-time width bound (kw <= 11) and
// every thread slot of the device still gets kGroupsPerSlot groups. 4
// outputs (2 in f64, whose accumulators and window rows take twice the
// registers). Forced on the 282 configurations of overlapping windows that
// AUTO gives this kernel in the sweeps of seeds 33-40 (H200, 2026-12-02,
// device time, the library with and without): where kh >= 3 * sh, 15
// faster by more than 3 % (1014x2x1049x54 k10x7 s1x9 bf16 1.48x, 51x4x851x851
// k10 s2 f32 1.43x, 133x5x432x432 k11x8 s2x8 f64 NHWC 1.69x), 5 slower
// (worst 0.93x); with less sharing mostly slower (3309x27x37x37 k8 s7 bf16
// NHWC 0.57x, 113372x14x82x8 k8 s5 f16 0.72x): over all 282, 0.985x with
// any overlap, 1.007x with this bound. Checked on the 63 such
// configurations of seeds 41-48, not tuned on (the two libraries
// alternated twice, best of each): 1.085x in geomean, 20 faster by more
// than 3 % (47x41x93x286 k6x8 s1x8 f32 1.88x, 0.21 -> 0.39 of the copy
// roofline), 4 slower (worst 0.85x, 15854x79x9x9 k5x2 s1 f64).
// f64 NHWC takes the pairs wherever windows overlap down the plane at all
// (kh > sh) but little along the row (kw >= 3, 2 * sw > kw), from one
// output per thread slot: one output per thread there loses to PyTorch's kernel
// (H100, 2026-12-07, device time, best of two, pytorch numerics, every
// output bitwise PyTorch). Tuned on the f64 NHWC configurations of 32 MB+
// with kh > sh of generator seeds 200-209 (95: pairs from kh > sh 1.048x
// over the 36 that changed, 20 faster by more than 3 %, 7 slower, all but
// one overlapping along the row or 1-2 columns wide; of the 17 this rule
// keeps, 16 faster, one slower: 0.93x). On seeds 210-219,
// 8 MB+, not tuned on for the rule (257 configurations; the one pair per
// slot against two chosen on them): 1.11x over the 69 it changes, 44
// faster by more than 3 %, 9 slower (worst 0.90x, at 2.3x PyTorch);
// configurations below PyTorch 21 -> 11, worst 0.53x -> 0.74x
// (2340x3x97x31 k10x11 s2x11 excl); 74x31x52x944 k8 s3x9 of the AUTO
// sweep of seed 95 0.66x -> 0.87x, 30x472x31x76 k9 s3x9 0.69x -> 0.92x.
// With no floor on the pairs, 29 slower by more than 3 % (down to 0.75x).
// The floor of one output rather than one pair per slot, from the stored
// timings (1-2 outputs per slot: 1.16x over 27), checked on the 142 such
// configurations of 1-2 outputs per slot of seeds 220-299, 1-2048 MB, not
// tuned on (H100, 2026-12-07, best of two): 1.12x, 91 faster by more than
// 3 %, 11 slower (worst 0.84x, 400x29x11x11 k9x4 s3 p4x2, at 2.0x
// PyTorch); below PyTorch 19 -> 4 (7x3x777x777 k8 s4x8 0.71x -> 0.91x).
constexpr int64_t kColumnGroup = 4;
constexpr int64_t kColumnGroupF64 = 2;
constexpr int64_t kColumnShare = 3;
constexpr int64_t kColumnGroupMaxWidth = 11;
int column_group_size(const Problem& q, const DeviceInfo& device, int group) {
  const int64_t v = q.element_size == 8 ? kColumnGroupF64 : kColumnGroup;
  if (group > 1 || q.oh < 2 || q.kw > kColumnGroupMaxWidth) return 1;
  const bool f64_nhwc_pairs = q.element_size == 8 && q.layout == AVGPOOL_LAYOUT_NHWC && q.kh > q.sh &&
                              q.kw >= 3 && 2 * q.sw > q.kw;
  if (f64_nhwc_pairs) return groups_fill_device(q, device, 1, 1) ? int(v) : 1;
  if (q.kh < kColumnShare * q.sh) return 1;
  return groups_fill_device(q, device, v) ? int(v) : 1;
}

template <typename T, bool NHWC, int V>
avgpool_status use_column_group_kernel(KernelConfig<DirectArgs>* c, int threads, const DeviceInfo& device,
                                       Decline* why) {
  DirectArgs& a = c->args;
  const int64_t row_groups = ceil_div(a.oh, V);
  a.total = a.total / a.oh * row_groups;  // oh >= 2 here
  a.inner = IntDivider::of(uint32_t(NHWC ? a.c : a.ow));
  a.middle = IntDivider::of(uint32_t(a.ow));
  a.outer = IntDivider::of(uint32_t(row_groups));
  const GridShape grid{ceil_div(a.total, threads), false};
  auto launch = [&](auto kw_bound) -> avgpool_status {
    constexpr int KW = decltype(kw_bound)::value;
    if constexpr (KW == 0) {
      return decline(why, AVGPOOL_ERROR_INTERNAL, "%s: column groups take windows of at most %d columns", kName,
                     int(kColumnGroupMaxWidth));
    } else {
      return use_kernel<DirectArgs, T, column_group_kernel<T, NHWC, V, KW>>(c, "column_group_kernel", threads, 0,
                                                                             grid, device, why);
    }
  };
  return with_width_bound(a.kw, launch);
}

// Outputs per thread along an NCHW output row at column stride 1
// (row_run_kernel's V), or 1: group_size's 8 bytes of outputs (4 f16/bf16,
// 2 f32) or 2 f64 outputs, where no row group applies, windows are 3 to 11
// columns wide (3 to 8 in f64), output rows hold at least kRowRunMinRow
// outputs and every thread slot of the device still gets kGroupsPerSlot
// groups. Forced (NCHW, column stride 1, AUTO on this kernel; H200,
// 2026-12-03, device time, best of two, with and without runs in the same
// process):
//  - f16/bf16/f32, the 76 configurations of seeds 1000-1299 it took: 1.34x
//    faster in geomean, 69 faster by more than 3 %, 3 slower, all with
//    output rows of 9 or fewer (9x553x827x9 k9x4 s9x1 bf16 0.85x,
//    27901x8x8x8 k10 s1 f32 0.93x: short rows leave runs short and a
//    warp's runs spread over rows); from 12 outputs a row, 70
//    configurations, 1.37x, none slower. Checked on seeds 1300-1699, not
//    tuned on: the 53 configurations the rule takes 1.39x faster, 51 by
//    more than 3 %, none slower (41x134x12x1933 k10x4 s2x1 bf16 2.16x,
//    1.46x -> 3.15x PyTorch);
//  - f64 (2 outputs, 16 bytes), seeds 1000-1299: 1.17x over 11, the one
//    slower (0.87x) 10 columns wide, so at most 8: 1.22x over 9, none
//    slower; seeds 1300-1699, not tuned on: 1.23x over 17, 16 faster by
//    more than 3 %, none slower (wider windows there: 0.85-0.94x).
// Same in pytorch numerics (the kernel serves both, bitwise PyTorch). Not
// kept: runs at column stride 2 (windows overlap less, and a thread's run
// spans twice the bytes of a warp load): 1.04x / 1.03x over 59 / 52
// f16/bf16 configurations with 3 / 10 slower, f32 1.07x / 1.10x with 5 / 4
// slower (down to 0.60x), f64 0.90x / 0.86x.
constexpr int64_t kRowRunMinWidth = 3;
constexpr int64_t kRowRunMaxWidth = 11;
constexpr int64_t kRowRunF64 = 2;
constexpr int64_t kRowRunMaxWidthF64 = 8;
constexpr int64_t kRowRunMinRow = 12;
int row_run_size(const Problem& q, const DeviceInfo& device, int group) {
  const bool f64 = q.element_size == 8;
  const int64_t v = f64 ? kRowRunF64 : kGroupBytes / q.element_size;
  if (q.layout != AVGPOOL_LAYOUT_NCHW || group > 1 || q.sw != 1 || q.kw < kRowRunMinWidth ||
      q.kw > (f64 ? kRowRunMaxWidthF64 : kRowRunMaxWidth) || q.ow < kRowRunMinRow)
    return 1;
  return groups_fill_device(q, device, v) ? int(v) : 1;
}

template <typename T, int V>
avgpool_status use_row_run_kernel(KernelConfig<DirectArgs>* c, const DeviceInfo& device, Decline* why) {
  DirectArgs& a = c->args;
  const int64_t groups_per_row = ceil_div(a.ow, V);
  a.total = a.total / a.ow * groups_per_row;  // ow >= V here
  a.inner = IntDivider::of(uint32_t(groups_per_row));
  a.middle = IntDivider::of(uint32_t(a.oh));
  const GridShape grid{ceil_div(a.total, kThreads), false};
  auto launch = [&](auto kw_bound) -> avgpool_status {
    constexpr int KW = decltype(kw_bound)::value;
    if constexpr (KW < kRowRunMinWidth) {
      return decline(why, AVGPOOL_ERROR_INTERNAL, "%s: row runs take windows of %d to %d columns", kName,
                     int(kRowRunMinWidth), int(kRowRunMaxWidth));  // row_run_size keeps them out
    } else {
      return use_kernel<DirectArgs, T, row_run_kernel<T, V, KW>>(c, "row_run_kernel", kThreads, 0, grid, device,
                                                                 why);
    }
  };
  return with_width_bound(a.kw, launch);
}

// NCHW window rows from 16-byte chunks (chunk_row_kernel) where
// direct_kernel would run (no output group, column group or row run), the
// column stride is kChunkRowStrideBytes or more, windows are 4 to 11
// columns wide (4 to 8 in f64: a row then fits kMaxRowChunks chunks at the
// width bound) and the source is a whole number of chunks. Forced, pytorch
// numerics (the kernel serves both), best of two, device time, with and
// without chunk rows in the same process (H200, 2026-12-03/04):
//  - tuned on the 200 NCHW configurations of seeds 1000-1299 AUTO gives
//    cuda:any_direct: by column stride in bytes, under 16 slower (2-4 bytes
//    0.82x in geomean, 8-14 bytes 0.93-1.00x: neighbouring threads' scalar
//    loads share chunks already, and the selects cost more than the loads
//    they save), from 16 bytes 1.078x over 105; windows of 1-3 columns
//    there 0.92-1.00x (a row is one or two chunks either way; the same in
//    the 150 of seeds 1300-1699 and in the AUTO sweep of seed 61), so from 4
//    columns: 1.105x over 81, 51 faster by more than 3 %, 8 slower (worst
//    4354x3x564x14 k5x10 s2x10 bf16 0.74x). Below or near PyTorch before:
//    2177x147x32x32 k11 s8 bf16 0.83x -> 1.91x PyTorch, 2x174x650x650 k7 s4
//    f64 0.93x -> 1.33x, 19x839x412x16 k11x6 s4x8 f16 1.00x -> 4.09x,
//    1x101x1650x1650 k11 s8 f32 0.98x -> 1.58x;
//  - checked on seeds 1700-2199, not tuned on: the 111 configurations the
//    rule takes 1.073x faster, 51 by more than 3 %, 10 slower (worst
//    1x648x44x392 k11 s1x9 bf16 0.83x, still 1.23x PyTorch); the 39 it
//    leaves 1.000x; below 0.97x PyTorch 2 -> 1.
constexpr int64_t kChunkRowStrideBytes = 16;
constexpr int64_t kChunkRowMinWidth = 4;
constexpr int64_t kChunkRowMaxWidth = 11;
constexpr int64_t kChunkRowMaxWidthF64 = 8;
bool chunk_rows(const Problem& q, const DeviceInfo& device, int group) {
  const int64_t es = q.element_size;
  return q.layout == AVGPOOL_LAYOUT_NCHW && group == 1 && column_group_size(q, device, group) == 1 &&
         row_run_size(q, device, group) == 1 && q.sw * es >= kChunkRowStrideBytes && q.kw >= kChunkRowMinWidth &&
         q.kw <= (es == 8 ? kChunkRowMaxWidthF64 : kChunkRowMaxWidth) && q.src_elements * es % 16 == 0;
}

template <typename T>
avgpool_status use_chunk_row_kernel(KernelConfig<DirectArgs>* c, int threads, const DeviceInfo& device,
                                    Decline* why) {
  c->vec_align = 16;
  const GridShape grid{ceil_div(c->args.total, threads), false};
  auto launch = [&](auto kw_bound) -> avgpool_status {
    constexpr int KW = decltype(kw_bound)::value;
    if constexpr (KW == 0 || row_chunks<T, KW>() > kMaxRowChunks) {
      return decline(why, AVGPOOL_ERROR_INTERNAL, "%s: chunk rows take windows of at most %d columns", kName,
                     int(kChunkRowMaxWidth));  // chunk_rows keeps them out
    } else {
      return use_kernel<DirectArgs, T, chunk_row_kernel<T, KW>>(c, "chunk_row_kernel", threads, 0, grid, device,
                                                                why);
    }
  };
  return with_width_bound(c->args.kw, launch);
}

template <typename T, bool NHWC>
avgpool_status use_direct_kernel(KernelConfig<DirectArgs>* c, bool narrow, int threads, int group, int column_group,
                                 int row_run, const DeviceInfo& device, Decline* why) {
  if (narrow && group == 2) return use_group_kernel<T, NHWC, 2>(c, device, why);
  if (narrow && group == 4) return use_group_kernel<T, NHWC, 4>(c, device, why);
  if constexpr (!NHWC) {
    constexpr int kRun = sizeof(T) == 8 ? int(kRowRunF64) : int(kGroupBytes / sizeof(T));
    if (narrow && row_run == kRun) return use_row_run_kernel<T, kRun>(c, device, why);
  }
  if constexpr (sizeof(T) == 8) {
    if (narrow && column_group == 2) return use_column_group_kernel<T, NHWC, 2>(c, threads, device, why);
  } else {
    if (narrow && column_group == 4) return use_column_group_kernel<T, NHWC, 4>(c, threads, device, why);
  }
  if (!narrow) {
    const GridShape grid{ceil_div(c->args.total, kThreads), false};
    return use_kernel<DirectArgs, T, direct_kernel_wide<T, NHWC>>(c, "direct_kernel_wide", kThreads, 0, grid,
                                                                  device, why);
  }
  const GridShape grid{ceil_div(c->args.total, threads), false};
  auto launch = [&](auto kw_bound) {
    return use_kernel<DirectArgs, T, direct_kernel<T, NHWC, decltype(kw_bound)::value>>(c, "direct_kernel", threads,
                                                                                       0, grid, device, why);
  };
  return with_width_bound(c->args.kw, launch);
}

// The kernel of the problem for plan configuration c: with vectors, the
// pixel packs' kernel (NHWC) or the chunk rows' (NCHW), else by the rules
// above (group: group_size's).
avgpool_status fill(const Problem& q, const DeviceInfo& device, KernelConfig<DirectArgs>* c, bool narrow, int group,
                    bool vectors, Decline* why) {
  DirectArgs& a = c->args;
  a.total = q.dst_elements;
  a.c = q.c;
  const bool nhwc = q.layout == AVGPOOL_LAYOUT_NHWC;
  if (narrow) {
    // A non-empty tensor below 2^31 elements has every size below 2^31; an
    // empty one decodes nothing (its sizes are not divided by).
    auto divider = [](int64_t d) { return IntDivider::of(uint32_t(d > 0 && d < kNarrowLimit ? d : 1)); };
    a.inner = divider(nhwc ? q.c : q.ow);
    a.middle = divider(nhwc ? q.ow : q.oh);
    a.outer = divider(q.oh);
  }
  return dispatch_dtype_cuda(q.dtype, [&](auto zero) -> avgpool_status {
    using T = decltype(zero);
    constexpr int kGroup = int(kGroupBytes / sizeof(T));
    const int threads = block_threads(q);
    if (vectors && !nhwc) return use_chunk_row_kernel<T>(c, threads, device, why);
    if constexpr (kGroup >= 2) {
      if (vectors) return use_group_kernel<T, true, kGroup, true>(c, device, why);
    }
    const int column_group = column_group_size(q, device, group);
    const int row_run = row_run_size(q, device, group);
    return nhwc ? use_direct_kernel<T, true>(c, narrow, threads, group, column_group, row_run, device, why)
                : use_direct_kernel<T, false>(c, narrow, threads, group, column_group, row_run, device, why);
  });
}

bool fits_narrow(const Problem& q) { return q.src_elements < kNarrowLimit && q.dst_elements < kNarrowLimit; }

avgpool_status init_one_launch(const Problem& q, const DeviceInfo& device, ConfigPtr* config, Decline* why) {
  const bool narrow = fits_narrow(q);
  const int group = group_size(q, device);
  if (narrow && (nhwc_packed(q, device, group) || chunk_rows(q, device, group))) {
    return hand_over_vector_and_scalar<DirectArgs>(q, device, config, [&](KernelConfig<DirectArgs>* c, bool vectors) {
      return fill(q, device, c, narrow, group, vectors, why);
    });
  }
  auto c = new_config<DirectArgs>(q, device);
  const avgpool_status s = fill(q, device, c.get(), narrow, group, false, why);
  return hand_over(s, std::move(c), config);
}

// Tensors of 2^31 elements or more run the 32-bit kernels over batches of
// planes (NCHW) or images (NHWC) that each fit them, one launch a batch;
// only an NHWC image too large by itself takes direct_kernel_wide, which
// has none of their groups, runs and chunks. H200, 2026-12-04, device time,
// f16, k11 s11 on batches of 64x2048x2048 planes: the wide kernel took 1.288
// ms for 8 of them against 0.503 for 4 on the 32-bit one (2.6x the time per
// element), and 1x3008x1176x1176 k9 s9 bf16 ran 0.79x PyTorch.
struct BatchesConfig : CudaConfig {
  int64_t units = 0, per_launch = 0;  // planes (NCHW) or images (NHWC)
  int64_t src_unit_bytes = 0, dst_unit_bytes = 0;
  ConfigPtr full, last;  // per_launch units, and the rest (none when per_launch divides units)
};

avgpool_status launch_batches(const CudaConfig& config, const void* src, void* dst, cudaStream_t stream) {
  const BatchesConfig& b = static_cast<const BatchesConfig&>(config);
  for (int64_t u = 0; u < b.units; u += b.per_launch) {
    const Config& part = b.units - u >= b.per_launch ? *b.full : *b.last;
    const void* part_src = static_cast<const char*>(src) + u * b.src_unit_bytes;
    void* part_dst = static_cast<char*>(dst) + u * b.dst_unit_bytes;
    const CudaConfig& run = config_for_pointers(static_cast<const CudaConfig&>(part), part_src, part_dst);
    const avgpool_status s = run.launch(run, part_src, part_dst, stream);
    if (s != AVGPOOL_SUCCESS) return s;
  }
  return AVGPOOL_SUCCESS;
}

// q restricted to its first `units` planes (NCHW, as that many one-channel
// images) or images (NHWC).
Problem first_units(const Problem& q, int64_t units) {
  if (q.layout == AVGPOOL_LAYOUT_NHWC) return q.with_batch(units);
  Problem one_channel = q;
  one_channel.c = 1;
  return one_channel.with_batch(units);
}

avgpool_status init(const Problem& q, const DeviceInfo& device, ConfigPtr* config, Decline* why) {
  if (fits_narrow(q)) return init_one_launch(q, device, config, why);
  const bool nchw = q.layout == AVGPOOL_LAYOUT_NCHW;
  const int64_t units = nchw ? q.planes() : q.n;
  const int64_t per_plane = std::max(q.h * q.w, q.oh * q.ow);
  const int64_t per_launch = (kNarrowLimit - 1) / (nchw ? per_plane : per_plane * q.c);
  if (per_launch == 0) return init_one_launch(q, device, config, why);
  auto b = std::make_unique<BatchesConfig>();
  b->device = device.ordinal;
  b->units = units;
  b->per_launch = per_launch;
  b->src_unit_bytes = (nchw ? 1 : q.c) * q.h * q.w * q.element_size;
  b->dst_unit_bytes = (nchw ? 1 : q.c) * q.oh * q.ow * q.element_size;
  avgpool_status s = init_one_launch(first_units(q, per_launch), device, &b->full, why);
  if (s == AVGPOOL_SUCCESS && units % per_launch != 0)
    s = init_one_launch(first_units(q, units % per_launch), device, &b->last, why);
  if (s != AVGPOOL_SUCCESS) return s;
  b->kernel_name = static_cast<const CudaConfig&>(*b->full).kernel_name;
  b->launch = launch_batches;
  *config = std::move(b);
  return AVGPOOL_SUCCESS;
}

}  // namespace

const Impl kAnyDirectImpl = cuda_impl(kName, Direction::kForward, init);

}  // namespace avgpool::cuda
