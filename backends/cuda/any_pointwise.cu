// cuda:any_pointwise - windows of one element at stride 1 (kernel 1x1,
// stride 1x1; padding is then 0): the output has the input's shape and
// each output is its one input over the divisor (1, or divisor_override),
// in either layout. An elementwise pass over 16-byte vectors, several in
// flight per thread, where one thread per output (cuda:any_direct) spends
// its time decoding indices and issuing 2- or 4-byte loads: 0.28-0.43 of
// the copy roofline on the random sweeps' 1x1 configurations (H200,
// 2026-12-02).
//
// PyTorch's order: the sum starts at zero in the accumulator type and takes
// the one input (so -0 becomes +0), then one division; both numerics.
// Vectors need 16-byte-aligned pointers; other pointers run the scalar
// kernel. 64-bit indices.
#include "common.cuh"
#include "impls.h"

namespace avgpool::cuda {
namespace {

constexpr const char* kName = "cuda:any_pointwise";
constexpr int kThreads = 256;
constexpr int kVectorsPerThread = 4;  // loads in flight per thread before the first store

struct PointwiseArgs : Geometry {
  int64_t elements;
  int64_t divisor;
};

template <typename T> __device__ __forceinline__ T one_window(T x, typename Elem<T>::acc_t divisor) {
  using E = Elem<T>;
  typename E::acc_t sum = 0;
  sum += E::to_acc(x);
  return E::from_acc(sum / divisor);
}

// Blocks of kThreads take kVectorsPerThread vectors a thread per step
// (thread t of the block: vectors t, t + kThreads, ...), grid-stride; the
// last elements (fewer than a vector) go to the first threads of block 0.
template <typename T>
__global__ void __launch_bounds__(kThreads) vector_kernel(const T* __restrict__ src, T* __restrict__ dst,
                                                          PointwiseArgs a) {
  using A = typename Elem<T>::acc_t;
  constexpr int V = vec_of<T>();
  const A divisor = static_cast<A>(a.divisor);
  const int64_t vectors = a.elements / V, step = (int64_t)kThreads * kVectorsPerThread;
  const Vec16<T>* in = reinterpret_cast<const Vec16<T>*>(src);
  Vec16<T>* out = reinterpret_cast<Vec16<T>*>(dst);
  for (int64_t base = (int64_t)blockIdx.x * step; base < vectors; base += (int64_t)gridDim.x * step) {
    Vec16<T> v[kVectorsPerThread];
#pragma unroll
    for (int j = 0; j < kVectorsPerThread; ++j) {
      const int64_t i = base + j * kThreads + threadIdx.x;
      if (i < vectors) v[j] = in[i];
    }
#pragma unroll
    for (int j = 0; j < kVectorsPerThread; ++j) {
      const int64_t i = base + j * kThreads + threadIdx.x;
      if (i < vectors) {
#pragma unroll
        for (int e = 0; e < V; ++e) v[j].v[e] = one_window(v[j].v[e], divisor);
        out[i] = v[j];
      }
    }
  }
  const int64_t tail = vectors * V + threadIdx.x;
  if (blockIdx.x == 0 && tail < a.elements) dst[tail] = one_window(src[tail], divisor);
}

template <typename T>
__global__ void __launch_bounds__(kThreads) scalar_kernel(const T* __restrict__ src, T* __restrict__ dst,
                                                          PointwiseArgs a) {
  using A = typename Elem<T>::acc_t;
  const A divisor = static_cast<A>(a.divisor);
  for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < a.elements;
       i += (int64_t)gridDim.x * blockDim.x)
    dst[i] = one_window(src[i], divisor);
}

avgpool_status init(const Problem& q, const DeviceInfo& device, ConfigPtr* config, Decline* why) {
  if (q.kh != 1 || q.kw != 1 || q.sh != 1 || q.sw != 1 || q.ph != 0 || q.pw != 0)
    return decline(why, AVGPOOL_ERROR_UNSUPPORTED,
                   "%s: windows of one element at stride 1 only (kernel %lldx%lld, stride %lldx%lld)", kName,
                   (long long)q.kh, (long long)q.kw, (long long)q.sh, (long long)q.sw);
  return hand_over_vector_and_scalar<PointwiseArgs>(q, device, config, [&](KernelConfig<PointwiseArgs>* c,
                                                                           bool vectors) {
    c->args.elements = q.dst_elements;
    // Every window is one element at a (0, 0) offset: output (0, 0)'s divisor is every output's.
    c->args.divisor = q.dst_elements > 0 ? q.divisor(0, 0) : 1;
    return dispatch_dtype_cuda(q.dtype, [&](auto zero) {
      using T = decltype(zero);
      if (!vectors)
        return use_kernel<PointwiseArgs, T, scalar_kernel<T>>(c, "scalar_kernel", kThreads, 0,
                                                               GridShape{ceil_div(q.dst_elements, kThreads), false},
                                                               device, why);
      c->vec_align = 16;
      const int64_t per_block = (int64_t)kThreads * kVectorsPerThread * vec_of<T>();
      return use_kernel<PointwiseArgs, T, vector_kernel<T>>(c, "vector_kernel", kThreads, 0,
                                                             GridShape{ceil_div(q.dst_elements, per_block) + 1, false},
                                                             device, why);
    });
  });
}

}  // namespace

const Impl kAnyPointwiseImpl = cuda_impl(kName, Direction::kForward, init);

}  // namespace avgpool::cuda
