// cuda:nchw_row_bulk - NCHW, any stride (stride == kernel and overlapping),
// padding, ceil_mode, divisor, whenever a window's full input rows fit twice
// in shared memory (W up to ~4K f32 for k11); small planes several at a time.
//
// In NCHW the input rows under a group of output rows are one contiguous
// byte range (and whole small planes are contiguous too). So a work item is
// "R output rows of one plane" (or "P whole planes" when planes are small),
// and its input arrives with ONE bulk asynchronous copy (cp.async.bulk, the
// Hopper copy engine) into a shared-memory stage, completing on an mbarrier.
// A producer warp keeps S stages in flight (no registers held by loads,
// unlike a register-staged kernel); 8 consumer warps share each stage's
// work element by element (flattened loops over all 256 threads):
//  - fast numerics: vertical window sums per input column (16-byte shared
//    loads when aligned), then horizontal sums of those: work per output
//    ~ kh * W / ow + kw (separable);
//  - pytorch numerics: each window summed rows then columns, left to right,
//    into one accumulator: PyTorch's order, bitwise.
// Items are handed out grid-stride over a persistent grid, consecutive items
// being neighbouring row groups: overlapping rows are re-read from L2.
// Unaligned item boundaries: the copy engine moves the 16-byte-aligned
// interior; the producer lanes load the few head/tail elements themselves.
#include <algorithm>

#include "bulk_ring.cuh"
#include "common.cuh"
#include "impls.h"

