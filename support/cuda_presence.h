// Whether a CUDA device is usable and, if not, why, at two levels: a
// summary a user can act on ("no CUDA driver or device found") and the CUDA
// runtime's own report (error name and text, driver and runtime versions)
// for verbose output and test logs. Header-only: the including target
// defines AVGPOOL_WITH_CUDA and links the CUDA runtime when built with CUDA
// (the support library itself is built without it).
#pragma once

#include <string>

#if defined(AVGPOOL_WITH_CUDA)
#include <cuda_runtime.h>
#endif

namespace avgpool_support {

struct CudaPresence {
  bool usable = false;
  int devices = 0;
  std::string summary;  // when not usable: why, in a user's terms
  std::string detail;   // the CUDA runtime's report
};

inline CudaPresence cuda_presence() {
  CudaPresence r;
#if !defined(AVGPOOL_WITH_CUDA)
  r.summary = "this build has no CUDA backend";
  r.detail = "configured with AVGPOOL_WITH_CUDA=OFF (no nvcc found, or switched off)";
  return r;
#else
  int driver = 0, runtime = 0;
  cudaDriverGetVersion(&driver);  // 0 when no driver is installed
  cudaRuntimeGetVersion(&runtime);
  const cudaError_t err = cudaGetDeviceCount(&r.devices);
  if (err != cudaSuccess) r.devices = 0;
  auto version = [](int v) { return std::to_string(v / 1000) + "." + std::to_string(v % 1000 / 10); };
  r.detail = std::string("cudaGetDeviceCount: ") +
             (err == cudaSuccess ? std::string("ok")
                                 : std::string(cudaGetErrorName(err)) + " (" + cudaGetErrorString(err) + ")") +
             ", " + std::to_string(r.devices) + " devices; driver " + (driver ? version(driver) : "none") +
             ", runtime " + version(runtime);
  if (err == cudaSuccess && r.devices > 0) {
    r.usable = true;
    return r;
  }
  cudaGetLastError();  // clear the sticky error of the failed query
  if (driver == 0)
    r.summary = "no CUDA driver or device found";
  else if (err == cudaErrorInsufficientDriver)
    r.summary = "the NVIDIA driver (CUDA " + version(driver) + ") is older than this build's CUDA runtime (" +
                version(runtime) + "): update the driver";
  else if (err == cudaSuccess || err == cudaErrorNoDevice)
    r.summary = "no CUDA device found";
  else
    r.summary = std::string("the CUDA device is not usable (") + cudaGetErrorString(err) + ")";
  return r;
#endif
}

}  // namespace avgpool_support
