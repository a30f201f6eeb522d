// CK(call): a CUDA runtime call in a benchmark; on failure print where and
// why, and exit. no_cuda_device(): true (after saying SKIPPED) where no CUDA
// device can be used, so that a benchmark exits 0 on machines without one.
#pragma once

#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>

#define CK(x)                                                                            \
  do {                                                                                   \
    cudaError_t e_ = (x);                                                                \
    if (e_ != cudaSuccess) {                                                             \
      fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_)); \
      exit(1);                                                                           \
    }                                                                                    \
  } while (0)

inline bool no_cuda_device() {
  int count = 0;
  if (cudaGetDeviceCount(&count) == cudaSuccess && count > 0) return false;
  printf("SKIPPED: no usable CUDA device\n");
  return true;
}
