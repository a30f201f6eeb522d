// avgpool_launch_bench: the host cost of one call on a tiny problem, against
// a bare kernel launch in the same process.
//
// A tiny problem (1x1x8x8 f32, k2 s2) takes the GPU about as long as any
// launch, so what a caller waits for is host time: the library's checks
// (pointer kinds, the stream's device, the current device) and the launch.
// Rows, each the median over rounds of the host time per call, calls
// queued back to back on one stream and the stream synchronized between
// rounds only (a round's calls fit the launch queue, so the time is the
// submission's, not the GPU's):
//   - bare launch: an empty kernel with two pointer arguments;
//   - checks alone: cudaGetDevice, cudaPointerGetAttributes twice,
//     cudaStreamGetDevice (what execute asks the runtime per call);
//   - avgpool_plan_execute and avgpool_plan_backward on a plan made once;
//   - avgpool_forward: the one-call form (plan made and destroyed per call).
//
// usage: avgpool_launch_bench [--calls N] [--rounds R]
#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <algorithm>
#include <chrono>
#include <functional>
#include <vector>

#include "avgpool/avgpool.h"
#include "cuda_check.h"

namespace {

__global__ void empty_kernel(const float*, float*) {}

// Median over rounds of the host microseconds per call.
double per_call_us(int calls, int rounds, cudaStream_t stream, const std::function<bool()>& call) {
  std::vector<double> us;
  for (int r = 0; r < rounds + 1; ++r) {  // round 0 warms up
    CK(cudaStreamSynchronize(stream));
    const auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < calls; ++i)
      if (!call()) {
        fprintf(stderr, "call failed: %s\n", avgpool_last_error_message());
        exit(1);
      }
    const auto t1 = std::chrono::steady_clock::now();
    if (r > 0) us.push_back(std::chrono::duration<double, std::micro>(t1 - t0).count() / calls);
  }
  CK(cudaStreamSynchronize(stream));
  std::sort(us.begin(), us.end());
  return us[us.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  int calls = 200, rounds = 200;
  for (int i = 1; i < argc; ++i) {
    if (!strcmp(argv[i], "--calls") && i + 1 < argc) calls = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--rounds") && i + 1 < argc) rounds = atoi(argv[++i]);
    else {
      fprintf(stderr, "usage: %s [--calls N] [--rounds R]\n", argv[0]);
      return 2;
    }
  }
  if (no_cuda_device()) return 0;
  cudaDeviceProp prop;
  CK(cudaGetDeviceProperties(&prop, 0));
  printf("device: %s; %d rounds of %d calls, median host us per call\n", prop.name, rounds, calls);

  avgpool_params p;
  avgpool_params_init(&p);
  p.n = 1; p.c = 1; p.h = 8; p.w = 8;
  p.kernel_h = p.kernel_w = 2;
  p.stride_h = p.stride_w = 2;
  p.dtype = AVGPOOL_DTYPE_F32;
  p.backend = AVGPOOL_BACKEND_CUDA;
  float *src = nullptr, *dst = nullptr;
  CK(cudaMalloc(&src, 64 * sizeof(float)));
  CK(cudaMalloc(&dst, 64 * sizeof(float)));
  CK(cudaMemset(src, 0, 64 * sizeof(float)));
  cudaStream_t stream;
  CK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  avgpool_plan* plan = nullptr;
  if (avgpool_plan_create(&p, &plan) != AVGPOOL_SUCCESS) {
    fprintf(stderr, "plan: %s\n", avgpool_last_error_message());
    return 1;
  }
  const char *fwd = "", *bwd = "";
  avgpool_plan_impl_name(plan, &fwd);
  avgpool_plan_backward_impl_name(plan, &bwd);

  const double bare = per_call_us(calls, rounds, stream, [&] {
    empty_kernel<<<1, 32, 0, stream>>>(src, dst);
    return cudaPeekAtLastError() == cudaSuccess;
  });
  const double checks = per_call_us(calls, rounds, stream, [&] {
    int d = -1, sd = -1;
    cudaPointerAttributes a, b;
    return cudaGetDevice(&d) == cudaSuccess && cudaPointerGetAttributes(&a, src) == cudaSuccess &&
           cudaPointerGetAttributes(&b, dst) == cudaSuccess && cudaStreamGetDevice(stream, &sd) == cudaSuccess;
  });
  const double execute = per_call_us(calls, rounds, stream, [&] {
    return avgpool_plan_execute(plan, src, dst, stream) == AVGPOOL_SUCCESS;
  });
  // grad_output is the 4x4 output; grad_input the 8x8 input.
  const double backward = per_call_us(calls, rounds, stream, [&] {
    return avgpool_plan_backward(plan, dst, src, stream) == AVGPOOL_SUCCESS;
  });
  const double one_call = per_call_us(calls / 4 > 0 ? calls / 4 : 1, rounds / 4 > 0 ? rounds / 4 : 1, stream, [&] {
    return avgpool_forward(&p, src, dst, stream) == AVGPOOL_SUCCESS;
  });
  printf("%-34s %8.2f\n", "bare launch (empty kernel)", bare);
  printf("%-34s %8.2f\n", "checks alone (4 runtime queries)", checks);
  printf("%-34s %8.2f  (%s; %+.2f over the bare launch)\n", "avgpool_plan_execute", execute, fwd, execute - bare);
  printf("%-34s %8.2f  (%s; %+.2f over the bare launch)\n", "avgpool_plan_backward", backward, bwd,
         backward - bare);
  printf("%-34s %8.2f  (plan made and destroyed per call)\n", "avgpool_forward", one_call);
  avgpool_plan_destroy(plan);
  cudaFree(src);
  cudaFree(dst);
  cudaStreamDestroy(stream);
  return 0;
}
