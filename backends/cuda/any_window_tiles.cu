// cuda:any_window_tiles - NCHW and NHWC, fast numerics, windows that are
// unions of large tiles: along each axis g = gcd(kernel, stride) (with a
// single output along an axis, g = kernel), and every window is a run of
// kernel / g tiles of g inputs on a grid that starts at the padded origin
// (tile t holds padded positions [t * g, (t + 1) * g), clipped to the input).
// k32 s16: 16 x 16 tiles, four per window; a (4096, 1) column over one
// plane: one 4096 x 1 tile per window.
//
// A block owns a band of output rows and a band of output columns of one
// plane (NCHW: an (n, c) plane; NHWC: an image, its channels interleaved:
// one "column" of a row is a pixel's c channels, so both layouts are rows of
// contiguous elements). It walks its band's tile rows in order. For each,
// the block reads the tile row's input rows once, with 16-byte loads where
// rows and src allow (thread rows, "slots", take interleaved input rows when
// the band is narrow; their partial sums meet in a fixed tree), and keeps
// the column sums in shared memory; the tile sums of that tile row go to a
// ring of kernel_h / g_h tile rows. When a tile row completes an output row,
// each output is the sum of its (kernel_h / g_h) x (kernel_w / g_w) tile
// sums, divided by the problem's divisor (window.h). Where tile rows are
// long (a (4096, 1) column: one tile row of 4096 input rows), a cluster of
// up to 8 blocks (sm_90) shares each band: each rank sums a share of every
// tile row's input rows, and rank 0 adds the ranks' column sums in rank
// order through distributed shared memory. Every input is read once per
// band (bands overlap by kernel - stride rows or columns), in a fixed
// order: the same bits on every run; no workspace, no atomics.
// Any element-aligned pointers (a scalar instantiation where rows or src are
// not 16-byte aligned); 64-bit offsets.
#include <algorithm>
#include <numeric>
#include <type_traits>

#include "common.cuh"
#include "impls.h"
#include "window_split.cuh"

