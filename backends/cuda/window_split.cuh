// Pieces shared by the large-window implementations (cuda:nchw_window_team,
// cuda:any_window_split): a fixed-order warp sum, the launch of a kernel in
// thread-block clusters, and whether a plan may use clusters.
//
// Clusters (sm_90) let up to 8 blocks share one output's window: each block
// sums its part, and rank 0 reads the others' partial sums from their
// shared memory in rank order. No workspace in device memory (a plan may run
// on several streams at once) and no atomics: the result is the same bits
// on every run.
#pragma once

#include <cooperative_groups.h>

#include "common.cuh"

namespace avgpool::cuda {

// The sum of v over the 32 lanes of a warp, in a fixed tree; lane 0 holds it.
template <typename A>
__device__ __forceinline__ A warp_sum(A v) {
#pragma unroll
  for (int d = 16; d > 0; d >>= 1) v += __shfl_down_sync(0xffffffffu, v, d);
  return v;
}

// The most blocks one output's window is split over (the portable cluster
// size).
constexpr int kMaxCluster = 8;

// Launches Kernel in clusters of args.cluster blocks along x (c.grid is a
// multiple of it); a plain launch when the cluster is 1.
template <class Args, typename T, void (*Kernel)(const T*, T*, Args)>
avgpool_status launch_clustered(const CudaConfig& c, const void* src, void* dst, cudaStream_t stream) {
  const Args& args = static_cast<const KernelConfig<Args>&>(c).args;
  if (args.cluster <= 1) {
    Kernel<<<c.grid, c.threads, (size_t)c.smem, stream>>>(static_cast<const T*>(src), static_cast<T*>(dst), args);
    return check_launch(c.kernel_name);
  }
  cudaLaunchConfig_t lc = {};
  lc.gridDim = dim3(c.grid, 1, 1);
  lc.blockDim = dim3((unsigned)c.threads, 1, 1);
  lc.dynamicSmemBytes = (size_t)c.smem;
  lc.stream = stream;
  cudaLaunchAttribute attr[1];
  attr[0].id = cudaLaunchAttributeClusterDimension;
  attr[0].val.clusterDim.x = (unsigned)args.cluster;
  attr[0].val.clusterDim.y = 1;
  attr[0].val.clusterDim.z = 1;
  lc.attrs = attr;
  lc.numAttrs = 1;
  cudaLaunchKernelEx(&lc, Kernel, static_cast<const T*>(src), static_cast<T*>(dst), args);
  return check_launch(c.kernel_name);
}

// Whether kernel may run in clusters on the plan's device: sm_90 or newer,
// and this build holds sm_90 code for it.
inline bool clusters_allowed(const void* kernel, const DeviceInfo& device) {
  if (device.cc_major < 9) return false;
  cudaFuncAttributes attr;
  if (cudaFuncGetAttributes(&attr, kernel) != cudaSuccess) {
    cudaGetLastError();
    return false;
  }
  return attr.ptxVersion >= 90;
}

// Smallest power of two >= v (v >= 1).
inline int64_t pow2_ceil(int64_t v) {
  int64_t p = 1;
  while (p < v) p <<= 1;
  return p;
}

}  // namespace avgpool::cuda
