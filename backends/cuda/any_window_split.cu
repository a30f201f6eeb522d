// cuda:any_window_split - any layout, large windows whose outputs lie side by
// side in memory (NHWC channels; NCHW output columns): lanes take adjacent
// outputs, so every load of a warp is coalesced, and each output's window is
// split over thread rows ("slots"), over the blocks of a cluster (sm_90) too
// when outputs are few (a tall column window over a single plane).
//
// Fast numerics: slot s of S sums the window's elements s, s + S, ... (rows
// then columns); the slots' sums meet in slot order, the cluster's blocks in
// rank order: the same bits on every run. Pytorch numerics: one slot, one
// block per output run: each thread adds its window rows then columns, one
// acc_t accumulator, PyTorch's order, its loads independent of the sum (kept
// several in flight). Any element-aligned pointers; 64-bit offsets.
#include "impls.h"
#include "window_split.cuh"

namespace avgpool::cuda {
namespace {

namespace cg = cooperative_groups;

constexpr const char* kName = "cuda:any_window_split";
constexpr int kMaxThreads = 256;
constexpr int kDepth = 8;  // loads in flight per thread

struct SplitArgs : Geometry {
  int64_t c;           // channels
  int64_t run_blocks;  // runs of `lanes` adjacent outputs per row (NCHW) or pixel (NHWC)
  int64_t runs;        // all runs
  int lanes, slots, cluster;
  bool nhwc;
};

template <typename T>
__global__ void __launch_bounds__(kMaxThreads) split_kernel(const T* __restrict__ src, T* __restrict__ dst,
                                                            SplitArgs a) {
  using E = Elem<T>;
  using A = typename E::acc_t;
  __shared__ A part[kMaxThreads];
  const int L = a.lanes, S = a.slots, cs = a.cluster;
  const int l = threadIdx.x % L, slot = threadIdx.x / L;
  const int rank = (int)(blockIdx.x % (unsigned)cs);
  const int64_t st = (int64_t)S * cs, sp = (int64_t)rank * S + slot;  // slots in all, this thread's
  for (int64_t g = blockIdx.x / cs; g < a.runs; g += gridDim.x / cs) {
    const int64_t rb = g % a.run_blocks;
    int64_t rest = g / a.run_blocks;
    int64_t oy, ox, out, base, xs;  // base: element (0, 0) of the window's plane; xs: column step
    bool valid;
    if (!a.nhwc) {
      oy = rest % a.oh;
      const int64_t plane = rest / a.oh;
      ox = rb * L + l;
      valid = ox < a.ow;
      out = (plane * a.oh + oy) * a.ow + ox;
      base = plane * a.h * a.w;
      xs = 1;
    } else {
      ox = rest % a.ow;
      rest /= a.ow;
      oy = rest % a.oh;
      const int64_t n = rest / a.oh, ch = rb * L + l;
      valid = ch < a.c;
      out = ((n * a.oh + oy) * a.ow + ox) * a.c + ch;
      base = n * a.h * a.w * a.c + ch;
      xs = a.c;
    }
    const int64_t ys = a.w * xs;
    const AxisWindow r = axis_window(oy, a.h, a.kh, a.sh, a.ph);
    const AxisWindow c = axis_window(ox < a.ow ? ox : 0, a.w, a.kw, a.sw, a.pw);
    A sum = 0;
    const int64_t nc = c.end - c.begin;
    if (valid && nc > 0 && sp < (r.end - r.begin) * nc) {
      // element sp of the window, then steps of st elements (dy rows, dx
      // columns; a GridWalk here cost 5 % on the 64x64 NHWC global window,
      // H200, 2026-11-30: 0.129 against 0.123 ms)
      int64_t y = r.begin + sp / nc, x = sp % nc;
      const int64_t dy = st / nc, dx = st % nc;
      const T* p = src + base + y * ys + (c.begin + x) * xs;
      const int64_t step = dy * ys + dx * xs, wrap = ys - nc * xs;
      while (y < r.end) {
        // up to kDepth elements' loads in flight, added in order (four left
        // a pytorch-order thread waiting on its loads: H200, k32 s16 NHWC
        // 0.74 ms)
        const T* q[kDepth];
        int n = 0;
#pragma unroll
        for (int k = 0; k < kDepth; ++k) {
          q[k] = p;
          if (y < r.end) {
            ++n;
            p += step;
            y += dy;
            x += dx;
            if (x >= nc) {
              x -= nc;
              ++y;
              p += wrap;
            }
          }
        }
        A v[kDepth];
#pragma unroll
        for (int k = 0; k < kDepth; ++k) v[k] = k < n ? E::to_acc(load1<false>(q[k])) : A(0);
#pragma unroll
        for (int k = 0; k < kDepth; ++k)
          if (k < n) sum += v[k];
      }
    }
    if (S > 1) {
      part[threadIdx.x] = sum;
      __syncthreads();
      if (slot == 0) {
        A s = part[l];
        for (int k = 1; k < S; ++k) s += part[k * L + l];
        sum = s;
      }
      __syncthreads();
    }
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    if (cs > 1) {
      cg::cluster_group cluster = cg::this_cluster();
      if (slot == 0) part[l] = sum;
      cluster.sync();
      if (rank == 0 && slot == 0) {
        A s = 0;
        for (int k = 0; k < cs; ++k) s += cluster.map_shared_rank(part, (unsigned)k)[l];
        sum = s;
      }
      cluster.sync();  // the others keep their shared memory until rank 0 has read it
    }
#endif
    if (valid && slot == 0 && rank == 0) dst[out] = E::from_acc(finish(sum, r, c, a.include_pad, a.divisor_override));
  }
}

avgpool_status init(const Problem& q, const DeviceInfo& device, ConfigPtr* config, Decline* why) {
  auto c = new_config<SplitArgs>(q, device);
  SplitArgs& a = c->args;
  a.c = q.c;
  a.nhwc = q.layout == AVGPOOL_LAYOUT_NHWC;
  const bool pytorch = q.numerics == AVGPOOL_NUMERICS_PYTORCH;
  // Adjacent outputs: channels (NHWC) or output columns (NCHW).
  const int64_t run = a.nhwc ? q.c : q.ow;
  const int64_t pixels = a.nhwc ? q.n * q.oh * q.ow : q.planes() * q.oh;  // rows of runs
  const int64_t elems = q.window_inputs();
  int64_t lanes = pow2_ceil(run);
  if (lanes < 32) lanes = 32;
  if (lanes > kMaxThreads) lanes = kMaxThreads;
  int64_t slots = pytorch ? 1 : kMaxThreads / lanes;
  auto blocks = [&](int64_t l) { return pixels * ceil_div(run, l); };
  // Fast numerics, few runs for the device: narrower runs, more slots per
  // window (while each slot keeps at least 16 elements).
  const int64_t fill = 8 * (int64_t)device.sms;
  while (!pytorch && lanes > 32 && blocks(lanes) < fill && elems / (2 * slots) >= 16) {
    lanes /= 2;
    slots *= 2;
  }
  // Pytorch numerics, few runs: narrower blocks, more of them (one chain per
  // thread either way).
  while (pytorch && lanes > 32 && blocks(lanes) < fill) lanes /= 2;
  a.lanes = (int)lanes;
  a.slots = (int)slots;
  a.run_blocks = ceil_div(run, lanes);
  a.runs = pixels * a.run_blocks;
  a.cluster = 1;
  const avgpool_status s = dispatch_dtype_cuda(q.dtype, [&](auto zero) {
    using T = decltype(zero);
    const void* kernel = (const void*)split_kernel<T>;
    if (!pytorch && clusters_allowed(kernel, device) && a.runs < fill) {
      int64_t cs = ceil_div(fill, a.runs > 0 ? a.runs : 1);
      if (cs > kMaxCluster) cs = kMaxCluster;
      while (cs > 1 && elems / (slots * cs) < 16) --cs;
      a.cluster = (int)cs;
    }
    avgpool_status st = use_kernel<SplitArgs, T, split_kernel<T>>(
        c.get(), "split_kernel", (int)(lanes * slots), 0,
        GridShape{a.runs, false, (int64_t(1) << 20) / kMaxCluster}, device, why);
    if (st != AVGPOOL_SUCCESS) return st;
    c->launch = launch_clustered<SplitArgs, T, split_kernel<T>>;
    c->grid *= (unsigned)a.cluster;
    return AVGPOOL_SUCCESS;
  });
  return hand_over(s, std::move(c), config);
}

}  // namespace

const Impl kAnyWindowSplitImpl = cuda_impl(kName, Direction::kForward, init);

}  // namespace avgpool::cuda
