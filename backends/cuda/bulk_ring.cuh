// What the bulk-copy kernels share: a ring of shared-memory stages that a
// producer fills with the copy engine while consumer threads drain it (every
// bulk-copy kernel: cuda:nchw_row_stream, cuda:nhwc_tile_stream,
// cuda:nchw_row_bulk), and the output rows kept open while input rows stream
// by (the two streaming kernels). Rows come from
// window.h's axis_window_of; nothing here derives a window or a divisor.
#pragma once

#include "bulk_copy.cuh"
#include "common.cuh"
#include "window.h"

namespace avgpool::cuda {

constexpr int kMaxRingStages = 16;

// The block of every bulk-copy kernel: eight consumer warps drain the ring
// that one producer warp fills.
constexpr int kConsumerWarps = 8;
constexpr int kConsumers = kConsumerWarps * 32;
constexpr int kThreads = kConsumers + 32;

// A position in the ring of `stages` stages: stage s of the current lap,
// and the parity that lap's barrier phase completes with. The producer
// waits on empty[s] from its second lap on; consumers wait on full[s] and
// arrive on empty[s] once their reads of the stage are done.
struct RingCursor {
  int stages;
  int s = 0;
  uint32_t phase = 0;
  bool lapped = false;

  __device__ __forceinline__ explicit RingCursor(int n) : stages(n) {}
  __device__ __forceinline__ void advance() {
    if (++s == stages) {
      s = 0;
      phase ^= 1;
      lapped = true;
    }
  }
};

// Thread 0 sets up the barriers: full[s] completes when the producer's bytes
// have landed and its `producers` threads have arrived, empty[s] when all
// `consumers` threads have arrived.
__device__ __forceinline__ void ring_init(uint64_t* full, uint64_t* empty, int stages, int consumers,
                                          int producers = 1) {
  if (threadIdx.x == 0) {
    for (int s = 0; s < stages; ++s) {
      mbar_init(&full[s], (uint32_t)producers);
      mbar_init(&empty[s], (uint32_t)consumers);
    }
#if AVGPOOL_BULK_COPY_DEVICE
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
#endif
  }
  __syncthreads();
}

// Producer: waits until stage s is free, then announces `bytes` to arrive.
__device__ __forceinline__ void ring_fill_begin(uint64_t* full, uint64_t* empty, const RingCursor& c,
                                                uint32_t bytes) {
  if (c.lapped) mbar_wait(&empty[c.s], c.phase ^ 1);
  mbar_arrive_expect_tx(&full[c.s], bytes);
}

// The most output rows one input row of q feeds: the open-row slots a
// streaming kernel needs.
inline int64_t open_rows(const Problem& q) { return q.kh <= q.sh ? 1 : ceil_div(q.kh, q.sh); }

// The open-row slots a streaming kernel needs for q (open_rows). Declines
// (why, naming the implementation) when that is above max_slots or an axis
// is too long for the kernels' int row math.
inline avgpool_status plan_open_rows(const char* name, const Problem& q, int max_slots, int64_t* slots,
                                     Decline* why) {
  if (!axes_fit_int32(q))
    return decline(why, AVGPOOL_ERROR_UNSUPPORTED, "%s: an axis, kernel, stride or padding of 2^28 or more", name);
  *slots = open_rows(q);
  if (*slots > max_slots)
    return decline(why, AVGPOOL_ERROR_UNSUPPORTED, "%s: an input row feeds up to %lld output rows (at most %d)",
                   name, (long long)*slots, max_slots);
  return AVGPOOL_SUCCESS;
}

// A block's ring of shared-memory stages (at the start of the dynamic shared
// memory) and its barriers, as one thread sees them. The producer fills the
// stage at its cursor (fill_begin, then copies completing on full_bar(),
// then advance); consumers read it (acquire ... release).
template <int MaxStages>
struct StageRing {
  uint64_t* full;
  uint64_t* empty;
  unsigned char* base;  // the dynamic shared memory
  int stage_bytes;
  RingCursor cursor;

  __device__ __forceinline__ unsigned char* stage() const { return base + (size_t)cursor.s * stage_bytes; }
  __device__ __forceinline__ uint64_t* full_bar() const { return &full[cursor.s]; }
  __device__ __forceinline__ void advance() { cursor.advance(); }
  // Producer: waits until the consumers have freed the stage (from the
  // second lap on).
  __device__ __forceinline__ void wait_free() const {
    if (cursor.lapped) mbar_wait(&empty[cursor.s], cursor.phase ^ 1);
  }
  // Producer: waits for the stage, announces `bytes` to arrive; the stage.
  __device__ __forceinline__ unsigned char* fill_begin(uint32_t bytes) const {
    ring_fill_begin(full, empty, cursor, bytes);
    return stage();
  }
  // Consumer: waits until the stage is filled; the stage.
  __device__ __forceinline__ unsigned char* acquire() const {
    mbar_wait(&full[cursor.s], cursor.phase);
    return stage();
  }
  // Consumer: done reading the stage. Every consumer thread arrives after
  // its own reads (a lane arriving for its warp after __syncwarp was flagged
  // by racecheck).
  __device__ __forceinline__ void free() const { mbar_arrive(&empty[cursor.s]); }
  __device__ __forceinline__ void release() {
    free();
    advance();
  }
};

// The block's ring of `stages` stages of stage_bytes: its barriers declared
// here and set up for `consumers` consumer and `producers` producer threads
// (ring_init). Every thread of the block calls it once, at the start.
template <int MaxStages>
__device__ __forceinline__ StageRing<MaxStages> block_ring(int stages, int stage_bytes, int consumers,
                                                           int producers = 1) {
  extern __shared__ __align__(128) unsigned char ring_smem[];
  __shared__ uint64_t full[MaxStages], empty[MaxStages];
  ring_init(full, empty, stages, consumers, producers);
  return StageRing<MaxStages>{full, empty, ring_smem, stage_bytes, RingCursor(stages)};
}

// Output rows open while the input rows under them stream by, one
// accumulator slot each (at most RM = ceil(kh / sh) are open at once, so
// output row oy lives in slot oy % slots and never shares it). Per input row
// y: feed(y, on) opens the output rows whose windows start at y and says
// which slots y feeds; after the row is added, retire(y, on, store) counts
// it off and calls store(slot, oy, row_window) for each output row that y
// completed. Counting rows keeps per-row work to a few integer comparisons
// (a [first, last] range of fed outputs cost ~270 instructions per warp and
// row on k11 s4, H200, 2026-11-29). Int math: the kernels
// decline axes of 2^28 or more.
template <int RM>
struct OpenRows {
  static constexpr int kSlots = RM;
  int h, kh, sh, ph, slots;
  int left[RM], oy[RM];  // input rows still to add (0: the slot is free); the output row
  int next_oy = 0, next_begin = 0, last_oy = 0, next_slot = 0;

