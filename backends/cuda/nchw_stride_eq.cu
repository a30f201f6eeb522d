// cuda:nchw_stride_eq - NCHW, stride == kernel (non-overlapping windows),
// any padding, ceil_mode, divisor and any row width (rows wider than a block
// are cut into column chunks).
//
// One block per (plane, output row, column chunk); a chunk is the whole row
// when it fits in one block (it does for W <= 2048 f32 / 4096 f16). Phase 1:
// each thread owns one 16-byte column vector of the chunk and issues all of
// its K row loads at once (streaming, evict-first), so a block has
// K * threads * 16 bytes in flight. Phase 2: each output sums its window from
// shared memory and divides once.
//  - fast numerics: phase 1 keeps column sums in registers and stores only
//    them; phase 2 sums kw column sums (float accumulator; any order is
//    within the float32 summation bound).
//  - pytorch numerics: phase 1 stores the raw K-row tile; phase 2 sums each
//    window rows then columns, left to right, into one accumulator: PyTorch's
//    order, bitwise.
// A scalar path (same mapping, one element per load) serves rows whose pitch
// or base is not 16-byte aligned. K (= kh = kw) is a template parameter for
// 2, 3, 4, 5, 7, 8, 11 and runtime otherwise. 64-bit plane offsets; the grid
// is 1-D and grid-stride (any N*C).
#include <algorithm>

#include "common.cuh"
#include "impls.h"

