// cuda:generic - NCHW, any stride, padding, ceil_mode, divisor (overlapping
// windows included).
//
// A block computes a tile of toh x tow outputs on pb planes at once (pb > 1
// packs small planes, e.g. global pooling of 7x7 maps, into one block). It
// loads the tile's input rectangle of every plane into shared memory (read-
// only cached loads: neighbouring tiles share their halos through L2), then
//  - fast numerics: vertical sums of each output row's window rows per input
//    column, then horizontal sums of those: the work per output grows with
//    kh + kw, not kh * kw (separable);
//  - pytorch numerics: each window summed rows then columns, left to right,
//    into one accumulator (PyTorch's order, bitwise).
// Tiles are chosen on the host to fit shared memory; 64-bit plane offsets;
// a 1-D grid-stride grid (any N*C).
#include <algorithm>

#include "common.cuh"

namespace avgpool {
namespace cuda {
namespace {

struct GenArgs {
  int64_t planes, h, w, oh, ow, kh, kw, sh, sw, ph, pw, divisor_override;
  int64_t items;
  int toh, tow, pb;    // outputs per tile (rows, cols), planes per tile
  int tiles_y, tiles_x;
  int ihp, iwp;        // shared tile: rows per plane, row pitch
  bool include_pad;
};

constexpr int kThreads = 256;
constexpr int kOutputsPerBlock = 1024;

template <typename T, bool PYT>
__global__ void __launch_bounds__(kThreads)
generic_kernel(const T* __restrict__ src, T* __restrict__ dst, GenArgs a) {
  using E = Elem<T>;
  using A = typename E::acc_t;
  extern __shared__ __align__(16) unsigned char smem_raw[];
  A* tile = reinterpret_cast<A*>(smem_raw);         // [pb][ihp][iwp]
  A* vsum = tile + (size_t)a.pb * a.ihp * a.iwp;    // fast: [pb][toh][iwp]
  const int tid = threadIdx.x, nt = blockDim.x;

  for (int64_t item = blockIdx.x; item < a.items; item += gridDim.x) {
    const int tx = (int)(item % a.tiles_x);
    const int64_t r1 = item / a.tiles_x;
    const int ty = (int)(r1 % a.tiles_y);
    const int64_t p0 = (r1 / a.tiles_y) * a.pb;
    const int np = (int)(a.planes - p0 < a.pb ? a.planes - p0 : a.pb);
    const int64_t oy0 = (int64_t)ty * a.toh, ox0 = (int64_t)tx * a.tow;
    const int noy = (int)(a.oh - oy0 < a.toh ? a.oh - oy0 : a.toh);
    const int nox = (int)(a.ow - ox0 < a.tow ? a.ow - ox0 : a.tow);
    const int64_t iy0 = axis_window(oy0, a.h, a.kh, a.sh, a.ph).begin;
    const int64_t iy1 = axis_window(oy0 + noy - 1, a.h, a.kh, a.sh, a.ph).end;
    const int64_t ix0 = axis_window(ox0, a.w, a.kw, a.sw, a.pw).begin;
    const int64_t ix1 = axis_window(ox0 + nox - 1, a.w, a.kw, a.sw, a.pw).end;
    const int nih = (int)(iy1 - iy0), niw = (int)(ix1 - ix0);

    // ---- load the input rectangle of each plane --------------------------------
    const int per_plane = nih * niw, total = np * per_plane;
    const T* base = src + (p0 * a.h + iy0) * a.w + ix0;  // 64-bit
    constexpr int U = 8;
    for (int e0 = tid; e0 < total; e0 += nt * U) {
      A v[U];
#pragma unroll
      for (int u = 0; u < U; ++u) {
        const int e = e0 + u * nt;
        if (e < total) {
          const int p = e / per_plane, rem = e - p * per_plane;
          const int iy = rem / niw, ix = rem - iy * niw;
          v[u] = E::to_acc(load1<false>(base + ((int64_t)p * a.h + iy) * a.w + ix));
        }
      }
#pragma unroll
      for (int u = 0; u < U; ++u) {
        const int e = e0 + u * nt;
        if (e < total) {
          const int p = e / per_plane, rem = e - p * per_plane;
          const int iy = rem / niw, ix = rem - iy * niw;
          tile[(p * a.ihp + iy) * a.iwp + ix] = v[u];
        }
      }
    }
    __syncthreads();

    // ---- fast: vertical window sums per input column ---------------------------
    if constexpr (!PYT) {
      const int tv = np * noy * niw;
      for (int e = tid; e < tv; e += nt) {
        const int p = e / (noy * niw), rem = e - p * (noy * niw);
        const int oyl = rem / niw, ix = rem - oyl * niw;
        const AxisWindow rw = axis_window(oy0 + oyl, a.h, a.kh, a.sh, a.ph);
        const A* col = tile + (p * a.ihp + (int)(rw.begin - iy0)) * a.iwp + ix;
        A s = A(0);
        for (int y = 0; y < (int)(rw.end - rw.begin); ++y) s += col[y * a.iwp];
        vsum[(p * a.toh + oyl) * a.iwp + ix] = s;
      }
      __syncthreads();
    }

    // ---- outputs -----------------------------------------------------------------
    const int to = np * noy * nox;
    for (int e = tid; e < to; e += nt) {
      const int p = e / (noy * nox), rem = e - p * (noy * nox);
      const int oyl = rem / nox, oxl = rem - oyl * nox;
      const AxisWindow rw = axis_window(oy0 + oyl, a.h, a.kh, a.sh, a.ph);
      const AxisWindow cw = axis_window(ox0 + oxl, a.w, a.kw, a.sw, a.pw);
      const int c0 = (int)(cw.begin - ix0), nc = (int)(cw.end - cw.begin);
      A s = A(0);
      if constexpr (!PYT) {
        const A* row = vsum + (p * a.toh + oyl) * a.iwp + c0;
        for (int x = 0; x < nc; ++x) s += row[x];
      } else {
        const int r0 = (int)(rw.begin - iy0), nr = (int)(rw.end - rw.begin);
        for (int y = 0; y < nr; ++y) {
          const A* row = tile + (p * a.ihp + r0 + y) * a.iwp + c0;
          for (int x = 0; x < nc; ++x) s += row[x];
        }
      }
      dst[((p0 + p) * a.oh + oy0 + oyl) * a.ow + ox0 + oxl] =
          E::from_acc(finish(s, rw, cw, a.include_pad, a.divisor_override));
    }
    __syncthreads();
  }
}

// Tile sizes for q, fitting shared memory; false (reason set) if none fits.
bool choose_tile(const Problem& q, GenArgs* a, int64_t* smem) {
  const bool pyt = q.numerics == AVGPOOL_NUMERICS_PYTORCH;
  const int64_t acc = q.dtype == AVGPOOL_DTYPE_F64 ? 8 : 4;
  const int64_t budget = std::min<int64_t>(max_shared_per_block(), 96 * 1024);
  int64_t tow = std::min<int64_t>(q.ow, 64);
  int64_t toh = std::min<int64_t>(q.oh, std::max<int64_t>(1, kOutputsPerBlock / tow));
  int64_t pb = std::min<int64_t>(q.planes(), std::max<int64_t>(1, kOutputsPerBlock / (toh * tow)));
  for (;;) {
    const int64_t ihp = std::min<int64_t>(q.h, (toh - 1) * q.sh + q.kh);
    const int64_t iwp = std::min<int64_t>(q.w, (tow - 1) * q.sw + q.kw);
    *smem = acc * (pb * ihp * iwp + (pyt ? 0 : pb * toh * iwp));
    if (*smem <= budget) {
      a->toh = (int)toh; a->tow = (int)tow; a->pb = (int)pb;
      a->ihp = (int)ihp; a->iwp = (int)iwp;
      return true;
    }
    if (pb > 1) pb = (pb + 1) / 2;
    else if (toh > 1) toh = (toh + 1) / 2;
    else if (tow > 1) tow = (tow + 1) / 2;
    else {
      set_error(AVGPOOL_ERROR_UNSUPPORTED,
                "cuda:generic: a %lldx%lld window does not fit in shared memory (cuda:direct "
                "takes it)",
                (long long)q.kh, (long long)q.kw);
      return false;
    }
  }
}

avgpool_status accepts(const Problem& q) {
  avgpool_status s = device_usable();
  if (s != AVGPOOL_SUCCESS) return s;
  if (q.layout != AVGPOOL_LAYOUT_NCHW)
    return set_error(AVGPOOL_ERROR_UNSUPPORTED, "cuda:generic is NCHW only (cuda:nhwc takes NHWC)");
  if (q.oh >= (int64_t(1) << 30) || q.ow >= (int64_t(1) << 30))
    return set_error(AVGPOOL_ERROR_UNSUPPORTED, "cuda:generic: output plane too large (cuda:direct takes it)");
  GenArgs a;
  int64_t smem;
  return choose_tile(q, &a, &smem) ? AVGPOOL_SUCCESS : AVGPOOL_ERROR_UNSUPPORTED;
}

template <typename T, bool PYT>
avgpool_status launch(const GenArgs& a, int64_t smem, const T* src, T* dst, cudaStream_t st) {
  auto kernel = generic_kernel<T, PYT>;
  static const avgpool_status allowed =
      allow_shared((const void*)kernel, max_shared_per_block(), "generic_kernel");
  if (smem > 48 * 1024 && allowed != AVGPOOL_SUCCESS)
    return set_error(AVGPOOL_ERROR_DEVICE, "generic_kernel: cannot raise the shared-memory limit");
  kernel<<<grid_for(a.items), kThreads, smem, st>>>(src, dst, a);
  return check_launch("generic_kernel");
}

avgpool_status execute(const Problem& q, const void* src, void* dst, void* stream) {
  avgpool_status s = check_device_pointers(src, dst);
  if (s != AVGPOOL_SUCCESS) return s;
  GenArgs a;
  int64_t smem = 0;
  if (!choose_tile(q, &a, &smem)) return AVGPOOL_ERROR_UNSUPPORTED;
  copy_geometry(q, &a);
  a.tiles_y = (int)ceil_div(q.oh, a.toh);
  a.tiles_x = (int)ceil_div(q.ow, a.tow);
  a.items = ceil_div(q.planes(), a.pb) * a.tiles_y * a.tiles_x;
  const bool pyt = q.numerics == AVGPOOL_NUMERICS_PYTORCH;
  return dispatch_dtype_cuda(q.dtype, [&](auto zero) {
    using T = decltype(zero);
    const T* s_ = static_cast<const T*>(src);
    T* d_ = static_cast<T*>(dst);
    return pyt ? launch<T, true>(a, smem, s_, d_, (cudaStream_t)stream)
               : launch<T, false>(a, smem, s_, d_, (cudaStream_t)stream);
  });
}

}  // namespace

const Impl kGenericImpl = {
    /* .name     = */ "cuda:generic",
    /* .backend  = */ AVGPOOL_BACKEND_CUDA,
    /* .accepts  = */ accepts,
    /* .execute  = */ execute,
};

}  // namespace cuda
}  // namespace avgpool
