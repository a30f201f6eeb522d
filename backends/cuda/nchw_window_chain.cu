// cuda:nchw_window_chain - NCHW, large windows in PyTorch's order: the block
// stages its outputs' input region through shared memory with every thread
// loading, and one thread per output runs that output's chain of dependent
// adds (rows then columns, one acc_t accumulator) from shared memory.
//
// In pytorch numerics each output is a chain of kh * kw dependent adds; one
// thread per output that also loads its window one element at a time
// (cuda:any_direct) waits on a load for every add, and the 32 threads of a
// warp read 32 windows a stride apart. Here a block owns a tile of outputs
// (tp planes x th rows x tw columns: one output for global pooling, where
// the other 255 threads only load) and walks its input region in chunks of
// whole rows (or of one row's column slabs when a row is wider than a
// chunk), in order, double-buffered: the loads of chunk k + 1 are in flight
// while the chains consume chunk k. A chain reads its window's part of each
// chunk in row-major order, so the order of adds is PyTorch's and the
// result is bitwise PyTorch's. Shared memory holds acc_t values; with an
// even column stride one pad word follows every sw columns, so the 32
// chains of a warp (windows sw apart) read 32 different banks.
// Fast numerics stage the same way and let each thread add its values in
// four interleaved partial sums.
// Any element-aligned pointers; axes below 2^28 (int32 in-plane index math),
// 64-bit plane offsets.
#include "impls.h"
#include "window_split.cuh"

