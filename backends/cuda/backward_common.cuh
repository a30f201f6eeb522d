// Pieces the CUDA backward implementations share: one term of a grad_input
// sum (PyTorch's rule per dtype), the staging of a region's quotients in
// shared memory, and a streaming store. Windows, the windows
// that hold an input index, and divisors come from window.h.
#pragma once

#include "common.cuh"
#include "quotient.cuh"

namespace avgpool::cuda {

// One term of a grad_input sum: grad_output g over the divisor d of its
// window, in the accumulator type (tests/data/README.md, "Backward").
//  - pytorch numerics, f32/f64: one true division by d converted to the
//    type, g / T(d);
//  - pytorch numerics, f16/bf16 (PyTorch CUDA's rule): the divisor is
//    rounded to the type first (T(d): 289 becomes 288 in bf16) and the
//    quotient is rounded to the type, q = T(float(g) / float(T(d)));
//  - fast numerics: one true division by d in the accumulator type.
// The caller adds the term to an accumulator that starts at +0 (as PyTorch
// does), so a term of -0 leaves +0. backward_divisor converts d once for
// callers that divide several values by it; backward_term_by then divides.
// backward_divisor_of: the same for a divisor already in the accumulator
// type (an exact integer value, e.g. a float product of the two factors).
template <typename T, bool PYT>
__device__ __forceinline__ typename Elem<T>::acc_t backward_divisor_of(typename Elem<T>::acc_t d) {
  using E = Elem<T>;
  if constexpr (PYT && sizeof(T) == 2) return E::to_acc(E::from_acc(d));
  else return d;
}

template <typename T, bool PYT>
__device__ __forceinline__ typename Elem<T>::acc_t backward_divisor(int64_t d) {
  return backward_divisor_of<T, PYT>(static_cast<typename Elem<T>::acc_t>(d));
}

// Whether a kernel may form divisors as the product of their two factors
// in the accumulator type: exact (one rounding of the integer product, as
// PyTorch's conversion of it) while every product is at most 2^24 - a
// factor is at most its axis's kernel.
inline bool divisor_products_exact(int64_t kh, int64_t kw) { return kh * kw <= (int64_t(1) << 24); }

template <typename T, bool PYT>
__device__ __forceinline__ typename Elem<T>::acc_t backward_term_by(T g, typename Elem<T>::acc_t divisor) {
  using E = Elem<T>;
  if constexpr (PYT && sizeof(T) == 2) return E::to_acc(E::from_acc(E::to_acc(g) / divisor));
  else return E::to_acc(g) / divisor;
}

template <typename T, bool PYT>
__device__ __forceinline__ typename Elem<T>::acc_t backward_term(T g, int64_t d) {
  return backward_term_by<T, PYT>(g, backward_divisor<T, PYT>(d));
}

// Pytorch-numerics terms by a refined reciprocal (quotient.cuh), for the
// types that divide in float: backward_term_by's value wherever the batch's
// QuotientRange (every dividend noted) is exact and the divisors are at
// most quotient_divisor_limit; elsewhere the caller divides the batch again
// with backward_term_by.
template <typename T> constexpr bool kTermsByReciprocal = std::is_same_v<typename Elem<T>::acc_t, float>;

template <typename T>
__device__ __forceinline__ float backward_term_fast(T g, float divisor, float reciprocal, QuotientRange& range) {
  using E = Elem<T>;
  const float x = E::to_acc(g);
  range.note(x);
  const float q = quotient_by(x, divisor, reciprocal);
  if constexpr (sizeof(T) == 2) return E::to_acc(E::from_acc(q));
  else return q;
}

// The largest divisor backward_term_fast takes for a dtype: quotient.cuh's
// bound, and for f16 its largest finite value (backward_divisor rounds to
// the type).
inline int64_t quotient_divisor_limit(avgpool_dtype dtype) {
  return dtype == AVGPOOL_DTYPE_F16 ? 65504 : kQuotientMaxDivisor;
}

// Stages, for each of `planes` planes, the quotients q = g / d (backward_term)
// of window rows [oh_lo, oh_lo + nr) x columns [ow_lo, ow_lo + nc) of
// grad_output: plane p's values at g + p * g_plane_stride go to stage + p *
// stage_plane_stride, rows `pitch` apart; +0 outside [0, oh) x [0, ow).
// Every thread of the block calls it. Warps take rows (of all planes in
// turn), lanes columns (coalesced loads), kStageCols columns per lane and
// pass so that the column divisor factors are computed once per pass and
// each row's once per row: one load and one division per staged element,
// no index division.
constexpr int kStageCols = 3;  // staged columns per lane and pass (96 per warp)
template <typename T, bool PYT>
__device__ __forceinline__ void stage_quotients(const Geometry& a, const T* __restrict__ g, int64_t g_plane_stride,
                                                typename Elem<T>::acc_t* stage, int pitch, int stage_plane_stride,
                                                int planes, int oh_lo, int nr, int ow_lo, int nc) {
  using A = typename Elem<T>::acc_t;
  const int h = (int)a.h, w = (int)a.w, oh_count = (int)a.oh, ow_count = (int)a.ow;
  const int kh = (int)a.kh, kw = (int)a.kw, sh = (int)a.sh, sw = (int)a.sw, ph = (int)a.ph, pw = (int)a.pw;
  const int lane = (int)threadIdx.x & 31, warp = (int)threadIdx.x >> 5, nwarps = (int)blockDim.x >> 5;
  const int rows = planes * nr;
  for (int c0 = 0; c0 < nc; c0 += 32 * kStageCols) {
    int col_factor[kStageCols];
    bool col_in[kStageCols];
#pragma unroll
    for (int k = 0; k < kStageCols; ++k) {
      const int c = c0 + lane + 32 * k;
      const int ow = ow_lo + c;
      col_in[k] = c < nc && ow >= 0 && ow < ow_count;
      col_factor[k] = col_in[k] ? axis_divisor_factor(axis_window_of<int>(ow, w, kw, sw, pw), a.include_pad) : 1;
    }
    // (p, r): plane and window row of the warp's row i = p * nr + r
    int p = warp / nr, r = warp - (warp / nr) * nr;
    const int p_step = nwarps / nr, r_step = nwarps - p_step * nr;
#pragma unroll 2
    for (int i = warp; i < rows; i += nwarps) {
      const int oh = oh_lo + r;
      const bool row_in = oh >= 0 && oh < oh_count;
      const int row_factor =
          row_in ? axis_divisor_factor(axis_window_of<int>(oh, h, kh, sh, ph), a.include_pad) : 1;
      const T* g_row = g + p * g_plane_stride + (int64_t)oh * ow_count + ow_lo + c0 + lane;
      T gv[kStageCols];
#pragma unroll
      for (int k = 0; k < kStageCols; ++k)
        if (row_in && col_in[k]) gv[k] = load1<false>(g_row + 32 * k);
      A* srow = stage + p * stage_plane_stride + r * pitch + c0 + lane;
#pragma unroll
      for (int k = 0; k < kStageCols; ++k) {
        if (c0 + lane + 32 * k < nc) {
          A q = A(0);
          if (row_in && col_in[k])
            q = backward_term<T, PYT>(gv[k], divisor_from_factors(row_factor, col_factor[k], a.divisor_override));
          srow[32 * k] = q;
        }
      }
      p += p_step;
      r += r_step;
      if (r >= nr) {
        r -= nr;
        ++p;
      }
    }
  }
}

// A streaming (evict-first) store of one element: grad_input is written
// once and not read back by the pass.
template <typename T> __device__ __forceinline__ void store_stream(T* p, T v) {
  using B = typename Elem<T>::bits_t;
  B b;
  memcpy(&b, &v, sizeof b);
  __stcs(reinterpret_cast<B*>(p), b);
}

}  // namespace avgpool::cuda
