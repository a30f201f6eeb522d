// cuda:nhwc_tile_stream - NHWC (channels_last) with 16-byte channel groups:
// any kernel, stride, padding, ceil_mode and divisor while an input row
// feeds at most 6 output rows and a tile's input rows fit three times in
// shared memory; src and dst 16-byte aligned. Both numerics (PyTorch's
// order, bitwise).
//
// cuda:nchw_row_stream's scheme on NHWC tiles. An NHWC image row is W * C
// contiguous elements, too wide to stage whole, so a work unit is a band of
// output rows times a tile of output columns of one image; the input pixels
// under a tile's columns are one contiguous run of each input row. A producer
// lane streams those runs, a band's rows in order, through a ring of
// shared-memory stages with the copy engine (cp.async.bulk), so each input
// byte crosses DRAM about once and the loads run ahead of the sums by the
// whole ring. Consumer threads each own (output column, 16-byte channel
// group) items of the tile: a row's window for an item is kw vectors at a
// pixel stride in shared memory (16 bytes per lane, conflict-free), summed
// into the accumulators of the output rows the row feeds (bulk_ring.cuh).
// Rows then columns, one accumulator per output, one division: PyTorch's
// order in pytorch numerics; fast numerics sum a row's window once and add
// it to each open output row.
#include <algorithm>

#include "common.cuh"
#include "impls.h"
#include "bulk_ring.cuh"

