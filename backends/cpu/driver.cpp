#include "driver.h"

#include <stdlib.h>

#include <algorithm>
#include <atomic>

#if defined(AVGPOOL_WITH_OPENMP)
#include <omp.h>
#endif

namespace avgpool {
namespace cpu {
namespace {

std::atomic<int> g_active_calls{0};

constexpr size_t kKeepBytes = size_t(4) << 20;

struct Scratch {
  void* data = nullptr;
  size_t size = 0;
  ~Scratch() { free(data); }
};

thread_local Scratch t_scratch;

}  // namespace

ActiveCall::ActiveCall() { g_active_calls.fetch_add(1, std::memory_order_relaxed); }
ActiveCall::~ActiveCall() { g_active_calls.fetch_sub(1, std::memory_order_relaxed); }

int threads_for(int64_t units) {
#if defined(AVGPOOL_WITH_OPENMP)
  if (omp_in_parallel()) return 1;
  int t = omp_get_max_threads();
  const int active = g_active_calls.load(std::memory_order_relaxed);
  if (active > 1) t /= active;
  if (t < 1) t = 1;
  if ((int64_t)t > units) t = (int)units;
  return t;
#else
  (void)units;
  return 1;
#endif
}

UnitShares::UnitShares(int64_t units, int nt) {
  const int threads = std::max(nt, 1);
  count_ = std::min(threads, kMaxShares);
  // share s: [start(s), start(s + 1)), the first units % count_ shares one longer
  auto start = [&](int64_t s) { return units / count_ * s + std::min<int64_t>(s, units % count_); };
  for (int s = 0; s < count_; ++s) {
    shares_[s].next.store(start(s), std::memory_order_relaxed);
    shares_[s].end = start(s + 1);
  }
  chunk_ = std::max<int64_t>(units / ((int64_t)threads * 16), 1);  // a 16th of a thread's share
}

bool UnitShares::next(int t, int64_t* u0, int64_t* u1) {
  for (int i = 0; i < count_; ++i) {
    Share& s = shares_[(t + i) % count_];
    if (s.next.load(std::memory_order_relaxed) >= s.end) continue;
    const int64_t at = s.next.fetch_add(chunk_, std::memory_order_relaxed);
    if (at >= s.end) continue;
    *u0 = at;
    *u1 = at + chunk_ < s.end ? at + chunk_ : s.end;
    return true;
  }
  return false;
}

void* thread_scratch(size_t bytes) {
  Scratch& s = t_scratch;
  if (bytes <= s.size && s.data != nullptr) return s.data;
  free(s.data);
  const size_t rounded = (bytes + 63) & ~(size_t)63;
  s.data = aligned_alloc(64, rounded > 0 ? rounded : 64);
  s.size = s.data != nullptr ? rounded : 0;
  return s.data;
}

void thread_scratch_trim() {
  Scratch& s = t_scratch;
  if (s.size > kKeepBytes) {
    free(s.data);
    s.data = nullptr;
    s.size = 0;
  }
}

}  // namespace cpu
}  // namespace avgpool
