// cuda:any_direct - one thread per output, any layout, any window: the
// fallback that accepts every problem (PyTorch's own CUDA scheme). Sums in
// PyTorch's order (rows then columns, acc_t accumulator), so it serves both
// numerics. Any element-aligned pointers; 64-bit indices; a grid-stride grid.
#include "common.cuh"
#include "impls.h"

namespace avgpool {
namespace cuda {
namespace {

constexpr const char* kName = "cuda:any_direct";
constexpr int kThreads = 256;  // direct_kernel's launch bounds

struct DirectArgs : Geometry {
  int64_t total;  // outputs
  int64_t c;      // channels
  bool nhwc;
};

// Each thread computes outputs index, index + stride, ... (dense dst index in
// the problem's layout). 64-bit indices throughout.
template <typename T>
__global__ void __launch_bounds__(256) direct_kernel(const T* __restrict__ src, T* __restrict__ dst,
                                                     DirectArgs a) {
  using E = Elem<T>;
  using A = typename E::acc_t;
  for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < a.total;
       i += (int64_t)gridDim.x * blockDim.x) {
    int64_t in, ic, oy, ox, t = i;
    if (!a.nhwc) {
      ox = t % a.ow; t /= a.ow; oy = t % a.oh; t /= a.oh; ic = t % a.c; in = t / a.c;
    } else {
      ic = t % a.c; t /= a.c; ox = t % a.ow; t /= a.ow; oy = t % a.oh; in = t / a.oh;
    }
    const AxisWindow r = axis_window(oy, a.h, a.kh, a.sh, a.ph);
    const AxisWindow c = axis_window(ox, a.w, a.kw, a.sw, a.pw);
    // element (y, x) of this plane is at base + y * ys + x * xs
    const int64_t xs = a.nhwc ? a.c : 1, ys = a.w * xs;
    const T* base = a.nhwc ? src + in * a.h * a.w * a.c + ic : src + (in * a.c + ic) * a.h * a.w;
    A sum = 0;
    for (int64_t y = r.begin; y < r.end; ++y)
      for (int64_t x = c.begin; x < c.end; ++x) sum += E::to_acc(load1<false>(base + y * ys + x * xs));
    dst[i] = E::from_acc(finish(sum, r, c, a.include_pad, a.divisor_override));
  }
}

avgpool_status init(const Problem& q, const DeviceInfo& device, ConfigPtr* config, Decline* why) {
  auto c = new_config<DirectArgs>(q, device);
  DirectArgs& a = c->args;
  a.total = q.dst_elements;
  a.c = q.c;
  a.nhwc = q.layout == AVGPOOL_LAYOUT_NHWC;
  const avgpool_status s = dispatch_dtype_cuda(q.dtype, [&](auto zero) {
    using T = decltype(zero);
    return use_kernel<DirectArgs, T, direct_kernel<T>>(c.get(), "direct_kernel", kThreads, 0,
                                                       GridShape{ceil_div(a.total, kThreads), false}, device, why);
  });
  return hand_over(s, std::move(c), config);
}

}  // namespace

const Impl kAnyDirectImpl = cuda_impl(kName, Direction::kForward, init);

}  // namespace cuda
}  // namespace avgpool
