// The CPU backend's backward implementations and their driver. init turns
// the Problem into a BackwardJob once (which output rows and columns cover
// each input row and column, column blocks, the gather tables, divisors,
// parallel units, the kernels for this CPU); execute only runs the units on
// OpenMP threads. The kernels are in backward_kernels.inl.
//
//   cpu:backward_broadcast  stride >= kernel on both axes: each input gets at
//                           most one term, so NCHW spreads each output row
//                           once and copies it to the rows its window covers
//   cpu:backward_gather     any problem: each input row gathers its terms
//                           from the q rows of the windows covering it
// NHWC runs per pixel, vectorized across channels, in both.
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <atomic>
#include <new>
#include <vector>

#if defined(AVGPOOL_WITH_OPENMP)
#include <omp.h>
#endif

#include "backward_job.h"
#include "backward.h"
#include "cover.h"
#include "driver.h"
#include "error.h"
#include "host_types.h"
#include "impl.h"
#include "isa.h"
#include "problem.h"

namespace avgpool {
namespace cpu {
namespace {

constexpr int64_t kUnitTarget = 32768;              // grad_input elements per parallel unit
constexpr int64_t kRowBlock = 4096;                 // NCHW: input columns per column block (x16)
constexpr int64_t kPixelSpan = 8192;                // NHWC: q elements one block's slot holds, about
constexpr int64_t kNtBytes = int64_t(32) << 20;     // grad_input streamed from this size on
constexpr int64_t kMaxSlot = int64_t(1) << 30;      // ring slots index with int32
constexpr int64_t kMaxTaps = 16;                    // NCHW spread rows: at most this many per output row
constexpr int64_t kMaxCover = int64_t(1) << 20;     // windows covering one input row or column
constexpr size_t kMaxScratch = size_t(1) << 30;     // bytes per thread
constexpr int64_t kStageUnit = 65536;               // nt: units up to this many elements are staged whole

int64_t round_up(int64_t v, int64_t m) { return (v + m - 1) / m * m; }

// The kernels for the instruction set a plan uses (driver.h).
BackwardKernels kernels_for_plan() {
  const Isa isa = isa_for_plan();
#if defined(AVGPOOL_CPU_X86_KERNELS)  // compiled for x86 targets only (CMakeLists.txt)
  if (isa == Isa::kAvx512) return backward_kernels_avx512();
  if (isa == Isa::kAvx2) return backward_kernels_avx2();
#else
  (void)isa;
#endif
  return backward_kernels_base();
}

// ---- the plan's configuration --------------------------------------------------------
struct BackwardConfig : Config {
  BackwardJob job{};
  BackwardUnitFn run = nullptr;
  std::vector<int64_t> row_first, col_first, block_x, block_ow;
  std::vector<int32_t> row_count, col_count, div_row;
  std::vector<BackwardSpread> spread;
  std::vector<uint32_t> plane_mask;
  std::vector<float> div_float;
  std::vector<double> div_double;
};

// Divisor values as the kernels use them (see BackwardJob::div_values):
// reciprocals in fast numerics, PyTorch CUDA's rounded divisor for 2-byte
// types, else the divisor.
template <class A, class T>
A backward_divisor_value(const Problem& q, int64_t d) {
  if (q.numerics == AVGPOOL_NUMERICS_FAST) return A(1) / static_cast<A>(d);
  if constexpr (sizeof(T) == 2) return static_cast<float>(T(static_cast<float>(d)));  // PyTorch CUDA
  return static_cast<A>(d);
}

// The permutations that spread q rows over input columns (BackwardJob::spread),
// for `taps` taps. False if a vector's lanes needed output columns a vector
// or more apart, which cannot happen: with stride >= 1 a column's first
// covering output column grows by at most one from one column to the next.
template <class C>
bool build_spread(C& c, const Problem& q, int64_t taps) {
  const int64_t lanes = q.dtype == AVGPOOL_DTYPE_F64 ? 8 : 16;
  const int64_t chunks = (q.w + lanes - 1) / lanes;
  c.spread.assign((size_t)(taps * chunks), BackwardSpread{});
  for (int64_t t = 0; t < taps; ++t)
    for (int64_t k = 0; k < chunks; ++k) {
      BackwardSpread& e = c.spread[(size_t)(t * chunks + k)];
      // The block's first output column: the default start (never below it).
      const int64_t x0 = k * lanes;
      size_t b = 0;
      while (c.block_x[b + 1] <= x0) ++b;
      e.first = c.block_ow[2 * b];
      bool any = false;
      for (int64_t l = 0; l < lanes && x0 + l < q.w; ++l) {
        const int64_t x = x0 + l;
        if (t >= c.col_count[(size_t)x]) continue;
        const int64_t ox = c.col_first[(size_t)x] + t;
        if (!any) e.first = ox;  // ascending in x
        any = true;
        if (ox - e.first >= lanes) return false;
        e.mask |= 1u << l;
        e.index[l] = (int32_t)(ox - e.first);
      }
    }
  return true;
}

avgpool_status init_job(const Problem& q, bool broadcast_only, const char* name, ConfigPtr* config, Decline* why) {
  if (broadcast_only && !(q.sh >= q.kh && q.sw >= q.kw))
    return decline(why, AVGPOOL_ERROR_UNSUPPORTED,
                   "%s needs stride >= kernel on both axes (stride %lldx%lld, kernel %lldx%lld)", name,
                   (long long)q.sh, (long long)q.sw, (long long)q.kh, (long long)q.kw);
  auto c = std::make_unique<BackwardConfig>();
  BackwardJob& j = c->job;
  const bool nchw = q.layout == AVGPOOL_LAYOUT_NCHW;
  j.pytorch = q.numerics == AVGPOOL_NUMERICS_PYTORCH;
  j.planes = nchw ? q.n * q.c : q.n;
  j.vec = nchw ? 1 : q.c;
  j.h = q.h; j.w = q.w; j.oh = q.oh; j.ow = q.ow;
  j.kw = q.kw; j.sw = q.sw; j.pw = q.pw;
  try {
    // Which output rows and columns cover each input row and column.
    c->row_first.resize((size_t)q.h);
    c->row_count.resize((size_t)q.h);
    int64_t rows = 1, taps = 1;  // the most output rows (columns) covering one input row (column)
    for (int64_t y = 0; y < q.h; ++y) {
      const AxisCover r = axis_cover(y, q.kh, q.sh, q.ph, q.rows.data(), q.oh);
      c->row_first[(size_t)y] = r.first;
      if (r.last - r.first > rows) rows = r.last - r.first;
      c->row_count[(size_t)y] = (int32_t)(r.last - r.first < kMaxCover ? r.last - r.first : kMaxCover);
    }
    c->col_first.resize((size_t)q.w);
    c->col_count.resize((size_t)q.w);
    for (int64_t x = 0; x < q.w; ++x) {
      const AxisCover k = axis_cover(x, q.kw, q.sw, q.pw, q.cols.data(), q.ow);
      c->col_first[(size_t)x] = k.first;
      if (k.last - k.first > taps) taps = k.last - k.first;
      c->col_count[(size_t)x] = (int32_t)(k.last - k.first < kMaxCover ? k.last - k.first : kMaxCover);
    }
    if (rows >= kMaxCover || taps >= kMaxCover)  // kernels of a million rows or columns, overlapping
      return decline(why, AVGPOOL_ERROR_UNSUPPORTED, "%s: %lld output rows and %lld columns cover one input element",
                     name, (long long)rows, (long long)taps);
    j.ring_slots = (int32_t)rows;

    // Column blocks, and the output columns each needs.
    const int64_t block = nchw ? kRowBlock : (kPixelSpan / q.c > 1 ? kPixelSpan / q.c : 1);
    for (int64_t x = 0; x < q.w; x += block) c->block_x.push_back(x);
    c->block_x.push_back(q.w);
    j.blocks = (int64_t)c->block_x.size() - 1;
    int64_t widest = 0, widest_span = 0;
    for (int64_t b = 0; b < j.blocks; ++b) {
      const int64_t x0 = c->block_x[(size_t)b], x1 = c->block_x[(size_t)b + 1];
      int64_t lo = 0, hi = 0;
      bool any = false;
      for (int64_t x = x0; x < x1; ++x) {
        const int64_t first = c->col_first[(size_t)x], last = first + c->col_count[(size_t)x];
        if (first == last) continue;
        if (!any || first < lo) lo = first;
        if (!any || last > hi) hi = last;
        any = true;
      }
      c->block_ow.push_back(lo);
      c->block_ow.push_back(hi);
      if (x1 - x0 > widest) widest = x1 - x0;
      if (hi - lo > widest_span) widest_span = hi - lo;
    }

    // The scheme, and the ring slot's shape.
    // NCHW row sums need kernels that fit their windows: contiguous taps
    // load kw positions per column (so kw must not exceed the most terms a
    // column has by more than a vector: a kernel far beyond a small input
    // would cost kw loads for a few terms), spread rows one row per tap.
    // Other NCHW problems go per pixel.
    const bool row_sums = q.sw == 1 ? q.kw <= taps + kBackwardLanes : taps <= kMaxTaps;
    j.scheme = !nchw                                             ? kBackwardPixels
               : q.oh == 1 && q.ow == 1 && q.h * q.w <= kUnitTarget ? kBackwardOneWindow
               : broadcast_only                                  ? kBackwardBroadcastRows
               : row_sums                                        ? kBackwardRows
                                                                 : kBackwardPixels;
    j.lead = 0;
    j.hsum = false;
    j.expanded = 0;
    j.spread_width = 0;
    j.q_elements = 0;
    int64_t slot = 0;
    if (j.scheme == kBackwardRows && q.sw == 1) {
      // Contiguous taps: column x reads positions lead + x + pw - kw + 1 -
      // ow_lo + [0, kw), for whole vectors of columns.
      for (int64_t b = 0; b < j.blocks; ++b) {
        const int64_t x0 = c->block_x[(size_t)b];
        const int64_t base = x0 + q.pw - q.kw + 1 - c->block_ow[2 * (size_t)b];
        if (-base > j.lead) j.lead = -base;
      }
      for (int64_t b = 0; b < j.blocks; ++b) {
        const int64_t x0 = c->block_x[(size_t)b], x1 = c->block_x[(size_t)b + 1];
        const int64_t base = j.lead + x0 + q.pw - q.kw + 1 - c->block_ow[2 * (size_t)b];
        const int64_t end = base + round_up(x1 - x0, kBackwardLanes) + q.kw - 1;
        if (end > slot) slot = end;
      }
      if (!j.pytorch) {
        // Fast numerics: that padded q row goes to the q buffer, and a slot
        // holds its sums over each column's kw taps (computed once per
        // output row instead of once per input row that reads it).
        j.hsum = true;
        j.expanded = 1;
        j.q_elements = round_up(slot, kBackwardLanes);
        j.spread_width = round_up(widest, kBackwardLanes);
        slot = j.spread_width;
      }
    } else if (j.scheme == kBackwardRows) {
      // Strided columns: each slot holds its q row spread over the block's
      // columns, one row per tap, built once per output row (not once per
      // input row that reads it). Tap t of column x comes from output
      // column col_first[x] + t. Fast numerics: one row, the taps' sum.
      j.expanded = j.pytorch ? (int32_t)taps : 1;
      j.spread_width = round_up(widest, kBackwardLanes);
      j.q_elements = round_up(widest_span, kBackwardLanes);
      slot = j.expanded * j.spread_width;
    } else if (j.scheme == kBackwardBroadcastRows) {
      j.q_elements = round_up(widest_span, kBackwardLanes);
    }
    if (slot < j.lead + widest_span * j.vec) slot = j.lead + widest_span * j.vec;
    j.slot = round_up(slot > 0 ? slot : 1, kBackwardLanes);
    if ((j.slot > kMaxSlot || j.q_elements > kMaxSlot) && j.scheme == kBackwardRows && q.sw == 1) {
      // A kernel so wide that the zeros around a q row overflow int32: per
      // pixel instead (NCHW pixels are single elements; correct, slower).
      j.scheme = kBackwardPixels;
      j.lead = 0;
      j.hsum = false;
      j.expanded = 0;
      j.q_elements = 0;
      j.slot = round_up(widest_span, kBackwardLanes);
    }
    if (j.slot > kMaxSlot)
      return decline(why, AVGPOOL_ERROR_UNSUPPORTED, "%s: a window row of %lld elements is too long", name,
                     (long long)j.slot);
    if (j.scheme == kBackwardOneWindow) {
      // Which elements of a plane the window holds, a vector at a time.
      const int64_t lanes = q.dtype == AVGPOOL_DTYPE_F64 ? 8 : 16, hw = q.h * q.w;
      const AxisWindow& r = q.rows[0];
      const AxisWindow& k = q.cols[0];
      if (!(r.begin == 0 && r.end == q.h && k.begin == 0 && k.end == q.w)) {
        c->plane_mask.assign((size_t)((hw + lanes - 1) / lanes), 0u);
        for (int64_t y = r.begin; y < r.end; ++y)
          for (int64_t x = k.begin; x < k.end; ++x)
            c->plane_mask[(size_t)((y * q.w + x) / lanes)] |= 1u << ((y * q.w + x) % lanes);
      }
    }
    if (j.scheme == kBackwardBroadcastRows || (j.expanded != 0 && !j.hsum)) {
      j.q_elements += kBackwardLanes;  // slack: a permutation loads a whole vector
      j.taps = j.scheme == kBackwardBroadcastRows ? 1 : (int32_t)taps;
      if (!build_spread(*c, q, j.taps))
        return decline(why, AVGPOOL_ERROR_INTERNAL, "%s: a column's covering windows jump by more than one", name);
    }

    // Divisors, in the accumulator type.
    dispatch_dtype(q.dtype, [&](auto zero) {
      using T = decltype(zero);
      if constexpr (sizeof(T) == sizeof(double)) {
        build_divisors<double>(q, &c->div_double, &c->div_row,
                               [&](int64_t d) { return backward_divisor_value<double, T>(q, d); });
      } else {
        build_divisors<float>(q, &c->div_float, &c->div_row,
                              [&](int64_t d) { return backward_divisor_value<float, T>(q, d); });
      }
      return 0;
    });
  } catch (const std::bad_alloc&) {
    return decline(why, AVGPOOL_ERROR_OUT_OF_MEMORY, "%s: no memory for the cover tables", name);
  }
  j.row_first = c->row_first.data();
  j.row_count = c->row_count.data();
  j.col_first = c->col_first.data();
  j.col_count = c->col_count.data();
  j.block_x = c->block_x.data();
  j.block_ow = c->block_ow.data();
  j.spread = c->spread.data();
  j.plane_mask = c->plane_mask.empty() ? nullptr : c->plane_mask.data();
  j.spread_chunks = (q.w + (q.dtype == AVGPOOL_DTYPE_F64 ? 8 : 16) - 1) / (q.dtype == AVGPOOL_DTYPE_F64 ? 8 : 16);
  j.div_row = c->div_row.data();
  j.div_values = q.dtype == AVGPOOL_DTYPE_F64 ? (const void*)c->div_double.data() : (const void*)c->div_float.data();
  // Fast numerics, NHWC: several q-row slots are summed first (NCHW slots
  // are already summed along the row: one load per slot and element).
  j.presum = !j.pytorch && j.ring_slots > 1 && j.scheme == kBackwardPixels;

  // Streaming stores for a grad_input far beyond the caches, where they are
  // stored straight from a row built in L1 (spread rows, NHWC pixel rows).
  // NCHW row sums and one-window planes measured faster without them: their
  // rows are short, and staging them costs more than the stores save
  // (docs/performance.md). AVGPOOL_CPU_BWD_NT=0|1 forces them off or on (tests,
  // measurements).
  j.nt = q.src_elements * q.element_size >= kNtBytes &&
         (j.scheme == kBackwardBroadcastRows || j.scheme == kBackwardPixels);
  if (const char* e = getenv("AVGPOOL_CPU_BWD_NT")) j.nt = e[0] == '1';

  // Parallel units: runs of input rows of one plane and column block, or
  // whole planes.
  int64_t widest = 0;
  for (int64_t b = 0; b < j.blocks; ++b)
    if (c->block_x[(size_t)b + 1] - c->block_x[(size_t)b] > widest) widest = c->block_x[(size_t)b + 1] - c->block_x[(size_t)b];
  const int64_t row_work = widest * j.vec;
  j.rows_per_unit = kUnitTarget / row_work > 1 ? kUnitTarget / row_work : 1;
  // Each unit computes its first rows' q rows again: keep that a small share.
  if (j.rows_per_unit < 4 * (int64_t)j.ring_slots) j.rows_per_unit = 4 * (int64_t)j.ring_slots;
  // Spread rows: units a whole number of strides tall, so that without
  // padding every unit starts at a window and no window's row is spread in
  // two units.
  if (j.scheme == kBackwardBroadcastRows && q.sh <= q.h) j.rows_per_unit = (j.rows_per_unit + q.sh - 1) / q.sh * q.sh;
  j.planes_per_unit = 1;
  if (j.rows_per_unit >= q.h) {
    j.rows_per_unit = q.h;
    const int64_t plane_work = q.h * row_work;
    j.planes_per_unit = kUnitTarget / plane_work > 1 ? kUnitTarget / plane_work : 1;
    if (j.planes_per_unit > j.planes) j.planes_per_unit = j.planes > 1 ? j.planes : 1;  // n may be 0
  }
  if (j.scheme == kBackwardOneWindow) {  // whole planes, one column block, a unit staged whole
    j.blocks = 1;
    c->block_x = {0, q.w};
    c->block_ow = {0, q.ow};
    j.block_x = c->block_x.data();
    j.block_ow = c->block_ow.data();
    j.rows_per_unit = q.h;
    j.planes_per_unit = kUnitTarget / (q.h * q.w) > 1 ? kUnitTarget / (q.h * q.w) : 1;
    if (j.planes_per_unit > j.planes) j.planes_per_unit = j.planes > 1 ? j.planes : 1;
  }
  j.row_units = (q.h + j.rows_per_unit - 1) / j.rows_per_unit;
  j.units = (j.planes + j.planes_per_unit - 1) / j.planes_per_unit * j.row_units * j.blocks;
  // Staging for nt: the whole unit when it is one contiguous run, small
  // enough for the caches; else one row (or block of a row) at a time.
  const int64_t unit_elements = j.planes_per_unit * j.rows_per_unit * (j.blocks == 1 ? q.w * j.vec : row_work);
  j.pixel_copy = j.nt && j.scheme == kBackwardPixels && q.sh >= q.kh && q.sw >= q.kw &&
                 (q.dtype == AVGPOOL_DTYPE_F32 || q.dtype == AVGPOOL_DTYPE_F64);
  // Spread rows that are whole 64-byte lines stream straight from the spread
  // row (in L1), row by row: staging the unit first stored every element
  // once more (2x64x2048x2048 k11 NCHW f32: 36.2-36.6 -> 28.8-29.8 ms, 0.73
  // -> 0.91-0.92 of a same-run write pass, 2026-12-01). Shorter or ragged
  // rows keep the staged unit: streaming them row by row would split lines
  // between streaming and ordinary stores.
  const bool whole_line_rows = (q.w * q.element_size) % 64 == 0;
  j.stage_unit = j.nt && !j.pixel_copy && j.blocks == 1 &&
                 !(j.scheme == kBackwardBroadcastRows && whole_line_rows) &&
                 (unit_elements <= kStageUnit || j.scheme == kBackwardOneWindow);  // one window: <= kUnitTarget
  j.stage_elements = !j.nt ? 0 : j.stage_unit ? round_up(unit_elements, kBackwardLanes) : round_up(row_work, kBackwardLanes);
  j.spread_elements = j.scheme == kBackwardBroadcastRows ? round_up(widest, kBackwardLanes) : 0;
  j.scratch_bytes = backward_scratch_bytes(j, q.dtype == AVGPOOL_DTYPE_F64 ? 8 : 4);
  if (j.scratch_bytes > kMaxScratch)  // only kernels covering thousands of rows and columns at once
    return decline(why, AVGPOOL_ERROR_UNSUPPORTED,
                   "%s: %d output rows cover one input row; their q rows would need %zu bytes per thread", name,
                   (int)j.ring_slots, j.scratch_bytes);

  c->run = kernels_for_plan().run[q.dtype][q.numerics];
  *config = std::move(c);
  return AVGPOOL_SUCCESS;
}

avgpool_status init_broadcast(const Problem& q, const DeviceInfo&, ConfigPtr* config, Decline* why) {
  return init_job(q, true, "cpu:backward_broadcast", config, why);
}

avgpool_status init_gather(const Problem& q, const DeviceInfo&, ConfigPtr* config, Decline* why) {
  return init_job(q, false, "cpu:backward_gather", config, why);
}

avgpool_status execute(const Problem&, const Config& config, const void* grad_output, void* grad_input, void*) {
  const BackwardConfig& c = static_cast<const BackwardConfig&>(config);
  const BackwardJob& j = c.job;
  ActiveCall active;
  const int nt = threads_for(j.units);
  // Units from UnitShares: a thread without scratch memory takes none (the
  // others do its share; only when no thread has scratch does the call
  // fail, having written nothing). Each element is computed by one unit, in
  // a fixed order, so the result does not depend on the schedule.
  UnitShares shares(j.units, nt);
  std::atomic<int> working{0};
  auto work = [&](int t) {
    void* scratch = thread_scratch(j.scratch_bytes);
    if (scratch != nullptr) {
      working.fetch_add(1, std::memory_order_relaxed);
      for (int64_t u0, u1; shares.next(t, &u0, &u1);)
        for (int64_t u = u0; u < u1; ++u) c.run(j, grad_output, grad_input, u, scratch);
    }
    thread_scratch_trim();
  };
  if (nt <= 1) {
    work(0);
  } else {
#if defined(AVGPOOL_WITH_OPENMP)
#pragma omp parallel num_threads(nt)
    work(omp_get_thread_num());
#endif
  }
  if (working.load() == 0)
    return set_error(AVGPOOL_ERROR_OUT_OF_MEMORY, "cpu backward: no memory for %zu bytes of scratch per thread",
                     j.scratch_bytes);
  return AVGPOOL_SUCCESS;
}

}  // namespace

extern const Impl kCpuBackwardBroadcast = {"cpu:backward_broadcast", AVGPOOL_BACKEND_CPU, Direction::kBackward,
                                           init_broadcast, execute};
extern const Impl kCpuBackwardGather = {"cpu:backward_gather", AVGPOOL_BACKEND_CPU, Direction::kBackward,
                                        init_gather, execute};

size_t cpu_backward_auto_order(const Problem&, const DeviceInfo&, const Impl** out, size_t cap) {
  size_t n = 0;
  for (const Impl* impl : {&kCpuBackwardBroadcast, &kCpuBackwardGather})
    if (n < cap) out[n++] = impl;
  return n;
}

}  // namespace cpu
}  // namespace avgpool
