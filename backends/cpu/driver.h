// What the CPU backend's drivers share (impls.cpp, the forward; backward.cpp):
// the threads a call opens and each thread's scratch buffer (the instruction
// set a plan's kernels use is isa.h's). Host code with the default compiler flags:
// never included by the kernel files (cpu_job.h says why).
#pragma once

#include <stddef.h>
#include <stdint.h>

namespace avgpool {
namespace cpu {

// A CPU call in flight, forward or backward: concurrent callers share the
// cores instead of each opening a full team.
struct ActiveCall {
  ActiveCall();
  ~ActiveCall();
  ActiveCall(const ActiveCall&) = delete;
  ActiveCall& operator=(const ActiveCall&) = delete;
};

// Threads for a call of `units` parallel units: omp_get_max_threads()
// (OMP_NUM_THREADS, omp_set_num_threads) divided among the calls in flight,
// at least 1, at most units; 1 inside a caller's active parallel region (no
// nesting) or without OpenMP.
int threads_for(int64_t units);

// This thread's scratch: at least `bytes`, 64-byte aligned, kept between
// calls (steady-state calls allocate nothing) and grown when a plan needs
// more; NULL when the memory is not there. A thread runs one call at a
// time, so its buffer is never shared.
void* thread_scratch(size_t bytes);

// At the end of a call, on each thread that took scratch: a buffer above
// 4 MiB (windows far beyond the usual) is freed instead of being held.
void thread_scratch_trim();

}  // namespace cpu
}  // namespace avgpool
