// The GPU test program. Without a usable CUDA device it prints why and exits
// with 77, which CTest reports as "skipped" (SKIP_RETURN_CODE).
#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>
#include <stdio.h>

#if defined(AVGPOOL_WITH_CUDA)
#include <cuda_runtime.h>
#endif

int main(int argc, char** argv) {
#if !defined(AVGPOOL_WITH_CUDA)
  printf("SKIPPED: avgpool was built without CUDA (AVGPOOL_WITH_CUDA=OFF)\n");
  return 77;
#else
  int devices = 0;
  cudaError_t err = cudaGetDeviceCount(&devices);
  if (err != cudaSuccess || devices == 0) {
    printf("SKIPPED: no usable CUDA device (cudaGetDeviceCount: %s, %d devices)\n",
           err == cudaSuccess ? "ok" : cudaGetErrorString(err), devices);
    return 77;
  }
  doctest::Context context(argc, argv);
  return context.run();
#endif
}