namespace avgpool::cuda {
namespace {

namespace cg = cooperative_groups;

constexpr const char* kName = "cuda:any_window_tiles";
constexpr int kThreads = 256;
constexpr int kDepth = 8;  // loads in flight per thread
// Blocks per SM the registers are planned for. Four (64 registers, a few
// bytes spilled) for bands of short tile rows: with 96 registers two fitted,
// and the 512 planes of 8x64x512x512 k32 s16 ran in two waves (0.286 ms
// against 0.182). Three (80 registers, no spills) where a cluster splits
// long tile rows: the (4096, 1) bf16 column 0.0185 -> 0.0156 ms (H200,
// 2026-12-01; four blocks per SM there spilled in the load loop).
constexpr int kMinBlocksShort = 4;
constexpr int kMinBlocksLong = 3;

struct TilesArgs : Geometry {
  int64_t e;                   // elements per column: 1 (NCHW) or channels (NHWC)
  int64_t row_elems;           // w * e
  int64_t gh, gw;              // tile size along each axis
  int64_t kth, ktw, sth, stw;  // tiles per window and per stride along each axis
  int64_t br, bc;              // output rows and columns per band
  int64_t bands_y, bands_x, blocks;
  int64_t txb;                 // tile columns per band (at most)
  int cluster;                 // blocks (one cluster, sm_90) splitting each tile row's input rows
  int cs_offset, ts_offset;    // shared memory: partial sums, column sums, tile-sum ring (acc_t elements)
};

// Per-axis tiling: g, tiles per window, tiles per stride.
struct AxisTiles {
  int64_t g, kt, st;
};
AxisTiles axis_tiles(int64_t out, int64_t k, int64_t s) {
  const int64_t se = out == 1 ? k : s;
  const int64_t g = std::gcd(k, se);
  return AxisTiles{g, k / g, se / g};
}

// Adds rows p, p + step, ... (kDepth of them; ALL: every one, else the
// first n) to acc, element by element: kDepth loads in flight.
template <typename T, int V, bool ALL>
__device__ __forceinline__ void add_rows(const T* p, int64_t step, int64_t n,
                                         typename Elem<T>::acc_t (&acc)[V]) {
  using E = Elem<T>;
  if constexpr (V > 1) {
    Vec16<T> buf[kDepth];
#pragma unroll
    for (int d = 0; d < kDepth; ++d) buf[d] = ALL || d < n ? load16<true>(p + d * step) : zero16<T>();
#pragma unroll
    for (int d = 0; d < kDepth; ++d)
#pragma unroll
      for (int i = 0; i < V; ++i) acc[i] += lane_acc(buf[d], i);
  } else {
    T one[kDepth];
#pragma unroll
    for (int d = 0; d < kDepth; ++d) one[d] = ALL || d < n ? load1<true>(p + d * step) : T(0.0f);
#pragma unroll
    for (int d = 0; d < kDepth; ++d) acc[0] += E::to_acc(one[d]);
  }
}

// SPLIT: the ranks of a cluster split each tile row's input rows (the
// kernel without it keeps its registers for the rest).
template <typename T, int V, bool SPLIT>
__global__ void __launch_bounds__(kThreads, SPLIT ? kMinBlocksLong : kMinBlocksShort)
    tiles_kernel(const T* __restrict__ src, T* __restrict__ dst, TilesArgs a) {
  using E = Elem<T>;
  using A = typename E::acc_t;
  extern __shared__ __align__(16) unsigned char smem_raw[];
  A* const part = reinterpret_cast<A*>(smem_raw);  // kThreads * V
  A* const cs = part + a.cs_offset;                 // column sums of the band
  A* const ts = part + a.ts_offset;                 // kth tile rows x txb tiles x e
  const int t = threadIdx.x;
  const int64_t e = a.e, re = a.row_elems;
  const int64_t ts_pitch = a.txb * e;
  // The ranks of a cluster take the same bands; each reads a share of every
  // tile row's input rows.
  const int ranks = SPLIT ? a.cluster : 1;
  const int rank = SPLIT ? (int)(blockIdx.x % (unsigned)ranks) : 0;  // clusters are consecutive blocks along x
  for (int64_t b = blockIdx.x / ranks; b < a.blocks; b += gridDim.x / ranks) {
    const int64_t bx = b % a.bands_x, rest = b / a.bands_x;
    const int64_t by = rest % a.bands_y, plane = rest / a.bands_y;
    const int64_t oy0 = by * a.br, oy1 = min(oy0 + a.br, a.oh);
    const int64_t ox0 = bx * a.bc, ox1 = min(ox0 + a.bc, a.ow);
    // the band's tile columns and input columns (elements of a row)
    const int64_t tx_lo = ox0 * a.stw, tx_hi = (ox1 - 1) * a.stw + a.ktw;
    const int64_t x_lo = max((int64_t)0, tx_lo * a.gw - a.pw), x_hi = min(a.w, tx_hi * a.gw - a.pw);
    const int64_t e_lo = x_lo * e, e_hi = max(x_hi * e, e_lo);
    const int64_t v_lo = e_lo / V, v_hi = (e_hi + V - 1) / V, nv = v_hi - v_lo;
    // lanes over vectors, slots over input rows
    int lanes = 1;
    while (lanes < nv && lanes < kThreads) lanes <<= 1;
    const int slots = kThreads / lanes;
    const int lane = t % lanes, slot = t / lanes;
    const T* const plane_src = src + plane * a.h * re;
    const int64_t ty_lo = oy0 * a.sth, ty_hi = (oy1 - 1) * a.sth + a.kth;
    for (int64_t ty = ty_lo; ty < ty_hi; ++ty) {
      if (a.kth < a.sth && (ty - ty_lo) % a.sth >= a.kth) continue;  // between windows
      int64_t y_lo = max((int64_t)0, ty * a.gh - a.ph), y_hi = min(a.h, (ty + 1) * a.gh - a.ph);
      if constexpr (SPLIT) {  // this rank's share of the rows
        const int64_t share = (y_hi - y_lo + ranks - 1) / ranks;
        y_lo = min(y_hi, y_lo + rank * share);
        y_hi = min(y_hi, y_lo + share);
      }
      // 1. column sums of input rows [y_lo, y_hi), columns [e_lo, e_hi)
      for (int64_t v0 = v_lo; v0 < v_hi; v0 += lanes) {
        const int64_t v = v0 + lane;
        A acc[V];
#pragma unroll
        for (int i = 0; i < V; ++i) acc[i] = A(0);
        if (SPLIT && v < v_hi) {
          // Long rows: the slot's rows y_lo + slot, + slots, ... in whole
          // rounds of unpredicated loads by pointer steps, then one
          // predicated round (the (4096, 1) bf16 column: 0.0175 -> 0.0156
          // ms); the kernels of short tile rows keep the predicated rounds
          // below, which spill less at their 64 registers
          const int64_t step = (int64_t)slots * re;
          const T* p = plane_src + v * V + (y_lo + slot) * re;
          int64_t count = y_hi - y_lo > slot ? (y_hi - y_lo - slot + slots - 1) / slots : 0;
          for (; count >= kDepth; count -= kDepth, p += kDepth * step) add_rows<T, V, true>(p, step, kDepth, acc);
          if (count > 0) add_rows<T, V, false>(p, step, count, acc);
        } else if (!SPLIT && v < v_hi) {
          const T* p = plane_src + v * V;
          for (int64_t y = y_lo + slot; y < y_hi; y += (int64_t)slots * kDepth) {
            Vec16<T> buf[V == 1 ? 1 : kDepth];
            T one[kDepth];
            if constexpr (V > 1) {
#pragma unroll
              for (int d = 0; d < kDepth; ++d)
                buf[d] = y + (int64_t)d * slots < y_hi ? load16<true>(p + (y + (int64_t)d * slots) * re) : zero16<T>();
#pragma unroll
              for (int d = 0; d < kDepth; ++d)
#pragma unroll
                for (int i = 0; i < V; ++i) acc[i] += lane_acc(buf[d], i);
            } else {
#pragma unroll
              for (int d = 0; d < kDepth; ++d)
                one[d] = y + (int64_t)d * slots < y_hi ? load1<true>(p + (y + (int64_t)d * slots) * re) : T(0.0f);
#pragma unroll
              for (int d = 0; d < kDepth; ++d) acc[0] += E::to_acc(one[d]);
            }
          }
        }
        if (slots > 1) {
          // slots of one warp meet by shuffles, warps (or slots of a whole
          // warp or more) in shared memory, in a fixed order
          int groups = slots;
          if (lanes < 32) {
#pragma unroll
            for (int off = 16; off > 0; off >>= 1)
              if (off >= lanes)
#pragma unroll
                for (int i = 0; i < V; ++i) acc[i] += __shfl_down_sync(0xffffffffu, acc[i], off);
            groups = kThreads / 32;
          }
          const int group = lanes < 32 ? t / 32 : slot;
          if (lanes >= 32 || (t % 32) < lanes)
#pragma unroll
            for (int i = 0; i < V; ++i) part[(group * lanes + lane) * V + i] = acc[i];
          __syncthreads();
          for (int j = t; j < lanes * V; j += kThreads) {
            A s = part[j];
            for (int gi = 1; gi < groups; ++gi) s += part[gi * lanes * V + j];
            const int64_t el = (v0 + j / V) * V + j % V;
            if (el >= e_lo && el < e_hi) cs[el - e_lo] = s;
          }
          __syncthreads();  // part is reused by the next vectors
        } else if (v < v_hi) {
#pragma unroll
          for (int i = 0; i < V; ++i) {
            const int64_t el = v * V + i;
            if (el >= e_lo && el < e_hi) cs[el - e_lo] = acc[i];
          }
        }
      }
      __syncthreads();
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
      if (SPLIT) {
        // rank 0 adds the ranks' column sums in rank order (its own first);
        // the second barrier keeps them until it has; steps 2 and 3 are its
        // (plans split only where clusters run: sm_90 code on an sm_90 device)
        cg::cluster_group cluster = cg::this_cluster();
        cluster.sync();
        if (rank == 0)
          for (int64_t j = t; j < e_hi - e_lo; j += kThreads) {
            A s = cs[j];
            for (int k = 1; k < ranks; ++k) s += cluster.map_shared_rank(cs, (unsigned)k)[j];
            cs[j] = s;
          }
        cluster.sync();
        if (rank != 0) continue;
      }
#endif
      // 2. tile sums of this tile row
      A* const ring = ts + (ty % a.kth) * ts_pitch;
      for (int64_t j = t; j < (tx_hi - tx_lo) * e; j += kThreads) {
        const int64_t tx = tx_lo + j / e, ch = j % e;
        const int64_t xa = max(x_lo, tx * a.gw - a.pw), xb = min(x_hi, (tx + 1) * a.gw - a.pw);
        A s = 0;
        for (int64_t x = xa; x < xb; ++x) s += cs[(x - x_lo) * e + ch];
        ring[j] = s;
      }
      __syncthreads();
      // 3. the output row this tile row completes, if any
      const int64_t last = ty - a.kth + 1;
      if (last >= 0 && last % a.sth == 0 && last / a.sth >= oy0 && last / a.sth < oy1) {
        const int64_t oy = last / a.sth;
        const AxisWindow r = axis_window(oy, a.h, a.kh, a.sh, a.ph);
        for (int64_t j = t; j < (ox1 - ox0) * e; j += kThreads) {
          const int64_t ox = ox0 + j / e, ch = j % e;
          const int64_t tx0 = ox * a.stw - tx_lo;
          A s = 0;
          for (int64_t i = 0; i < a.kth; ++i) {
            const A* row = ts + ((oy * a.sth + i) % a.kth) * ts_pitch + tx0 * e + ch;
            for (int64_t k = 0; k < a.ktw; ++k) s += row[k * e];
          }
          const AxisWindow c = axis_window(ox, a.w, a.kw, a.sw, a.pw);
          dst[((plane * a.oh + oy) * a.ow + ox) * e + ch] = E::from_acc(finish(s, r, c, a.include_pad, a.divisor_override));
        }
      }
      // the next tile row's column sums and ring slot are written only after
      // the barriers of its step 1, which every thread reaches after step 3
    }
    __syncthreads();  // the next band's first writes
  }
}

// Shared memory (acc_t elements) of a band of bc output columns.
struct BandSmem {
  int64_t txb, cs, ts, total;
};
BandSmem band_smem(const TilesArgs& a, int64_t bc, int vec) {
  BandSmem m;
  m.txb = (std::min(bc, a.ow) - 1) * a.stw + a.ktw;
  m.cs = m.txb * a.gw * a.e + 2 * vec;  // + the vectors' overhang
  m.ts = a.kth * m.txb * a.e;
  m.total = (int64_t)kThreads * vec + m.cs + m.ts;
  return m;
}

avgpool_status init(const Problem& q, const DeviceInfo& device, ConfigPtr* config, Decline* why) {
  if (q.numerics != AVGPOOL_NUMERICS_FAST)
    return decline(why, AVGPOOL_ERROR_UNSUPPORTED, "%s takes fast numerics only (it adds tile sums)", kName);
  const AxisTiles ty = axis_tiles(q.oh, q.kh, q.sh), tx = axis_tiles(q.ow, q.kw, q.sw);
  return hand_over_vector_and_scalar<TilesArgs>(q, device, config, [&](KernelConfig<TilesArgs>* c, bool vectors) {
    TilesArgs& a = c->args;
    a.e = q.layout == AVGPOOL_LAYOUT_NHWC ? q.c : 1;
    a.planes = q.layout == AVGPOOL_LAYOUT_NHWC ? q.n : q.planes();
    a.row_elems = q.w * a.e;
    a.gh = ty.g; a.kth = ty.kt; a.sth = ty.st;
    a.gw = tx.g; a.ktw = tx.kt; a.stw = tx.st;
    const int64_t es = q.element_size;
    const int vec = vectors ? (int)(16 / es) : 1;
    if (vectors) {
      if ((a.row_elems * es) % 16 != 0) vectors = false;  // rows not 16-byte multiples: scalar only
      c->vec_align = vectors ? 16 : 1;
    }
    const int v = vectors ? vec : 1;
    const int64_t acc_size = q.element_size == 8 ? 8 : 4;
    const int64_t smem_cap = std::min<int64_t>(device.smem_block - 1024, 96 << 10);
    // Bands: the least time for the busiest SM, taken as the blocks it runs
    // in turn (ceil(blocks / (2 SMs)): two blocks keep 64 KB of loads in
    // flight, about what an SM's share of the bandwidth needs; with one
    // block per SM, 8x64x512x512 k32 s16 NHWC reached 0.48 of the copy
    // roofline) times the input rows one block reads (its halo rows
    // included; a cluster's ranks each read a share of every tile row) times
    // what one row segment costs: its 32-byte sectors (halo columns
    // included), but never less than 8 (256 bytes) where the rows are that
    // wide: narrower segments down long columns read slower than their
    // sectors say (a (4096, 1) bf16 column: 32-byte segments, 256 blocks,
    // 0.0144 ms; 256-byte segments split over clusters of 8, 256 blocks,
    // 0.0114). Ties go to more blocks, then to smaller clusters.
    double best = 0, best_blocks = 0;
    int64_t best_br = 0, best_bc = 0, best_cluster = 1;
    auto sizes = [](int64_t n) {
      std::vector<int64_t> v;
      for (int64_t s = 1; s < n; s *= 2) v.push_back(s);
      for (int64_t s = 3; s < n; s *= 2) v.push_back(s);
      v.push_back(n);
      return v;
    };
    const int64_t sms = device.sms > 0 ? device.sms : 1;
    const double row_sectors = (double)ceil_div(a.row_elems * es, 32);
    const double segment_floor = std::min(8.0, row_sectors);
    // A rank reads at least 64 rows of each tile row (the cluster barriers
    // cost about as much as a few rows' loads).
    const bool clusters = clusters_allowed((const void*)tiles_kernel<float, 4, true>, device);
    int64_t max_cluster = 1;
    while (clusters && max_cluster < kMaxCluster && a.gh >= 64 * (2 * max_cluster)) max_cluster *= 2;
    for (int64_t bc : sizes(q.ow)) {
      const BandSmem m = band_smem(a, bc, v);
      if (m.total * acc_size > smem_cap) continue;
      const int64_t nbx = ceil_div(q.ow, bc);
      // sectors of a band's row segment, averaged over the bands
      double sectors = 0;
      for (int64_t bx = 0; bx < nbx; ++bx) {
        const int64_t ox0 = bx * bc, ox1 = std::min(ox0 + bc, q.ow);
        const int64_t xa = std::max<int64_t>(0, ox0 * a.stw * a.gw - q.pw);
        const int64_t xb = std::min(q.w, ((ox1 - 1) * a.stw + a.ktw) * a.gw - q.pw);
        if (xb > xa) sectors += std::max(segment_floor, (double)(ceil_div(xb * a.e * es, 32) - (xa * a.e * es) / 32));
      }
      sectors /= (double)nbx;
      for (int64_t br : sizes(q.oh)) {
        const int64_t nby = ceil_div(q.oh, br);
        const int64_t tile_rows = (std::min(br, q.oh) - 1) * a.sth + a.kth;
        for (int64_t cl = 1; cl <= max_cluster; cl *= 2) {
          const int64_t rows = std::min(q.h, tile_rows * ceil_div(a.gh, cl));
          const double blocks = (double)a.planes * nby * nbx * cl;
          const double cost = std::ceil(blocks / (2.0 * (double)sms)) * (double)rows * sectors;
          if (best_br == 0 || cost < best * 0.999 || (cost < best * 1.001 && blocks > best_blocks)) {
            best = cost;
            best_blocks = blocks;
            best_br = br;
            best_bc = bc;
            best_cluster = cl;
          }
        }
      }
    }
    if (best_br == 0)
      return decline(why, AVGPOOL_ERROR_UNSUPPORTED,
                     "%s: %lld x %lld tiles of %lld-element columns need more shared memory than %lld bytes", kName,
                     (long long)(tx.kt * ty.kt), (long long)tx.g, (long long)a.e, (long long)smem_cap);
    a.br = best_br;
    a.bc = best_bc;
    a.cluster = (int)best_cluster;
    a.bands_y = ceil_div(q.oh, a.br);
    a.bands_x = ceil_div(q.ow, a.bc);
    a.blocks = a.planes * a.bands_y * a.bands_x;
    const BandSmem m = band_smem(a, a.bc, v);
    a.txb = m.txb;
    a.cs_offset = kThreads * v;
    a.ts_offset = (int)(a.cs_offset + m.cs);
    const int64_t smem = m.total * acc_size;
    return dispatch_dtype_cuda(q.dtype, [&](auto zero) {
      using T = decltype(zero);
      const GridShape grid{a.blocks, false, (int64_t(1) << 20) / kMaxCluster};
      auto use = [&](auto vec, auto split) {
        constexpr int V = decltype(vec)::value;
        constexpr bool B = decltype(split)::value;
        const avgpool_status st = use_kernel<TilesArgs, T, tiles_kernel<T, V, B>>(
            c, V > 1 ? "tiles_kernel<vec>" : "tiles_kernel<scalar>", kThreads, smem, grid, device, why);
        c->launch = launch_clustered<TilesArgs, T, tiles_kernel<T, V, B>>;
        return st;
      };
      using Short = std::false_type;
      using Long = std::true_type;
      using Vec = std::integral_constant<int, 16 / sizeof(T)>;
      using One = std::integral_constant<int, 1>;
      const bool long_rows = a.cluster > 1;
      const avgpool_status st = vectors ? (long_rows ? use(Vec{}, Long{}) : use(Vec{}, Short{}))
                                        : (long_rows ? use(One{}, Long{}) : use(One{}, Short{}));
      c->grid *= (unsigned)a.cluster;
      return st;
    });
  });
}

}  // namespace

int64_t any_window_tiles_tile_inputs(const Problem& q) {
  return axis_tiles(q.oh, q.kh, q.sh).g * axis_tiles(q.ow, q.kw, q.sw).g;
}

const Impl kAnyWindowTilesImpl = cuda_impl(kName, Direction::kForward, init);

}  // namespace avgpool::cuda
