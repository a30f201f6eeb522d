// The CPU kernels' common ground, compiled into each instruction set's
// namespace: kernels.inl and backward_kernels.inl include it inside
// avgpool::cpu::AVGPOOL_CPU_ISA::{anonymous}, after <immintrin.h> (x86),
// <stdint.h> and <string.h>, so each instruction set gets its own copy and
// nothing here is shared with the rest of the library (see cpu_job.h): no
// includes but half_bits.h, which follows the same rule.
//
// Storage types of the half formats, their conversions (one element and
// blocks), and the 64-byte vectors with their helpers.

enum class F16 : uint16_t {};
enum class BF16 : uint16_t {};

template <class T, class A> struct same { static constexpr bool value = false; };
template <class T> struct same<T, T> { static constexpr bool value = true; };

// Orders non-temporal (streamed) stores before a later barrier: x86's are
// weakly ordered; other targets stream nothing (plain stores).
inline void nt_fence() {
#if defined(__SSE2__)
  _mm_sfence();
#endif
}

inline int64_t imin(int64_t a, int64_t b) { return a < b ? a : b; }
inline int64_t imax(int64_t a, int64_t b) { return a > b ? a : b; }

// Every 64-byte line of [p, p + bytes) prefetched for reading.
inline void prefetch_lines(const void* p, int64_t bytes) {
  for (int64_t at = 0; at < bytes; at += 64) __builtin_prefetch(static_cast<const char*>(p) + at, 0, 3);
}

#include "half_bits.h"

// Storage type <-> float, one element (half_bits.h).
inline float to_float(F16 h) { return f16_to_float((uint16_t)h); }
inline float to_float(BF16 b) { return bf16_to_float((uint16_t)b); }
template <class T> inline T from_float(float f) {
  if constexpr (same<T, F16>::value) return (F16)float_to_f16(f);
  else return (BF16)float_to_bf16(f);
}
// Storage type T <-> accumulator type A, one element (no conversion where
// they are the same type).
template <class A, class T> inline A to_acc(T x) {
  if constexpr (same<T, A>::value) return x;
  else return to_float(x);
}
template <class T, class A> inline T from_acc(A x) {
  if constexpr (same<T, A>::value) return x;
  else return from_float<T>(x);
}

// Block conversions between a half storage type T and float: F16C /
// AVX-512 conversions for f16 where the ISA has them, the scalar ones above
// for the rest (bf16 is a shift the compiler vectorizes).
template <class T>
inline void load_block(const T* s, float* d, int64_t n) {
  int64_t i = 0;
  if constexpr (same<T, F16>::value) {
    const uint16_t* in = reinterpret_cast<const uint16_t*>(s);
    (void)in;
#if defined(__AVX512F__)
    for (; i + 16 <= n; i += 16)
      _mm512_storeu_ps(d + i, _mm512_cvtph_ps(_mm256_loadu_si256((const __m256i*)(in + i))));
#elif defined(__F16C__)
    for (; i + 8 <= n; i += 8)
      _mm256_storeu_ps(d + i, _mm256_cvtph_ps(_mm_loadu_si128((const __m128i*)(in + i))));
#endif
  }
  for (; i < n; ++i) d[i] = to_float(s[i]);
}

