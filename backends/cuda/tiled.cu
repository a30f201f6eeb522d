// cuda:nchw_tiled and cuda:nhwc_tiled - any stride, padding, ceil_mode,
// divisor: the tiled path for overlapping windows; any element-aligned
// pointers.
//
// Both layouts are one kernel over rows of elements: an NCHW row is w
// elements of one plane, an NHWC row w pixels of cs = C interleaved
// channels (w * C elements of one image), and a window's neighbouring
// columns lie cs elements apart. A work item is a tile of toh x tow output
// pixels (times cs channels) of one plane or image. Its input rectangle, in
// padded coordinates (rows from oy0 * sh - ph, pixels from ox0 * sw - pw,
// widened to 16-byte chunks of the row), is staged in shared memory with
// zeros wherever it lies outside the input (padding, ceil-mode overhang).
// Every window is then a full kh x kw block of the tile, and the inner loops
// have no bounds and no index math:
//  - fast numerics: vertical window sums of 16-byte column vectors, then
//    horizontal sums of those (separable: work per output ~ kh / V + kw),
//    which is what the NHWC kernel is for: pixels of any channel count,
//    which the NHWC vector kernels do not take, with windows read once per
//    tile instead of kh * kw loads per output;
//  - pytorch numerics: each window summed rows then columns, left to right,
//    into one accumulator. The padding zeros change nothing: the
//    accumulator starts at +0 and acc + (+0) == acc for every acc, so the
//    partial sums are PyTorch's, bitwise.
// The divisor of each output comes from window.h: per tile, one divisor
// factor per output row and column (axis_divisor_factor of axis_window), and
// divisor_from_factors per output. Windows are never empty (validation
// keeps padding <= kernel / 2 and ceil-mode windows starting in the input).
//
// Loads are software-pipelined: while a block computes one tile from shared
// memory, the 16-byte chunks of its next tile are already in flight into
// registers (kSlots per thread). Each chunk is loaded once per tile; halos
// shared by neighbouring tiles, which run at about the same time, come from
// L2. Where rows are 16-byte multiples, chunks inside the input are single
// 16-byte loads; the plan carries a second configuration of the same kernel
// that loads them element by element, for a src (or dst) not 16-byte
// aligned. Persistent grid, 64-bit plane offsets, any N * C.
#include <algorithm>

#include "common.cuh"
#include "impls.h"

