// cuda:nchw_row_stream - NCHW with wide rows (the seed case: 16x64x2048x2048
// f32, kernel 11, stride 11): any kernel, stride, padding, ceil_mode and
// divisor while a row feeds at most 3 output rows (ceil(kh / sh) <= 3),
// ow <= 1024 and rows are 16-byte multiples; src 16-byte aligned.
//
// Work units are a few output rows of one plane (the seed: one output row,
// 11 input rows = 88 KB of f32), handed round-robin over a persistent grid of
// three blocks per SM. A unit's input rows are one contiguous byte range; a
// producer lane streams it through a ring of shared-memory stages (~16 KB,
// a few rows each) with the copy engine (cp.async.bulk, completing on an
// mbarrier), keeping the whole ring in flight. A stage is handed back as
// soon as its rows are consumed - not when a whole window of rows has been
// used, which limited cuda:nchw_row_bulk to two 88 KB stages on the seed case.
//
// Consumer warps work independently (no block barriers): a thread owns output
// columns tid and tid + 256 (ow > 256), keeps their column windows in
// registers and one accumulator per output row in flight (a ring of
// ceil(kh / sh) slots, static slot registers). Each input row is added, left
// to right, to the accumulators of the output rows it feeds; an output row is
// divided and stored when its last input row has been added. The order of
// additions is PyTorch's (rows then columns, one accumulator, one division),
// so both numerics are bitwise PyTorch; with overlapping windows, fast
// numerics add a row's window sum once per output row instead of each
// element. When a row feeds one output row (stride >= kernel) the per-row
// bookkeeping is two comparisons; otherwise each open output row keeps a
// count of the input rows it still needs, in a static slot. The ring and the
// open output rows are bulk_ring.cuh's, shared with cuda:nhwc_tile_stream.
#include <algorithm>

#include "common.cuh"
#include "impls.h"
#include "bulk_ring.cuh"

