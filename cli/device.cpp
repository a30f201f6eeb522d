#include "device.h"

#include <stdlib.h>
#include <string.h>

#include <chrono>

#if defined(AVGPOOL_WITH_CUDA)
#include <cuda_runtime.h>
#endif

namespace avgpool_cli {

Buffer::Buffer(int64_t bytes, bool on_device) : bytes_(bytes), on_device_(on_device) {
  const size_t size = bytes > 0 ? (size_t)bytes : 1;
#if defined(AVGPOOL_WITH_CUDA)
  if (on_device) {
    if (cudaMalloc(&data_, size) != cudaSuccess) data_ = nullptr;
    return;
  }
#endif
  data_ = aligned_alloc(64, (size + 63) / 64 * 64);
}

Buffer::~Buffer() {
#if defined(AVGPOOL_WITH_CUDA)
  if (on_device_) {
    cudaFree(data_);
    return;
  }
#endif
  free(data_);
}

namespace {

// Copies bytes from one buffer to another, through CUDA when either is
// device memory.
void copy_bytes(void* to, const void* from, int64_t bytes, bool on_device) {
#if defined(AVGPOOL_WITH_CUDA)
  if (on_device) {
    cudaMemcpy(to, from, (size_t)bytes, cudaMemcpyDefault);
    return;
  }
#else
  (void)on_device;
#endif
  memcpy(to, from, (size_t)bytes);
}

}  // namespace

void Buffer::upload(const void* host) { copy_bytes(data_, host, bytes_, on_device_); }

void Buffer::download(void* host) const { copy_bytes(host, data_, bytes_, on_device_); }

void Buffer::fill_byte(unsigned char value) {
#if defined(AVGPOOL_WITH_CUDA)
  if (on_device_) {
    cudaMemset(data_, value, (size_t)bytes_);
    return;
  }
#endif
  memset(data_, value, (size_t)bytes_);
}

std::string device_sync(bool on_device) {
#if defined(AVGPOOL_WITH_CUDA)
  if (on_device) {
    cudaError_t err = cudaDeviceSynchronize();
    return err == cudaSuccess ? "" : cudaGetErrorString(err);
  }
#endif
  (void)on_device;
  return "";
}

double time_ms(bool on_device, void (*fn)(void*), void* ctx) {
#if defined(AVGPOOL_WITH_CUDA)
  if (on_device) {
    cudaEvent_t start, stop;
    cudaEventCreate(&start);
    cudaEventCreate(&stop);
    cudaEventRecord(start);
    fn(ctx);
    cudaEventRecord(stop);
    cudaEventSynchronize(stop);
    float ms = 0;
    cudaEventElapsedTime(&ms, start, stop);
    cudaEventDestroy(start);
    cudaEventDestroy(stop);
    return ms;
  }
#endif
  const auto t0 = std::chrono::steady_clock::now();
  fn(ctx);
  const auto t1 = std::chrono::steady_clock::now();
  return std::chrono::duration<double, std::milli>(t1 - t0).count();
}

}  // namespace avgpool_cli
