// Host-side helpers of the CUDA backend: device presence, pointer checks,
// launch-error reporting, shared-memory limits.
#include <mutex>

#include "common.cuh"

namespace avgpool {
namespace cuda {

avgpool_status device_usable() {
  static cudaError_t err = cudaErrorUnknown;
  static int count = 0;
  static std::once_flag once;
  std::call_once(once, [] {
    err = cudaGetDeviceCount(&count);
    if (err != cudaSuccess) cudaGetLastError();  // do not leave the error pending
  });
  if (err != cudaSuccess)
    return set_error(AVGPOOL_ERROR_BACKEND_UNAVAILABLE, "no usable CUDA device (cudaGetDeviceCount: %s)",
                     cudaGetErrorString(err));
  if (count == 0)
    return set_error(AVGPOOL_ERROR_BACKEND_UNAVAILABLE, "no usable CUDA device (0 devices)");
  return AVGPOOL_SUCCESS;
}

avgpool_status check_device_pointers(const void* src, const void* dst) {
  int device = 0;
  cudaError_t e = cudaGetDevice(&device);
  if (e != cudaSuccess)
    return set_error(AVGPOOL_ERROR_DEVICE, "cudaGetDevice: %s", cudaGetErrorString(e));
  const void* ptrs[2] = {src, dst};
  const char* names[2] = {"src", "dst"};
  for (int i = 0; i < 2; ++i) {
    cudaPointerAttributes a;
    e = cudaPointerGetAttributes(&a, ptrs[i]);
    if (e != cudaSuccess) {
      cudaGetLastError();
      return set_error(AVGPOOL_ERROR_INVALID_ARGUMENT,
                       "%s (%p) is not device memory (cudaPointerGetAttributes: %s); the CUDA "
                       "backend needs device pointers",
                       names[i], ptrs[i], cudaGetErrorString(e));
    }
    if (a.type != cudaMemoryTypeDevice && a.type != cudaMemoryTypeManaged)
      return set_error(AVGPOOL_ERROR_INVALID_ARGUMENT,
                       "%s (%p) is %s memory, not device memory: the CUDA backend needs "
                       "pointers from cudaMalloc (or use backend cpu for host memory)",
                       names[i], ptrs[i],
                       a.type == cudaMemoryTypeHost ? "pinned host" : "ordinary host");
    if (a.type == cudaMemoryTypeDevice && a.device != device)
      return set_error(AVGPOOL_ERROR_INVALID_ARGUMENT,
                       "%s (%p) lives on device %d but the current device is %d", names[i],
                       ptrs[i], a.device, device);
  }
  return AVGPOOL_SUCCESS;
}

avgpool_status execute_fallback(const Problem& q, const void* src, void* dst, void* stream,
                                std::initializer_list<const Impl*> fallbacks, const char* who) {
  clear_error();
  for (const Impl* fallback : fallbacks)
    if (fallback->accepts(q) == AVGPOOL_SUCCESS) return fallback->execute(q, src, dst, stream);
  return set_error(AVGPOOL_ERROR_INTERNAL, "%s: no fallback for a misaligned src", who);
}

avgpool_status check_launch(const char* kernel) {
  cudaError_t e = cudaPeekAtLastError();
  if (e == cudaSuccess) return AVGPOOL_SUCCESS;
  cudaGetLastError();  // clear a non-sticky launch error
  return set_error(AVGPOOL_ERROR_DEVICE, "launch of %s failed: %s", kernel, cudaGetErrorString(e));
}

int64_t max_shared_per_block() {
  int device = 0, bytes = 48 * 1024;
  if (cudaGetDevice(&device) == cudaSuccess &&
      cudaDeviceGetAttribute(&bytes, cudaDevAttrMaxSharedMemoryPerBlockOptin, device) == cudaSuccess)
    return bytes;
  cudaGetLastError();
  return 48 * 1024;
}

int64_t max_shared_per_sm() {
  int device = 0, bytes = 100 * 1024;
  if (cudaGetDevice(&device) == cudaSuccess &&
      cudaDeviceGetAttribute(&bytes, cudaDevAttrMaxSharedMemoryPerMultiprocessor, device) == cudaSuccess)
    return bytes;
  cudaGetLastError();
  return 100 * 1024;
}

avgpool_status allow_shared(const void* kernel, int64_t bytes, const char* name) {
  if (bytes <= 48 * 1024) return AVGPOOL_SUCCESS;
  // The opt-in limit covers static shared memory too (e.g. mbarriers).
  cudaFuncAttributes attr;
  if (cudaFuncGetAttributes(&attr, kernel) == cudaSuccess) bytes -= (int64_t)attr.sharedSizeBytes;
  cudaError_t e = cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)bytes);
  if (e != cudaSuccess) {
    cudaGetLastError();
    return set_error(AVGPOOL_ERROR_DEVICE, "%s: cannot allow %lld bytes of shared memory: %s", name,
                     (long long)bytes, cudaGetErrorString(e));
  }
  return AVGPOOL_SUCCESS;
}

// Streaming multiprocessors of the current device (once per process).
int sm_count() {
  static const int n = [] {
    int device = 0, count = 132;
    if (cudaGetDevice(&device) != cudaSuccess ||
        cudaDeviceGetAttribute(&count, cudaDevAttrMultiProcessorCount, device) != cudaSuccess) {
      cudaGetLastError();
      count = 132;
    }
    return count;
  }();
  return n;
}

}  // namespace cuda
}  // namespace avgpool