namespace avgpool::cuda {
namespace {

constexpr const char* kName = "cuda:nchw_row_stream";
constexpr int kMaxSlots = 3;         // output rows one input row may feed
constexpr int kMaxColumns = 4;       // output columns per consumer thread
// Measured (2026-11-29, H200; docs/cuda.md, cuda:nchw_row_stream): one block
// per SM left its 6 working warps latency-bound (f16 seed 3.27 ms, per-row
// work is a dependent chain); on the seed 2-4 blocks per SM and 8-32 KB
// stages all reach the ring's streaming limit, while overlapping windows
// want the warps: k11 s4 on 1024x1024 planes 1.36 ms with 3 blocks of 16 KB
// stages against 1.63 with 2 blocks of 32 KB.
// Three blocks per SM (16 KB stages) where a thread keeps few accumulators:
// one output column and 4- or 2-byte elements; two (32 KB stages) where the
// 72 registers of three blocks would spill (4 columns, f64).
__host__ __device__ constexpr int blocks_per_sm(int element_bytes, int columns_per_thread) {
  return element_bytes == 8 || columns_per_thread > 1 ? 2 : 3;
}
__host__ __device__ constexpr int stage_target(int blocks) { return blocks == 3 ? 16 * 1024 : 32 * 1024; }
// A unit brings ~128 KB of new input rows: the seed's single output row
// (88 KB of f32), several where windows overlap (their kh - sh shared rows
// are read twice, the second time mostly from L2).
constexpr int64_t kUnitTarget = 128 * 1024;

struct StreamArgs : Geometry {
  int64_t unit_rows, units_per_plane, total_units;  // work units of unit_rows output rows
  int rows_per_stage;
  int stages;
  int stage_bytes;
  int slots;  // ceil(kh / sh), at least 1
  bool vec;   // every column window starts on a 16-byte boundary
};

// A work unit: output rows [oy_first, oy_last] of one plane and the input
// rows [y_begin, y_end) under them.
struct Segment {
  int64_t plane, oy_first, oy_last, y_begin, y_end;
};

// [[maybe_unused]]: below sm_90 the kernel body is a trap (bulk_copy.cuh).
[[maybe_unused]] __device__ __forceinline__ Segment unit_segment(const StreamArgs& a, int64_t u) {
  Segment sg;
  sg.plane = u / a.units_per_plane;
  sg.oy_first = (u - sg.plane * a.units_per_plane) * a.unit_rows;
  sg.oy_last = (sg.oy_first + a.unit_rows < a.oh ? sg.oy_first + a.unit_rows : a.oh) - 1;
  sg.y_begin = axis_window(sg.oy_first, a.h, a.kh, a.sh, a.ph).begin;
  sg.y_end = axis_window(sg.oy_last, a.h, a.kh, a.sh, a.ph).end;
  return sg;
}

// The end of the stage-sized run of a segment's input rows that starts at y0.
[[maybe_unused]] __device__ __forceinline__ int64_t chunk_end(const StreamArgs& a, const Segment& sg, int64_t y0) {
  return y0 + a.rows_per_stage < sg.y_end ? y0 + a.rows_per_stage : sg.y_end;
}

// Calls f(segment, y0, n) for each stage-sized run of input rows of this
// block's units, in order. Units go round-robin over the grid, so at any time
// the blocks read neighbouring units: DRAM sees one sweep through memory,
// not hundreds of scattered streams (2026-11-29, seed f32: 0.934 of the read
// pass with one contiguous range per block, 0.953 round-robin), and the rows two overlapping units share are
// read close together in time (L2 hits). Producer and consumers walk the
// same sequence, so stage k holds the same rows for both.
template <typename F>
__device__ __forceinline__ void for_each_chunk(const StreamArgs& a, F&& f) {
  for (int64_t u = blockIdx.x; u < a.total_units; u += gridDim.x) {
    const Segment sg = unit_segment(a, u);
    for (int64_t y0 = sg.y_begin; y0 < sg.y_end; y0 = chunk_end(a, sg, y0))
      f(sg, y0, (int)(chunk_end(a, sg, y0) - y0));
  }
}

template <typename T, int K, int RM, int CPT, bool PYT>
__global__ void __launch_bounds__(kThreads, blocks_per_sm(sizeof(T), CPT))
row_stream_kernel(const T* __restrict__ src, T* __restrict__ dst, StreamArgs a) {
#if !AVGPOOL_BULK_COPY_DEVICE
  __trap();  // never launched below sm_90 (bulk_copy.cuh)
#else
  using E = Elem<T>;
  using A = typename E::acc_t;
  constexpr int V = vec_of<T>();
  // Warps with no output column leave at once; the others release stages.
  const int64_t used_warps = (a.ow + 31) / 32;
  const int consumer_warps = (int)(used_warps < kConsumerWarps ? used_warps : kConsumerWarps);
  StageRing<kMaxRingStages> ring = block_ring<kMaxRingStages>(a.stages, a.stage_bytes, consumer_warps * 32);
  const int tid = threadIdx.x, warp = tid / 32;

  if (warp == kConsumerWarps) {
    // ---- producer: one lane streams the block's rows through the ring ----------
    if (tid % 32 != 0) return;
    const uint32_t row_bytes = (uint32_t)(a.w * (int64_t)sizeof(T));
    for_each_chunk(a, [&](const Segment& sg, int64_t y0, int n) {
      const uint32_t bytes = row_bytes * (uint32_t)n;
      bulk_copy_g2s(ring.fill_begin(bytes), src + (sg.plane * a.h + y0) * a.w, bytes, ring.full_bar());
      ring.advance();
    });
    return;
  }
  if (warp >= consumer_warps) return;

  // ---- consumers ------------------------------------------------------------------
  const int64_t kw = K > 0 ? K : a.kw;
  // Row windows in int (geometry: axes below 2^28): fewer instructions per row.
  const int h = (int)a.h, kh = (int)a.kh, sh = (int)a.sh, ph = (int)a.ph;
  int col_begin[CPT], col_count[CPT];
  int64_t col_factor[CPT];
#pragma unroll
  for (int c = 0; c < CPT; ++c) {
    const int64_t ox = tid + (int64_t)c * kConsumers;
    col_begin[c] = 0;
    col_count[c] = 0;  // no column: nothing summed, nothing stored
    col_factor[c] = 1;
    if (ox < a.ow) {
      const AxisWindow cw = axis_window(ox, a.w, kw, a.sw, a.pw);
      col_begin[c] = (int)cw.begin;
      col_count[c] = (int)(cw.end - cw.begin);
      col_factor[c] = axis_divisor_factor(cw, a.include_pad);
    }
  }
  A acc[RM][CPT];
#pragma unroll
  for (int r = 0; r < RM; ++r)
#pragma unroll
    for (int c = 0; c < CPT; ++c) acc[r][c] = A(0);

  // Adds the window elements of `row` to the accumulators of the slots that
  // are on, left to right (PyTorch's order within a row).
  auto add_row = [&](const T* row, const bool (&on)[RM]) {
#pragma unroll
    for (int c = 0; c < CPT; ++c) {
      const T* e = row + col_begin[c];
      const int n = col_count[c];
      if (n == 0) continue;
      A rowsum = A(0);
      auto take = [&](A v) {
        if constexpr (PYT || RM == 1) {
#pragma unroll
          for (int r = 0; r < RM; ++r)
            if (on[r]) acc[r][c] += v;
        } else {
          rowsum += v;
        }
      };
      if (K > 0 && a.vec && n == K) {
        // A whole window (all but edge columns): its vectors, no predicates;
        // fast numerics with several output rows sum the row pairwise (a
        // shorter dependency chain than left to right).
        constexpr int NV = K > 0 ? (K + V - 1) / V : 1;
        A vals[NV * V];
#pragma unroll
        for (int q = 0; q < NV; ++q) {
          const Vec16<T> v = *reinterpret_cast<const Vec16<T>*>(e + q * V);
#pragma unroll
          for (int j = 0; j < V; ++j) vals[q * V + j] = lane_acc(v, j);
        }
        if constexpr (PYT || RM == 1) {
#pragma unroll
          for (int j = 0; j < (K > 0 ? K : 1); ++j) take(vals[j]);
        } else {
          rowsum = pairwise_sum<(K > 0 ? K : 1)>(vals);
        }
      } else if (a.vec) {
        constexpr int NV = K > 0 ? (K + V - 1) / V : 1;
        for (int q0 = 0; q0 < n; q0 += NV * V) {
#pragma unroll
          for (int q = 0; q < NV; ++q) {
            if (q0 + q * V < n) {
              const Vec16<T> v = *reinterpret_cast<const Vec16<T>*>(e + q0 + q * V);
#pragma unroll
              for (int j = 0; j < V; ++j)
                if (q0 + q * V + j < n) take(lane_acc(v, j));
            }
          }
          if (K > 0) break;
        }
      } else if constexpr (K > 0) {
        if (n == K) {  // a whole window (all but edge columns): no predicates
#pragma unroll
          for (int j = 0; j < K; ++j) take(E::to_acc(e[j]));
        } else {
#pragma unroll
          for (int j = 0; j < K; ++j)
            if (j < n) take(E::to_acc(e[j]));
        }
      } else {
        for (int j = 0; j < n; ++j) take(E::to_acc(e[j]));
      }
      if constexpr (!PYT && RM > 1) {
#pragma unroll
        for (int r = 0; r < RM; ++r)
          if (on[r]) acc[r][c] += rowsum;
      }
    }
  };

  // Stores output row oy of the segment's plane from slot q: one division.
  auto store_row = [&](const Segment& sg, int oy, const AxisWindowOf<int>& rw, int q) {
    const int64_t row_factor = axis_divisor_factor(rw, a.include_pad);
    T* out = dst + (sg.plane * a.oh + oy) * a.ow + tid;
#pragma unroll
    for (int c = 0; c < CPT; ++c) {
      if (col_count[c] == 0) continue;
      const int64_t divisor = divisor_from_factors(row_factor, col_factor[c], a.divisor_override);
      out[(int64_t)c * kConsumers] = E::from_acc(acc[q][c] / static_cast<A>(divisor));
      acc[q][c] = A(0);
    }
  };

  // Output rows open while their input rows stream by (bulk_ring.cuh).
  OpenRows<RM> rows(h, kh, sh, ph, a.slots);
  for_each_chunk(a, [&](const Segment& sg, int64_t y0, int n) {
    if (y0 == sg.y_begin) rows.start((int)sg.oy_first, (int)sg.oy_last, (int)sg.y_begin);
    const T* stage = reinterpret_cast<const T*>(ring.acquire());
    stream_rows(
        rows, (int)y0, n, [&](int r) { return stage + (int64_t)r * a.w; }, add_row,
        [&](int q, int oy, const AxisWindowOf<int>& rw) { store_row(sg, oy, rw, q); });
    ring.release();
  });
#endif
}

// ---- host ------------------------------------------------------------------------------
// Output rows of one work unit: about kUnitTarget bytes of input rows.
int64_t unit_rows(const Problem& q) {
  return std::min<int64_t>(q.oh, std::max<int64_t>(1, kUnitTarget / (q.sh * q.w * q.element_size)));
}

// Plans the ring for q on device into a, or declines.
avgpool_status plan_ring(const Problem& q, const DeviceInfo& device, StreamArgs* a, int64_t* smem, Decline* why) {
  const int64_t es = q.element_size, V = 16 / es;
  const int64_t row_bytes = q.w * es;
  if (q.layout != AVGPOOL_LAYOUT_NCHW) return decline(why, AVGPOOL_ERROR_UNSUPPORTED, "%s is NCHW only", kName);
  if (row_bytes % 16 != 0)
    return decline(why, AVGPOOL_ERROR_UNSUPPORTED,
                   "%s: rows of %lld bytes are not a multiple of 16 (the copy engine's unit)", kName,
                   (long long)row_bytes);
  if (q.ow > (int64_t)kConsumers * kMaxColumns)
    return decline(why, AVGPOOL_ERROR_UNSUPPORTED, "%s: %lld output columns (at most %d)", kName, (long long)q.ow,
                   kConsumers * kMaxColumns);
  int64_t slots = 0;
  if (plan_open_rows(kName, q, kMaxSlots, &slots, why) != AVGPOOL_SUCCESS) return why->status;
  const int blocks = blocks_per_sm((int)es, q.ow <= kConsumers ? 1 : kMaxColumns);
  const int64_t limit =
      std::min<int64_t>(device.smem_block, device.smem_sm / blocks - 1024) - 2 * kMaxRingStages * 8 - 16;
  const int64_t rows_per_stage = std::max<int64_t>(1, stage_target(blocks) / row_bytes);
  const int64_t stage = rows_per_stage * row_bytes;
  const int64_t stages = std::min<int64_t>(kMaxRingStages, limit / stage);
  if (stages < 3 || stage >= (int64_t(1) << 20))
    return decline(why, AVGPOOL_ERROR_UNSUPPORTED, "%s: rows of %lld bytes do not fit three times in shared memory",
                   kName, (long long)row_bytes);
  a->unit_rows = unit_rows(q);
  a->units_per_plane = ceil_div(q.oh, a->unit_rows);
  a->total_units = q.planes() * a->units_per_plane;
  a->rows_per_stage = (int)rows_per_stage;
  a->stages = (int)stages;
  a->stage_bytes = (int)stage;
  a->slots = (int)slots;
  a->vec = V > 1 && q.sw % V == 0 && q.pw % V == 0;
  *smem = stages * stage + 16;
  return AVGPOOL_SUCCESS;
}

// The plan: the ring (plan_ring), then the kernel instantiation:
// compile-time window widths 11, 5 and 3 (the others run-time), open output
// rows 1 or 3, columns per thread 1 or 4.
avgpool_status init(const Problem& q, const DeviceInfo& device, ConfigPtr* config, Decline* why) {
  // Bulk copies of whole rows: 16-byte aligned sources.
  return init_bulk_copy<StreamArgs>(kName, q, device, kThreads, 16, 1, config, why, plan_ring, [&](auto pick) {
    using P = decltype(pick);
    const StreamArgs& a = pick.args();
    auto use = [&](auto k, auto rm, auto cpt) {
      return pick.template use<row_stream_kernel<typename P::T, decltype(k)::value, decltype(rm)::value,
                                                 decltype(cpt)::value, P::kPytorch>>("row_stream_kernel",
                                                                                     a.total_units);
    };
    using One = std::integral_constant<int, 1>;
    auto with_columns = [&](auto cpt) {
      return dispatch_k<11, 5, 3>(a.kw, [&](auto k) {
        return a.slots == 1 ? use(k, One{}, cpt) : use(k, std::integral_constant<int, 3>{}, cpt);
      });
    };
    return a.ow <= kConsumers ? with_columns(One{}) : with_columns(std::integral_constant<int, kMaxColumns>{});
  });
}

}  // namespace

const Impl kNchwRowStreamImpl = cuda_impl(kName, Direction::kForward, init);

int64_t nchw_row_stream_units(const Problem& q) { return q.planes() * ceil_div(q.oh, unit_rows(q)); }

}  // namespace avgpool::cuda
