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

#include <initializer_list>
#include <type_traits>

#include "avgpool/avgpool.h"
#include "error.h"
#include "impl.h"
#include "problem.h"
#include "window.h"

namespace avgpool {
namespace cuda {

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

// ---- host-side checks -------------------------------------------------------
// SUCCESS when a CUDA device is usable (checked once per process), else
// BACKEND_UNAVAILABLE with the runtime's reason.
avgpool_status device_usable();

// src and dst must be device (or managed) memory of the current device.
avgpool_status check_device_pointers(const void* src, const void* dst);

// Runs the first of `fallbacks` that accepts q: for an implementation that
// learns only at execute that it cannot take the pointers (a misaligned
// src), which must fall back rather than fail (issue 5).
avgpool_status execute_fallback(const Problem& q, const void* src, void* dst, void* stream,
                                std::initializer_list<const Impl*> fallbacks, const char* who);

// After a launch: AVGPOOL_ERROR_DEVICE with the runtime's text, or SUCCESS.
avgpool_status check_launch(const char* kernel);

// Shared-memory bytes a block may use (opt-in limit of the current device).
int64_t max_shared_per_block();

// Shared-memory bytes of one SM (all resident blocks together).
int64_t max_shared_per_sm();

// Streaming multiprocessors of the current device (132 if the query fails).
int sm_count();

// Raises a kernel's dynamic shared-memory limit once (thread-safe).
avgpool_status allow_shared(const void* kernel, int64_t bytes, const char* name);

// Blocks for a grid-stride launch over `items` work items.
inline unsigned grid_for(int64_t items, int64_t cap = int64_t(1) << 20) {
  return (unsigned)(items < cap ? items : cap);
}

// Launches kernel on a persistent grid: as many blocks of `threads` as fit on
// the device at once (occupancy API), at most `items`; then check_launch(name).
template <typename... Params, typename... Args>
avgpool_status launch_persistent(void (*kernel)(Params...), int64_t items, int threads, int64_t smem,
                                 cudaStream_t stream, const char* name, Args&&... args) {
  int per_sm = 1;
  if (cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, threads, (size_t)smem) != cudaSuccess ||
      per_sm < 1) {
    cudaGetLastError();
    per_sm = 1;
  }
  const int64_t fit = (int64_t)per_sm * sm_count();
  const int64_t grid = items < fit ? items : fit;
  kernel<<<(unsigned)grid, threads, (size_t)smem, stream>>>(static_cast<Args&&>(args)...);
  return check_launch(name);
}

// launch_persistent for a kernel that may take more than 48 KB of dynamic
// shared memory: raises Kernel's limit to `limit` bytes once per process
// (a template on the kernel itself, so each kernel has its own flag), then
// launches; DEVICE error if the limit could not be raised.
template <auto Kernel, typename... Args>
avgpool_status launch_persistent_smem(int64_t limit, int64_t items, int threads, int64_t smem, cudaStream_t stream,
                                      const char* name, Args&&... args) {
  static const avgpool_status allowed = allow_shared((const void*)Kernel, limit, name);
  if (smem > 48 * 1024 && allowed != AVGPOOL_SUCCESS)
    return set_error(AVGPOOL_ERROR_DEVICE, "%s: cannot raise the shared-memory limit", name);
  return launch_persistent(Kernel, items, threads, smem, stream, name, static_cast<Args&&>(args)...);
}

// Copies the problem's geometry into a kernel-argument struct (any struct
// with these fields), so each launcher passes it by value.
template <typename Args> inline void copy_geometry(const Problem& q, Args* a) {
  a->planes = q.planes(); a->h = q.h; a->w = q.w; a->oh = q.oh; a->ow = q.ow;
  a->kh = q.kh; a->kw = q.kw; a->sh = q.sh; a->sw = q.sw; a->ph = q.ph; a->pw = q.pw;
  a->divisor_override = q.divisor_override;
  a->include_pad = q.count_include_pad;
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

// The implementations of this backend (one per .cu file).
extern const Impl kRowStreamImpl;
extern const Impl kNchwVecColumnsImpl;
extern const Impl kNchwColumnsImpl;
extern const Impl kNchwRowsImpl;
extern const Impl kStrideEqImpl;
extern const Impl kNhwcStreamImpl;
extern const Impl kNhwcImpl;
extern const Impl kGenericImpl;
extern const Impl kDirectImpl;

}  // namespace cuda
}  // namespace avgpool
