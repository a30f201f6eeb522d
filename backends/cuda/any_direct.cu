// cuda:any_direct - one thread per output, any layout, any window: the
// fallback that accepts every problem (PyTorch's own CUDA scheme). Sums in
// PyTorch's order (rows then columns, acc_t accumulator), so it serves both
// numerics. Any element-aligned pointers; a grid-stride grid. Indices are
// 32-bit when both tensors have fewer than 2^31 elements (as PyTorch's
// kernel does: the index decode's divisions are most of a small window's
// work), 64-bit otherwise.
#include "common.cuh"
#include "impls.h"

namespace avgpool::cuda {
namespace {

constexpr const char* kName = "cuda:any_direct";
constexpr int kThreads = 256;  // direct_kernel's launch bounds

struct DirectArgs : Geometry {
  int64_t total;  // outputs
  int64_t c;      // channels
  bool nhwc;
};

// Each thread computes outputs index, index + stride, ... (dense dst index in
// the problem's layout), with indices of type I (int32_t or int64_t).
template <typename T, typename I>
__global__ void __launch_bounds__(256) direct_kernel(const T* __restrict__ src, T* __restrict__ dst,
                                                     DirectArgs a) {
  using E = Elem<T>;
  using A = typename E::acc_t;
  const I total = (I)a.total, C = (I)a.c, H = (I)a.h, W = (I)a.w, OH = (I)a.oh, OW = (I)a.ow;
  for (I i = (I)(blockIdx.x * blockDim.x + threadIdx.x); i < total; i += (I)(gridDim.x * blockDim.x)) {
    I in, ic, oy, ox, t = i;
    if (!a.nhwc) {
      ox = t % OW; t /= OW; oy = t % OH; t /= OH; ic = t % C; in = t / C;
    } else {
      ic = t % C; t /= C; ox = t % OW; t /= OW; oy = t % OH; in = t / OH;
    }
    const AxisWindow r = axis_window(oy, a.h, a.kh, a.sh, a.ph);
    const AxisWindow c = axis_window(ox, a.w, a.kw, a.sw, a.pw);
    // element (y, x) of this plane is at base + y * ys + x * xs
    const I xs = a.nhwc ? C : 1, ys = W * xs;
    const T* base = a.nhwc ? src + in * H * W * C + ic : src + (in * C + ic) * H * W;
    A sum = 0;
    for (I y = (I)r.begin; y < (I)r.end; ++y)
      for (I x = (I)c.begin; x < (I)c.end; ++x) sum += E::to_acc(load1<false>(base + y * ys + x * xs));
    dst[i] = E::from_acc(finish(sum, r, c, a.include_pad, a.divisor_override));
  }
}

avgpool_status init(const Problem& q, const DeviceInfo& device, ConfigPtr* config, Decline* why) {
  auto c = new_config<DirectArgs>(q, device);
  DirectArgs& a = c->args;
  a.total = q.dst_elements;
  a.c = q.c;
  a.nhwc = q.layout == AVGPOOL_LAYOUT_NHWC;
  // 32-bit indices when every index (and i plus a grid's stride) stays below 2^31.
  const int64_t limit = (int64_t(1) << 31) - (int64_t(1) << 28);
  const bool narrow = q.src_elements < limit && q.dst_elements < limit;
  const avgpool_status s = dispatch_dtype_cuda(q.dtype, [&](auto zero) {
    using T = decltype(zero);
    const GridShape grid{ceil_div(a.total, kThreads), false};
    return narrow ? use_kernel<DirectArgs, T, direct_kernel<T, int32_t>>(c.get(), "direct_kernel", kThreads, 0,
                                                                        grid, device, why)
                  : use_kernel<DirectArgs, T, direct_kernel<T, int64_t>>(c.get(), "direct_kernel", kThreads, 0,
                                                                        grid, device, why);
  });
  return hand_over(s, std::move(c), config);
}

}  // namespace

const Impl kAnyDirectImpl = cuda_impl(kName, Direction::kForward, init);

}  // namespace avgpool::cuda
