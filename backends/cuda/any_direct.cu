// cuda:any_direct - one thread per output, any layout, any window: the
// fallback that accepts every problem (PyTorch's own CUDA scheme), and the
// fastest kernel where little is shared between windows (windows with gaps
// between them, narrow planes, few channels per pixel: see policy.cu). Sums
// in PyTorch's order (rows then columns, acc_t accumulator), so it serves
// both numerics. Any element-aligned pointers; a grid-stride grid.
// Indices are 32-bit when both tensors have fewer than 2^31 elements, and
// the flat output index is decoded by multiply-high dividers fixed at plan
// creation (int_divider.h): on small windows the decode is most of the work
// (PyTorch's kernel divides at run time). 64-bit indices otherwise.
//
// The 32-bit kernel is held to 32 registers, so that 2048 threads (the
// SM's maximum) stay resident: the kernel waits on loads, and at the 40
// registers the compiler chose by itself only 1536 fit. Its loads are plain
// indexing of the restrict-qualified source, which the compiler unrolls and
// schedules further than the bit-copying load1. With block_threads' block
// sizes, on 147 sweep configurations (H200, 2026-12-02, forced, against
// PyTorch in the same process): geomean 1.19x -> 1.35x PyTorch,
// configurations below 0.97x 31 -> 0 (worst 0.99x).
#include "common.cuh"
#include "impls.h"
#include "int_divider.h"

namespace avgpool::cuda {
namespace {

constexpr const char* kName = "cuda:any_direct";
constexpr int kThreads = 256;     // a block, usually (block_threads)
constexpr int kMaxThreads = 512;  // direct_kernel's launch bounds: the largest block
constexpr int kMinBlocks = 4;     // 4 x 512 threads per SM: at most 32 registers a thread

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
template <typename T, typename I>
__device__ __forceinline__ T average_window(const T* base, I oy, I ox, I ys, I xs, const DirectArgs& a) {
  using E = Elem<T>;
  using A = typename E::acc_t;
  const AxisWindowOf<I> r = axis_window_of<I>(oy, (I)a.h, (I)a.kh, (I)a.sh, (I)a.ph);
  const AxisWindowOf<I> c = axis_window_of<I>(ox, (I)a.w, (I)a.kw, (I)a.sw, (I)a.pw);
  A sum = 0;
  for (I y = r.begin; y < r.end; ++y)
    for (I x = c.begin; x < c.end; ++x) sum += E::to_acc(base[y * ys + x * xs]);
  const AxisWindow r64{r.begin, r.end, r.padded_len}, c64{c.begin, c.end, c.padded_len};
  return E::from_acc(finish(sum, r64, c64, a.include_pad, a.divisor_override));
}

// 32-bit indices: each thread computes outputs i, i + grid, ... (dense dst
// index in the problem's layout).
template <typename T, bool NHWC>
__global__ void __launch_bounds__(kMaxThreads, kMinBlocks)
    direct_kernel(const T* __restrict__ src, T* __restrict__ dst, DirectArgs a) {
  const int32_t total = (int32_t)a.total, H = (int32_t)a.h, W = (int32_t)a.w, C = (int32_t)a.c;
  for (int32_t i = blockIdx.x * blockDim.x + threadIdx.x; i < total; i += gridDim.x * blockDim.x) {
    uint32_t t, oy, ox;
    const T* base;
    if constexpr (!NHWC) {
      ox = a.inner.divmod(i, &t);
      oy = a.middle.divmod(t, &t);  // t: the plane
      base = src + (int32_t)t * H * W;
      dst[i] = average_window<T, int32_t>(base, oy, ox, W, 1, a);
    } else {
      const uint32_t ic = a.inner.divmod(i, &t);
      ox = a.middle.divmod(t, &t);
      oy = a.outer.divmod(t, &t);  // t: the batch item
      base = src + (int32_t)t * H * W * C + ic;
      dst[i] = average_window<T, int32_t>(base, oy, ox, W * C, C, a);
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
      dst[i] = average_window<T, int64_t>(src + t * H * W, oy, ox, W, 1, a);
    } else {
      const int64_t ic = t % C;
      t /= C;
      const int64_t ox = t % OW;
      t /= OW;
      const int64_t oy = t % OH;
      t /= OH;
      dst[i] = average_window<T, int64_t>(src + t * H * W * C + ic, oy, ox, W * C, C, a);
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

template <typename T, bool NHWC>
avgpool_status use_direct_kernel(KernelConfig<DirectArgs>* c, bool narrow, int threads, const DeviceInfo& device,
                                 Decline* why) {
  if (!narrow) {
    const GridShape grid{ceil_div(c->args.total, kThreads), false};
    return use_kernel<DirectArgs, T, direct_kernel_wide<T, NHWC>>(c, "direct_kernel_wide", kThreads, 0, grid,
                                                                  device, why);
  }
  const GridShape grid{ceil_div(c->args.total, threads), false};
  return use_kernel<DirectArgs, T, direct_kernel<T, NHWC>>(c, "direct_kernel", threads, 0, grid, device, why);
}

avgpool_status init(const Problem& q, const DeviceInfo& device, ConfigPtr* config, Decline* why) {
  auto c = new_config<DirectArgs>(q, device);
  DirectArgs& a = c->args;
  a.total = q.dst_elements;
  a.c = q.c;
  const bool nhwc = q.layout == AVGPOOL_LAYOUT_NHWC;
  // 32-bit indices when every index (and i plus a grid's stride) stays below 2^31.
  const int64_t limit = (int64_t(1) << 31) - (int64_t(1) << 28);
  const bool narrow = q.src_elements < limit && q.dst_elements < limit;
  if (narrow) {
    // A non-empty tensor below 2^31 elements has every size below 2^31; an
    // empty one decodes nothing (its sizes are not divided by).
    auto divider = [limit](int64_t d) { return IntDivider::of(uint32_t(d > 0 && d < limit ? d : 1)); };
    a.inner = divider(nhwc ? q.c : q.ow);
    a.middle = divider(nhwc ? q.ow : q.oh);
    a.outer = divider(q.oh);
  }
  const avgpool_status s = dispatch_dtype_cuda(q.dtype, [&](auto zero) {
    using T = decltype(zero);
    const int threads = block_threads(q);
    return nhwc ? use_direct_kernel<T, true>(c.get(), narrow, threads, device, why)
                : use_direct_kernel<T, false>(c.get(), narrow, threads, device, why);
  });
  return hand_over(s, std::move(c), config);
}

}  // namespace

const Impl kAnyDirectImpl = cuda_impl(kName, Direction::kForward, init);

}  // namespace avgpool::cuda