template <class T>
inline void store_block(const float* s, T* d, int64_t n) {
  int64_t i = 0;
  if constexpr (same<T, F16>::value) {
    uint16_t* out = reinterpret_cast<uint16_t*>(d);
    (void)out;
#if defined(__AVX512F__)
    for (; i + 16 <= n; i += 16)
      _mm256_storeu_si256((__m256i*)(out + i),
                          _mm512_cvtps_ph(_mm512_loadu_ps(s + i),
                                          _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
#elif defined(__F16C__)
    for (; i + 8 <= n; i += 8)
      _mm_storeu_si128((__m128i*)(out + i),
                       _mm256_cvtps_ph(_mm256_loadu_ps(s + i),
                                       _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
#endif
  }
  for (; i < n; ++i) d[i] = from_float<T>(s[i]);
}

// ---- SIMD: GCC/Clang vector extensions, 64 bytes; one zmm with AVX-512,
// two ymm with AVX2, four xmm otherwise. Elementwise + and / in plain code;
// the helpers below take float or double (A) and pick the intrinsic by
// sizeof(A) where an ISA has one, with one portable loop for the others.
template <class A> struct simd;
template <> struct simd<float> {
  typedef float v __attribute__((vector_size(64)));
  typedef float vu __attribute__((vector_size(64), aligned(4), may_alias));
  typedef int32_t idx __attribute__((vector_size(64)));  // lane indices
  static constexpr int n = 16;
};
template <> struct simd<double> {
  typedef double v __attribute__((vector_size(64)));
  typedef double vu __attribute__((vector_size(64), aligned(8), may_alias));
  typedef int64_t idx __attribute__((vector_size(64)));
  static constexpr int n = 8;
};
template <class A> using vec = typename simd<A>::v;
template <class A> using vidx = typename simd<A>::idx;
template <class A> constexpr bool is_f32 = sizeof(A) == 4;
// The element type of a vector (for helpers called with vectors, where A
// cannot be deduced through the alias).
template <class V> struct elem_of;
template <> struct elem_of<vec<float>> { using type = float; };
template <> struct elem_of<vec<double>> { using type = double; };

#if defined(__AVX2__) && !defined(__AVX512F__)
// AVX2: a 64-byte vector is two ymm registers. Built from its halves and
// split into them by shuffles, which stay in registers; a union (two 32-byte
// stores, one 64-byte load) goes through the stack and stalls on store
// forwarding (2-core AMD EPYC VM, 2026-12-02, AVX2 kernels: most of
// nhwc_output_fours' time was such reloads).
typedef float half_f32 __attribute__((vector_size(32)));
typedef double half_f64 __attribute__((vector_size(32)));
inline vec<float> join(__m256 lo, __m256 hi) {
  return __builtin_shufflevector((half_f32)lo, (half_f32)hi, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
}
inline vec<double> join(__m256d lo, __m256d hi) {
  return __builtin_shufflevector((half_f64)lo, (half_f64)hi, 0, 1, 2, 3, 4, 5, 6, 7);
}
inline __m256 lo_half(vec<float> v) { return (__m256)__builtin_shufflevector(v, v, 0, 1, 2, 3, 4, 5, 6, 7); }
inline __m256 hi_half(vec<float> v) { return (__m256)__builtin_shufflevector(v, v, 8, 9, 10, 11, 12, 13, 14, 15); }
inline __m256d lo_half(vec<double> v) { return (__m256d)__builtin_shufflevector(v, v, 0, 1, 2, 3); }
inline __m256d hi_half(vec<double> v) { return (__m256d)__builtin_shufflevector(v, v, 4, 5, 6, 7); }
#endif

template <class A> inline vec<A> loadu(const A* p) {
  return *reinterpret_cast<const typename simd<A>::vu*>(p);
}
template <class A> inline void storeu(A* p, vec<A> x) {
  *reinterpret_cast<typename simd<A>::vu*>(p) = x;
}
template <class A> inline vec<A> zero() { return vec<A>{}; }

// 0, 1, ..., n-1.
template <class A> inline vidx<A> iota() {
  if constexpr (is_f32<A>) return vidx<A>{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15};
  else return vidx<A>{0, 1, 2, 3, 4, 5, 6, 7};
}

// Lanes p[0], p[stride], ..., p[(n-1)*stride]; stride * n fits in int32.
template <class A> inline vec<A> gather(const A* p, int64_t stride) {
#if defined(__AVX512F__)
  if constexpr (is_f32<A>) {
    const __m512i idx = _mm512_mullo_epi32(
        _mm512_set1_epi32((int)stride),
        _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15));
    return (vec<A>)_mm512_i32gather_ps(idx, p, 4);
  } else {
    const __m256i idx = _mm256_mullo_epi32(_mm256_set1_epi32((int)stride),
                                           _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
    return (vec<A>)_mm512_i32gather_pd(idx, p, 8);
  }
#elif defined(__AVX2__)
  if constexpr (is_f32<A>) {
    const __m256i idx = _mm256_mullo_epi32(_mm256_set1_epi32((int)stride),
                                           _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
    return join(_mm256_i32gather_ps(p, idx, 4), _mm256_i32gather_ps(p + 8 * stride, idx, 4));
  } else {
    const __m128i idx = _mm_mullo_epi32(_mm_set1_epi32((int)stride), _mm_setr_epi32(0, 1, 2, 3));
    return join(_mm256_i32gather_pd(p, idx, 8), _mm256_i32gather_pd(p + 4 * stride, idx, 8));
  }
#else
  vec<A> v;
  for (int l = 0; l < simd<A>::n; ++l) v[l] = p[l * stride];
  return v;
#endif
}

// Partial vectors: lanes [0, k) of p (0 < k <= n), the others zero. Masked
// loads never touch the lanes left out, so tails need no slack.
template <class A> inline vec<A> load_part(const A* p, int64_t k) {
#if defined(__AVX512F__)
  if constexpr (is_f32<A>) return (vec<A>)_mm512_maskz_loadu_ps((__mmask16)((1u << k) - 1u), p);
  else return (vec<A>)_mm512_maskz_loadu_pd((__mmask8)((1u << k) - 1u), p);
#elif defined(__AVX2__)
  // Masked loads (vmaskmov: no fault, no access on the lanes left out).
  // Lanes written one by one into a stack copy and then loaded as a vector
  // stall on store forwarding: 2-core AMD EPYC (Zen 3, AVX2) VM,
  // 2026-12-02, 3289x5x8x8 k1x4 s3x5 f64, rows of one output, 89 % of the
  // time in interior_run's partial vectors.
  if constexpr (is_f32<A>) {
    const __m256i lane = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
    const __m256 lo = _mm256_maskload_ps(p, _mm256_cmpgt_epi32(_mm256_set1_epi32((int)k), lane));
    const __m256 hi = k > 8 ? _mm256_maskload_ps(p + 8, _mm256_cmpgt_epi32(_mm256_set1_epi32((int)k - 8), lane))
                            : _mm256_setzero_ps();
    return join(lo, hi);
  } else {
    const __m256i lane = _mm256_setr_epi64x(0, 1, 2, 3);
    const __m256d lo = _mm256_maskload_pd(p, _mm256_cmpgt_epi64(_mm256_set1_epi64x(k), lane));
    const __m256d hi = k > 4 ? _mm256_maskload_pd(p + 4, _mm256_cmpgt_epi64(_mm256_set1_epi64x(k - 4), lane))
                             : _mm256_setzero_pd();
    return join(lo, hi);
  }
#else
  vec<A> v = vec<A>{};
  for (int64_t l = 0; l < k; ++l) v[l] = p[l];
  return v;
#endif
}

template <class A> inline void store_part(A* p, vec<A> x, int64_t k) {
#if defined(__AVX512F__)
  if constexpr (is_f32<A>) _mm512_mask_storeu_ps(p, (__mmask16)((1u << k) - 1u), (__m512)x);
  else _mm512_mask_storeu_pd(p, (__mmask8)((1u << k) - 1u), (__m512d)x);
#else
  for (int64_t l = 0; l < k; ++l) p[l] = x[l];
#endif
}

template <class A> inline vec<A> gather_part(const A* p, int64_t stride, int64_t k) {
#if defined(__AVX512F__)
  if constexpr (is_f32<A>) {
    const __m512i idx = _mm512_mullo_epi32(
        _mm512_set1_epi32((int)stride),
        _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15));
    return (vec<A>)_mm512_mask_i32gather_ps(_mm512_setzero_ps(), (__mmask16)((1u << k) - 1u), idx, p, 4);
  } else {
    const __m256i idx = _mm256_mullo_epi32(_mm256_set1_epi32((int)stride),
                                           _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
    return (vec<A>)_mm512_mask_i32gather_pd(_mm512_setzero_pd(), (__mmask8)((1u << k) - 1u), idx, p, 8);
  }
#elif defined(__AVX2__)
  // Masked gathers, for the reason load_part gives.
  if constexpr (is_f32<A>) {
    const __m256i lane = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
    const __m256i idx = _mm256_mullo_epi32(_mm256_set1_epi32((int)stride), lane);
    const __m256 lo = _mm256_mask_i32gather_ps(_mm256_setzero_ps(), p, idx,
                                               _mm256_castsi256_ps(_mm256_cmpgt_epi32(_mm256_set1_epi32((int)k), lane)), 4);
    const __m256 hi = k > 8 ? _mm256_mask_i32gather_ps(
                                  _mm256_setzero_ps(), p + 8 * stride, idx,
                                  _mm256_castsi256_ps(_mm256_cmpgt_epi32(_mm256_set1_epi32((int)k - 8), lane)), 4)
                            : _mm256_setzero_ps();
    return join(lo, hi);
  } else {
    const __m256i lane = _mm256_setr_epi64x(0, 1, 2, 3);
    const __m128i idx = _mm_mullo_epi32(_mm_set1_epi32((int)stride), _mm_setr_epi32(0, 1, 2, 3));
    const __m256d lo = _mm256_mask_i32gather_pd(_mm256_setzero_pd(), p, idx,
                                                _mm256_castsi256_pd(_mm256_cmpgt_epi64(_mm256_set1_epi64x(k), lane)), 8);
    const __m256d hi = k > 4 ? _mm256_mask_i32gather_pd(
                                   _mm256_setzero_pd(), p + 4 * stride, idx,
                                   _mm256_castsi256_pd(_mm256_cmpgt_epi64(_mm256_set1_epi64x(k - 4), lane)), 8)
                             : _mm256_setzero_pd();
    return join(lo, hi);
  }
#else
  vec<A> v = vec<A>{};
  for (int64_t l = 0; l < k; ++l) v[l] = p[l * stride];
  return v;
#endif
}

// Lanes p[0], p[2], ..., p[2(n-1)] from two contiguous vectors and one
// permute; reads p[0, 2n), one element past the last lane used: only on
// buffers with slack after them (the vertical sums).
template <class A> inline vec<A> even_lanes(const A* p) {
  const vec<A> a = loadu(p), b = loadu(p + simd<A>::n);
#if defined(__clang__)
  if constexpr (is_f32<A>)
    return __builtin_shufflevector(a, b, 0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30);
  else
    return __builtin_shufflevector(a, b, 0, 2, 4, 6, 8, 10, 12, 14);
#else
  if constexpr (is_f32<A>)
    return __builtin_shuffle(a, b, vidx<A>{0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30});
  else
    return __builtin_shuffle(a, b, vidx<A>{0, 2, 4, 6, 8, 10, 12, 14});
#endif
}

// Half storage <-> 16 float lanes, in registers (no conversion buffer):
// lanes [0, k) of p (0 < k <= 16), the others zero; stores write lanes
// [0, k) only. Bit for bit the scalar conversions above (round to nearest
// even; bf16 NaNs quieted), which cover the ISAs without vector ones.
template <class T> inline vec<float> load_half(const T* p, int64_t k) {
#if defined(__AVX512F__) && defined(__AVX512BW__)
  const __m256i h = k == 16 ? _mm256_loadu_si256((const __m256i*)p)
                            : _mm256_maskz_loadu_epi16((__mmask16)((1u << k) - 1u), p);
  if constexpr (same<T, F16>::value) return (vec<float>)_mm512_cvtph_ps(h);
  else return (vec<float>)_mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(h), 16));
#elif defined(__AVX2__) && defined(__F16C__)
  // In registers too: the lanes written one by one into a stack copy and
  // loaded back as a vector stalled on store forwarding. A partial vector
  // is a masked load of its whole pairs, the odd last element blended in.
  __m256i h;
  if (k == 16) {
    h = _mm256_loadu_si256((const __m256i*)p);
  } else {
    const __m256i pairs = _mm256_cmpgt_epi32(_mm256_set1_epi32((int)(k / 2)), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
    h = _mm256_maskload_epi32((const int*)p, pairs);
    if (k & 1) {
      const uint16_t last = reinterpret_cast<const uint16_t*>(p)[k - 1];
      const __m256i at = _mm256_cmpeq_epi16(_mm256_set1_epi16((short)(k - 1)),
                                            _mm256_setr_epi16(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15));
      h = _mm256_blendv_epi8(h, _mm256_set1_epi16((short)last), at);
    }
  }
  const __m128i h0 = _mm256_castsi256_si128(h), h1 = _mm256_extracti128_si256(h, 1);
  if constexpr (same<T, F16>::value) return join(_mm256_cvtph_ps(h0), _mm256_cvtph_ps(h1));
  else
    return join(_mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtepu16_epi32(h0), 16)),
                _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtepu16_epi32(h1), 16)));
#else
  float t[16] = {};
  for (int64_t l = 0; l < k; ++l) t[l] = to_float(p[l]);
  return loadu(t);
#endif
}

template <class T> inline void store_half(T* p, vec<float> x, int64_t k) {
#if defined(__AVX512F__) && defined(__AVX512BW__)
  __m256i h;
  if constexpr (same<T, F16>::value) {
    h = _mm512_cvtps_ph((__m512)x, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  } else {
    // Round to nearest even. NaNs need no case of their own: every value
    // stored here came out of an addition or a division (sums start from
    // 0), which quiets signalling NaNs and keeps an input's payload in the
    // upper 16 bits (bf16 widened), so the rounding add leaves a NaN's
    // upper half as it is - the quiet NaN from_float gives.
    const __m512i u = _mm512_castps_si512((__m512)x);
    const __m512i odd = _mm512_and_si512(_mm512_srli_epi32(u, 16), _mm512_set1_epi32(1));
    const __m512i rounded = _mm512_srli_epi32(_mm512_add_epi32(_mm512_add_epi32(u, _mm512_set1_epi32(0x7fff)), odd), 16);
    h = _mm512_cvtepi32_epi16(rounded);
  }
  if (k == 16) _mm256_storeu_si256((__m256i*)p, h);
  else _mm256_mask_storeu_epi16(p, (__mmask16)((1u << k) - 1u), h);
#elif defined(__AVX2__) && defined(__F16C__)
  // The conversions of the AVX-512 path above, on two ymm halves.
  const __m256 x0 = lo_half(x), x1 = hi_half(x);
  __m256i h;
  if constexpr (same<T, F16>::value) {
    h = _mm256_set_m128i(_mm256_cvtps_ph(x1, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC),
                         _mm256_cvtps_ph(x0, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
  } else {
    auto round = [](__m256 v) {
      const __m256i u = _mm256_castps_si256(v);
      const __m256i odd = _mm256_and_si256(_mm256_srli_epi32(u, 16), _mm256_set1_epi32(1));
      return _mm256_srli_epi32(_mm256_add_epi32(_mm256_add_epi32(u, _mm256_set1_epi32(0x7fff)), odd), 16);
    };
    // packus interleaves the 128-bit lanes (0-3 of x0, 0-3 of x1, 4-7, 4-7);
    // the permute puts them back in order
    h = _mm256_permute4x64_epi64(_mm256_packus_epi32(round(x0), round(x1)), 0xd8);
  }
  if (k == 16) {
    _mm256_storeu_si256((__m256i*)p, h);
  } else {
    uint16_t t[16];
    _mm256_storeu_si256((__m256i*)t, h);
    memcpy(p, t, (size_t)k * sizeof(uint16_t));
  }
#else
  float t[16];
  storeu(t, x);
  for (int64_t l = 0; l < k; ++l) p[l] = from_float<T>(t[l]);
#endif
}

// Lanes [0, k) of p (0 < k <= n) as a vector of the accumulator type A,
// the others zero, whatever the storage type T (A itself, or f16/bf16 with
// A = float); stores write lanes [0, k) only.
template <class A, class T> inline vec<A> load_lanes(const T* p, int64_t k) {
  if constexpr (same<T, A>::value) return k == simd<A>::n ? loadu(p) : load_part(p, k);
  else return load_half(p, k);
}
template <class A, class T> inline void store_lanes(T* p, vec<A> x, int64_t k) {
  if constexpr (same<T, A>::value) {
    if (k == simd<A>::n) storeu(p, x);
    else store_part(p, x, k);
  } else {
    store_half(p, x, k);
  }
}

// Sum of the lanes, as a tree (fast numerics only).
template <class A>
inline A reduce_add(vec<A> a) {
  constexpr int N = simd<A>::n;
  A t[N];
  memcpy(t, &a, sizeof t);
  for (int w = N / 2; w >= 1; w /= 2)
    for (int l = 0; l < w; ++l) t[l] += t[l + w];
  return t[0];
}

// Fast numerics' division: q0 = a * rcp, then one FMA correction (Markstein)
// q = q0 + (a - q0*d) * rcp, which gives the correctly rounded a / d in all
// but rare cases and is always within one rounding of it; lanes where a is
// Inf or NaN keep q0. Without FMA, the true division. (pytorch numerics
// always divides.)
template <class V, class A = typename elem_of<V>::type> inline V quot_fast(V a, V d, V r) {
#if defined(__AVX512F__)
  if constexpr (is_f32<A>) {
    const __m512 q0 = _mm512_mul_ps((__m512)a, (__m512)r);
    const __m512 e = _mm512_fnmadd_ps(q0, (__m512)d, (__m512)a);
    const __m512 q = _mm512_fmadd_ps(e, (__m512)r, q0);
    return (vec<A>)_mm512_mask_blend_ps(_mm512_cmp_ps_mask(e, e, _CMP_ORD_Q), q0, q);
  } else {
    const __m512d q0 = _mm512_mul_pd((__m512d)a, (__m512d)r);
    const __m512d e = _mm512_fnmadd_pd(q0, (__m512d)d, (__m512d)a);
    const __m512d q = _mm512_fmadd_pd(e, (__m512d)r, q0);
    return (vec<A>)_mm512_mask_blend_pd(_mm512_cmp_pd_mask(e, e, _CMP_ORD_Q), q0, q);
  }
#elif defined(__AVX2__) && defined(__FMA__)
  if constexpr (is_f32<A>) {
    union U { vec<A> v; __m256 h[2]; } ua{a}, ud{d}, ur{r}, out;
    for (int k = 0; k < 2; ++k) {
      const __m256 q0 = _mm256_mul_ps(ua.h[k], ur.h[k]);
      const __m256 e = _mm256_fnmadd_ps(q0, ud.h[k], ua.h[k]);
      const __m256 q = _mm256_fmadd_ps(e, ur.h[k], q0);
      out.h[k] = _mm256_blendv_ps(q0, q, _mm256_cmp_ps(e, e, _CMP_ORD_Q));
    }
    return out.v;
  } else {
    union U { vec<A> v; __m256d h[2]; } ua{a}, ud{d}, ur{r}, out;
    for (int k = 0; k < 2; ++k) {
      const __m256d q0 = _mm256_mul_pd(ua.h[k], ur.h[k]);
      const __m256d e = _mm256_fnmadd_pd(q0, ud.h[k], ua.h[k]);
      const __m256d q = _mm256_fmadd_pd(e, ur.h[k], q0);
      out.h[k] = _mm256_blendv_pd(q0, q, _mm256_cmp_pd(e, e, _CMP_ORD_Q));
    }
    return out.v;
  }
#else
  (void)r;
  return a / d;
#endif
}
