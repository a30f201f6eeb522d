// Shared pieces of the CUDA backend: element traits (storage type, the
// accumulator, conversions), streaming loads, host-side checks (device
// present, pointers are device memory, launch errors) and the dtype/K
// dispatch helpers. Kernels include this and window.h; nothing here derives
// a window or a divisor.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <stdint.h>

#include <memory>
#include <type_traits>

#include "avgpool/avgpool.h"
#include "error.h"
#include "impl.h"
#include "problem.h"
#include "window.h"

namespace avgpool::cuda {

// ---- element traits ---------------------------------------------------------
// acc_t is PyTorch's accumulator: float for f32/f16/bf16, double for f64.
template <typename T> struct Elem;
template <> struct Elem<float> {
  using acc_t = float;
  using bits_t = unsigned int;
  static __device__ __forceinline__ float to_acc(float v) { return v; }
  static __device__ __forceinline__ float from_acc(float v) { return v; }
};
template <> struct Elem<double> {
  using acc_t = double;
  using bits_t = unsigned long long;
  static __device__ __forceinline__ double to_acc(double v) { return v; }
  static __device__ __forceinline__ double from_acc(double v) { return v; }
};
template <> struct Elem<__half> {
  using acc_t = float;
  using bits_t = unsigned short;
  static __device__ __forceinline__ float to_acc(__half v) { return __half2float(v); }
  static __device__ __forceinline__ __half from_acc(float v) { return __float2half_rn(v); }
};
template <> struct Elem<__nv_bfloat16> {
  using acc_t = float;
  using bits_t = unsigned short;
  static __device__ __forceinline__ float to_acc(__nv_bfloat16 v) { return __bfloat162float(v); }
  static __device__ __forceinline__ __nv_bfloat16 from_acc(float v) { return __float2bfloat16_rn(v); }
};

// Elements per 16-byte vector.
template <typename T> constexpr int vec_of() { return 16 / (int)sizeof(T); }

// 16 bytes of T, loaded and converted as a unit.
template <typename T> struct alignas(16) Vec16 {
  T v[16 / sizeof(T)];
};

// Element j of a 16-byte vector, widened to the accumulator. bf16 widens by
// a shift of its 32-bit word (exact, as __bfloat162float), which keeps the
// compiler from materialising every converted value at once (it spilled).
template <typename T>
__device__ __forceinline__ typename Elem<T>::acc_t lane_acc(const Vec16<T>& v, int j) {
  return Elem<T>::to_acc(v.v[j]);
}
template <>
__device__ __forceinline__ float lane_acc<__nv_bfloat16>(const Vec16<__nv_bfloat16>& v, int j) {
  const uint32_t w = reinterpret_cast<const uint32_t*>(&v)[j >> 1];
  return __uint_as_float((j & 1) ? (w & 0xffff0000u) : (w << 16));
}

// Loads: streaming (evict-first, for data read once) or cached (read-only
// path, for overlapping windows that re-read their neighbours' inputs).
template <bool STREAM, typename T> __device__ __forceinline__ T load1(const T* p) {
  using B = typename Elem<T>::bits_t;
  B b = STREAM ? __ldcs(reinterpret_cast<const B*>(p)) : __ldg(reinterpret_cast<const B*>(p));
  T out;
  memcpy(&out, &b, sizeof out);
  return out;
}
template <bool STREAM, typename T> __device__ __forceinline__ Vec16<T> load16(const T* p) {
  float4 b = STREAM ? __ldcs(reinterpret_cast<const float4*>(p)) : __ldg(reinterpret_cast<const float4*>(p));
  Vec16<T> out;
  memcpy(&out, &b, sizeof out);
  return out;
}

// A 16-byte vector of zeros (padding, or a load predicated off).
template <typename T> __device__ __forceinline__ Vec16<T> zero16() {
  Vec16<T> z;
  const float4 f = make_float4(0.f, 0.f, 0.f, 0.f);
  memcpy(&z, &f, sizeof z);
  return z;
}

// f(j) for j = 0, 1, ..., n - 1 in order, n <= K: unrolled with predicates
// for a compile-time K (the registers the iterations fill stay registers), a
// plain loop for K = 0 (run-time sizes).
template <int K, typename F> __device__ __forceinline__ void for_upto(int n, F&& f) {
  if constexpr (K > 0) {
#pragma unroll
    for (int j = 0; j < K; ++j)
      if (j < n) f(j);
  } else {
    for (int j = 0; j < n; ++j) f(j);
  }
}

// The division PyTorch does: one true (IEEE, correctly rounded) division of
// the accumulator by the integer divisor converted to the accumulator type.
// A window with no input (impossible while padding <= kernel / 2) gives 0.
template <typename A>
__device__ __forceinline__ A finish(A sum, const AxisWindow& r, const AxisWindow& c,
                                    bool include_pad, int64_t divisor_override) {
  if (r.begin >= r.end || c.begin >= c.end) return A(0);
  return sum / static_cast<A>(window_divisor(r, c, include_pad, divisor_override));
}

inline int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

// ---- the device a plan binds to --------------------------------------------
// The current device's properties, read once per device (thread-safe); or
// BACKEND_UNAVAILABLE with the reason when no device is usable.
avgpool_status current_device(DeviceInfo* info, Decline* why);

// The bulk-copy implementations (cuda:nchw_row_stream, cuda:nhwc_tile_stream,
// cuda:nchw_row_bulk) need sm_90 or newer: the copy engine and its mbarriers.
// Their inits start with this; below sm_90 (real, or as AVGPOOL_CUDA_TREAT_AS_SM
// says) they decline with the reason and AUTO goes on to the portable ones.
avgpool_status require_bulk_copy(const char* impl, const DeviceInfo& device, Decline* why);

// After a launch: AVGPOOL_ERROR_DEVICE with the runtime's text, or SUCCESS.
avgpool_status check_launch(const char* kernel);

// ---- configuration ----------------------------------------------------------
// The problem's geometry, as every kernel-argument struct starts (each
// derives from it and adds its own fields).
struct Geometry {
  int64_t planes, h, w, oh, ow, kh, kw, sh, sw, ph, pw, divisor_override;
  bool include_pad;
};
Geometry geometry_of(const Problem& q);

// What a CUDA implementation decides at plan creation: the device, the
// kernel instantiation and its launch shape. Args (the kernel's argument
// struct) lives in KernelConfig<Args>.
struct CudaConfig : Config {
  int device = 0;
  const char* kernel_name = "";
  avgpool_status (*launch)(const CudaConfig& config, const void* src, void* dst, cudaStream_t stream) = nullptr;
  unsigned grid = 0;
  int threads = 0;
  int64_t smem = 0;
  // A bulk-copy kernel: its device code must come from sm_90 or newer (a
  // build for older architectures only has a trap there; set_kernel_attributes
  // declines it).
  bool bulk_copy = false;
  // An implementation with a 16-byte-vector kernel and a scalar one for the
  // same problem: pointers not aligned to vec_align bytes run `unaligned`.
  int64_t vec_align = 1;
  std::unique_ptr<CudaConfig> unaligned;
};
template <class Args> struct KernelConfig : CudaConfig {
  Args args;
};

// The configuration that runs src and dst: c, or its scalar variant where
// the pointers are not aligned to c.vec_align.
const CudaConfig& config_for_pointers(const CudaConfig& c, const void* src, const void* dst);

// The execute of every CUDA implementation: src and dst must be memory of
// the plan's device (or managed), a non-default stream must belong to it;
// the launch runs with the plan's device current and restores the caller's.
avgpool_status execute_config(const Problem& q, const Config& config, const void* src, void* dst, void* stream);

// The Impl of a CUDA implementation: each executes through execute_config.
constexpr Impl cuda_impl(const char* name, Direction direction,
                         avgpool_status (*init)(const Problem&, const DeviceInfo&, ConfigPtr*, Decline*)) {
  return Impl{name, AVGPOOL_BACKEND_CUDA, direction, init, execute_config};
}

template <class Args, typename T, void (*Kernel)(const T*, T*, Args)>
avgpool_status launch_kernel(const CudaConfig& c, const void* src, void* dst, cudaStream_t stream) {
  Kernel<<<c.grid, c.threads, (size_t)c.smem, stream>>>(static_cast<const T*>(src), static_cast<T*>(dst),
                                                       static_cast<const KernelConfig<Args>&>(c).args);
  return check_launch(c.kernel_name);
}

// How many blocks a launch gets: `items` capped at `cap` (grid-stride
// kernels), or a persistent grid of as many blocks as fit on the device at
// once (occupancy), at most `items`.
struct GridShape {
  int64_t items;
  bool persistent;
  int64_t cap = int64_t(1) << 20;
};

// Makes Kernel the configuration's kernel: raises its dynamic shared-memory
// limit on the plan's device (current during init) when smem needs it and
// sizes the grid. UNSUPPORTED in *why if the device cannot give smem.
avgpool_status set_kernel_attributes(const void* kernel, int threads, int64_t smem, const GridShape& shape,
                                     const DeviceInfo& device, CudaConfig* c, Decline* why);

template <class Args, typename T, void (*Kernel)(const T*, T*, Args)>
avgpool_status use_kernel(KernelConfig<Args>* c, const char* name, int threads, int64_t smem,
                          const GridShape& shape, const DeviceInfo& device, Decline* why) {
  c->kernel_name = name;
  c->launch = launch_kernel<Args, T, Kernel>;
  return set_kernel_attributes((const void*)Kernel, threads, smem, shape, device, c, why);
}

// A new KernelConfig<Args> for a plan on device, with the problem's geometry
// in its arguments.
template <class Args> std::unique_ptr<KernelConfig<Args>> new_config(const Problem& q, const DeviceInfo& device) {
  auto c = std::make_unique<KernelConfig<Args>>();
  c->device = device.ordinal;
  static_cast<Geometry&>(c->args) = geometry_of(q);
  return c;
}

// The end of an init: the configuration goes to the plan when s is SUCCESS.
template <class C> avgpool_status hand_over(avgpool_status s, std::unique_ptr<C> c, ConfigPtr* config) {
  if (s == AVGPOOL_SUCCESS) *config = std::move(c);
  return s;
}

// An implementation with a 16-byte-vector kernel and a scalar one for the
// same problem: fill(config, vectors) sets up each (and sets vec_align to 16
// where the vector one needs aligned pointers); the scalar one then runs
// other pointers (execute_config picks).
template <class Args, class Fill>
avgpool_status hand_over_vector_and_scalar(const Problem& q, const DeviceInfo& device, ConfigPtr* config,
                                           Fill&& fill) {
  auto vec = new_config<Args>(q, device), scalar = new_config<Args>(q, device);
  avgpool_status s;
  if ((s = fill(vec.get(), true)) != AVGPOOL_SUCCESS || (s = fill(scalar.get(), false)) != AVGPOOL_SUCCESS) return s;
  if (vec->vec_align > 1) vec->unaligned = std::move(scalar);
  *config = std::move(vec);
  return AVGPOOL_SUCCESS;
}

// One range guard: kernels that index within an axis in int32 take axes,
// kernels, strides and paddings below 2^28 (sums of a few stay below 2^31).
bool axes_fit_int32(const Problem& q);
// The decline of implementation `name` for a problem axes_fit_int32 refuses.
avgpool_status decline_axes_int32(const char* name, Decline* why);

// Calls f(std::integral_constant<int, K>{}) with K the first of Ks equal to
// k, else K = 0 (the run-time-size instantiation): the one compile-time
// window-size switch of the backend.
template <int... Ks, typename F> inline avgpool_status dispatch_k(int64_t k, F&& f) {
  avgpool_status result = AVGPOOL_ERROR_INTERNAL;
  const bool matched = ((k == Ks ? (result = f(std::integral_constant<int, Ks>{}), true) : false) || ...);
  return matched ? result : f(std::integral_constant<int, 0>{});
}

// Calls f(std::integral_constant<int, KW>{}) with KW a compile-time bound
// on a window's width: the smallest of 1, 2, 3, 4, 6, 8 and 11 that holds
// kw (a few predicated-off loads per row at most: for_upto<KW>), 0 (a
// run-time loop) beyond.
template <typename F> avgpool_status with_width_bound(int64_t kw, F&& f) {
  if (kw <= 1) return f(std::integral_constant<int, 1>{});
  if (kw <= 2) return f(std::integral_constant<int, 2>{});
  if (kw <= 3) return f(std::integral_constant<int, 3>{});
  if (kw <= 4) return f(std::integral_constant<int, 4>{});
  if (kw <= 6) return f(std::integral_constant<int, 6>{});
  if (kw <= 8) return f(std::integral_constant<int, 8>{});
  if (kw <= 11) return f(std::integral_constant<int, 11>{});
  return f(std::integral_constant<int, 0>{});
}

// Calls f(T{}) with T the device storage type of dtype.
template <typename F> inline avgpool_status dispatch_dtype_cuda(avgpool_dtype dtype, F&& f) {
  switch (dtype) {
    case AVGPOOL_DTYPE_F32: return f(float{});
    case AVGPOOL_DTYPE_F64: return f(double{});
    case AVGPOOL_DTYPE_F16: return f(__half{});
    case AVGPOOL_DTYPE_BF16: return f(__nv_bfloat16{});
  }
  return set_error(AVGPOOL_ERROR_INTERNAL, "unknown dtype %d", (int)dtype);
}

// Calls f(T{}, std::bool_constant<flag>{}): the storage type of dtype and a
// run-time flag (usually "pytorch numerics") as a compile-time one, for
// launchers templated on both.
template <typename F> inline avgpool_status dispatch_dtype_flag(avgpool_dtype dtype, bool flag, F&& f) {
  return dispatch_dtype_cuda(dtype, [&](auto zero) {
    return flag ? f(zero, std::true_type{}) : f(zero, std::false_type{});
  });
}

// Calls f(T{}, std::bool_constant<pytorch numerics>{}) for the problem's
// dtype and numerics: where an init picks its kernel instantiation.
template <typename F> avgpool_status for_problem_types(const Problem& q, F&& f) {
  return dispatch_dtype_flag(q.dtype, q.numerics == AVGPOOL_NUMERICS_PYTORCH, static_cast<F&&>(f));
}

// What a bulk-copy implementation's pick chooses with: the problem's element
// type T and numerics (kPytorch), the planned arguments, and
// use<Kernel>(name, units), which makes Kernel the configuration's kernel with
// the implementation's block size and the planned shared memory, on a
// persistent grid over `units` work units.
template <class Args, typename Element, bool Pytorch>
struct KernelPick {
  using T = Element;
  static constexpr bool kPytorch = Pytorch;
  KernelConfig<Args>* config;
  int threads;
  int64_t smem;
  const DeviceInfo& device;
  Decline* why;