namespace avgpool::cuda {
namespace {

constexpr const char* kNchwName = "cuda:nchw_tiled";
constexpr const char* kNhwcName = "cuda:nhwc_tiled";
constexpr int kThreads = 256;
constexpr int kSlots = 8;              // 16-byte chunks in flight per thread (a tile: at most 32 KB of input)
constexpr int64_t kMaxOutputs = 8192;  // per tile
constexpr int64_t kMaxSmem = 72 * 1024;

struct TileArgs : Geometry {
  bool aligned;  // rows and src 16-byte aligned: interior chunks are single 16-byte loads
  int64_t row;   // elements per input row: w * cs
  int cs;        // elements per pixel: 1 (NCHW), C (NHWC)
  int64_t items;
  int tiles_y, tiles_x;
  int toh, tow;   // output pixels per tile (times cs outputs)
  int tr;         // input rows per tile: (toh - 1) * sh + kh
  int nc;         // 16-byte chunks per tile row
  int nc_shift;   // 2^nc_shift >= nc threads side by side on a tile row's chunks; each
                  // thread keeps its chunk column and takes every (kThreads >> nc_shift)-th row
  int tx_shift;   // output pass: 2^tx_shift threads across a tile's columns
  int vs_offset;  // bytes: vertical sums (fast numerics), toh rows of nc * V accumulators
  int tab_offset; // bytes: divisor factors, int32 per output row and column of a tile
};

// One tile: plane (NHWC: image) p, output pixels [oy0, oy0 + noy) x
// [ox0, ox0 + nox). Tile row 0 is input row ys, tile column 0 is element xa
// of the row (a multiple of V); the first window starts at tile column
// xoff. Tile rows [r_lo, r_hi) lie in the input, and chunks [c_lo, c_hi) of
// those rows are whole 16-byte loads (empty unless aligned); everything
// else goes through load_chunk_edge.
struct Tile {
  int64_t p, oy0, ox0, ys, xa, base;  // base: element offset of (ys, xa) in src
  int noy, nox, xoff, r_lo, r_hi, c_lo, c_hi;
};

template <typename T>
__device__ __forceinline__ Tile decode_tile(const TileArgs& a, int64_t item) {
  constexpr int64_t V = vec_of<T>();
  Tile t;
  int64_t tx, ty;
  if (a.items <= INT32_MAX) {  // 32-bit division when it suffices
    const uint32_t i = (uint32_t)item, rest = i / (uint32_t)a.tiles_x;
    tx = i - rest * (uint32_t)a.tiles_x;
    t.p = rest / (uint32_t)a.tiles_y;
    ty = rest - (uint32_t)t.p * (uint32_t)a.tiles_y;
  } else {
    const int64_t rest = item / a.tiles_x;
    tx = item - rest * a.tiles_x;
    t.p = rest / a.tiles_y;
    ty = rest - t.p * a.tiles_y;
  }
  t.oy0 = ty * a.toh;
  t.ox0 = tx * a.tow;
  t.noy = (int)(a.oh - t.oy0 < a.toh ? a.oh - t.oy0 : a.toh);
  t.nox = (int)(a.ow - t.ox0 < a.tow ? a.ow - t.ox0 : a.tow);
  t.ys = t.oy0 * a.sh - a.ph;
  const int64_t xs = (t.ox0 * a.sw - a.pw) * a.cs;  // >= -pw * cs
  t.xa = xs >= 0 ? xs / V * V : -((-xs + V - 1) / V) * V;
  t.xoff = (int)(xs - t.xa);
  t.base = (t.p * a.h + t.ys) * a.row + t.xa;
  t.r_lo = (int)(t.ys < 0 ? -t.ys : 0);
  t.r_hi = (int)(a.h - t.ys < a.tr ? a.h - t.ys : a.tr);
  if (t.r_hi < t.r_lo) t.r_hi = t.r_lo;
  t.c_lo = (int)(t.xa < 0 ? -t.xa / V : 0);
  t.c_hi = a.aligned ? (int)((a.row - t.xa) / V < a.nc ? (a.row - t.xa) / V : a.nc) : 0;
  if (t.c_hi < t.c_lo) t.c_hi = t.c_lo;
  return t;
}

// Chunk (r, c) of the tile where it is not a whole in-bounds aligned 16 bytes:
// element by element, zeros outside the input. Returned as raw bits (uint4
// keeps the half types out of local memory). Edges only.
template <typename T>
__device__ __forceinline__ uint4 load_chunk_edge(const T* __restrict__ src, const TileArgs& a, const Tile& t,
                                              int r, int c) {
  constexpr int V = vec_of<T>();
  if (r < t.r_lo || r >= t.r_hi) return make_uint4(0, 0, 0, 0);
  using B = typename Elem<T>::bits_t;
  const int64_t x0 = t.xa + (int64_t)c * V;
  const T* row = src + t.base + (int64_t)r * a.row - t.xa;  // element 0 of input row ys + r
  auto bits = [&](int j) -> uint64_t {
    const int64_t x = x0 + j;
    return (x >= 0 && x < a.row) ? (uint64_t)__ldg(reinterpret_cast<const B*>(row + x)) : 0;
  };
  uint32_t word[4];
#pragma unroll
  for (int i = 0; i < 4; ++i) {
    if constexpr (sizeof(T) == 2) word[i] = (uint32_t)(bits(2 * i) | bits(2 * i + 1) << 16);
    else if constexpr (sizeof(T) == 4) word[i] = (uint32_t)bits(i);
    else word[i] = (uint32_t)(bits(i / 2) >> (32 * (i % 2)));
  }
  return make_uint4(word[0], word[1], word[2], word[3]);
}

// Thread (row ry, chunk column cx) loads chunk cx of tile rows ry, ry + RS,
// ry + 2 RS, ... (RS = kThreads >> nc_shift): its column, its pointer step
// and its shared-memory step are the same for every slot and every tile.
template <typename T>
__device__ __forceinline__ void prefetch(const TileArgs& a, const T* __restrict__ src, const Tile& t, int ry,
                                         int cx, uint4 (&buf)[kSlots]) {
  constexpr int V = vec_of<T>();
  const int RS = kThreads >> a.nc_shift;
  const bool fast_col = cx >= t.c_lo && cx < t.c_hi;
  const unsigned nr = (unsigned)(t.r_hi - t.r_lo);
  const T* p = src + (t.base + (int64_t)ry * a.row + cx * V);
  const int64_t step = (int64_t)RS * a.row;
#pragma unroll
  for (int k = 0; k < kSlots; ++k) {
    const int r = ry + k * RS;
    if (cx < a.nc && r < a.tr) {
      if (fast_col && (unsigned)(r - t.r_lo) < nr)
        buf[k] = __ldg(reinterpret_cast<const uint4*>(p));
      else
        buf[k] = load_chunk_edge(src, a, t, r, cx);
    }
    p += step;
  }
}

template <typename T>
__device__ __forceinline__ void stage(const TileArgs& a, const uint4 (&buf)[kSlots], int ry, int cx, T* tile) {
  constexpr int V = vec_of<T>();
  const int RS = kThreads >> a.nc_shift, pitch = a.nc * V;
  T* p = tile + ry * pitch + cx * V;
#pragma unroll
  for (int k = 0; k < kSlots; ++k) {
    if (cx < a.nc && ry + k * RS < a.tr) *reinterpret_cast<uint4*>(p) = buf[k];
    p += RS * pitch;
  }
}

// Two blocks per SM: measured faster than three (2026-11-29, H200: k5s1p2
// 1.93 vs 2.28 ms, k3s1p1 0.121 vs 0.124 ms), the extra registers remove
// rematerialised address arithmetic from the output loop.
template <typename T, int K, bool PYT, bool NHWC>
__global__ void __launch_bounds__(kThreads, 2)
generic_kernel(const T* __restrict__ src, T* __restrict__ dst, TileArgs a) {
  using E = Elem<T>;
  using A = typename E::acc_t;
  constexpr int V = vec_of<T>();
  extern __shared__ __align__(128) unsigned char smem[];
  T* tile = reinterpret_cast<T*>(smem);
  A* vs = reinterpret_cast<A*>(smem + a.vs_offset);
  int* row_factor = reinterpret_cast<int*>(smem + a.tab_offset);
  int* col_factor = row_factor + a.toh;
  const int tid = threadIdx.x;
  const int kh = K > 0 ? K : (int)a.kh, kw = K > 0 ? K : (int)a.kw;
  const int sh = (int)a.sh, pitch = a.nc * V;
  const int cs = NHWC ? a.cs : 1, ws = (int)a.sw * cs;  // elements between a pixel's neighbours, windows
  const int cx = tid & ((1 << a.nc_shift) - 1), ry = tid >> a.nc_shift;  // chunk column, first row
  const int RS = kThreads >> a.nc_shift;
  const int TX = 1 << a.tx_shift, TY = kThreads >> a.tx_shift;
  const int tx = tid & (TX - 1), ty = tid >> a.tx_shift;

  int64_t item = blockIdx.x;
  if (item >= a.items) return;
  uint4 buf[kSlots];
  Tile t = decode_tile<T>(a, item);
  prefetch(a, src, t, ry, cx, buf);
  for (; item < a.items; item += gridDim.x) {
    // ---- the tile into shared memory, its divisor factors beside it ----------------
    stage(a, buf, ry, cx, tile);
    for (int i = tid; i < t.noy + t.nox; i += kThreads) {
      if (i < t.noy)
        row_factor[i] = (int)axis_divisor_factor(axis_window(t.oy0 + i, a.h, a.kh, a.sh, a.ph), a.include_pad);
      else
        col_factor[i - t.noy] =
            (int)axis_divisor_factor(axis_window(t.ox0 + i - t.noy, a.w, a.kw, a.sw, a.pw), a.include_pad);
    }
    __syncthreads();

    // ---- the next tile's loads go out now and land while this one is computed ------
    const int64_t next = item + gridDim.x;
    Tile tn = t;
    if (next < a.items) {
      tn = decode_tile<T>(a, next);
      prefetch(a, src, tn, ry, cx, buf);
    }

    if constexpr (!PYT) {
      // vertical sums: vs[r][x] = sum of tile rows r * sh .. r * sh + kh - 1 at column x
      for (int r = ry; r < t.noy && cx < a.nc; r += RS) {
        const T* col = tile + r * sh * pitch + cx * V;
        A acc[V];
#pragma unroll
        for (int j = 0; j < V; ++j) acc[j] = A(0);
#pragma unroll(sizeof(T) == 2 ? 4 : 16)  // half types: 16 bytes hold 8 sums' inputs; limit live loads
        for (int i = 0; i < kh; ++i) {
          const Vec16<T> v = *reinterpret_cast<const Vec16<T>*>(col + i * pitch);
#pragma unroll
          for (int j = 0; j < V; ++j) acc[j] += lane_acc(v, j);
        }
        // as 16-byte stores (the compiler does not see the alignment of a struct store)
        A* o = vs + r * pitch + cx * V;
#pragma unroll
        for (int j = 0; j < V; j += 16 / (int)sizeof(A)) {
          if constexpr (sizeof(A) == 4) *reinterpret_cast<float4*>(o + j) = make_float4(acc[j], acc[j + 1], acc[j + 2], acc[j + 3]);
          else *reinterpret_cast<double2*>(o + j) = make_double2(acc[j], acc[j + 1]);
        }
      }
      __syncthreads();
    }

    // ---- outputs: each thread keeps one output column (pixel x, channel ch: its
    // window and address) and walks down the rows of the tile; TX threads side
    // by side on consecutive columns, so stores of a row are contiguous.
    const int64_t out_row = a.ow * cs, out_step = (int64_t)TY * out_row;
    for (int col = tx; col < t.nox * cs; col += TX) {
      const int x = NHWC ? col / cs : col, ch = col - x * cs;
      const int cf = col_factor[x];
      T* out = dst + (t.p * a.oh + t.oy0 + ty) * out_row + t.ox0 * cs + col;
      int last_rf = -1;  // fast numerics: the reciprocal of the divisor, while it stays the same
      A inv = A(0);
      for (int r = ty; r < t.noy; r += TY, out += out_step) {
        A s = A(0);
        if constexpr (!PYT) {
          const A* row = vs + r * pitch + t.xoff + x * ws + ch;
#pragma unroll
          for (int j = 0; j < kw; ++j) s += row[j * cs];
        } else {
          const T* win = tile + r * sh * pitch + t.xoff + x * ws + ch;
#pragma unroll
          for (int i = 0; i < kh; ++i) {
#pragma unroll
            for (int j = 0; j < kw; ++j) s += E::to_acc(win[i * pitch + j * cs]);
          }
        }
        const int rf = row_factor[r];
        if constexpr (PYT) {
          *out = E::from_acc(s / static_cast<A>(divisor_from_factors(rf, cf, a.divisor_override)));
        } else {
          // one rounding more than a division: within fast numerics' bound (1 ulp + the sum's)
          if (rf != last_rf) {
            inv = A(1) / static_cast<A>(divisor_from_factors(rf, cf, a.divisor_override));
            last_rf = rf;
          }
          *out = E::from_acc(s * inv);
        }
      }
    }
    __syncthreads();  // tile, vs and tables are rewritten for the next tile
    t = tn;
  }
}

// Elements per pixel in a row: 1 in NCHW, the channels in NHWC.
int64_t pixel_elements(const Problem& q) { return q.layout == AVGPOOL_LAYOUT_NHWC ? q.c : 1; }

// Tile shape for q. Candidate widths: for each power of two P (threads side
// by side on a row's chunks), the widest tile whose rows fit in P chunks; the
// height is what kSlots rows per thread allow (at most kMaxOutputs outputs),
// shrunk until shared memory fits. Score: outputs per thread-slot (idle lanes
// and rows count as cost); ties go to more outputs. false when not even one
// output fits.
bool choose_tile(const Problem& q, TileArgs* a, int64_t* smem_bytes) {
  const bool pyt = q.numerics == AVGPOOL_NUMERICS_PYTORCH;
  const int64_t es = q.element_size, acc = q.dtype == AVGPOOL_DTYPE_F64 ? 8 : 4, V = 16 / es;
  const int64_t cs = pixel_elements(q);
  double best_score = 0;
  int64_t best_outputs = 0;
  bool found = false;
  for (int shift = 0; (1 << shift) <= kThreads; ++shift) {
    const int64_t P = int64_t(1) << shift, RS = kThreads >> shift;
    const int64_t room = (P * V - (V - 1)) / cs - q.kw;  // pixels after the first window
    if (room < 0) continue;
    const int64_t tow = std::min<int64_t>(q.ow, room / q.sw + 1);
    const int64_t nc = ceil_div((V - 1) + ((tow - 1) * q.sw + q.kw) * cs, V);
    const int64_t tr_max = RS * kSlots;
    if (q.kh > tr_max) continue;
    int64_t toh = std::min<int64_t>({q.oh, (tr_max - q.kh) / q.sh + 1, std::max<int64_t>(1, kMaxOutputs / (tow * cs))});
    for (; toh >= 1; toh = toh * 3 / 4) {  // shrink until shared memory fits
      const int64_t tr = (toh - 1) * q.sh + q.kh;
      const int64_t tile = tr * nc * 16, vs = pyt ? 0 : toh * nc * V * acc, tab = 4 * (toh + tow);
      const int64_t smem = (tile + 31) / 32 * 32 + (vs + 15) / 16 * 16 + tab;
      if (smem <= kMaxSmem) {
        const int64_t outputs = toh * tow * cs;
        const double score = (double)outputs / (double)(P * ceil_div(tr, RS) * RS);
        if (!found || score > best_score * 1.01 || (score > best_score * 0.99 && outputs > best_outputs)) {
          found = true;
          best_score = score;
          best_outputs = outputs;
          a->toh = (int)toh; a->tow = (int)tow; a->tr = (int)tr; a->nc = (int)nc; a->nc_shift = shift;
          a->vs_offset = (int)((tile + 31) / 32 * 32);
          a->tab_offset = (int)(a->vs_offset + (vs + 15) / 16 * 16);
          *smem_bytes = smem;
        }
        break;
      }
      if (toh == 1) break;
    }
  }
  return found;
}

// Plans the tiles for q (in the implementation's layout) on device into a,
// or declines.
avgpool_status plan_tiles(const Problem& q, const DeviceInfo& device, avgpool_layout layout, TileArgs* a,
                          int64_t* smem, Decline* why) {
  const char* name = layout == AVGPOOL_LAYOUT_NHWC ? kNhwcName : kNchwName;
  if (q.layout != layout)
    return decline(why, AVGPOOL_ERROR_UNSUPPORTED, "%s is %s only", name,
                   layout == AVGPOOL_LAYOUT_NHWC ? "NHWC" : "NCHW");
  // int32 tile and table arithmetic; an NHWC row's element index in int32 too
  if (!axes_fit_int32(q) || q.w * pixel_elements(q) > INT32_MAX) return decline_axes_int32(name, why);
  if (!choose_tile(q, a, smem))
    return decline(why, AVGPOOL_ERROR_UNSUPPORTED,
                   "%s: a %lldx%lld window%s does not fit in a shared-memory tile (cuda:any_direct takes it)", name,
                   (long long)q.kh, (long long)q.kw, layout == AVGPOOL_LAYOUT_NHWC ? " of the pixel's channels" : "");
  if (*smem > device.smem_block)
    return decline(why, AVGPOOL_ERROR_UNSUPPORTED,
                   "%s: a tile of %lld bytes exceeds device %d's shared memory (%lld)", name,
                   (long long)*smem, device.ordinal, (long long)device.smem_block);
  a->cs = (int)pixel_elements(q);
  a->row = q.w * a->cs;
  a->aligned = (a->row * q.element_size) % 16 == 0;  // with a 16-byte-aligned src (vec_align)
  a->tiles_y = (int)ceil_div(q.oh, a->toh);
  a->tiles_x = (int)ceil_div(q.ow, a->tow);
  a->items = (layout == AVGPOOL_LAYOUT_NHWC ? q.n : q.planes()) * a->tiles_y * a->tiles_x;
  a->tx_shift = 5;  // 32 threads across the output columns, up to 256 (a power of two >= tow * cs)
  while ((1 << a->tx_shift) < a->tow * a->cs && (1 << a->tx_shift) < kThreads) ++a->tx_shift;
  return AVGPOOL_SUCCESS;
}

// The kernel instantiation: NCHW with compile-time square windows 2, 3, 5, 7
// and 11 (the others run-time); NHWC run-time windows only (its inner loops
// step by the channel count, which is run-time anyway).
template <typename T, bool PYT, bool NHWC>
avgpool_status choose_kernel(KernelConfig<TileArgs>* c, int64_t smem, const DeviceInfo& device, Decline* why) {
  const TileArgs& a = c->args;
  if constexpr (NHWC) {
    return use_kernel<TileArgs, T, generic_kernel<T, 0, PYT, true>>(c, "generic_kernel", kThreads, smem,
                                                                    GridShape{a.items, true}, device, why);
  } else {
    return dispatch_k<2, 3, 5, 7, 11>(a.kh == a.kw ? a.kh : 0, [&](auto k) {
      return use_kernel<TileArgs, T, generic_kernel<T, decltype(k)::value, PYT, false>>(
          c, "generic_kernel", kThreads, smem, GridShape{a.items, true}, device, why);
    });
  }
}

template <avgpool_layout L>
avgpool_status init(const Problem& q, const DeviceInfo& device, ConfigPtr* config, Decline* why) {
  constexpr bool kNhwc = L == AVGPOOL_LAYOUT_NHWC;
  auto c = new_config<TileArgs>(q, device);
  int64_t smem = 0;
  if (plan_tiles(q, device, L, &c->args, &smem, why) != AVGPOOL_SUCCESS) return why->status;
  auto choose = [&](KernelConfig<TileArgs>* k) {
    return for_problem_types(q, [&](auto zero, auto pyt) {
      return choose_kernel<decltype(zero), decltype(pyt)::value, kNhwc>(k, smem, device, why);
    });
  };
  avgpool_status s = choose(c.get());
  if (s != AVGPOOL_SUCCESS) return s;
  if (c->args.aligned) {
    // The same tiles, every chunk loaded element by element.
    auto unaligned = new_config<TileArgs>(q, device);
    unaligned->args = c->args;
    unaligned->args.aligned = false;
    if ((s = choose(unaligned.get())) != AVGPOOL_SUCCESS) return s;
    c->vec_align = 16;  // interior chunks are 16-byte loads from src
    c->unaligned = std::move(unaligned);
  }
  *config = std::move(c);
  return AVGPOOL_SUCCESS;
}

}  // namespace

TiledShape tiled_shape(const Problem& q, const DeviceInfo& device) {
  TileArgs a;
  int64_t smem = 0;
  Decline why;
  if (plan_tiles(q, device, q.layout, &a, &smem, &why) != AVGPOOL_SUCCESS) return {};
  const int64_t outputs = (int64_t)a.toh * a.tow * a.cs;
  const double staged_per_output = double(a.tr) * a.nc * (16 / q.element_size) / double(outputs);
  const double window = double(std::min(q.kh, q.h)) * double(std::min(q.kw, q.w));
  return {outputs, window / staged_per_output};
}

const Impl kNchwTiledImpl = cuda_impl(kNchwName, Direction::kForward, init<AVGPOOL_LAYOUT_NCHW>);
const Impl kNhwcTiledImpl = cuda_impl(kNhwcName, Direction::kForward, init<AVGPOOL_LAYOUT_NHWC>);

}  // namespace avgpool::cuda
