// cuda:direct - one thread per output, any layout, any window: the fallback
// that accepts every problem (PyTorch's own CUDA scheme). Sums in PyTorch's
// order (rows then columns, acc_t accumulator), so it serves both numerics.
#include "common.cuh"

namespace avgpool {
namespace cuda {
namespace {

struct DirectArgs {
  int64_t total;  // outputs
  int64_t n, c, h, w, oh, ow, kh, kw, sh, sw, ph, pw;
  int64_t divisor_override;
  bool include_pad, nhwc;
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

avgpool_status accepts(const Problem&) { return device_usable(); }

avgpool_status execute(const Problem& q, const void* src, void* dst, void* stream) {
  avgpool_status s = check_device_pointers(src, dst);
  if (s != AVGPOOL_SUCCESS) return s;
  DirectArgs a{q.dst_elements, q.n, q.c, q.h, q.w, q.oh, q.ow, q.kh, q.kw, q.sh, q.sw, q.ph, q.pw,
               q.divisor_override, q.count_include_pad, q.layout == AVGPOOL_LAYOUT_NHWC};
  return dispatch_dtype_cuda(q.dtype, [&](auto zero) {
    using T = decltype(zero);
    direct_kernel<T><<<grid_for(ceil_div(a.total, 256)), 256, 0, (cudaStream_t)stream>>>(
        static_cast<const T*>(src), static_cast<T*>(dst), a);
    return check_launch("direct_kernel");
  });
}

}  // namespace

const Impl kDirectImpl = {
    /* .name     = */ "cuda:direct",
    /* .backend  = */ AVGPOOL_BACKEND_CUDA,
    /* .accepts  = */ accepts,
    /* .execute  = */ execute,
};

}  // namespace cuda
}  // namespace avgpool