namespace avgpool::cuda {
namespace {

constexpr const char* kName = "cuda:nhwc_tile_stream";
constexpr int kMaxSlots = 6;               // output rows one input row may feed
constexpr int kMaxItems = 2;               // (output column, channel group) items per consumer thread

// As cuda:nchw_row_stream: three blocks per SM with ~16 KB stages while a
// thread's registers allow (f32, one item, no pytorch-order window of 7 or
// more pixels held at once); else two, with ~32 KB stages (the registers of
// three blocks spilled there).
__host__ __device__ constexpr int blocks_per_sm(int element_bytes, int items_per_thread, bool pytorch_order,
                                                int width) {
  return element_bytes == 4 && items_per_thread == 1 && !(pytorch_order && width >= 7) ? 3 : 2;
}
// The compile-time window width and slot count the plan picks for the
// measured overlapping shapes (11 with stride 4, 5 and 3 with stride 1);
// width 0: the runtime-width loop.
struct Compiled {
  int width, slots;
};
__host__ __device__ constexpr Compiled compiled_for(int64_t kw, int64_t slots) {
  return kw == 11 && slots > 1 && slots <= 3 ? Compiled{11, 3}
         : kw == 5 && slots == 5             ? Compiled{5, 5}
         : kw == 3 && slots > 1 && slots <= 3 ? Compiled{3, 3}
         : Compiled{0, slots == 1 ? 1 : slots <= 3 ? 3 : kMaxSlots};
}
__host__ __device__ constexpr int stage_target(int blocks) { return blocks == 3 ? 16 * 1024 : 32 * 1024; }

struct NhwcStreamArgs : Geometry {
  int64_t c;           // channels (a multiple of the 16-byte vector)
  int cg;              // 16-byte channel groups per pixel
  int tile_ox;         // output columns per unit
  int tiles;           // column tiles per output row
  int band_oy;         // output rows per unit
  int bands;           // bands per image
  int64_t total_units; // images * bands * tiles
  int pitch;           // bytes between staged rows: the widest tile's input run
  int rows_per_stage, stages, stage_bytes, slots;
};

// A work unit: output rows [oy_first, oy_last] and columns [ox0, ox1) of
// image n; the input rows [y_begin, y_end) and pixel columns [x_lo, x_hi)
// under them.
struct Unit {
  int64_t n;
  int oy_first, oy_last, y_begin, y_end, ox0, ox1, x_lo, x_hi;
};

// Tiles vary fastest, then bands: the blocks working at one time read
// neighbouring tiles of the same rows (their shared edge pixels hit L2).
// [[maybe_unused]]: below sm_90 the kernel body is a trap (bulk_copy.cuh).
[[maybe_unused]] __device__ __forceinline__ Unit unit_of(const NhwcStreamArgs& a, int64_t u) {
  Unit t;
  const int tile = (int)(u % a.tiles);
  const int64_t rest = u / a.tiles;
  const int band = (int)(rest % a.bands);
  t.n = rest / a.bands;
  const int h = (int)a.h, w = (int)a.w, oh = (int)a.oh, ow = (int)a.ow;
  t.oy_first = band * a.band_oy;
  t.oy_last = min(t.oy_first + a.band_oy, oh) - 1;
  t.y_begin = axis_window_of<int>(t.oy_first, h, (int)a.kh, (int)a.sh, (int)a.ph).begin;
  t.y_end = axis_window_of<int>(t.oy_last, h, (int)a.kh, (int)a.sh, (int)a.ph).end;
  t.ox0 = tile * a.tile_ox;
  t.ox1 = min(t.ox0 + a.tile_ox, ow);
  t.x_lo = axis_window_of<int>(t.ox0, w, (int)a.kw, (int)a.sw, (int)a.pw).begin;
  t.x_hi = axis_window_of<int>(t.ox1 - 1, w, (int)a.kw, (int)a.sw, (int)a.pw).end;
  return t;
}

// Calls f(unit, y0, rows) for each stage-sized run of input rows of this
// block's units, in order; producer and consumers walk the same sequence.
template <typename F>
__device__ __forceinline__ void for_each_stage(const NhwcStreamArgs& a, F&& f) {
  for (int64_t u = blockIdx.x; u < a.total_units; u += gridDim.x) {
    const Unit t = unit_of(a, u);
    for (int y0 = t.y_begin; y0 < t.y_end; y0 += a.rows_per_stage)
      f(t, y0, min(a.rows_per_stage, t.y_end - y0));
  }
}

template <typename T, int K, int RM, int CPT, bool PYT>
__global__ void __launch_bounds__(kThreads, blocks_per_sm(sizeof(T), CPT, PYT, K))
nhwc_stream_kernel(const T* __restrict__ src, T* __restrict__ dst, NhwcStreamArgs a) {
#if !AVGPOOL_BULK_COPY_DEVICE
  __trap();  // never launched below sm_90 (bulk_copy.cuh)
#else
  // Warps with no item leave at once; the others release stages.
  const int items = a.tile_ox * a.cg;
  const int consumer_warps = min(kConsumerWarps, (items + 31) / 32);
  using E = Elem<T>;
  using A = typename E::acc_t;
  constexpr int V = vec_of<T>();
  StageRing<kMaxRingStages> ring = block_ring<kMaxRingStages>(a.stages, a.stage_bytes, consumer_warps * 32);
  const int tid = threadIdx.x, warp = tid / 32;

  const int64_t pixel_bytes = a.c * (int64_t)sizeof(T);
  if (warp == kConsumerWarps) {
    // ---- producer: one lane streams the tiles' input runs through the ring ----
    if (tid % 32 != 0) return;
    for_each_stage(a, [&](const Unit& t, int y0, int rows) {
      const uint32_t run_bytes = (uint32_t)((t.x_hi - t.x_lo) * pixel_bytes);
      unsigned char* stage = ring.fill_begin(run_bytes * (uint32_t)rows);
      for (int r = 0; r < rows; ++r)
        bulk_copy_g2s(stage + (size_t)r * a.pitch, src + ((t.n * a.h + y0 + r) * a.w + t.x_lo) * a.c, run_bytes,
                      ring.full_bar());
      ring.advance();
    });
    return;
  }
  if (warp >= consumer_warps) return;

  // ---- consumers --------------------------------------------------------------------
  const int kw = K > 0 ? K : (int)a.kw;
  const int c = (int)a.c;  // pixel stride in elements (C * V bytes < 2^31: plan_tiles)
  int col_off[CPT], col_count[CPT], col_factor[CPT], out_off[CPT];
  A acc[RM][CPT][V];
#pragma unroll
  for (int r = 0; r < RM; ++r)
#pragma unroll
    for (int i = 0; i < CPT; ++i)
#pragma unroll
      for (int j = 0; j < V; ++j) acc[r][i][j] = A(0);

  // Adds item i's window of one staged row to the accumulators of the slots
  // that are on, left to right. Compile-time widths load the whole window
  // first, zeros past a clipped edge: adding +0 leaves an accumulator's bits
  // unchanged (it starts at +0 and so is never -0), and per-slot branches on
  // loaded registers keep the compiler from re-reading shared memory per
  // slot and lane (it did: 132 scalar loads a row).
  auto add_row = [&](const T* row, const bool (&on)[RM]) {
#pragma unroll
    for (int i = 0; i < CPT; ++i) {
      const int n = col_count[i];
      if (n == 0) continue;
      const T* e = row + col_off[i];
      if constexpr (K > 0) {
        if constexpr (!PYT && RM > 1) {
          // fast numerics, several open rows: the row's window sum once,
          // then added to each
          A rowsum[V];
#pragma unroll
          for (int x = 0; x < K; ++x) {
            const Vec16<T> v = x < n ? *reinterpret_cast<const Vec16<T>*>(e + x * c) : zero16<T>();
#pragma unroll
            for (int j = 0; j < V; ++j) rowsum[j] = x == 0 ? lane_acc(v, j) : rowsum[j] + lane_acc(v, j);
          }
#pragma unroll
          for (int r = 0; r < RM; ++r)
            if (on[r]) {
#pragma unroll
              for (int j = 0; j < V; ++j) acc[r][i][j] += rowsum[j];
            }
        } else {
          Vec16<T> v[K];
#pragma unroll
          for (int x = 0; x < K; ++x) v[x] = x < n ? *reinterpret_cast<const Vec16<T>*>(e + x * c) : zero16<T>();
#pragma unroll
          for (int r = 0; r < RM; ++r)
            if (on[r]) {
#pragma unroll
              for (int x = 0; x < K; ++x)
#pragma unroll
                for (int j = 0; j < V; ++j) acc[r][i][j] += lane_acc(v[x], j);
            }
        }
      } else {
        for (int x = 0; x < n; ++x) {
          const Vec16<T> v = *reinterpret_cast<const Vec16<T>*>(e + x * c);
#pragma unroll
          for (int r = 0; r < RM; ++r)
            if (on[r]) {
#pragma unroll
              for (int j = 0; j < V; ++j) acc[r][i][j] += lane_acc(v, j);
            }
        }
      }
    }
  };

  OpenRows<RM> rows((int)a.h, (int)a.kh, (int)a.sh, (int)a.ph, a.slots);
  int64_t out_row0 = 0;  // element offset of output row 0 of the unit's image
  for_each_stage(a, [&](const Unit& t, int y0, int nrows) {
    if (y0 == t.y_begin) {  // a new unit: its items' windows
      rows.start(t.oy_first, t.oy_last, t.y_begin);
      out_row0 = t.n * a.oh * a.ow * a.c;
#pragma unroll
      for (int i = 0; i < CPT; ++i) {
        const int it = tid + i * kConsumers;
        const int oxl = it / a.cg, g = it - oxl * a.cg;
        const int ox = t.ox0 + oxl;
        const AxisWindowOf<int> cw = axis_window_of<int>(ox, (int)a.w, kw, (int)a.sw, (int)a.pw);
        const bool mine = it < items && ox < t.ox1;
        col_off[i] = (cw.begin - t.x_lo) * c + g * V;
        col_count[i] = mine ? cw.end - cw.begin : 0;  // 0: nothing summed, nothing stored
        col_factor[i] = axis_divisor_factor(cw, a.include_pad);
        out_off[i] = ox * c + g * V;
      }
    }
    const unsigned char* stage = ring.acquire();
    stream_rows(
        rows, y0, nrows, [&](int r) { return reinterpret_cast<const T*>(stage + (size_t)r * a.pitch); }, add_row,
        [&](int q, int oy, const AxisWindowOf<int>& rw) {
          const int64_t row_factor = axis_divisor_factor(rw, a.include_pad);
          T* out = dst + out_row0 + (int64_t)oy * a.ow * a.c;
#pragma unroll
          for (int i = 0; i < CPT; ++i) {
            if (col_count[i] == 0) continue;
            const A div = static_cast<A>(divisor_from_factors(row_factor, col_factor[i], a.divisor_override));
            Vec16<T> o;
#pragma unroll
            for (int j = 0; j < V; ++j) {
              o.v[j] = E::from_acc(acc[q][i][j] / div);
              acc[q][i][j] = A(0);
            }
            *reinterpret_cast<Vec16<T>*>(out + out_off[i]) = o;
          }
        });
    ring.release();
  });
#endif
}

// ---- host ------------------------------------------------------------------------------
// A tile's output columns for q (cg 16-byte channel groups a pixel, slots
// open output rows), and the (output column, channel group) items each
// consumer thread owns. Items per thread: two where windows overlap (a wider
// tile re-reads fewer edge pixels: 2026-11-29, H200, f32 NHWC, k11 s4 1.147
// -> 1.099 ms, k5 s1 p2 1.671 -> 1.356, k3 s1 p1 0.079 -> 0.066), one where
// they do not (k2 s2: 0.132 against 0.142 with two; three blocks per SM) and
// for 2-byte types (a thread's 8 lanes per item already fill its registers).
// A tile is at most an output row wide.
struct TileColumns {
  int64_t tile_ox, items_per_thread;
};
TileColumns tile_columns(const Problem& q, int64_t cg, int64_t slots) {
  const int64_t target_items = (slots == 1 || q.element_size == 2 ? 1 : kMaxItems) * kConsumers;
  const int64_t tile_ox = std::min<int64_t>(q.ow, std::max<int64_t>(1, target_items / cg));
  return {tile_ox, ceil_div(tile_ox * cg, kConsumers)};
}

// Plans the tiles, bands and ring for q on device into a, or declines.
avgpool_status plan_tiles(const Problem& q, const DeviceInfo& device, NhwcStreamArgs* a, int64_t* smem,
                          Decline* why) {
  const int64_t es = q.element_size, V = 16 / es;
  if (q.layout != AVGPOOL_LAYOUT_NHWC) return decline(why, AVGPOOL_ERROR_UNSUPPORTED, "%s is NHWC only", kName);
  if (q.c % V != 0)
    return decline(why, AVGPOOL_ERROR_UNSUPPORTED,
                   "%s: %lld channels are not a multiple of the 16-byte vector (%lld)", kName, (long long)q.c,
                   (long long)V);
  int64_t slots = 0;
  if (plan_open_rows(kName, q, kMaxSlots, &slots, why) != AVGPOOL_SUCCESS) return why->status;
  // A pixel's bytes and an output row's elements are int in the kernel
  // (column and output offsets, the staged rows' pitch).
  if (q.c * es >= (int64_t(1) << 28) || q.ow * q.c >= (int64_t(1) << 31))
    return decline(why, AVGPOOL_ERROR_UNSUPPORTED, "%s: pixels of 2^28 bytes or output rows of 2^31 elements",
                   kName);
  const int64_t cg = q.c / V;
  const TileColumns columns = tile_columns(q, cg, slots);
  const int64_t tile_ox = columns.tile_ox, items_per_thread = columns.items_per_thread;
  if (items_per_thread > kMaxItems)
    return decline(why, AVGPOOL_ERROR_UNSUPPORTED, "%s: %lld channel groups of 16 bytes (at most %d)", kName,
                   (long long)cg, kConsumers * kMaxItems);
  const int64_t run_pixels = std::min<int64_t>(q.w, (tile_ox - 1) * q.sw + q.kw);
  const int64_t pitch = run_pixels * q.c * es;
  const bool pyt = q.numerics == AVGPOOL_NUMERICS_PYTORCH;
  const int blocks = blocks_per_sm((int)es, (int)items_per_thread, pyt, compiled_for(q.kw, slots).width);
  // per block: its share of the SM less the 1 KB the runtime reserves and the barriers
  const int64_t limit =
      std::min<int64_t>(device.smem_block, device.smem_sm / blocks - 1024) - 2 * kMaxRingStages * 8;
  const int64_t rows_per_stage = std::max<int64_t>(1, stage_target(blocks) / pitch);
  const int64_t stage = rows_per_stage * pitch;
  const int64_t stages = std::min<int64_t>(kMaxRingStages, limit / stage);
  if (stages < 3 || stage >= (int64_t(1) << 20))
    return decline(why, AVGPOOL_ERROR_UNSUPPORTED,
                   "%s: a tile's input rows of %lld bytes do not fit three times in shared memory", kName,
                   (long long)pitch);
  // Bands: the count that minimises (rounds of units over the grid) x
  // (input rows per unit); more bands balance the grid, fewer re-read
  // fewer of the kh - sh rows adjacent bands share.
  const int64_t tiles = ceil_div(q.ow, tile_ox);
  const int64_t grid = (int64_t)blocks * device.sms;
  int64_t best_bands = 1, best_cost = -1;
  for (int64_t b = 1; b <= std::min<int64_t>(q.oh, 256); ++b) {
    const int64_t band = ceil_div(q.oh, b);
    if (b > 1 && ceil_div(q.oh, band) != b) continue;  // same bands as a smaller count
    const int64_t units = q.n * tiles * b;
    const int64_t cost = ceil_div(units, grid) * (band * q.sh + std::max<int64_t>(0, q.kh - q.sh));
    if (best_cost < 0 || cost < best_cost) {
      best_cost = cost;
      best_bands = b;
    }
  }
  a->c = q.c;
  a->cg = (int)cg;
  a->tile_ox = (int)tile_ox;
  a->tiles = (int)tiles;
  a->band_oy = (int)ceil_div(q.oh, best_bands);
  a->bands = (int)ceil_div(q.oh, a->band_oy);
  a->total_units = q.n * tiles * a->bands;
  a->pitch = (int)pitch;
  a->rows_per_stage = (int)rows_per_stage;
  a->stages = (int)stages;
  a->stage_bytes = (int)stage;
  a->slots = (int)slots;
  *smem = stages * stage;
  return AVGPOOL_SUCCESS;
}

// The plan: the ring (plan_tiles), then the kernel instantiation:
// compiled_for's width and slots, items per thread 1 or 2.
avgpool_status init(const Problem& q, const DeviceInfo& device, ConfigPtr* config, Decline* why) {
  // Bulk copies of pixel runs, 16-byte stores.
  return init_bulk_copy<NhwcStreamArgs>(kName, q, device, kThreads, 16, 16, config, why, plan_tiles, [&](auto pick) {
    using P = decltype(pick);
    const NhwcStreamArgs& a = pick.args();
    const Compiled compiled = compiled_for(a.kw, a.slots);
    auto use = [&](auto k, auto slots, auto items) {
      return pick.template use<nhwc_stream_kernel<typename P::T, decltype(k)::value, decltype(slots)::value,
                                                  decltype(items)::value, P::kPytorch>>("nhwc_stream_kernel",
                                                                                        a.total_units);
    };
    auto with_items = [&](auto items) {
      return dispatch_k<11, 5, 3>(compiled.width, [&](auto k) {
        constexpr int K = decltype(k)::value;
        if constexpr (K > 0)
          return use(k, std::integral_constant<int, (K == 5 ? 5 : 3)>{}, items);
        else if (compiled.slots == 1)
          return use(k, std::integral_constant<int, 1>{}, items);
        else if (compiled.slots == 3)
          return use(k, std::integral_constant<int, 3>{}, items);
        else
          return use(k, std::integral_constant<int, kMaxSlots>{}, items);
      });
    };
    using Two = std::integral_constant<int, 2>;
    return a.tile_ox * a.cg > kConsumers ? with_items(Two{}) : with_items(std::integral_constant<int, 1>{});
  });
}

}  // namespace

double nhwc_tile_stream_busy_consumers(const Problem& q) {
  const int64_t V = 16 / q.element_size;
  if (q.layout != AVGPOOL_LAYOUT_NHWC || q.c < V || q.c % V != 0 || q.ow < 1) return 0;
  const int64_t cg = q.c / V;
  const TileColumns t = tile_columns(q, cg, open_rows(q));
  return double(t.tile_ox * cg) / double(t.items_per_thread * kConsumers);
}

const Impl kNhwcTileStreamImpl = cuda_impl(kName, Direction::kForward, init);

}  // namespace avgpool::cuda