namespace avgpool::cuda {
namespace {

constexpr const char* kName = "cuda:nchw_stride_eq";

struct SeArgs : Geometry {
  int64_t items;                 // planes * oh * chunks
  int chunks, oxc;               // chunks per output row, outputs per chunk
  int pitch;                     // shared-memory row pitch (elements) = threads * V
  bool vec_ok;                   // 16-byte row loads (rows and src 16-byte aligned)
};

constexpr int kMaxThreads = 512;

template <typename T, int K, bool PYT, int MINB>
__global__ void __launch_bounds__(kMaxThreads, MINB)
stride_eq_kernel(const T* __restrict__ src, T* __restrict__ dst, SeArgs a) {
  using E = Elem<T>;
  using A = typename E::acc_t;
  constexpr int V = vec_of<T>();
  constexpr int KR = K > 0 ? K : 4;  // rows in flight per step (runtime K: batches of 4)
  extern __shared__ __align__(16) unsigned char smem_raw[];
  A* colsum = reinterpret_cast<A*>(smem_raw);  // fast: [pitch]
  T* tile = reinterpret_cast<T*>(smem_raw);    // pytorch: [kh][pitch]
  const int kh = K > 0 ? K : (int)a.kh;
  const int kw = K > 0 ? K : (int)a.kw;
  const int tid = threadIdx.x;

  for (int64_t item = blockIdx.x; item < a.items; item += gridDim.x) {
    const int chunk = (int)(item % a.chunks);
    const int64_t rest = item / a.chunks;
    const int64_t oy = rest % a.oh, plane = rest / a.oh;
    const int64_t ox0 = (int64_t)chunk * a.oxc;
    const int64_t ox1 = ox0 + a.oxc < a.ow ? ox0 + a.oxc : a.ow;
    const AxisWindow rw = axis_window(oy, a.h, kh, kh, a.ph);
    const int64_t cx0 = axis_window(ox0, a.w, kw, kw, a.pw).begin;
    const int64_t cx1 = axis_window(ox1 - 1, a.w, kw, kw, a.pw).end;
    const int64_t xa = a.vec_ok ? cx0 / V * V : cx0;  // global column of shared column 0
    int64_t xb = a.vec_ok ? (cx1 + V - 1) / V * V : cx1;
    if (xb > a.w) xb = a.w;
    const int ncols = (int)(xb - xa);
    const int nrows = (int)(rw.end - rw.begin);
    const T* base = src + (plane * a.h + rw.begin) * a.w + xa;  // 64-bit

    // ---- phase 1: K rows of this thread's columns -> shared memory ----------
    if (a.vec_ok) {
      const int col = tid * V;
      if (col < ncols) {
        const T* p = base + col;
        A cs[V];
#pragma unroll
        for (int j = 0; j < V; ++j) cs[j] = A(0);
        for (int y0 = 0; y0 < nrows; y0 += KR) {
          // all KR loads in flight before the first is used
          Vec16<T> r[KR];
          for_upto<KR>(nrows - y0, [&](int u) { r[u] = load16<true>(p + (int64_t)(y0 + u) * a.w); });
          for_upto<KR>(nrows - y0, [&](int u) {
            if constexpr (PYT) {
              *reinterpret_cast<Vec16<T>*>(tile + (y0 + u) * a.pitch + col) = r[u];
            } else {
#pragma unroll
              for (int j = 0; j < V; ++j) cs[j] += lane_acc(r[u], j);
            }
          });
          if (K > 0) break;  // compile-time K: one step covers every row
        }
        if constexpr (!PYT) {
#pragma unroll
          for (int j = 0; j < V; ++j) colsum[col + j] = cs[j];
        }
      }
    } else {
#pragma unroll 1
      for (int j = 0; j < V; ++j) {
        const int col = tid + j * blockDim.x;
        if (col >= ncols) break;
        const T* p = base + col;
        A cs = A(0);
        for (int y0 = 0; y0 < nrows; y0 += KR) {
          T r[KR];
          for_upto<KR>(nrows - y0, [&](int u) { r[u] = load1<true>(p + (int64_t)(y0 + u) * a.w); });
          for_upto<KR>(nrows - y0, [&](int u) {
            if constexpr (PYT) tile[(y0 + u) * a.pitch + col] = r[u];
            else cs += E::to_acc(r[u]);
          });
          if (K > 0) break;
        }
        if constexpr (!PYT) colsum[col] = cs;
      }
    }
    __syncthreads();

    // ---- phase 2: one output per thread -------------------------------------
    const int nout = (int)(ox1 - ox0);
    T* out_row = dst + (plane * a.oh + oy) * a.ow + ox0;
    for (int o = tid; o < nout; o += blockDim.x) {
      const AxisWindow cw = axis_window(ox0 + o, a.w, kw, kw, a.pw);
      const int c0 = (int)(cw.begin - xa), n = (int)(cw.end - cw.begin);
      A sum = A(0);
      if constexpr (!PYT) {
        for_upto<K>(n, [&](int j) { sum += colsum[c0 + j]; });
      } else {
        for (int y = 0; y < nrows; ++y) {
          const T* t = tile + y * a.pitch + c0;
          for_upto<K>(n, [&](int j) { sum += E::to_acc(t[j]); });
        }
      }
      out_row[o] = E::from_acc(finish(sum, rw, cw, a.include_pad, a.divisor_override));
    }
    __syncthreads();  // shared memory is reused by the next item
  }
}

// ---- plan: the tile of one block ----------------------------------------------
struct Tile {
  int threads = 0, chunks = 0, oxc = 0, pitch = 0;
  int64_t smem = 0;
};

// Fills g for q in its numerics, or declines when the window does not fit a
// block.
avgpool_status plan_tile(const Problem& q, const DeviceInfo& device, Tile* g, Decline* why) {
  const int64_t es = q.element_size, V = 16 / es;
  const bool pyt = q.numerics == AVGPOOL_NUMERICS_PYTORCH;
  const int64_t acc_size = q.dtype == AVGPOOL_DTYPE_F64 ? 8 : 4;
  const int64_t smem_limit = device.smem_block;
  // Vectors per block: a whole 2048-float row for fast numerics; pytorch keeps
  // the raw tile (kh rows) in shared memory, so it takes narrower chunks.
  int64_t maxv = pyt ? 256 : kMaxThreads;
  if (pyt) maxv = std::min<int64_t>(maxv, smem_limit / (q.kh * 16) / 32 * 32);
  if (maxv < 32) {
    return decline(why, AVGPOOL_ERROR_UNSUPPORTED, "kernel_h (%lld) too tall for a shared-memory tile",
              (long long)q.kh);
  }
  int64_t span;  // columns a chunk may need, vector slack included
  if (ceil_div(q.w, V) * V <= maxv * V) {
    g->chunks = 1;
    g->oxc = (int)q.ow;
    span = ceil_div(q.w, V) * V;
  } else {
    const int64_t oxc = (maxv * V - 2 * (V - 1)) / q.kw;
    if (oxc < 1) {
      return decline(why, AVGPOOL_ERROR_UNSUPPORTED, "kernel_w (%lld) wider than a block's %lld columns",
                (long long)q.kw, (long long)(maxv * V));
    }
    g->chunks = (int)ceil_div(q.ow, oxc);
    g->oxc = (int)ceil_div(q.ow, g->chunks);
    span = g->oxc * q.kw + 2 * (V - 1);
  }
  g->threads = (int)std::min<int64_t>(maxv, ceil_div(ceil_div(span, V), 32) * 32);
  g->pitch = g->threads * (int)V;
  g->smem = pyt ? q.kh * g->pitch * es : g->pitch * acc_size;
  if (g->smem > smem_limit) {
    return decline(why, AVGPOOL_ERROR_UNSUPPORTED, "tile of %lld bytes exceeds shared memory",
              (long long)g->smem);
  }
  return AVGPOOL_SUCCESS;
}

// Blocks per SM the compiler plans registers for: 2 (64 registers, a few
// spills for K = 11) for f32/f64, 1 for the half types, which spill heavily
// at 64 registers (H200, 2026-11-29, seed shape: f32 4.30 ms with 2 vs 4.60
// with 1; bf16 4.83 with 2 vs 2.37 with 1).
template <typename T, bool PYT>
avgpool_status choose_kernel(KernelConfig<SeArgs>* c, const Tile& g, const DeviceInfo& device, Decline* why) {
  constexpr int kMinBlocks = sizeof(T) == 2 ? 1 : 2;
  return dispatch_k<2, 3, 4, 5, 7, 8, 11>(c->args.kh == c->args.kw ? c->args.kh : 0, [&](auto k) {
    return use_kernel<SeArgs, T, stride_eq_kernel<T, decltype(k)::value, PYT, kMinBlocks>>(
        c, "stride_eq_kernel", g.threads, g.smem, GridShape{c->args.items, false}, device, why);
  });
}

avgpool_status init(const Problem& q, const DeviceInfo& device, ConfigPtr* config, Decline* why) {
  if (q.layout != AVGPOOL_LAYOUT_NCHW) return decline(why, AVGPOOL_ERROR_UNSUPPORTED, "%s is NCHW only", kName);
  if (!q.stride_equals_kernel())
    return decline(why, AVGPOOL_ERROR_UNSUPPORTED, "%s needs stride == kernel", kName);
  if (q.w < 16)
    return decline(why, AVGPOOL_ERROR_UNSUPPORTED,
                   "%s wants rows of at least 16 (w = %lld); cuda:nchw_row_bulk and cuda:nchw_tiled pack "
                   "narrow planes",
                   kName, (long long)q.w);
  Tile g;
  if (plan_tile(q, device, &g, why) != AVGPOOL_SUCCESS) return why->status;
  // The vector configuration (rows and src 16-byte aligned) and, for other
  // pointers, the same tile with one element per load.
  return hand_over_vector_and_scalar<SeArgs>(q, device, config, [&](KernelConfig<SeArgs>* c, bool vectors) {
    c->args.items = q.planes() * q.oh * g.chunks;
    c->args.chunks = g.chunks;
    c->args.oxc = g.oxc;
    c->args.pitch = g.pitch;
    c->args.vec_ok = vectors && (q.w * q.element_size) % 16 == 0;
    if (c->args.vec_ok) c->vec_align = 16;
    return for_problem_types(q, [&](auto zero, auto pyt) {
      return choose_kernel<decltype(zero), decltype(pyt)::value>(c, g, device, why);
    });
  });
}

}  // namespace

const Impl kNchwStrideEqImpl = cuda_impl(kName, Direction::kForward, init);

}  // namespace avgpool::cuda
