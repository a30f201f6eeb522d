// Pieces the CUDA backward implementations share: one term of a grad_input
// sum (PyTorch's rule per dtype) and a streaming store. Windows, the windows
// that hold an input index, and divisors come from window.h.
#pragma once

#include "common.cuh"

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
template <typename T, bool PYT>
__device__ __forceinline__ typename Elem<T>::acc_t backward_divisor(int64_t d) {
  using E = Elem<T>;
  using A = typename E::acc_t;
  if constexpr (PYT && sizeof(T) == 2) return E::to_acc(E::from_acc(static_cast<float>(d)));
  else return static_cast<A>(d);
}

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

// A streaming (evict-first) store of one element: grad_input is written
// once and not read back by the pass.
template <typename T> __device__ __forceinline__ void store_stream(T* p, T v) {
  using B = typename Elem<T>::bits_t;
  B b;
  memcpy(&b, &v, sizeof b);
  __stcs(reinterpret_cast<B*>(p), b);
}

}  // namespace avgpool::cuda
