// cuda:nchw_vec_column_walk - NCHW, fast numerics, square kernels of 3, 5 or 7
// (f64: 3 or 5) with stride 1 on both axes, any padding and divisor, rows
// of 16-byte multiples: the "same-size" blurs of CNNs (3x3 p1, 5x5 p2).
//
// cuda:nchw_column_walk's scheme, one 16-byte vector of V columns per thread
// (4 floats, 8 halves, 2 doubles) instead of one column. A thread owns V
// consecutive output columns of one plane and walks down a run of output
// rows. For each input row it loads three vectors - the one under its
// outputs and its two neighbours, which hold the windows' halos (at most V
// columns each side; the neighbours' loads hit L1) - forms the V horizontal
// window sums, and keeps the last K row sums in a register ring. An output
// then costs 3 / V loads and about 2K adds per input row, where the scalar
// walk issues K loads: at V = 4 the load instructions drop twelvefold for
// 3x3 and twentyfold for 5x5, which left the scalar walk issue-bound.
//
// The windows of a thread's outputs start at fixed offsets inside its three
// vectors: its outputs are shifted by pad - K/2 columns from the vector
// under them, so every register index is a compile-time constant whatever
// the padding. With pad == K/2 (the usual case) they sit exactly over the
// vector and leave as one 16-byte store; otherwise element by element.
// Rows are loaded NEW at a time, every load of a block issued before its
// sums. Divisors come from window.h (per-axis factors, divisor_from_factors),
// applied as reciprocals (one rounding more than a division: fast numerics'
// bound). Index math within an axis in int (axes below 2^28), element
// offsets in int64; 1-D grid-stride grid; no shared memory.
#include <algorithm>

#include "common.cuh"
#include "impls.h"