namespace avgpool::cuda {
namespace {

// A position (outer, inner) in row-major order over rows of `width`
// elements, moved by a fixed step without divisions: the start and the step
// are split into rows and columns once. advance() says whether the column
// wrapped into the next row.
template <typename I>
struct GridWalk {
  I outer, inner, d_outer, d_inner, width;
  __device__ __forceinline__ GridWalk(I start, I step, I width_)
      : outer(start / width_), inner(start % width_), d_outer(step / width_), d_inner(step % width_), width(width_) {}
  __device__ __forceinline__ bool advance() {
    outer += d_outer;
    inner += d_inner;
    if (inner < width) return false;
    inner -= width;
    ++outer;
    return true;
  }
};

constexpr const char* kName = "cuda:nchw_window_chain";
constexpr int kThreads = 256;
constexpr int kPerThread = 16;                     // elements each thread stages per chunk
constexpr int kChunk = kThreads * kPerThread;      // elements one chunk holds (all planes)

struct ChainArgs : Geometry {
  int tp, th, tw;               // tile: planes, output rows, output columns
  int64_t tiles_y, tiles_x, plane_groups, tiles;
  int rows_per_chunk;           // R: whole rows per chunk (1 when slabs)
  int slab;                     // columns per chunk
  int pitch, plane_pitch;       // shared-memory strides (acc_t elements)
  int pad_every;                // one pad element after every pad_every columns (0: none)
};

__host__ __device__ __forceinline__ int skewed(int u, int pad_every) { return pad_every ? u + u / pad_every : u; }

// sum + p[0] + p[1] + ... + p[n - 1], in that order: the next eight values'
// loads are issued before the current eight are added, so the chain waits
// on the adds' latency, not on shared-memory loads.
template <typename A>
__device__ __forceinline__ A add_run(const A* p, int n, A sum) {
  int i = 0;
  if (n >= 8) {
    A v[8];
#pragma unroll
    for (int j = 0; j < 8; ++j) v[j] = p[j];
    for (i = 8; i + 8 <= n; i += 8) {
      A nv[8];
#pragma unroll
      for (int j = 0; j < 8; ++j) nv[j] = p[i + j];
#pragma unroll
      for (int j = 0; j < 8; ++j) sum += v[j];
#pragma unroll
      for (int j = 0; j < 8; ++j) v[j] = nv[j];
    }
#pragma unroll
    for (int j = 0; j < 8; ++j) sum += v[j];
  }
  for (; i < n; ++i) sum += p[i];
  return sum;
}

// Fast numerics: the same values in four interleaved partial sums (any
// order is theirs), a quarter of the dependent adds.
template <typename A>
__device__ __forceinline__ A add_run_fast(const A* p, int n, A sum) {
  A s[4] = {0, 0, 0, 0};
  int i = 0;
  for (; i + 8 <= n; i += 8) {
    A v[8];
#pragma unroll
    for (int j = 0; j < 8; ++j) v[j] = p[i + j];
#pragma unroll
    for (int j = 0; j < 8; ++j) s[j % 4] += v[j];
  }
  for (; i < n; ++i) s[i % 4] += p[i];
  return sum + ((s[0] + s[1]) + (s[2] + s[3]));
}

template <typename T, bool PYT>
__global__ void __launch_bounds__(kThreads) chain_kernel(const T* __restrict__ src, T* __restrict__ dst, ChainArgs a) {
  using E = Elem<T>;
  using A = typename E::acc_t;
  extern __shared__ __align__(16) unsigned char smem_raw[];
  A* const buf0 = reinterpret_cast<A*>(smem_raw);
  A* const buf1 = buf0 + (int64_t)a.tp * a.plane_pitch;
  const int h = (int)a.h, w = (int)a.w;
  const int t = threadIdx.x;
  const int chains = a.tp * a.th * a.tw;
  const int tx = t % a.tw, ty = (t / a.tw) % a.th, tpi = t / (a.tw * a.th);
  for (int64_t tile = blockIdx.x; tile < a.tiles; tile += gridDim.x) {
    const int64_t txi = tile % a.tiles_x, rest = tile / a.tiles_x;
    const int64_t tyi = rest % a.tiles_y, pg = rest / a.tiles_y;
    const int64_t plane0 = pg * a.tp;
    const int oy0 = (int)(tyi * a.th), ox0 = (int)(txi * a.tw);
    const int oy1 = min(oy0 + a.th, (int)a.oh), ox1 = min(ox0 + a.tw, (int)a.ow);
    const int np = (int)min((int64_t)a.tp, a.planes - plane0);
    // the tile's input region: window begins and ends grow with the output index
    const int ya = axis_window_of<int>(oy0, h, (int)a.kh, (int)a.sh, (int)a.ph).begin;
    const int yb = axis_window_of<int>(oy1 - 1, h, (int)a.kh, (int)a.sh, (int)a.ph).end;
    const int xa = axis_window_of<int>(ox0, w, (int)a.kw, (int)a.sw, (int)a.pw).begin;
    const int xb = axis_window_of<int>(ox1 - 1, w, (int)a.kw, (int)a.sw, (int)a.pw).end;
    // this thread's output and window
    const int oy = oy0 + ty, ox = ox0 + tx;
    const bool chain = t < chains && tpi < np && oy < oy1 && ox < ox1;
    const AxisWindowOf<int> r = axis_window_of<int>(chain ? oy : oy0, h, (int)a.kh, (int)a.sh, (int)a.ph);
    const AxisWindowOf<int> c = axis_window_of<int>(chain ? ox : ox0, w, (int)a.kw, (int)a.sw, (int)a.pw);
    A sum = 0;

    // chunks: rows [y0, y0 + R) x columns [x0, x0 + slab), row-major
    const int R = a.rows_per_chunk, slab = a.slab;
    const int slabs = xb > xa ? (xb - xa + slab - 1) / slab : 0;
    const int row_groups = yb > ya ? (yb - ya + R - 1) / R : 0;
    const int chunks = slabs * row_groups;
    A reg[kPerThread];
    auto chunk_shape = [&](int k, int* y0, int* nr, int* x0, int* ncol) {
      *y0 = ya + (k / slabs) * R;
      *nr = min(R, yb - *y0);
      *x0 = xa + (k % slabs) * slab;
      *ncol = min(slab, xb - *x0);
    };
    int sidx[kPerThread];  // where each staged element goes in shared memory (-1: none)
    auto load_chunk = [&](int k) {
      int y0, nr, x0, ncol;
      chunk_shape(k, &y0, &nr, &x0, &ncol);
      const int per = nr * ncol, total = np * per;
      // (plane, row, column) of element t, then steps of kThreads elements:
      // two divisions per chunk, not per element
      int pi = t / per;
      const int dpi = kThreads / per;
      GridWalk<int> rc(t - pi * per, kThreads - dpi * per, ncol);  // (row, column) in the plane's chunk
#pragma unroll
      for (int j = 0; j < kPerThread; ++j) {
        const int e = t + j * kThreads;
        reg[j] = A(0);
        sidx[j] = -1;
        if (e < total) {
          reg[j] = E::to_acc(load1<true>(src + ((plane0 + pi) * a.h + y0 + rc.outer) * a.w + x0 + rc.inner));
          sidx[j] = pi * a.plane_pitch + rc.outer * a.pitch + skewed(rc.inner, a.pad_every);
        }
        pi += dpi;
        rc.advance();
        if (rc.outer >= nr) {
          rc.outer -= nr;
          ++pi;
        }
      }
    };
    auto store_chunk = [&](A* buf) {
#pragma unroll
      for (int j = 0; j < kPerThread; ++j)
        if (sidx[j] >= 0) buf[sidx[j]] = reg[j];
    };
    if (chunks > 0) load_chunk(0);
    for (int k = 0; k < chunks; ++k) {
      A* const buf = (k & 1) ? buf1 : buf0;
      store_chunk(buf);
      __syncthreads();
      if (k + 1 < chunks) load_chunk(k + 1);  // in flight while the chains run
      if (chain) {
        int y0, nr, x0, ncol;
        chunk_shape(k, &y0, &nr, &x0, &ncol);
        const int ry0 = max(r.begin, y0), ry1 = min(r.end, y0 + nr);
        const int cx0 = max(c.begin, x0), cx1 = min(c.end, x0 + ncol);
        const A* plane_buf = buf + tpi * a.plane_pitch;
        for (int y = ry0; y < ry1; ++y) {
          const A* row = plane_buf + (y - y0) * a.pitch;
          if (a.pad_every == 0) {
            sum = PYT ? add_run(row + (cx0 - x0), cx1 - cx0, sum) : add_run_fast(row + (cx0 - x0), cx1 - cx0, sum);
          } else {
            // runs of contiguous columns between pad words, in order
            for (int u = cx0 - x0, ue = cx1 - x0; u < ue;) {
              const int run_end = min(ue, (u / a.pad_every + 1) * a.pad_every);
              sum = PYT ? add_run(row + skewed(u, a.pad_every), run_end - u, sum)
                        : add_run_fast(row + skewed(u, a.pad_every), run_end - u, sum);
              u = run_end;
            }
          }
        }
      }
    }
    if (chain) {
      const AxisWindow rr{r.begin, r.end, r.padded_len}, cc{c.begin, c.end, c.padded_len};
      dst[((plane0 + tpi) * a.oh + oy) * a.ow + ox] = E::from_acc(finish(sum, rr, cc, a.include_pad, a.divisor_override));
    }
    __syncthreads();  // the next tile's first store reuses buf0
  }
}

avgpool_status init(const Problem& q, const DeviceInfo& device, ConfigPtr* config, Decline* why) {
  if (q.layout != AVGPOOL_LAYOUT_NCHW)
    return decline(why, AVGPOOL_ERROR_UNSUPPORTED, "%s takes NCHW only (cuda:any_window_split takes NHWC)", kName);
  if (!axes_fit_int32(q)) return decline_axes_int32(kName, why);
  auto c = new_config<ChainArgs>(q, device);
  ChainArgs& a = c->args;
  // Tile: up to 32 output columns side by side (a warp's chains), up to 8
  // rows; outputs few per plane (global pooling) take several planes, while
  // that leaves two tiles per SM.
  a.tw = (int)(q.ow < 32 ? q.ow : 32);
  a.th = (int)(q.oh < kThreads / 32 ? q.oh : kThreads / 32);
  a.tiles_x = ceil_div(q.ow, a.tw);
  a.tiles_y = ceil_div(q.oh, a.th);
  int tp = 1;
  const int64_t planes = q.planes() > 0 ? q.planes() : 1;
  while (tp * 2 * a.tw * a.th <= 64 && tp * 2 <= planes &&
         ceil_div(planes, tp * 2) * a.tiles_x * a.tiles_y >= 2 * (int64_t)device.sms)
    tp *= 2;
  a.tp = tp;
  a.plane_groups = ceil_div(planes, tp);
  a.tiles = a.plane_groups * a.tiles_x * a.tiles_y;
  // Region of a tile (at most): rows and columns its windows cover.
  const int64_t rw = std::min<int64_t>(q.w, (a.tw - 1) * q.sw + q.kw);
  const int64_t rh = std::min<int64_t>(q.h, (a.th - 1) * q.sh + q.kh);
  const int64_t per_plane = kChunk / tp;
  if (rw <= per_plane) {
    a.slab = (int)rw;
    a.rows_per_chunk = (int)std::max<int64_t>(1, std::min<int64_t>(rh, per_plane / rw));
  } else {
    a.slab = (int)per_plane;
    a.rows_per_chunk = 1;
  }
  a.pad_every = (a.tw > 1 && q.sw % 2 == 0) ? (int)q.sw : 0;
  a.pitch = skewed(a.slab - 1, a.pad_every) + 1;
  a.plane_pitch = a.rows_per_chunk * a.pitch;
  if (tp > 1 && a.plane_pitch % 2 == 0) ++a.plane_pitch;  // the planes' chains in different banks
  const avgpool_status s = for_problem_types(q, [&](auto zero, auto pyt) {
    using T = decltype(zero);
    using A = typename Elem<T>::acc_t;
    const int64_t smem = 2 * (int64_t)tp * a.plane_pitch * (int64_t)sizeof(A);
    return use_kernel<ChainArgs, T, chain_kernel<T, decltype(pyt)::value>>(
        c.get(), pyt ? "chain_kernel<pytorch>" : "chain_kernel<fast>", kThreads, smem, GridShape{a.tiles, false},
        device, why);
  });
  return hand_over(s, std::move(c), config);
}

}  // namespace

const Impl kNchwWindowChainImpl = cuda_impl(kName, Direction::kForward, init);

}  // namespace avgpool::cuda