  const Args& args() const { return config->args; }
  template <void (*Kernel)(const T*, T*, Args)> avgpool_status use(const char* name, int64_t units) const {
    return use_kernel<Args, T, Kernel>(config, name, threads, smem, GridShape{units, true}, device, why);
  }
};

// The init of a bulk-copy implementation (sm_90 and up, bulk_copy.cuh):
// plan(q, device, &args, &smem, why) sizes its ring of shared-memory stages
// (or declines), then pick(KernelPick) chooses the kernel for the problem's
// types. Blocks of `threads`; pointers must be src_align / dst_align aligned.
template <class Args, class Pick>
avgpool_status init_bulk_copy(const char* name, const Problem& q, const DeviceInfo& device, int threads,
                              int64_t src_align, int64_t dst_align, ConfigPtr* config, Decline* why,
                              avgpool_status (*plan)(const Problem&, const DeviceInfo&, Args*, int64_t*, Decline*),
                              Pick&& pick) {
  if (require_bulk_copy(name, device, why) != AVGPOOL_SUCCESS) return why->status;
  auto c = new_config<Args>(q, device);
  c->bulk_copy = true;
  c->src_align = src_align;
  c->dst_align = dst_align;
  int64_t smem = 0;
  if (plan(q, device, &c->args, &smem, why) != AVGPOOL_SUCCESS) return why->status;
  const avgpool_status s = for_problem_types(q, [&](auto zero, auto pyt) {
    return pick(KernelPick<Args, decltype(zero), decltype(pyt)::value>{c.get(), threads, smem, device, why});
  });
  return hand_over(s, std::move(c), config);
}

}  // namespace avgpool::cuda