namespace avgpool::cuda {
namespace {

constexpr int kThreads = 256;

constexpr const char* kName = "cuda:nchw_vec_column_walk";

struct VecColumnArgs : Geometry {
  bool vec_out;   // outputs sit over the vectors and dst is aligned: 16-byte stores
  int64_t total;  // planes * runs * nt threads
  int64_t runs;   // runs of output rows per plane
  int64_t run;    // output rows per run
  int64_t nt;     // threads across a plane's output columns
  int64_t nv;     // 16-byte vectors per input row
};

// Rows loaded together: 4 x 3 vectors in flight per thread; 2 for the half
// types, whose 8-wide row sums take twice the registers.
template <typename T> constexpr int rows_per_block() { return sizeof(T) == 2 ? 2 : 4; }

template <typename T, int K>
__global__ void __launch_bounds__(kThreads)
nchw_vec_columns_kernel(const T* __restrict__ src, T* __restrict__ dst, VecColumnArgs a) {
  using E = Elem<T>;
  using A = typename E::acc_t;
  constexpr int V = vec_of<T>();
  constexpr int H = K / 2;  // halo each side (odd K), at most V
  constexpr int NEW = rows_per_block<T>();
  constexpr int NR = K - 1 + NEW;  // ring: the K - 1 rows carried over and a block's NEW
  static_assert(H <= V, "the halo must fit in one neighbouring vector");
  const int h = (int)a.h, w = (int)a.w, ph = (int)a.ph, nv = (int)a.nv, nt = (int)a.nt;
  for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < a.total;
       i += (int64_t)gridDim.x * blockDim.x) {
    const int64_t rest = i / nt, p = rest / a.runs;
    const int t = (int)(i - rest * nt), run = (int)(rest - p * a.runs);
    const int oy0 = run * (int)a.run;
    const int nout = (int)(a.oh - oy0 < a.run ? a.oh - oy0 : a.run);
    // Output j of this thread is column ox0 + j; its window starts at input
    // column t * V - H + j, element V - H + j of the three vectors.
    const int ox0 = t * V + (int)a.pw - H;
    int col_factor[V];
#pragma unroll
    for (int j = 0; j < V; ++j)
      col_factor[j] = axis_divisor_factor(axis_window_of<int>(ox0 + j, w, K, 1, (int)a.pw), a.include_pad);
    const bool has_prev = t > 0, has_next = t + 1 < nv;

    int y = oy0 - ph;
    const T* row = src + (p * a.h + y) * a.w + (int64_t)t * V;  // dereferenced only for 0 <= y < h
    auto load_row = [&](Vec16<T> (&v)[3]) {
      const bool in = (unsigned)y < (unsigned)h;
      v[0] = (in && has_prev) ? load16<false>(row - V) : zero16<T>();
      v[1] = in ? load16<false>(row) : zero16<T>();
      v[2] = (in && has_next) ? load16<false>(row + V) : zero16<T>();
      ++y;
      row += w;
    };
    auto row_sums = [&](const Vec16<T> (&v)[3], A (&s)[V]) {
#pragma unroll
      for (int j = 0; j < V; ++j) {
        A acc = lane_acc(v[(V - H + j) / V], (V - H + j) % V);
#pragma unroll
        for (int c = 1; c < K; ++c) acc += lane_acc(v[(V - H + j + c) / V], (V - H + j + c) % V);
        s[j] = acc;
      }
    };

    A rows[NR][V];
    {
      Vec16<T> first[K - 1][3];
#pragma unroll
      for (int r = 0; r < K - 1; ++r) load_row(first[r]);
#pragma unroll
      for (int r = 0; r < K - 1; ++r) row_sums(first[r], rows[r]);
    }
    T* out = dst + (p * a.oh + oy0) * a.ow + ox0;
    // Reciprocal divisors while the row factor stays the same (it changes
    // only at the top and bottom edges).
    int last_row_factor = -1;
    A inv[V];
    for (int base = 0; base < nout; base += NEW) {
      Vec16<T> fresh[NEW][3];
#pragma unroll
      for (int r = 0; r < NEW; ++r) load_row(fresh[r]);
#pragma unroll
      for (int r = 0; r < NEW; ++r) row_sums(fresh[r], rows[K - 1 + r]);
#pragma unroll
      for (int u = 0; u < NEW; ++u) {
        if (base + u < nout) {
          const int row_factor =
              axis_divisor_factor(axis_window_of<int>(oy0 + base + u, h, K, 1, ph), a.include_pad);
          if (row_factor != last_row_factor) {
            last_row_factor = row_factor;
#pragma unroll
            for (int j = 0; j < V; ++j)
              inv[j] = A(1) / static_cast<A>(divisor_from_factors(row_factor, col_factor[j], a.divisor_override));
          }
          Vec16<T> o;
#pragma unroll
          for (int j = 0; j < V; ++j) {
            A s = rows[u][j];
#pragma unroll
            for (int r = 1; r < K; ++r) s += rows[u + r][j];
            o.v[j] = E::from_acc(s * inv[j]);
          }
          if (a.vec_out) {
            *reinterpret_cast<Vec16<T>*>(out) = o;
          } else {
#pragma unroll
            for (int j = 0; j < V; ++j)
              if ((unsigned)(ox0 + j) < (unsigned)a.ow) out[j] = o.v[j];
          }
          out += a.ow;
        }
      }
#pragma unroll
      for (int r = 0; r < K - 1; ++r)  // the next block's first rows
#pragma unroll
        for (int j = 0; j < V; ++j) rows[r][j] = rows[NEW + r][j];
    }
  }
}

avgpool_status init(const Problem& q, const DeviceInfo& device, ConfigPtr* config, Decline* why) {
  const int64_t v = 16 / q.element_size;
  const bool k_ok = q.kh == q.kw && (q.kh == 3 || q.kh == 5 || (q.kh == 7 && q.element_size < 8));
  if (q.layout != AVGPOOL_LAYOUT_NCHW) return decline(why, AVGPOOL_ERROR_UNSUPPORTED, "%s is NCHW only", kName);
  if (!k_ok || q.sh != 1 || q.sw != 1 || q.numerics != AVGPOOL_NUMERICS_FAST || q.w % v != 0 || !axes_fit_int32(q))
    return decline(why, AVGPOOL_ERROR_UNSUPPORTED,
                   "%s takes fast numerics, square kernels of 3, 5 or 7 (f64: 3 or 5), stride 1, rows of "
                   "16-byte multiples and axes below 2^28 (kernel %lldx%lld, stride %lldx%lld, width %lld)",
                   kName, (long long)q.kh, (long long)q.kw, (long long)q.sh, (long long)q.sw, (long long)q.w);
  // The configuration with 16-byte stores (outputs over the vectors, dst
  // aligned) and, for other dst pointers, element stores.
  return hand_over_vector_and_scalar<VecColumnArgs>(q, device, config, [&](KernelConfig<VecColumnArgs>* c, bool vectors) {
    VecColumnArgs& a = c->args;
    a.nv = q.w / v;
    a.nt = ceil_div(q.ow + q.kh / 2 - q.pw, v);
    a.vec_out = vectors && q.pw == q.kh / 2 && q.ow % v == 0;
    c->src_align = 16;  // 16-byte row loads; other pointers run another implementation
    if (a.vec_out) c->vec_align = 16;
    // Rows per run: ~800K threads, runs of 4-256 rows (each run re-reads its
    // first K - 1 rows). Measured 2026-11-29, H200, f32, threads 100K / 200K /
    // 400K / 800K / 1.6M: k3 s1 p1 on 32x256x56x56 0.066 / 0.065 / 0.066 /
    // 0.059 / 0.062 ms; k5 s1 p2 on 8x64x1024x1024 1.239 / 1.239 / 1.242 /
    // 1.210 / 1.198 ms.
    const int64_t columns = q.planes() * a.nt;
    const int64_t min_threads = 800 * 1000;
    a.runs = std::min<int64_t>(ceil_div(q.oh, 4), std::max(ceil_div(q.oh, 256), ceil_div(min_threads, columns)));
    a.run = ceil_div(q.oh, a.runs);
    a.runs = ceil_div(q.oh, a.run);
    a.total = columns * a.runs;
    return dispatch_dtype_cuda(q.dtype, [&](auto zero) {
      using T = decltype(zero);
      return dispatch_k<3, 5, 7>(q.kh, [&](auto k) {
        constexpr int K = decltype(k)::value;
        if constexpr (K == 0 || K / 2 > vec_of<T>()) {
          return decline(why, AVGPOOL_ERROR_INTERNAL, "%s: no instantiation for kernel %lld", kName, (long long)q.kh);
        } else {
          return use_kernel<VecColumnArgs, T, nchw_vec_columns_kernel<T, K>>(
              c, "nchw_vec_columns_kernel", kThreads, 0, GridShape{ceil_div(a.total, kThreads), false}, device, why);
        }
      });
    });
  });
}

}  // namespace

const Impl kNchwVecColumnWalkImpl = cuda_impl(kName, Direction::kForward, init);

}  // namespace avgpool::cuda
