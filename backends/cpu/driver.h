// What the CPU backend's drivers share (impls.cpp, the forward; backward.cpp):
// the threads a call opens and each thread's scratch buffer (the instruction
// set a plan's kernels use is isa.h's). Host code with the default compiler flags:
// never included by the kernel files (cpu_job.h says why).
#pragma once

#include <stddef.h>
#include <stdint.h>

#include <atomic>
#include <vector>

#include "problem.h"

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

// The parallel units [0, units) of a call handed out to nt threads. Each
// thread starts on its own contiguous share, the same on every call of a
// plan, so an input that fits the caches is read where the previous call
// left it (a static split); a thread done with its share takes chunks from
// the others', so a thread that starts late on a shared machine, or takes
// no units for want of scratch, does not hold up the call. Chunks are about
// 1/16 of a share. next() may be called from the team's threads at once.
class UnitShares {
 public:
  UnitShares(int64_t units, int nt);
  UnitShares(const UnitShares&) = delete;
  UnitShares& operator=(const UnitShares&) = delete;
  // Thread t's next chunk [*u0, *u1): its own share first, then the
  // others' in turn; false when every unit is taken.
  bool next(int t, int64_t* u0, int64_t* u1);

 private:
  static constexpr int kMaxShares = 64;  // more threads share the shares
  struct alignas(64) Share {
    std::atomic<int64_t> next{0};
    int64_t end = 0;
  };
  Share shares_[kMaxShares];
  int count_ = 1;
  int64_t chunk_ = 1;
};

// This thread's scratch: at least `bytes`, 64-byte aligned, kept between
// calls (steady-state calls allocate nothing) and grown when a plan needs
// more; NULL when the memory is not there. A thread runs one call at a
// time, so its buffer is never shared.
void* thread_scratch(size_t bytes);

// At the end of a call, on each thread that took scratch: a buffer above
// 4 MiB (windows far beyond the usual) is freed instead of being held.
void thread_scratch_trim();

// A table of per-output divisor values, one row per distinct row window:
// a row's divisors depend on its window only through its lengths
// (padded_len and end - begin: window_divisor in window.h), so rows with
// equal lengths share a table row. row_of[oy] is output row oy's table row;
// each value is value_of(Problem::divisor(oy, ox)).
template <class A, class ValueOf>
void build_divisors(const Problem& q, std::vector<A>* table, std::vector<int32_t>* row_of, ValueOf value_of) {
  struct Key {
    int64_t padded, count;
  };
  std::vector<Key> keys;
  row_of->resize((size_t)q.oh);
  for (int64_t oy = 0; oy < q.oh; ++oy) {
    const AxisWindow& r = q.rows[(size_t)oy];
    const Key k{r.padded_len, r.end - r.begin};
    size_t i = 0;
    while (i < keys.size() && !(keys[i].padded == k.padded && keys[i].count == k.count)) ++i;
    if (i == keys.size()) {
      keys.push_back(k);
      table->resize(keys.size() * (size_t)q.ow);
      A* row = table->data() + i * (size_t)q.ow;
      for (int64_t ox = 0; ox < q.ow; ++ox) row[ox] = value_of(q.divisor(oy, ox));
    }
    (*row_of)[(size_t)oy] = (int32_t)i;
  }
}

}  // namespace cpu
}  // namespace avgpool