namespace avgpool::cuda {
namespace {

constexpr int kMaxStages = 4;

constexpr const char* kName = "cuda:nchw_row_bulk";

struct RowsArgs : Geometry {
  int64_t items, row_groups;  // items = plane_groups * row_groups
  int64_t vs_pitch;           // row pitch of the vertical-sum buffer (elements): w
  int64_t r_rows;             // output rows per item (P == 1)
  int64_t p_planes;           // planes per item (> 1 only when whole planes fit)
  int stages;
  int stage_bytes;            // per stage, 16-byte multiple, incl. 16 bytes of slack
  int vs_offset;              // bytes: start of the vertical-sum buffer (fast)
  int tab_offset;             // bytes: window tables (3 x int32 per output row and column)
  bool tables;                // oh, ow small enough for the tables
  bool separable;             // fast numerics: vertical then horizontal sums (else direct sums)
};

// [[maybe_unused]]: below sm_90 the kernel body is a trap (bulk_copy.cuh).
[[maybe_unused]] __device__ __forceinline__ void consumers_sync() {
  asm volatile("bar.sync 1, %0;" ::"n"(kConsumers) : "memory");
}

// The input range of an item: planes [p0, p0 + np), input rows [r0, r1) of
// each (all rows when whole planes), output rows [oy0, oy0 + noy).
struct Item {
  int64_t p0, r0, r1, oy0;
  int np, noy;
  int64_t first, count;  // elements of src: one contiguous range
};

template <typename T>
__device__ __forceinline__ Item decode(const RowsArgs& a, int64_t item) {
  Item it;
  const int64_t pg = item / a.row_groups, rg = item - pg * a.row_groups;
  it.p0 = pg * a.p_planes;
  it.np = (int)(a.planes - it.p0 < a.p_planes ? a.planes - it.p0 : a.p_planes);
  it.oy0 = rg * a.r_rows;
  it.noy = (int)(a.oh - it.oy0 < a.r_rows ? a.oh - it.oy0 : a.r_rows);
  if (a.p_planes > 1) {  // whole planes
    it.r0 = 0;
    it.r1 = a.h;
    it.first = it.p0 * a.h * a.w;
    it.count = (int64_t)it.np * a.h * a.w;
  } else {
    it.r0 = axis_window(it.oy0, a.h, a.kh, a.sh, a.ph).begin;
    it.r1 = axis_window(it.oy0 + it.noy - 1, a.h, a.kh, a.sh, a.ph).end;
    it.first = (it.p0 * a.h + it.r0) * a.w;
    it.count = (it.r1 - it.r0) * a.w;
  }
  return it;
}

// K: the window's size when square and one of dispatch_k's (else 0, run-time
// loops). KW: a compile-time bound on its width (for_upto) for the column
// loops: K, or with_width_bound's for the other windows summed directly,
// whose rows would otherwise each be a run-time loop. Forced on 48 NCHW
// configurations with other windows (H200, 2026-12-03, device time, best of
// two): pytorch numerics 1.30x faster in geomean (0.96-1.93x;
// 3508x31x141x9 k10x6 s10x6 f64 0.82 -> 0.42 ms, PyTorch 0.49), fast
// numerics (where summed directly) 1.09x (0.95-2.00x).
template <typename T, int K, bool PYT, int KW = K>
__global__ void __launch_bounds__(kThreads, 1)
nchw_rows_kernel(const T* __restrict__ src, T* __restrict__ dst, RowsArgs a) {
#if !AVGPOOL_BULK_COPY_DEVICE
  __trap();  // never launched below sm_90 (bulk_copy.cuh)
#else
  const int64_t kh = K > 0 ? K : a.kh, kw = K > 0 ? K : a.kw;
  using E = Elem<T>;
  using A = typename E::acc_t;
  constexpr int V = vec_of<T>();
  // Every producer lane arrives on full[s]: each stores the head and tail
  // elements it loaded itself.
  StageRing<kMaxStages> ring = block_ring<kMaxStages>(a.stages, a.stage_bytes, kConsumers, 32);
  unsigned char* smem = ring.base;
  const int tid = threadIdx.x;
  const int warp = tid / 32, lane = tid % 32;

  if (warp == kConsumerWarps) {
    // ---- producer warp -----------------------------------------------------------
    for (int64_t item = blockIdx.x; item < a.items; item += gridDim.x, ring.advance()) {
      ring.wait_free();
      const Item it = decode<T>(a, item);
      const char* g0 = reinterpret_cast<const char*>(src + it.first);
      const char* g1 = reinterpret_cast<const char*>(src + it.first + it.count);
      const uintptr_t mis = (uintptr_t)g0 & 15;
      char* t = reinterpret_cast<char*>(ring.stage() + mis);  // element 0 of the item
      const char* ia = reinterpret_cast<const char*>(((uintptr_t)g0 + 15) & ~(uintptr_t)15);
      const char* ib = reinterpret_cast<const char*>((uintptr_t)g1 & ~(uintptr_t)15);
      if (ib <= ia) ia = ib = g1;  // no aligned interior: every element by hand
      const int64_t head = (ia - g0) / (int64_t)sizeof(T), tail = (g1 - ib) / (int64_t)sizeof(T);
      const int64_t tail0 = (ib - g0) / (int64_t)sizeof(T);
      for (int64_t i = lane; i < head + tail; i += 32) {
        const int64_t e = i < head ? i : tail0 + (i - head);
        reinterpret_cast<T*>(t)[e] = load1<true>(src + it.first + e);
      }
      __syncwarp();
      if (lane == 0) {
        const uint32_t bytes = (uint32_t)(ib - ia);
        if (bytes > 0) {
          asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
          mbar_arrive_expect_tx(ring.full_bar(), bytes);
          bulk_copy_g2s(t + (ia - g0), ia, bytes, ring.full_bar());
        } else {
          mbar_arrive(ring.full_bar());
        }
      } else {
        mbar_arrive(ring.full_bar());
      }
    }
    return;
  }

  // ---- consumer warps: all 256 threads share each pass (flattened loops) -----------
  A* vs = reinterpret_cast<A*>(smem + a.vs_offset);
  // Window tables, filled once per block through window.h (axis_window): int32
  // begin, count and padded length per output row and column.
  int* tab = reinterpret_cast<int*>(smem + a.tab_offset);
  int *rb = tab, *rn = tab + a.oh, *rp = tab + 2 * a.oh;
  int *cb = tab + 3 * a.oh, *cn = cb + a.ow, *cp = cb + 2 * a.ow;
  if (a.tables) {
    for (int64_t i = tid; i < a.oh + a.ow; i += kConsumers) {
      if (i < a.oh) {
        const AxisWindow w = axis_window(i, a.h, kh, a.sh, a.ph);
        rb[i] = (int)w.begin; rn[i] = (int)(w.end - w.begin); rp[i] = (int)w.padded_len;
      } else {
        const int64_t j = i - a.oh;
        const AxisWindow w = axis_window(j, a.w, kw, a.sw, a.pw);
        cb[j] = (int)w.begin; cn[j] = (int)(w.end - w.begin); cp[j] = (int)w.padded_len;
      }
    }
    consumers_sync();
  }
  auto row_win = [&](int64_t oy) -> AxisWindow {
    if (a.tables) return AxisWindow{rb[oy], (int64_t)rb[oy] + rn[oy], rp[oy]};
    return axis_window(oy, a.h, kh, a.sh, a.ph);
  };
  auto col_win = [&](int64_t ox) -> AxisWindow {
    if (a.tables) return AxisWindow{cb[ox], (int64_t)cb[ox] + cn[ox], cp[ox]};
    return axis_window(ox, a.w, kw, a.sw, a.pw);
  };

  // The consumers share an item's outputs element by element: start_row(pr,
  // p, r) when a thread moves to output row r of the item's plane p (pair
  // pr), then output(ox) for each of its outputs in that row.
  auto for_each_output = [&](int rows_out, int noy, auto&& start_row, auto&& output) {
    const int now = (int)a.ow;
    const int total = rows_out * now;
    const int oq = kConsumers / now, orr = kConsumers - oq * now;
    int opr = tid / now, ox = tid - opr * now, ocur = -1;
    for (int e = tid; e < total; e += kConsumers) {
      if (opr != ocur) {
        ocur = opr;
        const int p = opr / noy;
        start_row(opr, p, opr - p * noy);
      }
      output(ox);
      ox += orr;
      opr += oq;
      if (ox >= now) { ox -= now; ++opr; }
    }
  };

  for (int64_t item = blockIdx.x; item < a.items; item += gridDim.x, ring.advance()) {
    const unsigned char* stage = ring.acquire();
    const Item it = decode<T>(a, item);
    const uintptr_t mis = (uintptr_t)(src + it.first) & 15;
    const int64_t P = a.w, VP = a.vs_pitch;
    const T* t = reinterpret_cast<const T*>(stage + mis);
    const int64_t plane_rows = it.r1 - it.r0;  // rows per plane in the stage
    const int nrows_out = it.np * it.noy;      // (plane, output row) pairs

    if (!PYT && a.separable) {
      // vertical sums: vs[(p, r)][x] over the window rows of output row r
      const bool vec = mis == 0 && (P * (int64_t)sizeof(T)) % 16 == 0;
      const int ncv = (int)(vec ? P / V : P);  // column groups per row
      const int total = nrows_out * ncv;
      const int dq = kConsumers / ncv, dr = kConsumers - dq * ncv;
      int pr = tid / ncv, xg = tid - pr * ncv, cur = -1, n = 0;
      const T* col0 = t;
      A* out = vs;
      for (int e = tid; e < total; e += kConsumers) {
        if (pr != cur) {
          cur = pr;
          const int p = pr / it.noy, r = pr - p * it.noy;
          const AxisWindow rw = row_win(it.oy0 + r);
          col0 = t + (p * plane_rows + (rw.begin - it.r0)) * P;
          n = (int)(rw.end - rw.begin);
          out = vs + (int64_t)pr * VP;
        }
        if (vec) {
          const int64_t x = (int64_t)xg * V;
          A acc[V];
#pragma unroll
          for (int j = 0; j < V; ++j) acc[j] = A(0);
          for_upto<K>(n, [&](int y) {
            const Vec16<T> v = *reinterpret_cast<const Vec16<T>*>(col0 + y * P + x);
#pragma unroll
            for (int j = 0; j < V; ++j) acc[j] += lane_acc(v, j);
          });
          struct alignas(sizeof(A) * V) AccV { A v[V]; };
          AccV o;
#pragma unroll
          for (int j = 0; j < V; ++j) o.v[j] = acc[j];
          *reinterpret_cast<AccV*>(out + x) = o;
        } else {
          A acc = A(0);
          for_upto<K>(n, [&](int y) { acc += E::to_acc(col0[y * P + xg]); });
          out[xg] = acc;
        }
        xg += dr;
        pr += dq;
        if (xg >= ncv) { xg -= ncv; ++pr; }
      }
      // The stage is no longer needed: hand it back before the horizontal pass.
      ring.free();
      consumers_sync();
      AxisWindow rw{0, 0, 0};
      T* orow = dst;
      const A* vrow = vs;
      for_each_output(
          nrows_out, it.noy,
          [&](int opr, int p, int r) {
            const int64_t oy = it.oy0 + r;
            rw = row_win(oy);
            orow = dst + ((it.p0 + p) * a.oh + oy) * a.ow;
            vrow = vs + (int64_t)opr * VP;
          },
          [&](int ox) {
            const AxisWindow cw = col_win(ox);
            const A* c = vrow + cw.begin;
            const int nc = (int)(cw.end - cw.begin);
            A sum = A(0);
            for_upto<K>(nc, [&](int j) { sum += c[j]; });
            orow[ox] = E::from_acc(finish(sum, rw, cw, a.include_pad, a.divisor_override));
          });
      consumers_sync();  // vs is rewritten by the next item
    } else {
      AxisWindow rw{0, 0, 0};
      T* orow = dst;
      const T* rows = t;
      int nr = 0;
      for_each_output(
          nrows_out, it.noy,
          [&](int, int p, int r) {
            const int64_t oy = it.oy0 + r;
            rw = row_win(oy);
            orow = dst + ((it.p0 + p) * a.oh + oy) * a.ow;
            rows = t + (p * plane_rows + (rw.begin - it.r0)) * P;
            nr = (int)(rw.end - rw.begin);
          },
          [&](int ox) {
            const AxisWindow cw = col_win(ox);
            const int nc = (int)(cw.end - cw.begin);
            const T* c0 = rows + cw.begin;
            A sum = A(0);
            for (int y = 0; y < nr; ++y) {
              const T* c = c0 + y * P;
              for_upto<KW>(nc, [&](int j) { sum += E::to_acc(c[j]); });
            }
            orow[ox] = E::from_acc(finish(sum, rw, cw, a.include_pad, a.divisor_override));
          });
      ring.free();
    }
  }
#endif
}

// ---- host ----------------------------------------------------------------------------
avgpool_status plan_items(const Problem& q, const DeviceInfo& device, RowsArgs* a, int64_t* smem, Decline* why) {
  const bool pyt = q.numerics == AVGPOOL_NUMERICS_PYTORCH;
  const int64_t es = q.element_size, acc = q.dtype == AVGPOOL_DTYPE_F64 ? 8 : 4;
  const int64_t limit = device.smem_block - 1024;
  const int64_t row_bytes = q.w * es;
  const int64_t target = 16 * 1024;  // a stage's input when rows are narrow
  int64_t r_rows, p_planes, in_elems;
  if (q.h * row_bytes <= target / 2 && q.planes() > 1) {
    // whole planes per item, ~32 KB of them: fewer, fuller items measured
    // faster than 16 KB (2026-11-29, H200, global 7x7 on 256x2048 f32 planes:
    // 0.034 ms against 0.038; 48 and 64 KB: 0.036-0.037)
    r_rows = q.oh;
    p_planes = std::min<int64_t>(q.planes(), 2 * target / (q.h * row_bytes));
    in_elems = p_planes * q.h * q.w;
  } else {
    p_planes = 1;
    const int64_t rows_fit = target / row_bytes;
    r_rows = rows_fit > q.kh ? (rows_fit - q.kh) / q.sh + 1 : 1;
    r_rows = std::min<int64_t>(r_rows, q.oh);
    const int64_t rows = std::min<int64_t>(q.h, (r_rows - 1) * q.sh + q.kh);
    in_elems = rows * q.w;
  }
  const int64_t stage = (in_elems * es + 16 + 15) / 16 * 16;  // + misalignment slack
  const int64_t vs = pyt ? 0 : (p_planes * r_rows * q.w * acc + 15) / 16 * 16;
  const bool tables = q.oh <= 2048 && q.ow <= 2048 && q.kh < (1 << 30) && q.kw < (1 << 30);
  const int64_t tab = tables ? (3 * (q.oh + q.ow) * 4 + 15) / 16 * 16 : 0;
  // Stages: up to 4 while a block stays within ~110 KB (two or more blocks
  // per SM overlap one block's compute with another's); a large stage gets
  // two stages and a block to itself.
  const int64_t soft = 110 * 1024;
  int64_t stages = (soft - vs - tab) / std::max<int64_t>(stage, 1);
  if (stages < 2) stages = 2;
  if (stages > kMaxStages) stages = kMaxStages;
  if (stages * stage + vs + tab > limit || stage >= (int64_t(1) << 31)) {
    return decline(why, AVGPOOL_ERROR_UNSUPPORTED, "%s: %lld input rows of %lld bytes do not fit twice in shared memory",
                   kName, (long long)q.kh, (long long)row_bytes);
  }
  a->r_rows = r_rows;
  a->p_planes = p_planes;
  a->vs_pitch = q.w;
  a->stages = (int)stages;
  a->stage_bytes = (int)stage;
  a->vs_offset = (int)(stages * stage);
  a->tab_offset = (int)(stages * stage + vs);
  a->tables = tables;
  // Small windows, and items of whole small planes: summing each window
  // directly (PyTorch's order, also valid for fast numerics) costs fewer
  // instructions than the two passes (2026-11-29, H200: k3 s2 p1 ceil on
  // 112x112: 0.19 ms direct vs 0.22 separable; global 7x7 on 256x2048 planes:
  // 0.037 ms direct vs 0.058 separable).
  // Larger windows: vertical then horizontal sums where they take fewer
  // shared-memory loads per output row than the windows' own: kh * w / V +
  // ow * kw against ow * kh * kw, V the elements of the vertical pass's
  // 16-byte loads (rows a multiple of 16 bytes), else 1. Forced in fast
  // numerics on the 55 NCHW configurations of larger windows in items of
  // rows among 96 random ones and the sweeps' (H200, 2026-12-03, device
  // time, best of two; separable everywhere before): 1.18x faster in
  // geomean, worst 0.83x (1x22x119x601 k11x8 s11x8 f64); without the
  // vectors in the count, tall items of one output column with 16-byte
  // rows ran up to 2.2x slower (174x13x1226x8 k8 s8 f32).
  const int64_t vertical_vector = (q.w * es) % 16 == 0 ? 16 / es : 1;
  a->separable = !pyt && q.kh * q.kw > 9 && p_planes == 1 &&
                 q.kh * ceil_div(q.w, vertical_vector) + q.ow * q.kw < q.ow * q.kh * q.kw;
  a->row_groups = ceil_div(q.oh, r_rows);
  a->items = ceil_div(q.planes(), p_planes) * a->row_groups;
  *smem = stages * stage + vs + tab;
  return AVGPOOL_SUCCESS;
}

avgpool_status init(const Problem& q, const DeviceInfo& device, ConfigPtr* config, Decline* why) {
  if (q.layout != AVGPOOL_LAYOUT_NCHW) return decline(why, AVGPOOL_ERROR_UNSUPPORTED, "%s is NCHW only", kName);
  // The producer stores unaligned heads and tails itself: any pointer.
  return init_bulk_copy<RowsArgs>(kName, q, device, kThreads, 1, 1, config, why, plan_items, [&](auto pick) {
    using P = decltype(pick);
    using T = typename P::T;
    constexpr bool pyt = P::kPytorch;
    return dispatch_k<2, 3, 4, 5, 7, 11>(q.kh == q.kw ? q.kh : 0, [&](auto k) {
      constexpr int K = decltype(k)::value;
      if constexpr (K == 0) {
        if (pyt || !pick.args().separable)
          return with_width_bound(q.kw, [&](auto kw) {
            return pick.template use<nchw_rows_kernel<T, 0, pyt, decltype(kw)::value>>("nchw_rows_kernel",
                                                                                      pick.args().items);
          });
      }
      return pick.template use<nchw_rows_kernel<T, K, pyt>>("nchw_rows_kernel", pick.args().items);
    });
  });
}

}  // namespace

const Impl kNchwRowBulkImpl = cuda_impl(kName, Direction::kForward, init);

}  // namespace avgpool::cuda
