// The GPU test program. Without a usable CUDA device it prints why and exits
// with 77, which CTest reports as "skipped" (SKIP_RETURN_CODE).
#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>
#include <stdio.h>

#include "cuda_presence.h"

int main(int argc, char** argv) {
#if !defined(AVGPOOL_WITH_CUDA)
  printf("SKIPPED: avgpool was built without CUDA (AVGPOOL_WITH_CUDA=OFF)\n");
  return 77;
#else
  const avgpool_support::CudaPresence gpu = avgpool_support::cuda_presence();
  if (!gpu.usable) {
    printf("SKIPPED: no usable CUDA device: %s (%s)\n", gpu.summary.c_str(), gpu.detail.c_str());
    return 77;
  }
  doctest::Context context(argc, argv);
  return context.run();
#endif
}