  __device__ __forceinline__ OpenRows(int h_, int kh_, int sh_, int ph_, int slots_)
      : h(h_), kh(kh_), sh(sh_), ph(ph_), slots(slots_) {
#pragma unroll
    for (int q = 0; q < RM; ++q) left[q] = oy[q] = 0;
  }
  __device__ __forceinline__ AxisWindowOf<int> window(int o) const {
    return axis_window_of<int>(o, h, kh, sh, ph);
  }
  // A new work unit: output rows [first, last], whose first input row is
  // y_begin. Every slot is free (the previous unit completed its rows).
  __device__ __forceinline__ void start(int first, int last, int y_begin) {
    next_oy = first;
    last_oy = last;
    next_begin = y_begin;
    next_slot = first % slots;
  }
  __device__ __forceinline__ bool feed(int y, bool (&on)[RM]) {
    while (next_oy <= last_oy && next_begin == y) {  // output rows starting here
      const AxisWindowOf<int> rw = window(next_oy);
#pragma unroll
      for (int q = 0; q < RM; ++q) {
        if (q == next_slot) {
          left[q] = rw.end - rw.begin;
          oy[q] = next_oy;
        }
      }
      ++next_oy;
      next_slot = next_slot + 1 == slots ? 0 : next_slot + 1;
      next_begin = window(next_oy).begin;
    }
    bool any = false;
#pragma unroll
    for (int q = 0; q < RM; ++q) {
      on[q] = left[q] > 0;
      any = any || on[q];
    }
    return any;  // false: a row between windows (stride > kernel)
  }
  template <typename Store>
  __device__ __forceinline__ void retire(int /*y*/, const bool (&on)[RM], Store&& store) {
#pragma unroll
    for (int q = 0; q < RM; ++q)
      if (on[q] && --left[q] == 0) store(q, oy[q], window(oy[q]));
  }
};

// A row feeds at most one output row (stride >= kernel): two comparisons per
// row.
template <>
struct OpenRows<1> {
  static constexpr int kSlots = 1;
  int h, kh, sh, ph;
  int oy = 0;
  AxisWindowOf<int> rw{0, 0, 0};

  __device__ __forceinline__ OpenRows(int h_, int kh_, int sh_, int ph_, int /*slots*/)
      : h(h_), kh(kh_), sh(sh_), ph(ph_) {}
  __device__ __forceinline__ AxisWindowOf<int> window(int o) const {
    return axis_window_of<int>(o, h, kh, sh, ph);
  }
  __device__ __forceinline__ void start(int first, int /*last*/, int /*y_begin*/) {
    oy = first;
    rw = window(oy);
  }
  __device__ __forceinline__ bool feed(int y, bool (&on)[1]) {
    on[0] = true;
    return y >= rw.begin;  // false: a row between windows (stride > kernel)
  }
  template <typename Store>
  __device__ __forceinline__ void retire(int y, const bool (&)[1], Store&& store) {
    if (y + 1 == rw.end) {
      store(0, oy, rw);
      ++oy;
      rw = window(oy);
    }
  }
};

// Feeds the input rows y0 .. y0 + n - 1 of a stage (row(r): row y0 + r) to
// the open output rows: add(row(r), on) for each row an open output row
// takes, then store(slot, oy, row window) for each output row it completes.
template <class Rows, class Row, class Add, class Store>
__device__ __forceinline__ void stream_rows(Rows& rows, int y0, int n, Row&& row, Add&& add, Store&& store) {
  for (int r = 0; r < n; ++r) {
    const int y = y0 + r;
    bool on[Rows::kSlots];
    if (!rows.feed(y, on)) continue;
    add(row(r), on);
    rows.retire(y, on, store);
  }
}

// v[0] + ... + v[N-1] as a balanced tree (fast numerics: a shorter
// dependency chain than left to right).
template <int N, typename A>
__device__ __forceinline__ A pairwise_sum(const A* v) {
  if constexpr (N == 1) {
    return v[0];
  } else {
    return pairwise_sum<N / 2>(v) + pairwise_sum<N - N / 2>(v + N / 2);
  }
}

}  // namespace avgpool::cuda
