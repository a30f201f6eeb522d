// The CPU kernels, compiled once per instruction set. The including file
// defines AVGPOOL_CPU_ISA (the namespace, e.g. avx512) and compiles with the
// matching -m flags; everything here lives in that namespace or in an
// anonymous one, and uses no inline function from another library (see
// cpu_job.h), only intrinsics and plain loops the compiler vectorizes. The
// half types, conversions and vector helpers are simd.inl's, shared with the
// backward kernels.
//
// One block = planes [p0, p1) x output rows [oy0, oy1). Per output row and
// block of output columns:
//   1. the window rows' pointers (f16/bf16: rows converted to float first,
//      one block at a time);
//   2. fast numerics, strided NCHW windows (Job::presum): the vertical sum
//      of those rows over the block's columns (contiguous, SIMD), one
//      streaming pass over the input; otherwise skipped;
//   3. the horizontal pass: each output sums its columns over the rows of
//      step 2 (one row: the vertical sum; pytorch: the window rows in order,
//      so each output adds rows then columns, left to right, from 0);
//      NCHW vectorizes across outputs (compile-time kernel/stride for common
//      cases), NHWC across channels;
//   4. one division by the Problem's divisor (pytorch: a true division;
//      fast: quot_fast), one rounding to the dtype.
// Some jobs take a path of their own instead (run_block): strided copies
// (Job::single), 16 planes at a time (Job::across), global pooling, and
// NCHW rows of one or two outputs summed in scalar (Job::short_rows).
#if defined(__SSE2__)
#include <immintrin.h>
#endif
#include <stdint.h>
#include <string.h>
#include <type_traits>

#include "cpu_job.h"

#ifndef AVGPOOL_CPU_ISA
#error "define AVGPOOL_CPU_ISA before including kernels.inl"
#endif

namespace avgpool {
namespace cpu {
namespace AVGPOOL_CPU_ISA {
namespace {

// Storage types of the half formats (distinct types, 16-bit patterns).
#include "simd.inl"

// ---- step 2: vertical sum of nr >= 2 rows over len elements -----------------
// Rows are taken kGroup at a time, each group in one pass over out: a few
// sequential streams at once (in NCHW a window's rows are contiguous, so
// this reads memory almost like a plain read pass) and out stays in L1.
constexpr int kGroup = 4;
// Software prefetch distance (elements) ahead of each row being summed: in
// NCHW this runs on into the next output row's window rows.
constexpr int64_t kPrefetch = 256;
constexpr int64_t kHalfPrefetch = 2 * kPrefetch;  // f16/bf16 read directly: the same distance in bytes as f32
constexpr int64_t kPrefetchOut = 256;  // elements ahead of the outputs being written
// f16/bf16 rows converted to float: pieces of kConvPiece elements (512
// bytes), prefetched kConvAhead elements ahead.
constexpr int64_t kConvPiece = 256;
constexpr int64_t kConvAhead = 1024;
// AVX-512, f64 NCHW, exact quotients: window columns from which strided
// windows are transposed on ymm vectors (interior).
constexpr int64_t kTransposeWindowF64 = 9;
// Window columns from which the AVX2 build transposes f32/f64 strided
// windows, and the AVX-512 build too where gathers are slow (interior).
constexpr int64_t kTransposeWindow = 3;

// 32-byte vectors (`nvec`: 8 floats, 4 doubles), in the AVX2 and AVX-512
// builds: the AVX2 build's loops whose 64-byte vec<A> GCC 12 moved through
// the stack and general registers instead of keeping it in two ymm
// registers (AVGPOOL_CPU_NARROW_NHWC; see horizontal_nhwc_narrow), and the
// AVX-512 build's NHWC pixels of one such vector or less (horizontal_nhwc).
#if defined(__AVX2__) && defined(__F16C__) && defined(__FMA__)
#define AVGPOOL_CPU_YMM 1
#if !defined(__AVX512F__)
#define AVGPOOL_CPU_NARROW_NHWC 1
#endif
#endif
#if defined(AVGPOOL_CPU_YMM)
template <class A> struct nar;
template <> struct nar<float> {
  typedef float v __attribute__((vector_size(32)));
  typedef float vu __attribute__((vector_size(32), aligned(4), may_alias));
  static constexpr int n = 8;
};
template <> struct nar<double> {
  typedef double v __attribute__((vector_size(32)));
  typedef double vu __attribute__((vector_size(32), aligned(8), may_alias));
  static constexpr int n = 4;
};
template <class A> using nvec = typename nar<A>::v;

// Lanes [0, k) of p (0 < k <= n) as accumulators, the others zero; masked
// loads (vmaskmov; f16/bf16: the whole pairs, an odd last element blended
// in, as load_half), so nothing past lane k is read. Two floats (pixels of
// two channels) are one 8-byte load: windows of a few such pixels waited
// on their vmaskmov loads (33878x2x9x9 k1x3 s1x5 f32, three loads an
// output, see nstore_pieces). Loads of three to seven lanes in pieces
// were up to 2.4x slower in loops over large windows, where vmaskmov was
// not.
template <class T> inline nvec<float> nwiden(__m128i h) {  // 8 f16/bf16 lanes as floats
  if constexpr (same<T, F16>::value) return (nvec<float>)_mm256_cvtph_ps(h);
  else return (nvec<float>)_mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtepu16_epi32(h), 16));
}
template <class A, class T> inline nvec<A> nload(const T* p, int64_t k) {
#if defined(__AVX512VL__) && defined(__AVX512BW__)
  // AVX-512: one masked load (the lanes past k are not read)
  const __mmask8 m = (__mmask8)((1u << k) - 1u);
  if constexpr (same<T, A>::value) {
    if (k == nar<A>::n) return *reinterpret_cast<const typename nar<A>::vu*>(p);
    if constexpr (is_f32<A>) return (nvec<A>)_mm256_maskz_loadu_ps(m, p);
    else return (nvec<A>)_mm256_maskz_loadu_pd(m, p);
  } else {
    return nwiden<T>(_mm_maskz_loadu_epi16(m, p));
  }
#else
  if constexpr (same<T, A>::value) {
    if (k == nar<A>::n) return *reinterpret_cast<const typename nar<A>::vu*>(p);
    if constexpr (is_f32<A>) {
      if (k == 2) return (nvec<A>)_mm256_zextps128_ps256(_mm_castsi128_ps(_mm_loadl_epi64((const __m128i*)p)));
      return (nvec<A>)_mm256_maskload_ps(
          p, _mm256_cmpgt_epi32(_mm256_set1_epi32((int)k), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7)));
    } else {
      return (nvec<A>)_mm256_maskload_pd(p, _mm256_cmpgt_epi64(_mm256_set1_epi64x(k), _mm256_setr_epi64x(0, 1, 2, 3)));
    }
  } else {
    __m128i h;
    if (k == 8) {
      h = _mm_loadu_si128((const __m128i*)p);
    } else {
      h = _mm_maskload_epi32((const int*)p, _mm_cmpgt_epi32(_mm_set1_epi32((int)(k / 2)), _mm_setr_epi32(0, 1, 2, 3)));
      if (k & 1) {
        const uint16_t last = reinterpret_cast<const uint16_t*>(p)[k - 1];
        const __m128i at = _mm_cmpeq_epi16(_mm_set1_epi16((short)(k - 1)), _mm_setr_epi16(0, 1, 2, 3, 4, 5, 6, 7));
        h = _mm_blendv_epi8(h, _mm_set1_epi16((short)last), at);
      }
    }
    return nwiden<T>(h);
  }
#endif
}

// Lanes [0, k) of x to p, rounded to T as store_half does.
template <class T, class A> inline void nstore(T* p, nvec<A> x, int64_t k) {
#if defined(__AVX512VL__) && defined(__AVX512BW__)
  const __mmask8 m = (__mmask8)((1u << k) - 1u);  // AVX-512: one masked store
#else
  constexpr int n = nar<A>::n;
#endif
  if constexpr (same<T, A>::value) {
#if defined(__AVX512VL__) && defined(__AVX512BW__)
    if constexpr (is_f32<A>) _mm256_mask_storeu_ps(p, m, (__m256)x);
    else _mm256_mask_storeu_pd(p, m, (__m256d)x);
#else
    if (k == n) {
      *reinterpret_cast<typename nar<A>::vu*>(p) = x;
    } else {
      for (int64_t l = 0; l < k; ++l) p[l] = x[l];
    }
#endif
  } else {
    __m128i h;
    if constexpr (same<T, F16>::value) {
      h = _mm256_cvtps_ph((__m256)x, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    } else {
      const __m256i u = _mm256_castps_si256((__m256)x);
      const __m256i odd = _mm256_and_si256(_mm256_srli_epi32(u, 16), _mm256_set1_epi32(1));
      const __m256i r = _mm256_srli_epi32(_mm256_add_epi32(_mm256_add_epi32(u, _mm256_set1_epi32(0x7fff)), odd), 16);
      h = _mm_packus_epi32(_mm256_castsi256_si128(r), _mm256_extracti128_si256(r, 1));
    }
#if defined(__AVX512VL__) && defined(__AVX512BW__)
    _mm_mask_storeu_epi16(p, m, h);
#else
    if (k == n) {
      _mm_storeu_si128((__m128i*)p, h);
    } else {
      uint16_t t[8];
      _mm_storeu_si128((__m128i*)t, h);
      memcpy(p, t, (size_t)k * sizeof(uint16_t));
    }
#endif
  }
}

// nstore for the outputs of the NHWC pixel kernels (narrow_outputs):
// partial f32/f64 vectors in pieces of 16, 8 and 4 bytes. The loop over
// the lanes was a memcpy call per output there. 2-core AMD EPYC Zen 3 VM,
// 2026-12-05, two threads, both ways in one process, with the two-float
// loads above: 33878x2x9x9 k1x3 s1x5 f32 6.3 -> 2.7 ms (the plain loop
// 4.2); NHWC pixels that are not whole vectors, sweep seeds 601-700,
// 1.01x over 240 (17 faster by more than 10 %, 4 slower). Every kernel's
// partial stores in pieces (nstore itself, f16/bf16 too) measured 1.03x
// there but left 24 of the 400 rows of seeds 101-102 slower, mostly f16;
// this, 11. f16 NCHW rows, which reach neither, moved 0.83-0.98x from one
// such build to another: the placement of the code, not its instructions.
// The AVX-512 build stores them as nstore does, in one masked store.
template <class T, class A> inline void nstore_pieces(T* p, nvec<A> x, int64_t k) {
#if defined(__AVX512VL__) && defined(__AVX512BW__)
  nstore<T, A>(p, x, k);
#else
  if constexpr (same<T, A>::value) {
    if (k == nar<A>::n) {
      *reinterpret_cast<typename nar<A>::vu*>(p) = x;
    } else if constexpr (is_f32<A>) {
      __m128 part = _mm256_castps256_ps128((__m256)x);
      float* q = p;
      if (k & 4) {
        _mm_storeu_ps(q, part);
        part = _mm256_extractf128_ps((__m256)x, 1);
        q += 4;
      }
      if (k & 2) {
        _mm_storel_epi64((__m128i*)q, _mm_castps_si128(part));
        if (k & 1) _mm_store_ss(q + 2, _mm_movehl_ps(part, part));
      } else if (k & 1) {
        _mm_store_ss(q, part);
      }
    } else {
      const __m128d lo = _mm256_castpd256_pd128((__m256d)x);
      if (k & 2) {
        _mm_storeu_pd(p, lo);
        if (k & 1) _mm_store_sd(p + 2, _mm256_extractf128_pd((__m256d)x, 1));
      } else {
        _mm_store_sd(p, lo);
      }
    }
  } else {
    nstore<T, A>(p, x, k);
  }
#endif
}

// quot_fast on one ymm (the same operations per lane).
template <class A> inline nvec<A> nquot(nvec<A> a, nvec<A> d, nvec<A> r) {
  if constexpr (is_f32<A>) {
    const __m256 q0 = _mm256_mul_ps((__m256)a, (__m256)r);
    const __m256 e = _mm256_fnmadd_ps(q0, (__m256)d, (__m256)a);
    const __m256 q = _mm256_fmadd_ps(e, (__m256)r, q0);
    return (nvec<A>)_mm256_blendv_ps(q0, q, _mm256_cmp_ps(e, e, _CMP_ORD_Q));
  } else {
    const __m256d q0 = _mm256_mul_pd((__m256d)a, (__m256d)r);
    const __m256d e = _mm256_fnmadd_pd(q0, (__m256d)d, (__m256d)a);
    const __m256d q = _mm256_fmadd_pd(e, (__m256d)r, q0);
    return (nvec<A>)_mm256_blendv_pd(q0, q, _mm256_cmp_pd(e, e, _CMP_ORD_Q));
  }
}

// Lanes of one ymm (8 floats, 4 doubles) for the kernels written for either
// vector width (narrow_outputs, column_fours): partial stores in pieces.
template <class A> struct ymm_lanes {
  using v = nvec<A>;
  static constexpr int n = nar<A>::n;
  template <class T> static v load(const T* p, int64_t k) { return nload<A>(p, k); }
  template <class T> static void store(T* p, v x, int64_t k) { nstore_pieces<T, A>(p, x, k); }
  static v quot(v a, v d, v r) { return nquot<A>(a, d, r); }
};

// 8 x 8 transpose of ymm vectors: v[l][j] -> v[j][l] (in registers).
inline void transpose8(nvec<float>* v) {
  __m256 t[8], u[8];
  for (int i = 0; i < 8; i += 2) {
    t[i] = _mm256_unpacklo_ps((__m256)v[i], (__m256)v[i + 1]);
    t[i + 1] = _mm256_unpackhi_ps((__m256)v[i], (__m256)v[i + 1]);
  }
  for (int i = 0; i < 8; i += 4) {
    u[i] = _mm256_shuffle_ps(t[i], t[i + 2], _MM_SHUFFLE(1, 0, 1, 0));
    u[i + 1] = _mm256_shuffle_ps(t[i], t[i + 2], _MM_SHUFFLE(3, 2, 3, 2));
    u[i + 2] = _mm256_shuffle_ps(t[i + 1], t[i + 3], _MM_SHUFFLE(1, 0, 1, 0));
    u[i + 3] = _mm256_shuffle_ps(t[i + 1], t[i + 3], _MM_SHUFFLE(3, 2, 3, 2));
  }
  for (int i = 0; i < 4; ++i) {
    v[i] = (nvec<float>)_mm256_permute2f128_ps(u[i], u[i + 4], 0x20);
    v[i + 4] = (nvec<float>)_mm256_permute2f128_ps(u[i], u[i + 4], 0x31);
  }
}
#endif

// Lanes of the 64-byte vectors, for the same kernels.
template <class A> struct vec_lanes {
  using v = vec<A>;
  static constexpr int n = simd<A>::n;
  template <class T> static v load(const T* p, int64_t k) { return load_lanes<A>(p, k); }
  template <class T> static void store(T* p, v x, int64_t k) { store_lanes<A>(p, x, k); }
  static v quot(v a, v d, v r) { return quot_fast(a, d, r); }
};

#if defined(__AVX512F__) && defined(__AVX512BW__)
// bf16 channels 32 to a 64-byte load, held as two vectors of floats: a bf16
// is the upper half of its float, so the load's dword lanes give the even
// channels by a shift left and the odd ones by masking off the low half
// (as bf16_pair_four does), two integer ops per 32 channels where
// converting them took two vpmovzxwd (port-5 shuffles) and two shifts.
// For the kernels written for any lane type (narrow_pixels): each channel
// adds the same terms in the same order, and stores round as store_half
// does, so the bits are the converting path's.
struct bf16_pair {
  vec<float> even, odd;
  bf16_pair& operator+=(const bf16_pair& x) {
    even += x.even;
    odd += x.odd;
    return *this;
  }
  bf16_pair operator+(float d) const { return {even + d, odd + d}; }
  bf16_pair operator/(const bf16_pair& d) const { return {even / d.even, odd / d.odd}; }
};
struct bf16_pair_lanes {
  using v = bf16_pair;
  using u32 = uint32_t __attribute__((vector_size(64)));
  static constexpr int n = 32;
  // the 32 channels of a 64-byte load as even and odd channels
  static v split(u32 u) { return {(vec<float>)(u << 16), (vec<float>)(u & 0xffff0000u)}; }
  // store_half's round to nearest even, in the low 16 bits of each lane
  static u32 round(vec<float> f) {
    const u32 u = (u32)f;
    return (u + 0x7fffu + ((u >> 16) & 1u)) >> 16;
  }
  static v load(const BF16* p, int64_t k) {
    return split(k == n ? (u32)_mm512_loadu_si512(p) : (u32)_mm512_maskz_loadu_epi16((__mmask32)((1u << k) - 1u), p));
  }
  static void store(BF16* p, v x, int64_t k) {
    const __m512i h = (__m512i)(round(x.even) | (round(x.odd) << 16));
    if (k == n) _mm512_storeu_si512(p, h);
    else _mm512_mask_storeu_epi16(p, (__mmask32)((1ull << k) - 1), h);
  }
  static v quot(v a, v d, v r) { return {quot_fast(a.even, d.even, r.even), quot_fast(a.odd, d.odd, r.odd)}; }
};
#endif

template <int G, bool FIRST, bool PF, class A>
void add_rows(const A* const* rp, int64_t len, A* out) {
#if defined(AVGPOOL_CPU_NARROW_NHWC)
  // AVX2: the same sums in ymm vectors, four per step (the 64-byte stores
  // went through the stack; 20x149x54x54 k5 s5 p1x2 f32 NHWC fast numerics,
  // one thread, fastest of 100 calls: 2.40-2.55 -> 2.12-2.33 ms; NCHW
  // 2x64x512x512 k4 s4 level)
  {
    constexpr int n = nar<A>::n;
    typedef typename nar<A>::vu vu;
    auto ld = [](const A* p) { return (nvec<A>)*reinterpret_cast<const vu*>(p); };
    int64_t i = 0;
    for (; i + 4 * n <= len; i += 4 * n) {
      for (int g = 0; g < G && PF; ++g) {
        __builtin_prefetch(rp[g] + i + kPrefetch, 0, 3);
        __builtin_prefetch(rp[g] + i + kPrefetch + 2 * n, 0, 3);
      }
      nvec<A> s[4];
#pragma GCC unroll 4
      for (int q = 0; q < 4; ++q) s[q] = FIRST ? ld(rp[0] + i + q * n) : ld(out + i + q * n) + ld(rp[0] + i + q * n);
      for (int g = 1; g < G; ++g)
#pragma GCC unroll 4
        for (int q = 0; q < 4; ++q) s[q] += ld(rp[g] + i + q * n);
#pragma GCC unroll 4
      for (int q = 0; q < 4; ++q) *reinterpret_cast<vu*>(out + i + q * n) = s[q];
    }
    for (; i < len; i += n) {
      const int64_t k = imin(n, len - i);
      nvec<A> s0 = FIRST ? nload<A>(rp[0] + i, k) : nload<A>(out + i, k) + nload<A>(rp[0] + i, k);
      for (int g = 1; g < G; ++g) s0 += nload<A>(rp[g] + i, k);
      nstore<A, A>(out + i, s0, k);
    }
    return;
  }
#endif
  constexpr int N = simd<A>::n;
  int64_t i = 0;
  for (; i + 2 * N <= len; i += 2 * N) {
    for (int g = 0; g < G && PF; ++g) {
      __builtin_prefetch(rp[g] + i + kPrefetch, 0, 3);
      __builtin_prefetch(rp[g] + i + kPrefetch + N, 0, 3);
    }
    vec<A> s0 = FIRST ? loadu(rp[0] + i) : loadu(out + i) + loadu(rp[0] + i);
    vec<A> s1 = FIRST ? loadu(rp[0] + i + N) : loadu(out + i + N) + loadu(rp[0] + i + N);
    for (int g = 1; g < G; ++g) {
      s0 += loadu(rp[g] + i);
      s1 += loadu(rp[g] + i + N);
    }
    storeu(out + i, s0);
    storeu(out + i + N, s1);
  }
  for (; i < len; i += N) {
    const int64_t k = imin(N, len - i);
    vec<A> s0 = FIRST ? load_part(rp[0] + i, k) : load_part(out + i, k) + load_part(rp[0] + i, k);
    for (int g = 1; g < G; ++g) s0 += load_part(rp[g] + i, k);
    store_part(out + i, s0, k);
  }
}

template <bool PF, class A>
void vertical_sum_pf(const A* const* rp, int64_t nr, int64_t len, A* out) {
  for (int64_t r = 0; r < nr;) {
    const int64_t g = imin(kGroup, nr - r);
    const bool first = r == 0;
    switch (g) {
      case 1: first ? add_rows<1, true, PF>(rp + r, len, out) : add_rows<1, false, PF>(rp + r, len, out); break;
      case 2: first ? add_rows<2, true, PF>(rp + r, len, out) : add_rows<2, false, PF>(rp + r, len, out); break;
      case 3: first ? add_rows<3, true, PF>(rp + r, len, out) : add_rows<3, false, PF>(rp + r, len, out); break;
      default: first ? add_rows<4, true, PF>(rp + r, len, out) : add_rows<4, false, PF>(rp + r, len, out); break;
    }
    r += g;
  }
}

// Prefetching pays where each input row is read once (stride >= kernel);
// where windows overlap, the rows are in cache already.
template <class A>
void vertical_sum(const Job& jb, const A* const* rp, int64_t nr, int64_t len, A* out) {
  if (jb.prefetch) vertical_sum_pf<true>(rp, nr, len, out);
  else vertical_sum_pf<false>(rp, nr, len, out);
}

// One output's window summed in scalar, from 0, in PyTorch's order: rows in
// order, each row's kw columns from `at` left to right (the kernels' tails
// and the borders' partial windows).
template <class A>
inline A window_sum(const A* const* hr, int64_t hn, int64_t at, int64_t kw) {
  A acc = A(0);
  for (int64_t r = 0; r < hn; ++r)
    for (int64_t j = 0; j < kw; ++j) acc += hr[r][at + j];
  return acc;
}

// The same window with each column summed down the rows first (from its
// first row), then the columns from 0, left to right: the order of
// window_sum over the row sums that vertical_sum forms.
template <class A>
inline A window_sum_columns_first(const A* const* hr, int64_t hn, int64_t at, int64_t kw) {
  A acc = A(0);
  for (int64_t j = 0; j < kw; ++j) {
    A column = hr[0][at + j];
    for (int64_t r = 1; r < hn; ++r) column += hr[r][at + j];
    acc += column;
  }
  return acc;
}

// ---- step 3, NCHW (vec == 1) ------------------------------------------------
// 2 * N outputs side by side, vectorized across outputs: each lane sums its
// window's columns, rows then columns from 0 (PyTorch's order), and
// divides. lanes(p) loads the N window starts sw apart from p; row: the
// first output's window start in each row (hr[r] + at).
template <class A, class Lanes>
__attribute__((always_inline)) inline void two_vectors_of_outputs(const A* const* hr, int64_t hn, int64_t at,
                                                                  int64_t kw, int64_t sw, Lanes lanes,
                                                                  const A* div, const A* rcp, A* out) {
  constexpr int N = simd<A>::n;
  vec<A> a0 = zero<A>(), a1 = zero<A>();
  for (int64_t r = 0; r < hn; ++r) {
    const A* row = hr[r] + at;
    for (int64_t j = 0; j < kw; ++j) {
      a0 += lanes(row + j);
      a1 += lanes(row + j + N * sw);
    }
  }
  if (rcp) {
    storeu(out, quot_fast(a0, loadu(div), loadu(rcp)));
    storeu(out + N, quot_fast(a1, loadu(div + N), loadu(rcp + N)));
  } else {
    storeu(out, a0 / loadu(div));
    storeu(out + N, a1 / loadu(div + N));
  }
}

// Outputs i in [0, n): out[i] = (sum over rows r, then j < kw of
// rows[r][base + i*sw + j], from 0) / div[i]. Vectorized across outputs,
// so each output keeps PyTorch's order; contiguous loads for sw == 1,
// gathers otherwise. KW, SW > 0: compile-time; 0: the run-time kw, sw.
template <int KW, int SW, class A>
void interior_run(const A* const* hr, int64_t hn, int64_t base, int64_t n, int64_t kw_rt,
                  int64_t sw_rt, const A* div, const A* rcp, bool slack, A* out) {
  constexpr int N = simd<A>::n;
  const int64_t kw = KW > 0 ? KW : kw_rt, sw = SW > 0 ? SW : sw_rt;
  int64_t i = 0;
  if (sw < (int64_t(1) << 30) / N) {  // lane offsets fit in int32
    auto lanes = [&](const A* p) {
      if (sw == 1) return loadu(p);
      if (SW == 2 && slack) return even_lanes(p);
      return gather(p, sw);
    };
    for (; i + 2 * N <= n; i += 2 * N)
      two_vectors_of_outputs(hr, hn, base + i * sw, kw, sw, lanes, div + i, rcp ? rcp + i : nullptr, out + i);
    for (; i < n; i += N) {
      const int64_t k = imin(N, n - i);
      vec<A> a0 = zero<A>();
      for (int64_t r = 0; r < hn; ++r) {
        const A* row = hr[r] + base + i * sw;
        for (int64_t j = 0; j < kw; ++j)
          a0 += sw == 1 ? load_part(row + j, k) : gather_part(row + j, sw, k);
      }
      store_part(out + i,
                 rcp ? quot_fast(a0, load_part(div + i, k), load_part(rcp + i, k))
                     : a0 / load_part(div + i, k),
                 k);
    }
  }
  for (; i < n; ++i) out[i] = window_sum(hr, hn, base + i * sw, kw) / div[i];
}

#if defined(AVGPOOL_CPU_NARROW_NHWC)
// interior_run on 32-byte vectors (AVX2 build): GCC 12 moved interior_run's
// 64-byte vec<A> through the stack and general registers here, as it did
// in the NHWC kernels (see horizontal_nhwc_narrow below; perf annotate of
// 32x256x56x56 k3 s1 p1 f32 NCHW: vmovaps/mov/vmovdqa to and from the
// stack around every add; 2-core AMD EPYC AVX2 VM, 2026-12-04, two threads,
// fast numerics, ms: that row 39.7 -> 13.6-15.9, 4x64x1024x1024 k5 s1 p2
// 606 -> 177-195). Each lane is one output, summed in the same order with
// the same division, so the bits are interior_run's.
// Lanes p[0], p[sw], ...: gathers with int32 offsets (sw * n fits).
template <class A> inline nvec<A> ngather(const A* p, int64_t sw) {
  if constexpr (is_f32<A>)
    return (nvec<A>)_mm256_i32gather_ps(p, _mm256_mullo_epi32(_mm256_set1_epi32((int)sw),
                                                              _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7)), 4);
  else
    return (nvec<A>)_mm256_i32gather_pd(p, _mm_mullo_epi32(_mm_set1_epi32((int)sw), _mm_setr_epi32(0, 1, 2, 3)), 8);
}
// Lanes [0, k) of the gather, the others zero; nothing past lane k is read.
template <class A> inline nvec<A> ngather_part(const A* p, int64_t sw, int64_t k) {
  if constexpr (is_f32<A>) {
    const __m256i lane = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
    const __m256 m = _mm256_castsi256_ps(_mm256_cmpgt_epi32(_mm256_set1_epi32((int)k), lane));
    return (nvec<A>)_mm256_mask_i32gather_ps(_mm256_setzero_ps(), p,
                                             _mm256_mullo_epi32(_mm256_set1_epi32((int)sw), lane), m, 4);
  } else {
    const __m128i lane = _mm_setr_epi32(0, 1, 2, 3);
    const __m256d m = _mm256_castsi256_pd(_mm256_cmpgt_epi64(_mm256_set1_epi64x(k), _mm256_setr_epi64x(0, 1, 2, 3)));
    return (nvec<A>)_mm256_mask_i32gather_pd(_mm256_setzero_pd(), p, _mm_mullo_epi32(_mm_set1_epi32((int)sw), lane),
                                             m, 8);
  }
}
// Lanes p[0], p[2], ..., p[2(n-1)]; reads p[0, 2n) (buffers with slack).
template <class A> inline nvec<A> neven(const A* p) {
  const nvec<A> a = nload<A>(p, nar<A>::n), b = nload<A>(p + nar<A>::n, nar<A>::n);
  if constexpr (is_f32<A>) {
    const __m256 e = _mm256_shuffle_ps((__m256)a, (__m256)b, _MM_SHUFFLE(2, 0, 2, 0));  // a0 a2 b0 b2 | a4 a6 b4 b6
    return (nvec<A>)_mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(e), _MM_SHUFFLE(3, 1, 2, 0)));
  } else {
    const __m256d e = _mm256_unpacklo_pd((__m256d)a, (__m256d)b);  // a0 b0 a2 b2
    return (nvec<A>)_mm256_permute4x64_pd(e, _MM_SHUFFLE(3, 1, 2, 0));
  }
}
// One window row's column j for the n outputs from row (already at base + i * sw).
template <int SW, class A> inline nvec<A> nwindow_column(const A* row, int64_t sw, bool slack) {
  if (sw == 1) return nload<A>(row, nar<A>::n);
  if (SW == 2 && slack) return neven<A>(row);
  return ngather<A>(row, sw);
}

template <int KW, int SW, class A>
void interior_run_ymm(const A* const* hr, int64_t hn, int64_t base, int64_t n, int64_t kw_rt, int64_t sw_rt,
                      const A* div, const A* rcp, bool slack, A* out) {
  constexpr int N = nar<A>::n;
  const int64_t kw = KW > 0 ? KW : kw_rt, sw = SW > 0 ? SW : sw_rt;
  auto finish = [&](nvec<A> a, int64_t i, int64_t k) {
    const nvec<A> d = nload<A>(div + i, k);
    nstore<A, A>(out + i, rcp ? nquot<A>(a, d, nload<A>(rcp + i, k)) : a / d, k);
  };
  int64_t i = 0;
  if (sw < (int64_t(1) << 30) / N) {  // lane offsets fit in int32
    for (; i + 4 * N <= n; i += 4 * N) {
      nvec<A> a0 = nvec<A>{}, a1 = nvec<A>{}, a2 = nvec<A>{}, a3 = nvec<A>{};
      for (int64_t r = 0; r < hn; ++r) {
        const A* row = hr[r] + base + i * sw;
        for (int64_t j = 0; j < kw; ++j) {
          a0 += nwindow_column<SW, A>(row + j, sw, slack);
          a1 += nwindow_column<SW, A>(row + j + N * sw, sw, slack);
          a2 += nwindow_column<SW, A>(row + j + 2 * N * sw, sw, slack);
          a3 += nwindow_column<SW, A>(row + j + 3 * N * sw, sw, slack);
        }
      }
      finish(a0, i, N);
      finish(a1, i + N, N);
      finish(a2, i + 2 * N, N);
      finish(a3, i + 3 * N, N);
    }
    for (; i < n; i += N) {
      const int64_t k = imin(N, n - i);
      nvec<A> a0 = nvec<A>{};
      for (int64_t r = 0; r < hn; ++r) {
        const A* row = hr[r] + base + i * sw;
        for (int64_t j = 0; j < kw; ++j) a0 += sw == 1 ? nload<A>(row + j, k) : ngather_part<A>(row + j, sw, k);
      }
      finish(a0, i, k);
    }
  }
  for (; i < n; ++i) out[i] = window_sum(hr, hn, base + i * sw, kw) / div[i];
}
#endif

#if defined(AVGPOOL_CPU_YMM)
// 4 x 4 transpose of ymm vectors of doubles: v[l][j] -> v[j][l].
inline void transpose4(nvec<double>* v) {
  const __m256d t0 = _mm256_unpacklo_pd((__m256d)v[0], (__m256d)v[1]), t1 = _mm256_unpackhi_pd((__m256d)v[0], (__m256d)v[1]);
  const __m256d t2 = _mm256_unpacklo_pd((__m256d)v[2], (__m256d)v[3]), t3 = _mm256_unpackhi_pd((__m256d)v[2], (__m256d)v[3]);
  v[0] = (nvec<double>)_mm256_permute2f128_pd(t0, t2, 0x20);
  v[1] = (nvec<double>)_mm256_permute2f128_pd(t1, t3, 0x20);
  v[2] = (nvec<double>)_mm256_permute2f128_pd(t0, t2, 0x31);
  v[3] = (nvec<double>)_mm256_permute2f128_pd(t1, t3, 0x31);
}
// Strided windows on 32-byte vectors (AVX2 build; AVX-512: f64, see
// interior): lane l is output i + l;
// per window row, N columns (8 floats, 4 doubles) of each of the N windows
// are loaded as one vector each (the last block of columns masked) and
// transposed in registers, then added column by column, so each lane adds
// its window's columns left to right, rows in order: interior_run_ymm's
// sums, bit for bit, with N loads and a transpose per N columns instead of
// N gathers. The last block is loaded whole where that stays inside the
// rows' memory (its columns past the window are loaded, transposed and not
// added): before `end` on the input's own rows, always on rows in scratch,
// which have slack after them (cpu_job.h). 2-core AMD EPYC Zen 3 VM,
// 2026-12-05, two threads, both ways in one process, fastest of 7, NCHW
// f32/f16/bf16 rows of 8+ outputs of sweep seeds 601-700: pytorch numerics
// 1.04x over 120 (windows of fewer than 8 columns 1.05x, 13 faster by more
// than 10 %, none slower), fast numerics (mostly over row sums) 1.01x over
// 80; 2x278x235x235 k8x6 s8x6 f32 pytorch numerics 13.5-13.9 -> 9.4-10.2
// ms, the plain loop 11.9-12.4.
template <class A>
void transposed_windows_ymm(const A* const* hr, int64_t hn, int64_t base, int64_t n, int64_t kw, int64_t sw,
                            const A* end, const A* div, const A* rcp, A* out) {
  constexpr int N = nar<A>::n;
  const int64_t last_block = (kw - 1) / N * N;  // its first column
  int64_t i = 0;
  for (; i + N <= n; i += N) {
    const bool whole = !end || hn == 0 || end - hr[hn - 1] >= base + (i + N - 1) * sw + last_block + N;
    nvec<A> a = nvec<A>{};
    for (int64_t r = 0; r < hn; ++r) {
      const A* row = hr[r] + base + i * sw;
      for (int64_t j0 = 0; j0 < kw; j0 += N) {
        const int64_t k = imin(N, kw - j0);
        nvec<A> v[N];
        for (int q = 0; q < N; ++q) v[q] = nload<A, A>(row + q * sw + j0, whole ? N : k);
        if constexpr (is_f32<A>) transpose8(v);
        else transpose4(v);
        for (int64_t j = 0; j < k; ++j) a += v[j];
      }
    }
    const nvec<A> d = nload<A, A>(div + i, N);
    nstore<A, A>(out + i, rcp ? nquot<A>(a, d, nload<A, A>(rcp + i, N)) : a / d, N);
  }
  for (; i < n; ++i) {
    const A acc = window_sum(hr, hn, base + i * sw, kw);
    out[i] = rcp ? nquot<A>(nvec<A>{} + acc, nvec<A>{} + div[i], nvec<A>{} + rcp[i])[0] : acc / div[i];
  }
}
#endif

// Fast numerics, NCHW, stride 1 or 2 (kernel 2 or 3), AVX-512: the window
// rows are summed in registers, N columns at a time, and the columns by
// permutes of consecutive column sums (no buffer, so no store-to-load
// stalls, and hn + kw loads per N outputs instead of hn * kw).
#if defined(__AVX512F__)

// Lanes idx[l] of the concatenation (a, b): vpermt2ps / vpermt2pd.
template <class V, class A = typename elem_of<V>::type> inline V perm2(V a, V b, vidx<A> idx) {
  if constexpr (is_f32<A>)
    return (vec<A>)_mm512_permutex2var_ps((__m512)a, (__m512i)idx, (__m512)b);
  else
    return (vec<A>)_mm512_permutex2var_pd((__m512d)a, (__m512i)idx, (__m512d)b);
}

// Column sums of the hn rows at columns [c, c + N), zero past `end`.
template <class A>
inline vec<A> column_sums(const A* const* hr, int64_t hn, int64_t c, int64_t end, bool pf) {
  constexpr int N = simd<A>::n;
  vec<A> a = zero<A>();
  const int64_t k = end - c;
  if (k >= N) {
    for (int64_t r = 0; r < hn; ++r) {
      if (pf) __builtin_prefetch(hr[r] + c + kPrefetch, 0, 3);
      a += loadu(hr[r] + c);
    }
  } else if (k > 0) {
    for (int64_t r = 0; r < hn; ++r) a += load_part(hr[r] + c, k);
  }
  return a;
}

template <class A>
void fused_s1(const A* const* hr, int64_t hn, int64_t base, int64_t n, int64_t kw, const A* div,
              const A* rcp, bool pf, A* out) {
  constexpr int N = simd<A>::n;
  const vidx<A> lane = iota<A>();
  const int64_t end = base + n + kw - 1;
  vec<A> cur = column_sums(hr, hn, base, end, pf);
  for (int64_t i = 0; i < n; i += N) {
    // the window's last row (new to this output row) and the outputs ahead
    if (hn > 0) __builtin_prefetch(hr[hn - 1] + base + i + kPrefetch, 0, 3);
    __builtin_prefetch(out + i + kPrefetchOut, 1, 3);
    const vec<A> nxt = column_sums(hr, hn, base + i + N, end, pf);
    vec<A> acc = cur;
    for (int64_t j = 1; j < kw; ++j) acc += perm2(cur, nxt, lane + (int)j);
    const int64_t k = imin(N, n - i);
    if (k == N) storeu(out + i, quot_fast(acc, loadu(div + i), loadu(rcp + i)));
    else store_part(out + i, quot_fast(acc, load_part(div + i, k), load_part(rcp + i, k)), k);
    cur = nxt;
  }
}

template <class A>
void fused_s2(const A* const* hr, int64_t hn, int64_t base, int64_t n, int64_t kw, const A* div,
              const A* rcp, bool pf, A* out) {
  constexpr int N = simd<A>::n;
  const vidx<A> lane = iota<A>();
  const vidx<A> even = lane * 2, odd = lane * 2 + 1, shift2 = lane + 2;
  const int64_t end = base + 2 * (n - 1) + kw;
  vec<A> a = column_sums(hr, hn, base, end, pf);
  for (int64_t i = 0; i < n; i += N) {
    const int64_t c = base + 2 * i;
    const vec<A> b = column_sums(hr, hn, c + N, end, pf);
    vec<A> acc = perm2(a, b, even) + perm2(a, b, odd);
    vec<A> next = zero<A>();
    if (kw == 3) {
      next = column_sums(hr, hn, c + 2 * N, end, pf);
      acc += perm2(perm2(a, b, shift2), perm2(b, next, shift2), even);
    }
    const int64_t k = imin(N, n - i);
    if (k == N) storeu(out + i, quot_fast(acc, loadu(div + i), loadu(rcp + i)));
    else store_part(out + i, quot_fast(acc, load_part(div + i, k), load_part(rcp + i, k)), k);
    a = kw == 3 ? next : column_sums(hr, hn, c + 2 * N, end, pf);
  }
}

// Whether the fused kernels take this job's interior columns.
template <class A>
inline bool fused_applies(const Job& jb) {
  return jb.rcp_table != nullptr && jb.vec == 1 &&
         ((jb.sw == 1 && jb.kw <= simd<A>::n) || (jb.sw == 2 && (jb.kw == 2 || jb.kw == 3)));
}
#else
template <class A>
inline bool fused_applies(const Job&) { return false; }
#endif

#if defined(__AVX512F__)
// r[l][j] -> r[j][l] for a 16 x 16 float tile.
inline void transpose16(__m512* r) {
  __m512 t[16];
  for (int i = 0; i < 16; i += 2) {
    t[i] = _mm512_unpacklo_ps(r[i], r[i + 1]);
    t[i + 1] = _mm512_unpackhi_ps(r[i], r[i + 1]);
  }
  for (int i = 0; i < 16; i += 4) {
    r[i] = _mm512_shuffle_ps(t[i], t[i + 2], _MM_SHUFFLE(1, 0, 1, 0));
    r[i + 1] = _mm512_shuffle_ps(t[i], t[i + 2], _MM_SHUFFLE(3, 2, 3, 2));
    r[i + 2] = _mm512_shuffle_ps(t[i + 1], t[i + 3], _MM_SHUFFLE(1, 0, 1, 0));
    r[i + 3] = _mm512_shuffle_ps(t[i + 1], t[i + 3], _MM_SHUFFLE(3, 2, 3, 2));
  }
  for (int i = 0; i < 4; ++i) {
    t[i] = _mm512_shuffle_f32x4(r[i], r[i + 4], 0x88);
    t[i + 4] = _mm512_shuffle_f32x4(r[i], r[i + 4], 0xdd);
    t[i + 8] = _mm512_shuffle_f32x4(r[i + 8], r[i + 12], 0x88);
    t[i + 12] = _mm512_shuffle_f32x4(r[i + 8], r[i + 12], 0xdd);
  }
  for (int i = 0; i < 8; ++i) {
    r[i] = _mm512_shuffle_f32x4(t[i], t[i + 8], 0x88);
    r[i + 8] = _mm512_shuffle_f32x4(t[i], t[i + 8], 0xdd);
  }
}

// Wide strided windows, f32, NCHW (kw >= 16, sw >= 2, and narrower ones,
// see interior): lane l = output
// i + l. Per window row, 16 columns of each lane's window are loaded as one
// vector each (lane l's at row + l * sw + t; no gathers), transposed, and
// added column by column: each lane adds its window's columns left to
// right, rows in order, so pytorch numerics keeps PyTorch's order. Gathers
// (one column of 16 windows each) ran at 0.11 of a read pass for k32 s16.
inline void transposed_windows(const float* const* hr, int64_t hn, int64_t base, int64_t n, int64_t kw,
                               int64_t sw, const float* div, const float* rcp, float* out) {
  for (int64_t i = 0; i < n; i += 16) {
    const int64_t k = imin(16, n - i);
    __m512 acc = _mm512_setzero_ps();
    for (int64_t r = 0; r < hn; ++r) {
      const float* row = hr[r] + base + i * sw;
      for (int64_t t = 0; t < kw; t += 16) {
        const int64_t m = imin(16, kw - t);
        __m512 v[16];
        if (k == 16 && m == 16) {
#pragma GCC unroll 16
          for (int l = 0; l < 16; ++l) v[l] = _mm512_loadu_ps(row + l * sw + t);
        } else {
          for (int l = 0; l < 16; ++l)
            v[l] = l < k ? (__m512)load_part(row + l * sw + t, m) : _mm512_setzero_ps();
        }
        transpose16(v);
        if (m == 16) {
#pragma GCC unroll 16
          for (int j = 0; j < 16; ++j) acc = _mm512_add_ps(acc, v[j]);
        } else {
          for (int64_t j = 0; j < m; ++j) acc = _mm512_add_ps(acc, v[j]);
        }
      }
    }
    const vec<float> a = (vec<float>)acc, d = load_part(div + i, k);
    store_part(out + i, rcp ? quot_fast(a, d, load_part(rcp + i, k)) : a / d, k);
  }
}
#endif

// Pytorch numerics, tall windows (Job::tall), NCHW, stride 1 along the
// row: the outputs accumulate window row by window row (rows outer), four
// vectors of outputs in registers per pass over a row's columns, then back
// in `out`; every output still adds rows then columns (left to right) from
// 0, PyTorch's order. The window rows are then read in memory order instead
// of as a column of hn rows per two vectors of outputs (interior_run), which
// for a (4096, 1) window walked 4096 rows 16 KiB apart per pass: 3.9 ->
// 1.8 ms on 1x1x4096x4096 (0.33 -> 0.62-0.70 of a read pass).
template <class A>
void tall_rows(const A* const* hr, int64_t hn, int64_t base, int64_t n, int64_t kw, const A* div, A* out) {
  constexpr int N = simd<A>::n;
  for (int64_t i = 0; i < n; i += N) store_part(out + i, zero<A>(), imin(N, n - i));
  for (int64_t r = 0; r < hn; ++r) {
    const A* row = hr[r] + base;
    int64_t i = 0;
    for (; i + 4 * N <= n; i += 4 * N) {
      vec<A> a0 = loadu(out + i), a1 = loadu(out + i + N), a2 = loadu(out + i + 2 * N),
             a3 = loadu(out + i + 3 * N);
      for (int64_t j = 0; j < kw; ++j) {
        a0 += loadu(row + i + j);
        a1 += loadu(row + i + j + N);
        a2 += loadu(row + i + j + 2 * N);
        a3 += loadu(row + i + j + 3 * N);
      }
      storeu(out + i, a0);
      storeu(out + i + N, a1);
      storeu(out + i + 2 * N, a2);
      storeu(out + i + 3 * N, a3);
    }
    for (; i < n; i += N) {
      const int64_t k = imin(N, n - i);
      vec<A> a = load_part(out + i, k);
      for (int64_t j = 0; j < kw; ++j) a += load_part(row + i + j, k);
      store_part(out + i, a, k);
    }
  }
  for (int64_t i = 0; i < n; i += N) {
    const int64_t k = imin(N, n - i);
    store_part(out + i, load_part(out + i, k) / load_part(div + i, k), k);
  }
}

#if defined(__AVX512F__)
// Lanes p[0], p[SW], ..., p[(N - 1) * SW] (SW = 2-4): SW vector loads and
// one or two permutes (vpermt2ps / vpermt2pd) and a blend. Reads p[0, SW * N).
template <int SW, class A> inline vec<A> strided_lanes(const A* p) {
  constexpr int N = simd<A>::n;
  if constexpr (SW == 2) {
    return even_lanes(p);
  } else {
    const vidx<A> at = iota<A>() * SW;
    const vec<A> v0 = loadu(p), v1 = loadu(p + N);
    const vec<A> v2 = loadu(p + 2 * N);
    const vec<A> v3 = SW == 4 ? loadu(p + 3 * N) : v2;
    const vec<A> a = perm2(v0, v1, at), b = perm2(v2, v3, at - 2 * N);
    constexpr int first = (2 * N + SW - 1) / SW;  // lanes from (v0, v1)
    if constexpr (is_f32<A>)
      return (vec<A>)_mm512_mask_blend_ps((__mmask16)(0xffffu << first), (__m512)a, (__m512)b);
    else
      return (vec<A>)_mm512_mask_blend_pd((__mmask8)(0xffu << first), (__m512d)a, (__m512d)b);
  }
}

// interior_run at column strides of 2-4 with strided_lanes instead of
// gathers or transposes: each lane adds its window's columns in the same
// order (the same bits). Groups whose loads would pass `end` (the input's
// end, for the input's own rows; nullptr: rows in scratch, which have
// slack after them) are left to interior_run.
template <int SW, class A>
void strided_run(const A* const* hr, int64_t hn, int64_t base, int64_t n, int64_t kw, const A* div,
                 const A* rcp, const A* end, bool slack, A* out) {
  constexpr int N = simd<A>::n;
  auto lanes = [](const A* p) { return strided_lanes<SW>(p); };
  int64_t i = 0;
  for (; i + 2 * N <= n; i += 2 * N) {
    if (end != nullptr && hn > 0 && hr[hn - 1] + base + i * SW + kw - 1 + 2 * N * SW > end) break;
    two_vectors_of_outputs(hr, hn, base + i * SW, kw, SW, lanes, div + i, rcp ? rcp + i : nullptr, out + i);
  }
  if (i < n)
    interior_run<0, SW, A>(hr, hn, base + i * SW, n - i, kw, SW, div + i, rcp ? rcp + i : nullptr, slack, out + i);
}
#endif

// The end of the job's input where the window rows are its own rows
// (`input`; loads must not pass it), else nullptr (rows in scratch).
template <class A> inline const A* input_end(const Job& jb, bool input) {
  return input ? static_cast<const A*>(jb.src) + jb.planes * jb.h * jb.w : nullptr;
}

template <class A>
void interior(const Job& jb, const A* const* hr, int64_t hn, int64_t base, int64_t n,
              const A* div, const A* rcp, bool slack, bool input, A* out) {
  (void)input;  // only the strided runs and the transposed ymm windows need it
  if (rcp == nullptr && jb.tall && jb.sw == 1 && hn > 1) return tall_rows(hr, hn, base, n, jb.kw, div, out);
#if defined(__AVX512F__)
  if (rcp != nullptr && fused_applies<A>(jb)) {
    if (jb.sw == 1)
      return fused_s1(hr, hn, base, n, jb.kw, div, rcp, jb.prefetch, out);
    return fused_s2(hr, hn, base, n, jb.kw, div, rcp, jb.prefetch, out);
  }
#endif
#if defined(__AVX512F__)
  // Column strides of 2 (f32 and f64) and 3-4 (f32): strided_run, where
  // the others gathered or transposed (the 16 x 16 transposes of
  // transposed_windows below took 64 shuffles per 16 columns of 16
  // windows; strided_lanes two per column). 2-core Intel Xeon AVX-512 VM,
  // 2026-12-05, two threads, best of two of each alternated, NCHW rows of
  // 16+ outputs at strides 2-4: tuned on 60 of sweep seeds 105-125, pytorch
  // / fast numerics 1.19x / 1.07x, 25 / 14 faster by more than 10 %, 1 / 0
  // slower (f64 at strides 3-4 0.96-1.00x, so not taken); not tuned on, 71
  // more of those seeds: 1.20x / 1.06x, 38 / 20 faster, none slower (worst
  // 0.92x); 1x558x365x350 k2x8 s1x3 ceil bf16 pytorch numerics 39.4 ->
  // 24.7 ms, oneDNN 25.9.
  if (jb.sw == 2 || (is_f32<A> && (jb.sw == 3 || jb.sw == 4))) {
    const A* end = input_end<A>(jb, input);
    if (jb.sw == 2) return strided_run<2, A>(hr, hn, base, n, jb.kw, div, rcp, end, slack, out);
    if (jb.sw == 3) return strided_run<3, A>(hr, hn, base, n, jb.kw, div, rcp, end, slack, out);
    return strided_run<4, A>(hr, hn, base, n, jb.kw, div, rcp, end, slack, out);
  }
  if constexpr (is_f32<A>) {
    // Pytorch numerics also for narrower windows of 9 columns or more, and
    // of 5 or more that overlap along the row (2-core AMD EPYC AVX-512 VM,
    // 2026-12-01, f32 NCHW, ms against the windows below: 2x64x2048^2 k11
    // 225 -> 140, 16x64x256^2 k9 50 -> 29, k10 50 -> 27, k5 s2 88 -> 69,
    // k6 s2 139 -> 104, k7 s3 100 -> 75, 4x64x512^2 k11 s4 100 -> 48; but
    // k5 s5 40 -> 51, k7 s7 39 -> 45, k8 s8 33 -> 35, k3 s2 32 -> 35, k2 s2
    // 49 -> 57: there the compiled windows stay). The same windows in fast
    // numerics, over the row of vertical sums (same VM, alternated with
    // oneDNN in the run): 2x64x2048^2 k11 42.3 -> 37.2 ms, 4x64x512^2 k11
    // s4 14.2 -> 9.8, 16x64x256^2 k7 s3 20.1 -> 16.2, k5 s2 21.0 -> 18.3,
    // k9 6.5 -> 6.1, 8x186x74^2 k6 s3 1.67 -> 1.48, 1619x8x14^2 k11 s6
    // 0.46 -> 0.29.
    const bool narrow = jb.kw >= 9 || (jb.kw >= 5 && jb.sw < jb.kw);
    if ((jb.kw >= 16 || narrow) && jb.sw >= 2 && jb.sw < (int64_t(1) << 26))
      return transposed_windows(hr, hn, base, n, jb.kw, jb.sw, div, rcp, out);
  }
#if defined(AVGPOOL_CPU_YMM)
  // Where gathers are slow (Job::slow_gathers), the other strided windows
  // of kTransposeWindow columns or more (strides 2, and 3-4 in f32, took
  // strided_run above): eight (f32) or four (f64) windows' columns
  // transposed on ymm vectors, as the AVX2 build does, instead of gathered
  // column by column (the same bits), in both numerics.
  // f32/f16/bf16: 2-core AMD EPYC Zen 4 AVX-512 VM, 2026-12-07, two
  // threads, both ways alternated, best of two, NCHW rows of 8+ outputs, kw
  // 3-8, sw >= 5: tuned on 40 of generator seeds 18501-18700 (pytorch /
  // fast numerics 1.66x / 1.16x, none slower by more than 10 %); not tuned
  // on, 45 more: 1.53x / 1.17x, 28 / 31 faster by more than 10 %, none
  // slower by as much (worst 0.92x / 0.90x). 1x284x198x198 k10x5 s10x5
  // ceil excl bf16 pytorch numerics 3.05 -> 1.66 ms (oneDNN 1.21).
  // f64: the same VM and day, both ways in turn, fastest round, NCHW rows
  // of 8+ outputs with kw 3-8 and sw >= 3: tuned on 40 of seeds 300-301
  // (pytorch numerics 2.10x, none slower by more than 10 %; fast numerics
  // 1.18x, 3 slower); not tuned on, 41 more: pytorch numerics 2.21x (kw 3-4
  // 2.13x over 14), 1 slower (0.86x), fast numerics 1.23x, 1 slower
  // (0.89x); 165x3x29x384 k10x7 s12x7 excl pytorch numerics 3.90 -> 0.65
  // ms, the plain loop 1.14.
  if (jb.slow_gathers && jb.kw >= kTransposeWindow && jb.sw >= 2 && jb.sw < (int64_t(1) << 26))
    return transposed_windows_ymm(hr, hn, base, n, jb.kw, jb.sw, input_end<A>(jb, input), div, rcp, out);
  // f64 windows of kTransposeWindowF64 columns or more at column strides of
  // 3 or more, divided exactly (pytorch numerics), wherever gathers run:
  // the same transposes. 2-core Intel Xeon AVX-512 VM, 2026-12-07, two
  // threads, both ways alternated, best of two, pytorch numerics, NCHW f64
  // rows of 17+ outputs: tuned on seeds 17601-17625 (windows of 9+ columns
  // 1.07x over 45, 5-8 columns 1.05x, 3-4 columns 0.92x; fast numerics'
  // quotients by reciprocal 0.95x); not tuned on, the 34 of 9+ columns of
  // seeds 17626-17660: 1.066x, 14 faster by more than 10 %, 2 slower (5-8
  // columns 1.01x over 65); 35x294x8x395 k8x9 s8x9 14.1 -> 10.2 ms,
  // 6x5x990x990 k9 s9 excl 9.4 -> 8.1 (the plain loop 7.4).
  if constexpr (!is_f32<A>)
    if (rcp == nullptr && jb.kw >= kTransposeWindowF64 && jb.sw >= 3 && jb.sw < (int64_t(1) << 26))
      return transposed_windows_ymm(hr, hn, base, n, jb.kw, jb.sw, input_end<A>(jb, input), div, rcp, out);
#endif
#endif
#if defined(AVGPOOL_CPU_NARROW_NHWC)
  // Windows of kTransposeWindow columns or more at column strides of 2 or
  // more, but for k3 s2 over row sums (neven's shuffles below): transposed
  // 8 (f32) or 4 (f64) columns at a time instead of gathered column by
  // column.
  // 2-core AMD EPYC Zen 3 VM, 2026-12-05, two threads, both ways in one
  // process, rounds alternated, fastest of 7, NCHW f32/f16/bf16 rows of 3+
  // outputs: tuned on sweep seeds 500-530, pytorch numerics 1.35x over
  // 293 (windows of 1-2 columns level, 3 columns 1.13x, 6-9 columns
  // 1.47-1.57x), fast numerics' 3-6 columns 1.10x over 168 (k3 s2 over row
  // sums 0.88x); on seeds 531-600, not tuned on: pytorch numerics 1.31x
  // over 209, 81 faster by more than 10 %, none slower by as much in the
  // median (2x1x1727x1727 k11 s2 p3 47.5 -> 14.0 ms), fast numerics' 3-6
  // columns 1.07x over 80, none slower. f64, on the rows the scalar rows
  // do not take (the same method, seeds 500-560, while fast numerics'
  // windows of 7+ columns were summed by another kernel, since removed):
  // tuned on half, windows of 1-2 columns level, 3-6 columns 1.05-1.27x;
  // the other half, not tuned on, from 3 columns: 1.13x over 101 (pytorch
  // numerics 1.22x over 15), one slower by more than 10 % (20x109x81x81 k3
  // s3 p1 0.84x).
  if (jb.kw >= kTransposeWindow && jb.sw >= 2 && jb.sw < (int64_t(1) << 26) &&
      !(jb.kw == 3 && jb.sw == 2 && slack))
    return transposed_windows_ymm(hr, hn, base, n, jb.kw, jb.sw,
                                  input_end<A>(jb, input), div,
                                  rcp, out);
#define AVGPOOL_INTERIOR_RUN interior_run_ymm
#else
#define AVGPOOL_INTERIOR_RUN interior_run
#endif
#define AVGPOOL_CASE(K, S) \
  if (jb.kw == K && jb.sw == S) return AVGPOOL_INTERIOR_RUN<K, S, A>(hr, hn, base, n, K, S, div, rcp, slack, out);
  AVGPOOL_CASE(2, 2) AVGPOOL_CASE(3, 1) AVGPOOL_CASE(3, 2) AVGPOOL_CASE(5, 1) AVGPOOL_CASE(7, 1)
#if !defined(AVGPOOL_CPU_NARROW_NHWC)  // the AVX2 build transposes these above
  AVGPOOL_CASE(3, 3) AVGPOOL_CASE(4, 4) AVGPOOL_CASE(7, 7) AVGPOOL_CASE(11, 4) AVGPOOL_CASE(11, 11)
#endif
#undef AVGPOOL_CASE
  if (jb.sw == 1) return AVGPOOL_INTERIOR_RUN<0, 1, A>(hr, hn, base, n, jb.kw, 1, div, rcp, slack, out);
  AVGPOOL_INTERIOR_RUN<0, 0, A>(hr, hn, base, n, jb.kw, jb.sw, div, rcp, slack, out);
#undef AVGPOOL_INTERIOR_RUN
}

// Any output column from the table (borders: partial windows).
template <class A>
inline A column_sum(const Job& jb, const A* const* hr, int64_t hn, int64_t xa, int64_t ox,
                    bool columns_first = false) {
  const int64_t at = jb.cols[ox].begin - xa, kw = jb.cols[ox].end - jb.cols[ox].begin;
  return columns_first ? window_sum_columns_first(hr, hn, at, kw) : window_sum(hr, hn, at, kw);
}

// Fast numerics, one row of row sums, windows of 4 vectors or more: each
// output sums its contiguous columns with vector loads and a tree at the end
// (vectorizing across outputs would take kw gathers per vector of outputs;
// a global window has one output).
template <class A>
void wide_windows_nchw(const Job& jb, const A* row, int64_t xa, int64_t ob0, int64_t ob1, const A* div,
                       const A* rcp, A* out) {
  constexpr int N = simd<A>::n;
  for (int64_t ox = ob0; ox < ob1; ++ox) {
    const int64_t b = jb.cols[ox].begin - xa, e = jb.cols[ox].end - xa;
    vec<A> a0 = zero<A>(), a1 = zero<A>();
    int64_t x = b;
    for (; x + 2 * N <= e; x += 2 * N) {
      a0 += loadu(row + x);
      a1 += loadu(row + x + N);
    }
    for (; x < e; x += N) a0 += load_part(row + x, imin(N, e - x));
    const vec<A> a = zero<A>() + reduce_add<A>(a0 + a1);
    const vec<A> d = zero<A>() + div[ox];
    out[ox - ob0] = (rcp ? quot_fast(a, d, zero<A>() + rcp[ox]) : a / d)[0];
  }
}

template <class A>
void horizontal_nchw(const Job& jb, const A* const* hr, int64_t hn, int64_t xa, int64_t ob0,
                     int64_t ob1, const A* div, const A* rcp, bool slack, bool input, A* out) {
  // slack: hr is the row sums, which only fast numerics forms; input: hr
  // are the input's own rows (otherwise rows in scratch)
  if (slack && jb.kw >= 4 * simd<A>::n) return wide_windows_nchw(jb, hr[0], xa, ob0, ob1, div, rcp, out);
  // Rows left unsummed where the job sums rows first (Job::presum): the
  // AVX-512 fused kernel of k2/k3 at stride 2 sums them in registers. The
  // outputs beside it then add each column down the rows first, as the
  // other builds do over row sums, so that every instruction set gives
  // the same bits.
  const bool columns_first = jb.presum && !slack && hn > 1;
  auto one = [&](int64_t ox) { out[ox - ob0] = column_sum(jb, hr, hn, xa, ox, columns_first) / div[ox]; };
  const int64_t i0 = imin(imax(ob0, jb.ox_lo), ob1), i1 = imax(imin(ob1, jb.ox_hi), i0);
  for (int64_t ox = ob0; ox < i0; ++ox) one(ox);
  if (jb.short_rows) {  // Job::short_rows: one or two outputs; vectors would be mostly empty lanes
    for (int64_t ox = i0; ox < i1; ++ox) one(ox);
  } else if (i1 > i0)
    interior(jb, hr, hn, jb.cols[i0].begin - xa, i1 - i0, div + i0, rcp ? rcp + i0 : nullptr,
             slack, input, out + (i0 - ob0));
  for (int64_t ox = i1; ox < ob1; ++ox) one(ox);
}

// ---- step 3, NHWC (vec = channels) -----------------------------------------
constexpr int64_t kWideChannels = 256;
constexpr int64_t kWideAheadInput = int64_t(24) << 20;  // input bytes from which wide pixels prefetch one output ahead
// Vectorized across channels: each output keeps PyTorch's order.
// Full, 64-byte aligned vector store; non-temporal (no read-for-ownership
// of dst, which is far larger than the caches) when NT.
template <bool NT, class A>
inline void store_out(A* p, vec<A> x) {
#if defined(__AVX512F__)
  if constexpr (NT) {
    if constexpr (is_f32<A>) _mm512_stream_ps((float*)p, (__m512)x);
    else _mm512_stream_pd((double*)p, (__m512d)x);
    return;
  }
#endif
  storeu(p, x);
}

// Pixels of one or two channel vectors (NV; float accumulators): outputs
// four at a time where four in a row have windows of one length (all but
// the edges), summed side by side in registers, each still adding rows then
// columns in order. One output's chain waits on each of its kh * kw adds in
// turn, which was the whole cost with few channels. (An array of
// accumulators indexed by output stayed on the stack; hence the names.)
// 2-core Intel Xeon VM, 2026-12-02, best of two runs each, against one
// output at a time: the 22 configurations of one vector among the CPU
// sweeps' NHWC rows slower than oneDNN, fast numerics 1.16x faster
// (geomean; 41x2x414x414 k7 s3 f32 1.31x, 1x4x410x410 k5 s6 1.55x),
// pytorch numerics 1.31x (524x2x88x88 k10 s4 1.47x); 30 random NHWC
// configurations of two vectors, f16/bf16 1.16-1.18x, f32 1.02x, and f64
// (9-16 channels) 0.96x, which stays one output at a time.
// pf (hr are the input rows, not converted rows or row sums): each window
// row's span of the four outputs two groups ahead is prefetched, a line at
// a time. Their loads, four windows apart along kh rows, came from memory
// one after another (perf annotate: the loads' consumers hot); 2-core AMD
// EPYC Zen 5 VM, 2026-12-02, best of three alternated, pytorch numerics:
// 1x2x1676x1676 k10 s6x10 f32 1.62 -> 0.84 ms, 138x11x13x738 k7 1.91 ->
// 1.11; bf16 read directly, 281x15x146x146 k5 s1x5 35.8 -> 12.1 (rows
// converted first: 17.0).
// A prefetch 512 B or 1 KiB ahead of each pixel of the fourth output
// instead was no better than none.
// Outputs left outside the fours go one at a time, each one chain of
// dependent adds. Three or two of one window length side by side instead
// (narrow_outputs, the same bits) were level: 2-core Intel Xeon AVX-512 VM,
// 2026-12-07, two threads, both ways alternated, best of two, NHWC rows of
// pixels of one or two 64-byte vectors of accumulators, fast / pytorch
// numerics: 1.01x / 1.02x over 160 rows of generator seeds 17361-17372,
// 0.99x / 1.00x over 117 of seeds 17373-17384; eight outputs at a time
// where eight have one length 0.98x (f16/bf16 down to 0.66x).
#if defined(__AVX512F__) && defined(__AVX512BW__)
// bf16 pixels of 17-32 channels (nhwc_output_fours' NV == 2), four outputs
// side by side, AVX-512: a pixel's channels are one 64-byte load, and a
// bf16 is the upper half of its float, so the dword lanes of that load give
// the even channels by a shift left (<< 16) and the odd ones by masking off
// the low half: two integer ops per pixel, where converting two halves of
// 16 channels took two vpmovzxwd (cross-lane shuffles), two shifts and two
// loads. The accumulators hold the even and the odd channels; each channel
// still adds its window in PyTorch's order, so the bits are those of the
// converting path. Each output goes back as channel pairs: each lane rounds
// both of its channels (store_half's rounding) into one dword.
// The load is masked to the pixel's channels, or, for inputs larger than
// the caches (Job::wide_loads), unmasked where all 64 bytes of every load
// of the four stay inside the input (the lanes past the pixel's channels,
// read from the next pixel, are never stored). Single outputs keep the
// converting path: a 64-byte load per pixel there, at a pitch of 52 bytes,
// waited on memory longer (2-core AMD EPYC Zen 5 VM, 2026-12-03, one
// thread, 3730x26x107x7 k10x6 s2x6: 21.1 against 14.5 ms).
// o: the first of the four outputs; o1..o3: the other windows' offsets
// from the first (elements); the window rows' span of the four two groups
// ahead is prefetched as in nhwc_output_fours.
inline void bf16_pair_four(const Job& jb, const BF16* const* hr, int64_t hn, int64_t b, int64_t o1, int64_t o2,
                           int64_t o3, int64_t len, int64_t span, int64_t ahead, bool pf, const float* div,
                           const float* rcp, BF16* o) {
  using u32 = bf16_pair_lanes::u32;
  const int64_t V = jb.vec;
  const __mmask32 m = V >= 32 ? ~__mmask32(0) : (__mmask32)((1u << V) - 1u);
  vec<float> a0 = zero<float>(), a1 = zero<float>(), a2 = zero<float>(), a3 = zero<float>();
  vec<float> c0 = zero<float>(), c1 = zero<float>(), c2 = zero<float>(), c3 = zero<float>();
  auto sum = [&](auto Full) {
    auto load = [&](const BF16* p) {
      if constexpr (decltype(Full)::value) return (u32)_mm512_loadu_si512(p);
      else return (u32)_mm512_maskz_loadu_epi16(m, p);
    };
    for (int64_t r = 0; r < hn; ++r) {
      const BF16* s = hr[r] + b * V;
      if (pf) prefetch_lines(s + ahead, span);
      for (int64_t j = 0; j < len; ++j, s += V) {
        const bf16_pair p0 = bf16_pair_lanes::split(load(s)), p1 = bf16_pair_lanes::split(load(s + o1)),
                        p2 = bf16_pair_lanes::split(load(s + o2)), p3 = bf16_pair_lanes::split(load(s + o3));
        a0 += p0.even;
        c0 += p0.odd;
        a1 += p1.even;
        c1 += p1.odd;
        a2 += p2.even;
        c2 += p2.odd;
        a3 += p3.even;
        c3 += p3.odd;
      }
    }
  };
  const BF16* last = static_cast<const BF16*>(jb.src) + jb.planes * jb.h * jb.w * V - 32;  // last full load
  if (jb.wide_loads && hn > 0 && hr[hn - 1] + b * V + o3 + (len - 1) * V <= last) sum(std::true_type{});
  else sum(std::false_type{});
  auto round = bf16_pair_lanes::round;
  auto finish = [&](vec<float> e, vec<float> c, int q) {
    const vec<float> dv = zero<float>() + div[q];
    const vec<float> rv = zero<float>() + (rcp ? rcp[q] : 0.0f);
    const vec<float> qe = rcp ? quot_fast(e, dv, rv) : e / dv, qc = rcp ? quot_fast(c, dv, rv) : c / dv;
    // the first 16 channels whole, the rest masked: one masked 64-byte store
    // ran slower (115x22x1155x12 k2 s2 bf16, one thread: 4.9 against 4.4 ms)
    const u32 h = round(qe) | (round(qc) << 16);
    _mm256_storeu_si256((__m256i*)(o + q * V), (__m256i)__builtin_shufflevector(h, h, 0, 1, 2, 3, 4, 5, 6, 7));
    _mm256_mask_storeu_epi16(o + q * V + 16, (__mmask16)(m >> 16),
                             (__m256i)__builtin_shufflevector(h, h, 8, 9, 10, 11, 12, 13, 14, 15));
  };
  finish(a0, c0, 0);
  finish(a1, c1, 1);
  finish(a2, c2, 2);
  finish(a3, c3, 3);
}
#endif

template <int NV, bool NT, class T, class A>
__attribute__((noinline)) void nhwc_output_fours(const Job& jb, const T* const* hr, int64_t hn, int64_t xa,
                                                 int64_t ob0, int64_t ob1, const A* div, const A* rcp, bool pf,
                                                 T* out) {
  constexpr int N = simd<A>::n;
  const int64_t V = jb.vec;
  auto load = [](const T* p, int64_t k) {
    if constexpr (same<T, A>::value) return k == N ? loadu(p) : load_part(p, k);
    else return load_half(p, k);
  };
  auto store = [](T* o, vec<A> x, int64_t k) {
    if constexpr (same<T, A>::value) {
      if (k == N) store_out<NT>(o, x);
      else store_part(o, x, k);
    } else {
      store_lanes<A>(o, x, k);
    }
  };
  auto finish = [&](vec<A> a, vec<A> c, int64_t ox) {
    const vec<A> dv = zero<A>() + div[ox];
    const vec<A> rv = zero<A>() + (rcp ? rcp[ox] : A(0));
    T* o = out + (ox - ob0) * V;
    store(o, rcp ? quot_fast(a, dv, rv) : a / dv, NV == 1 ? V : N);
    if constexpr (NV == 2) store(o + N, rcp ? quot_fast(c, dv, rv) : c / dv, V - N);
  };
  for (int64_t ox = ob0; ox < ob1;) {
    const int64_t b = jb.cols[ox].begin - xa, len = jb.cols[ox].end - jb.cols[ox].begin;
    bool four = ox + 4 <= ob1;
    for (int q = 1; four && q < 4; ++q) four = jb.cols[ox + q].end - jb.cols[ox + q].begin == len;
    if (four) {
      const int64_t o1 = (jb.cols[ox + 1].begin - xa - b) * V, o2 = (jb.cols[ox + 2].begin - xa - b) * V,
                    o3 = (jb.cols[ox + 3].begin - xa - b) * V;
      // pf: the span these four windows take of each row, two groups ahead
      const int64_t span = (o3 + len * V) * (int64_t)sizeof(T), ahead = 2 * (o3 + o1);
      const bool pf_span = pf && span < jb.span_prefetch_limit;  // Job::span_prefetch_limit
#if defined(__AVX512F__) && defined(__AVX512BW__)
      if constexpr (NV == 2 && same<T, BF16>::value) {
        bf16_pair_four(jb, hr, hn, b, o1, o2, o3, len, span, ahead, pf_span, div + ox, rcp ? rcp + ox : nullptr,
                       out + (ox - ob0) * V);
        ox += 4;
        continue;
      }
#endif
      vec<A> a0 = zero<A>(), a1 = zero<A>(), a2 = zero<A>(), a3 = zero<A>();
      vec<A> c0 = zero<A>(), c1 = zero<A>(), c2 = zero<A>(), c3 = zero<A>();  // second vectors (NV == 2)
      for (int64_t r = 0; r < hn; ++r) {
        const T* s = hr[r] + b * V;
        if (pf_span) prefetch_lines(s + ahead, span);
        for (int64_t j = 0; j < len; ++j, s += V) {
          if constexpr (NV == 1) {
            a0 += load(s, V);
            a1 += load(s + o1, V);
            a2 += load(s + o2, V);
            a3 += load(s + o3, V);
          } else {
            a0 += load(s, N);
            c0 += load(s + N, V - N);
            a1 += load(s + o1, N);
            c1 += load(s + o1 + N, V - N);
            a2 += load(s + o2, N);
            c2 += load(s + o2 + N, V - N);
            a3 += load(s + o3, N);
            c3 += load(s + o3 + N, V - N);
          }
        }
      }
      finish(a0, c0, ox);
      finish(a1, c1, ox + 1);
      finish(a2, c2, ox + 2);
      finish(a3, c3, ox + 3);
      ox += 4;
    } else {
      vec<A> a0 = zero<A>(), c0 = zero<A>();
      for (int64_t r = 0; r < hn; ++r) {
        const T* s = hr[r] + b * V;
        for (int64_t j = 0; j < len; ++j, s += V) {
          if constexpr (NV == 1) {
            a0 += load(s, V);
          } else {
            a0 += load(s, N);
            c0 += load(s + N, V - N);
          }
        }
      }
      finish(a0, c0, ox);
      ox += 1;
    }
  }
}

// Job::column_fours (column_fours below): four output rows' outputs of one
// column side by side.
constexpr int64_t kColumnPlanes = 32768;  // bytes of four planes taken side by side (L1)

#if defined(AVGPOOL_CPU_YMM)
// ---- step 3, NHWC, AVX2: channels in 32-byte vectors ------------------------
// (The AVX-512 build takes narrow_pixels<1> for pixels of one 32-byte vector
// of channels or less: horizontal_nhwc.)
// The kernels above hold a pixel's channels in the 64-byte vec<A>, meant
// to be two ymm registers on AVX2. GCC 12 kept their accumulators in
// memory instead, moving them through the stack and general registers
// (vmovaps to the stack, mov, vpinsrq: perf annotate of
// nhwc_output_fours<1> on 41x2x414x414 k7 s3 f32, 97 % of the time), and
// the AVX2 build ran NHWC 2-10x slower than oneDNN. Here the same sums are
// written on the ymm type itself (8 floats or 4 doubles, `nvec`): per
// channel the same adds in the same order and the same division, so the
// same bits as the 64-byte kernels in both numerics; only the grouping of
// channels into registers differs. Outputs go four at a time (pixels of up
// to two ymm vectors of channels) or two at a time (three or four, f64
// included) where their windows have one length, each window row's span
// of the group two groups ahead prefetched as in nhwc_output_fours; wider
// pixels one output at a time, in chunks of four ymm vectors of channels
// and the rest in one pass, also above kWideChannels, where the 64-byte
// kernels go pixel by pixel through the output row. Where four outputs
// are not left, three or two go together. 2-core AMD EPYC AVX2 VM, 2026-12-03, one
// thread, ms: 41x2x414x414 k7 s3 p0x1 excl f32 pytorch numerics 231 ->
// 28.4 (oneDNN 25.7), fast 102 -> 18.0; above 256 channels, against the
// pixel-by-pixel pass in ymm: 2x300x60x60 k3 s1 p1 f32 pytorch 9.9 ->
// 1.7-1.9 (oneDNN 1.8-2.7), 1x520x80x80 k4 s6 0.50 -> 0.12-0.16
// (0.12-0.20), 16x512x28x28 k2 s2 3.0-3.5 -> 2.6-3.0 (2.7-3.4); the
// sweeps' NHWC rows in docs/cpu.md.
// Q outputs side by side, NV ymm vectors of channels [c0, c0 + (NV - 1) * n + k)
// each: output q's window starts at hr[r] + b * V + off[q] (elements).
template <int NV, int Q, class T, class A, class L = ymm_lanes<A>>
__attribute__((always_inline)) inline void narrow_outputs(const T* const* hr, int64_t hn, int64_t start,
                                                          const int64_t* off, int64_t len, int64_t V, int64_t k,
                                                          int64_t span, int64_t ahead, bool pf, bool pf_px,
                                                          const A* div, const A* rcp, T* const* o) {
  constexpr int n = L::n;
  using v_t = typename L::v;
  v_t acc[Q][NV];
#pragma GCC unroll 8
  for (int q = 0; q < Q; ++q)
#pragma GCC unroll 8
    for (int v = 0; v < NV; ++v) acc[q][v] = v_t{};
  for (int64_t r = 0; r < hn; ++r) {
    const T* s = hr[r] + start;
    if (pf) prefetch_lines(s + ahead, span);
    for (int64_t j = 0; j < len; ++j, s += V) {
      if (pf_px) prefetch_lines(s + (same<T, A>::value ? kPrefetch : kHalfPrefetch), NV * n * (int64_t)sizeof(T));
#pragma GCC unroll 8
      for (int q = 0; q < Q; ++q)
#pragma GCC unroll 8
        for (int v = 0; v < NV; ++v) acc[q][v] += L::load(s + off[q] + v * n, v + 1 < NV ? n : k);
    }
  }
#pragma GCC unroll 8
  for (int q = 0; q < Q; ++q) {
    const v_t dv = v_t{} + div[q];
    const v_t rv = v_t{} + (rcp ? rcp[q] : A(0));
#pragma GCC unroll 8
    for (int v = 0; v < NV; ++v) {
      const v_t x = rcp ? L::quot(acc[q][v], dv, rv) : acc[q][v] / dv;
      L::store(o[q] + v * n, x, v + 1 < NV ? n : k);
    }
  }
}

// Pixels of NV ymm vectors of channels or fewer (V <= NV * n).
// Pixels of one vector on rows of stride 1 go eight outputs at a time:
// their windows share most loads' lines, and each output is one chain of
// kh * kw dependent adds, so eight chains keep both adders busy where four
// left them waiting (2-core AMD EPYC Zen 3 VM, 2026-12-05, two threads,
// both ways in one process, fastest of 5: 1x8x1064x554 k6 s1 f32 pytorch
// numerics 4.7 -> 3.6 ms, oneDNN 2.1; the 41 such rows of sweep seeds
// 701-1000 1.15x / 1.03x pytorch / fast numerics, 22 / 1 faster by more
// than 10 %, none slower; strided rows were level, 1.01x over 405 of seeds
// 601-700, and keep four). Pixels of exactly one vector (8 floats, 4
// doubles) take those eight at offsets known when compiled, one pointer
// and immediate displacements instead of eight pointers stepped apart
// (the same VM and method: 1x8x1064x554 k6 s1 f32 pytorch numerics 4.2 ->
// 3.5 ms; the 138 NHWC stride-1 rows of such pixels of sweep seeds
// 601-1400, both numerics: 1.08x over 276, 111 faster, 8 slower), and
// without the span prefetch where windows overlap down the plane (kh >
// sh: the next groups' rows are read already; 1.05x and 1.02x over those
// 130 rows in two runs, 0 and 3 slower; where kh <= sh it stays: 1.02x
// over 146 without it but 4 slower, down to 0.75x). Off for the other
// groups with kh > sh: 0.99x over 240 NHWC rows of seeds 601-700. Pixels
// of two to four whole vectors take their groups (four, two) the same way
// on stride-1 rows in f32/f64 (Job::fixed_groups; the 154 such rows of
// seeds 601-1400, both numerics: 1.05x, 32 faster by more than 10 %, none
// slower; f16/bf16 0.98x over 80, 10 slower, so they keep the offsets in
// registers). Where four outputs of one window length are not left
// (edges, short rows, a row of 4k + 3), three go together: three to six
// chains of adds where a pair and a single output left two and one (one
// vector) or four and two (two vectors). Like the pairs and single outputs
// they prefetch the next output row's window, not two groups ahead along
// the row: with the groups' prefetch, 16054x3x28x28 k6 s7x6 p1 f32 pytorch
// numerics (rows of 5, 6, 6, 6 and 5 columns) ran 0.57x. The same VM and
// method, NHWC rows of 4k + 3 outputs (up to 64) of pixels of up to two
// vectors: tuned on sweep seeds 601-640, 1.030x over 182 (19 faster by
// more than 10 %, 1 slower); seeds 641-700, not tuned on: 1.016x over 308
// (20 / 3, worst 0.84x), f16/bf16 1.024x, f32 1.010x, f64 1.006x.
// L: the lanes of a vector of channels (ymm; the AVX-512 build's pixels of
// three or four 64-byte vectors take vec_lanes, pairs of outputs of 6-8
// chains of adds, below, and bf16 pixels of 49-64 channels bf16_pair_lanes,
// two vectors of channel pairs, also in pairs of outputs: four side by side
// ran 245x56x55x160 k11 s5 ceil 16.8 -> 17.9 ms, their windows' rows
// outgrowing L1). pf_px: each pixel's next channels prefetched as
// it is read (f16/bf16 pixels of 64-byte vectors, Job::prefetch).
template <int NV, class T, class A, class L = ymm_lanes<A>>
__attribute__((noinline)) void narrow_pixels(const Job& jb, const T* const* hr, int64_t hn, int64_t xa,
                                             int64_t ob0, int64_t ob1, const A* div, const A* rcp, bool pf,
                                             T* out, bool pf_px = false) {
  constexpr int n = L::n;
  constexpr int G = NV <= 2 && L::n < 32 ? 4 : 2;  // bf16_pair_lanes (32 channels a vector): pairs
  const int64_t V = jb.vec, k = V - (NV - 1) * n;
  // Pairs and single outputs (short rows, edges of rows; windows of unequal
  // lengths) of inputs beyond the caches prefetch the same columns of the
  // next output row's window, sh input rows below (impls.cpp has the
  // measurements).
  const int64_t below = jb.sh * jb.w * V;
  // So do the groups of pixels of up to one ymm vector of such inputs
  // whose rows are read once (kh <= sh),
  // where there is a next output row (oh > 1): two groups ahead along the
  // row was too short a distance for the loads of inputs beyond the
  // caches (2-core Intel Xeon AVX-512 VM, 2026-12-07, two threads, both
  // ways alternated, best of two, NHWC rows of pixels of up to one ymm
  // vector of 24 MiB or more of generator seeds 16601-16640: kh <= sh
  // 1.04x / 1.08x fast / pytorch numerics over 95, 13 / 25 faster by more
  // than 10 %, 0 / 3 slower; kh > sh 1.00x / 1.05x over 43, 5 / 2 slower;
  // not tuned on, the 213 rows of kh <= sh of seeds 16641-16720: 1.03x /
  // 1.06x, 35 / 55 faster, 9 / 4 slower, the worst two (0.64x, 0.79x)
  // planes of one output row, whose "next row" no window reads, now
  // excluded; 215x4x235x235 k6 s7 bf16 pytorch numerics 4.4 -> 2.4 ms,
  // oneDNN 3.8; the AVX2 kernels on 83 of those rows of more than one
  // output row: 1.05x / 1.06x, 22 / 21 faster, 1 / 2 slower;
  // bench/cpu/results/vm-intel-xeon-2026-12-07-groups-prefetch-below-*).
  const bool below_groups = NV == 1 && same<L, ymm_lanes<A>>::value && pf && jb.prefetch_below &&
                            jb.kh <= jb.sh && jb.oh > 1;
  // whether the Q windows from ox have one length (len)
  auto one_length = [&](int64_t ox, int Q, int64_t len) {
    bool same = ox + Q <= ob1;
    for (int q = 1; same && q < Q; ++q) same = jb.cols[ox + q].end - jb.cols[ox + q].begin == len;
    return same;
  };
  // the Q outputs from ox side by side, offsets in registers; each window
  // row's span they take prefetched two groups ahead along the row (along)
  // or in the next output row (pairs' rule: Job::prefetch_below)
  auto side_by_side = [&](auto Qc, int64_t ox, int64_t b, int64_t len, bool along) {
    constexpr int Q = decltype(Qc)::value;
    int64_t off[Q];
    T* o[Q];
    for (int q = 0; q < Q; ++q) {
      off[q] = (jb.cols[ox + q].begin - jb.cols[ox].begin) * V;
      o[q] = out + (ox + q - ob0) * V;
    }
    const int64_t span = (off[Q - 1] + len * V) * (int64_t)sizeof(T);
    narrow_outputs<NV, Q, T, A, L>(hr, hn, b * V, off, len, V, k, span, along ? 2 * Q * off[Q > 1 ? 1 : 0] : below,
                                   along ? pf : pf && jb.prefetch_below, pf_px, div + ox, rcp ? rcp + ox : nullptr, o);
  };
  // those Q outputs side by side; pf: the span their windows take of each
  // row, two groups ahead
  auto group = [&](auto Qc, int64_t ox, int64_t b, int64_t len) {
    constexpr int Q = decltype(Qc)::value;
    // offsets known when compiled: one-vector pixels eight at a time (every
    // dtype), whole f32/f64 vectors (Job::fixed_groups), on stride-1 rows
    const bool fixed = NV == 1 ? Q == 8 : jb.fixed_groups;
    if (fixed && jb.sw == 1 && V == NV * n && jb.cols[ox + Q - 1].begin - jb.cols[ox].begin == Q - 1) {
      constexpr int64_t W = NV * n;
      static constexpr int64_t step[8] = {0, W, 2 * W, 3 * W, 4 * W, 5 * W, 6 * W, 7 * W};
      T* o[Q];
      for (int q = 0; q < Q; ++q) o[q] = out + (ox + q - ob0) * W;
      narrow_outputs<NV, Q, T, A, L>(hr, hn, b * W, step, len, W, n, ((Q - 1) + len) * W * (int64_t)sizeof(T),
                                     2 * Q * W, pf && (NV > 1 || jb.kh <= jb.sh), pf_px, div + ox,
                                     rcp ? rcp + ox : nullptr, o);
      return;
    }
    side_by_side(Qc, ox, b, len, !below_groups);
  };
  // the Q outputs from ox left where a group does not fit (edges and short
  // rows): each window row's span of the next output row prefetched
  auto rest = [&](auto Qc, int64_t ox, int64_t b, int64_t len) { side_by_side(Qc, ox, b, len, false); };
  for (int64_t ox = ob0; ox < ob1;) {
    const int64_t b = jb.cols[ox].begin - xa, len = jb.cols[ox].end - jb.cols[ox].begin;
    if constexpr (NV == 1) {
      if (jb.sw == 1 && one_length(ox, 8, len)) {
        group(std::integral_constant<int, 8>{}, ox, b, len);
        ox += 8;
        continue;
      }
    }
    if (one_length(ox, G, len)) {
      group(std::integral_constant<int, G>{}, ox, b, len);
      ox += G;
    } else if (G == 4 && one_length(ox, 3, len)) {
      rest(std::integral_constant<int, 3>{}, ox, b, len);
      ox += 3;
    } else if (G == 4 && one_length(ox, 2, len)) {
      rest(std::integral_constant<int, 2>{}, ox, b, len);
      ox += 2;
    } else {
      rest(std::integral_constant<int, 1>{}, ox, b, len);
      ox += 1;
    }
  }
}

// Job::column_fours: four output rows (orow: plane * oh + row; gy: the
// rows) whose windows have hn rows each, over output columns [ob0, ob1) of
// the block starting at input column xa: the four outputs of a column side
// by side, each adding rows then columns from 0 as along a row (the same
// bits). hr: the first output row's window rows in the input (row_len
// apart); off: where the others' start, relative to it (elements).
// pf_row: the first of pf_n input rows (of the first plane) prefetched,
// this column's span of each, for the next group. Pixels of one or two
// vectors (NV) of L: ymm on AVX2, the 64-byte vectors on AVX-512. On
// AVX-512, along the row (nhwc_output_fours), rows of three outputs of unequal
// windows went one at a time, each a chain of dependent adds behind a
// row's set-up. 2-core Intel Xeon AVX-512 VM, 2026-12-05, ms (oneDNN):
// 10900x14x11x11 k4 s1x4 p1 f32, two threads, 4.08 -> 2.72 (2.73); its
// first 200 images in cache, one thread, 0.122 -> 0.062 (0.066). NHWC rows
// of up to 16 outputs of pixels of up to two vectors, best of two of each
// library alternated: sweep seeds 105-108, 1.05x / 1.06x fast / pytorch
// numerics over 71 (14 / 18 faster by more than 10 %, none slower); seeds
// 109-112, not tuned on, 1.02x / 1.04x over 78 (2 / 6 faster, 0 / 1
// slower, 0.89x). Along the row instead, groups of two to four outputs of
// unequal windows padded with zero loads were 1.00x over the 71, 11
// slower (11771x17x11x11 k9 s9x7 f32 pytorch numerics 2.9 -> 4.4).
template <int NV, class T, class A, class L>
__attribute__((noinline)) void column_fours(const Job& jb, const T* const* hr, int64_t hn, const int64_t* off,
                                            const int64_t* orow, const int64_t* gy, int64_t xa, int64_t ob0,
                                            int64_t ob1, const T* pf_row, int64_t pf_n, T* dst) {
  constexpr int n = L::n;
  const int64_t V = jb.vec, k = V - (NV - 1) * n;
  const A* div_table = static_cast<const A*>(jb.div_table);
  const A* rcp_table = static_cast<const A*>(jb.rcp_table);
  const int64_t pf_bytes = pf_n * jb.w * V * (int64_t)sizeof(T);
  const int64_t pf_share = (pf_bytes / (ob1 - ob0) + 63) / 64 * 64;
  for (int64_t ox = ob0; ox < ob1; ++ox) {
    const int64_t b = jb.cols[ox].begin - xa, len = jb.cols[ox].end - jb.cols[ox].begin;
    A d[4], r[4];
    T* o[4];
    for (int q = 0; q < 4; ++q) {
      const int64_t at = (int64_t)jb.div_row[gy[q]] * jb.ow + ox;
      d[q] = div_table[at];
      r[q] = rcp_table ? rcp_table[at] : A(0);
      o[q] = dst + (orow[q] * jb.ow + ox) * V;
    }
    // the next group's new rows (contiguous), a share of them per column
    const int64_t pf_at = (ox - ob0) * pf_share;
    prefetch_lines((const char*)pf_row + pf_at, imin(pf_at + pf_share, pf_bytes) - pf_at);
    narrow_outputs<NV, 4, T, A, L>(hr, hn, b * V, off, len, V, k, 0, 0, false, false, d, rcp_table ? r : nullptr, o);
  }
}

// Wider pixels: one output at a time, channels in passes of up to eight
// ymm vectors over the whole window (eight chains of adds in flight), the
// last pass three to eight vectors (nine or ten left: four, then five or
// six), the last of them partial or whole; pixels of two to four vectors
// of Job::disjoint_each in one pass. A pass of one or two vectors
// alone was one or two chains of kh * kw dependent adds per output, as long
// as a whole pass (2-core AMD EPYC AVX2 VM, 2026-12-03, one thread, pytorch
// numerics, ms: 13x36x198x26 k10 s1 f32 9.2 -> 6.2, oneDNN 5.5;
// 1x45x262x118 k9 s3 0.61 -> 0.54, 0.46); a second pass over the block for
// the rests of several outputs together read their pixels' last lines
// again from memory (52x104x18x223 k2 s4x2 0.7x). Passes of eight instead
// of four read a pixel in half as many pieces (2-core AMD EPYC Zen 3 VM,
// 2026-12-05, two threads, both ways in one process, fastest of 7, NHWC
// rows of 5+ vectors of sweep seeds 601-700 not tuned on: pytorch numerics
// 1.03x over 150, 20 faster by more than 10 %, 4 slower, worst 0.86x, f16;
// fast numerics, which mostly sum row sums elsewhere, 1.01x, 10 / 4;
// 167x114x24x24 k6x11 s6x11 p3 ceil f32 pytorch 1.76 -> 1.52 ms, oneDNN
// 1.13; 2x165x1330x130 k10x11 s11 bf16 pytorch 7.9 -> 5.7). A pass of ten
// vectors ran up to 2x slower (registers spilled).
template <class T, class A>
__attribute__((noinline)) void narrow_wide_each(const Job& jb, const T* const* hr, int64_t hn, int64_t xa,
                                                int64_t ob0, int64_t ob1, const A* div, const A* rcp, T* out) {
  constexpr int n = nar<A>::n;
  const int64_t V = jb.vec;
  const int64_t m = (V + n - 1) / n, k = V - (m - 1) * n;  // ymm vectors of a pixel, lanes of the last
  const int64_t eights = m > 10 ? (m - 3) / 8 : 0;  // passes of eight, leaving 3 to 10 vectors
  const int64_t rest = m - 8 * eights;
  const int64_t off[1] = {0};
  // Each pixel prefetched 1 KiB ahead (jb.prefetch), except f32/f64 pixels of
  // inputs beyond the caches (Job::prefetch_below), which streamed faster
  // on the hardware prefetcher alone (2-core AMD EPYC AVX2 VM, 2026-12-04,
  // one thread, best of four alternated, 36 f32/f64 NHWC rows of 24 MiB or
  // more of sweep seeds 41-43, 46-48, 61-63 with pixels above four ymm
  // vectors: 1.05x / 1.10x fast / pytorch numerics, geomean; 52x104x18x223
  // k2 s4x2 f32 2.63 -> 2.01 ms, oneDNN 1.82). f16/bf16 keep it (32 such
  // rows ran 0.88x without it).
  const bool pf = jb.prefetch && !(same<T, A>::value && jb.prefetch_below);
  for (int64_t ox = ob0; ox < ob1; ++ox) {
    const int64_t b = jb.cols[ox].begin - xa, len = jb.cols[ox].end - jb.cols[ox].begin;
    const A* d = div + ox;
    const A* r = rcp ? rcp + ox : nullptr;
    T* const o0 = out + (ox - ob0) * V;
    // nv vectors from channel c0, the last of them kk lanes
    auto pass = [&](int64_t nv, int64_t c0, int64_t kk) {
      T* o[1] = {o0 + c0};
      const int64_t at = b * V + c0;
      switch (nv) {
        case 1: narrow_outputs<1, 1, T, A>(hr, hn, at, off, len, V, kk, 0, 0, false, pf, d, r, o); break;
        case 2: narrow_outputs<2, 1, T, A>(hr, hn, at, off, len, V, kk, 0, 0, false, pf, d, r, o); break;
        case 3: narrow_outputs<3, 1, T, A>(hr, hn, at, off, len, V, kk, 0, 0, false, pf, d, r, o); break;
        case 4: narrow_outputs<4, 1, T, A>(hr, hn, at, off, len, V, kk, 0, 0, false, pf, d, r, o); break;
        case 5: narrow_outputs<5, 1, T, A>(hr, hn, at, off, len, V, kk, 0, 0, false, pf, d, r, o); break;
        case 6: narrow_outputs<6, 1, T, A>(hr, hn, at, off, len, V, kk, 0, 0, false, pf, d, r, o); break;
        case 7: narrow_outputs<7, 1, T, A>(hr, hn, at, off, len, V, kk, 0, 0, false, pf, d, r, o); break;
        default: narrow_outputs<8, 1, T, A>(hr, hn, at, off, len, V, kk, 0, 0, false, pf, d, r, o); break;
      }
    };
    int64_t c0 = 0;
    for (int64_t i = 0; i < eights; ++i, c0 += 8 * n) pass(8, c0, n);
    if (rest > 8) {
      pass(4, c0, n);
      c0 += 4 * n;
    }
    pass(rest > 8 ? rest - 4 : rest, c0, k);
  }
}

// Wider pixels of windows that overlap along the row and outgrow L1
// (kWideL1): window rows outer. For each window row, the row's span of the
// window of each of G outputs (as many as kWideAcc channels hold, two or
// more) is added, chunk by chunk of four ymm vectors of channels (then the
// last one to four), into acc, which keeps the sums between rows; each
// channel still adds rows then columns, from 0. Per output and chunk over
// the whole window (narrow_wide_each), each window row came from L2 once
// per chunk and output: 2x165x33x33 k11x9 s11x1 f32 pytorch numerics 0.21
// -> 0.14-0.19 ms. Where the window fits L1 or the windows do not overlap,
// the acc round trips cost more than they save (37x176x9x74 k2x10 s3x2 f64
// 2.3 -> 3.0-3.3 ms, 174x138x28x28 k7x2 s7x2 f16 2.4 -> 4.1-6.0).
constexpr int64_t kWideAcc = 512;  // accumulators of the outputs summed together
constexpr int64_t kWideL1 = 32768;  // window bytes above which rows go outer (overlapping windows)

template <int NV, class T, class A>
__attribute__((always_inline)) inline void narrow_row_add(const T* s, int64_t len, int64_t V, int64_t k, bool first,
                                                          bool pf, A* acc) {
  constexpr int n = nar<A>::n;
  nvec<A> a[NV];
#pragma GCC unroll 4
  for (int v = 0; v < NV; ++v) a[v] = first ? nvec<A>{} : *reinterpret_cast<const nvec<A>*>(acc + v * n);
  for (int64_t j = 0; j < len; ++j, s += V) {
    if (pf) prefetch_lines(s + (same<T, A>::value ? kPrefetch : kHalfPrefetch), NV * n * (int64_t)sizeof(T));
#pragma GCC unroll 4
    for (int v = 0; v < NV; ++v) a[v] += nload<A>(s + v * n, v + 1 < NV ? n : k);
  }
#pragma GCC unroll 4
  for (int v = 0; v < NV; ++v) *reinterpret_cast<nvec<A>*>(acc + v * n) = a[v];
}

template <class T, class A>
__attribute__((noinline)) void narrow_wide_rows(const Job& jb, const T* const* hr, int64_t hn, int64_t xa,
                                                int64_t ob0, int64_t ob1, const A* div, const A* rcp, T* out) {
  constexpr int n = nar<A>::n;
  const int64_t V = jb.vec, w = (V + n - 1) / n * n, G = kWideAcc / w;  // w <= kWideAcc / 2
  alignas(32) A acc[kWideAcc];
  for (int64_t ox = ob0; ox < ob1;) {
    const int64_t g = imin(G, ob1 - ox);
    for (int64_t c = 0; c < g * w; c += n) *reinterpret_cast<nvec<A>*>(acc + c) = nvec<A>{};  // hn == 0
    for (int64_t r = 0; r < hn; ++r)
      for (int64_t q = 0; q < g; ++q) {
        const T* s = hr[r] + (jb.cols[ox + q].begin - xa) * V;
        const int64_t len = jb.cols[ox + q].end - jb.cols[ox + q].begin;
        A* aq = acc + q * w;
        int64_t c0 = 0;
        for (; c0 + 4 * n <= V; c0 += 4 * n) narrow_row_add<4, T, A>(s + c0, len, V, n, r == 0, jb.prefetch, aq + c0);
        if (c0 < V) {
          const int64_t m = (V - c0 + n - 1) / n, k = V - c0 - (m - 1) * n;
          switch (m) {
            case 1: narrow_row_add<1, T, A>(s + c0, len, V, k, r == 0, false, aq + c0); break;
            case 2: narrow_row_add<2, T, A>(s + c0, len, V, k, r == 0, false, aq + c0); break;
            case 3: narrow_row_add<3, T, A>(s + c0, len, V, k, r == 0, false, aq + c0); break;
            default: narrow_row_add<4, T, A>(s + c0, len, V, k, r == 0, false, aq + c0); break;
          }
        }
      }
    for (int64_t q = 0; q < g; ++q) {
      const nvec<A> dv = nvec<A>{} + div[ox + q];
      const nvec<A> rv = nvec<A>{} + (rcp ? rcp[ox + q] : A(0));
      T* o = out + (ox + q - ob0) * V;
      for (int64_t c = 0; c < V; c += n) {
        const nvec<A> x = *reinterpret_cast<const nvec<A>*>(acc + q * w + c);
        nstore<T, A>(o + c, rcp ? nquot<A>(x, dv, rv) : x / dv, imin(n, V - c));
      }
    }
    ox += g;
  }
}

template <class T, class A>
void horizontal_nhwc_narrow(const Job& jb, const T* const* hr, int64_t hn, int64_t xa, int64_t ob0, int64_t ob1,
                            const A* div, const A* rcp, bool pf, T* out) {
  constexpr int n = nar<A>::n;
  const int64_t V = jb.vec;
  if (V <= n) return narrow_pixels<1, T, A>(jb, hr, hn, xa, ob0, ob1, div, rcp, pf, out);
  if (V <= 2 * n && !jb.disjoint_each) return narrow_pixels<2, T, A>(jb, hr, hn, xa, ob0, ob1, div, rcp, pf, out);
  if (V <= 3 * n && !jb.disjoint_each) return narrow_pixels<3, T, A>(jb, hr, hn, xa, ob0, ob1, div, rcp, pf, out);
  if (V <= 4 * n && !jb.disjoint_each) return narrow_pixels<4, T, A>(jb, hr, hn, xa, ob0, ob1, div, rcp, pf, out);
  if (jb.kw > jb.sw && 2 * ((V + n - 1) / n * n) <= kWideAcc && hn * jb.kw * V * (int64_t)sizeof(T) > kWideL1)
    return narrow_wide_rows<T, A>(jb, hr, hn, xa, ob0, ob1, div, rcp, out);
  narrow_wide_each<T, A>(jb, hr, hn, xa, ob0, ob1, div, rcp, out);
}
#endif

// ---- NHWC, stride 1 along the row: interior outputs as one flat run -------------
// With sw == 1 the interior outputs of a block (full windows, begins one
// column apart, so one divisor) are contiguous: len = outputs * vec
// elements, and tap (r, j) of the element at e is hr[r][start + j * vec + e],
// one shifted stretch of window row r per tap, whatever the channel count.
// Summed in whole vectors along the run, each element adds the same terms in
// the same order as the pixel kernels (rows then columns, from 0) and is
// divided the same way: the same bits, without the lanes that channels
// short of a vector leave empty, nor the masked load per pixel and tap of
// their last channels (Job::flat_run). Four vectors at a time: four
// independent chains of adds per tap.
#if defined(AVGPOOL_CPU_NARROW_NHWC)
template <class A> struct run_lanes : ymm_lanes<A> {  // ymm (see nar), partial vectors in one masked store
  template <class T> static void store(T* p, nvec<A> x, int64_t k) { nstore<T, A>(p, x, k); }
};
#else
template <class A> using run_lanes = vec_lanes<A>;
#endif

template <class T, class A>
__attribute__((noinline)) void flat_run(const T* const* hr, int64_t hn, int64_t start, int64_t kw, int64_t V,
                                        int64_t len, A d, const A* rcp, T* out) {
  using L = run_lanes<A>;
  using v = typename L::v;
  constexpr int n = L::n;
  const v dv = v{} + d, rv = v{} + (rcp ? *rcp : A(0));
  // x / 1 is x (single_windows' rows of kernel 1 x 1 and no padding): no
  // division, a vector division per vector of a stream bound by memory.
  const bool by_one = rcp == nullptr && d == A(1);
  auto q = [&](v a) { return rcp ? L::quot(a, dv, rv) : by_one ? a : a / dv; };
  int64_t e = 0;
  for (; e + 4 * n <= len; e += 4 * n) {
    v a0{}, a1{}, a2{}, a3{};
    for (int64_t r = 0; r < hn; ++r) {
      const T* s = hr[r] + start + e;
      for (int64_t j = 0; j < kw; ++j, s += V) {
        a0 += L::load(s, n);
        a1 += L::load(s + n, n);
        a2 += L::load(s + 2 * n, n);
        a3 += L::load(s + 3 * n, n);
      }
    }
    L::store(out + e, q(a0), n);
    L::store(out + e + n, q(a1), n);
    L::store(out + e + 2 * n, q(a2), n);
    L::store(out + e + 3 * n, q(a3), n);
  }
  for (; e < len; e += n) {
    const int64_t k = imin(n, len - e);
    v a{};
    for (int64_t r = 0; r < hn; ++r) {
      const T* s = hr[r] + start + e;
      for (int64_t j = 0; j < kw; ++j, s += V) a += L::load(s, k);
    }
    L::store(out + e, q(a), k);
  }
}

#if defined(__AVX512F__)
// Windows overlapping along an NHWC row that outgrow L1 (Job::shared_run,
// the AVX-512 build): G interior outputs side by side, each column of the
// union of their windows loaded once per window row and added to every
// output whose window holds it. Output g's tap j is the union's column
// g * sw + j, so each output still adds rows then columns, from 0: the same
// bits as one output at a time, with ((G - 1) * sw + kw) / (G * kw) of its
// loads from L2. Channels in chunks of up to NV vectors (the last one k
// lanes); G * NV accumulators and NV loads within the 32 registers.
template <int G, int NV, class T, class A>
__attribute__((always_inline)) inline void shared_chunk(const T* const* hr, int64_t hn, int64_t start,
                                                        int64_t kw, int64_t sw, int64_t V, int64_t k, A d,
                                                        const A* rcp, T* out) {
  using L = vec_lanes<A>;
  using v = typename L::v;
  constexpr int N = L::n;
  v a[G][NV];
#pragma GCC unroll 8
  for (int g = 0; g < G; ++g)
#pragma GCC unroll 8
    for (int q = 0; q < NV; ++q) a[g][q] = v{};
  for (int64_t r = 0; r < hn; ++r) {
    const T* s = hr[r] + start;
    for (int64_t j = 0; j < (G - 1) * sw + kw; ++j, s += V) {
      v x[NV];
#pragma GCC unroll 8
      for (int q = 0; q < NV; ++q) x[q] = L::load(s + q * N, q + 1 < NV ? N : k);
#pragma GCC unroll 8
      for (int g = 0; g < G; ++g)
        if (j >= g * sw && j - g * sw < kw)
#pragma GCC unroll 8
          for (int q = 0; q < NV; ++q) a[g][q] += x[q];
    }
  }
  const v dv = v{} + d, rv = v{} + (rcp ? *rcp : A(0));
#pragma GCC unroll 8
  for (int g = 0; g < G; ++g)
#pragma GCC unroll 8
    for (int q = 0; q < NV; ++q)
      L::store(out + g * V + q * N, rcp ? L::quot(a[g][q], dv, rv) : a[g][q] / dv, q + 1 < NV ? N : k);
}

// Four outputs of chunks of four vectors. Against them (2-core Intel Xeon
// AVX-512 VM, 2026-12-06, 88 rows the rule takes, pytorch numerics): three
// outputs of six vectors 1.01x (3 faster by more than 10 %, 3 slower),
// six outputs of four 0.98x (4 / 14).
constexpr int kSharedOutputs = 4;
constexpr int kSharedVectors = 4;
constexpr int64_t kSharedWindow = 32768;  // bytes of a window summed (hn rows) from which (L1)

template <int G, class T, class A>
void shared_outputs(const T* const* hr, int64_t hn, int64_t start, int64_t kw, int64_t sw, int64_t V, A d,
                    const A* rcp, T* out) {
  constexpr int N = simd<A>::n;
  for (int64_t c0 = 0; c0 < V; c0 += kSharedVectors * N) {
    const int64_t m = imin(kSharedVectors, (V - c0 + N - 1) / N);
    const int64_t k = imin(V - c0 - (m - 1) * N, (int64_t)N);  // lanes of the chunk's last vector
    switch (m) {
      case 1: shared_chunk<G, 1, T, A>(hr, hn, start + c0, kw, sw, V, k, d, rcp, out + c0); break;
      case 2: shared_chunk<G, 2, T, A>(hr, hn, start + c0, kw, sw, V, k, d, rcp, out + c0); break;
      case 3: shared_chunk<G, 3, T, A>(hr, hn, start + c0, kw, sw, V, k, d, rcp, out + c0); break;
      default: shared_chunk<G, 4, T, A>(hr, hn, start + c0, kw, sw, V, k, d, rcp, out + c0); break;
    }
  }
}

// The interior outputs [0, outputs) of a block, the first one's window
// starting at element start of each window row; one divisor.
template <class T, class A>
__attribute__((noinline)) void shared_run(const T* const* hr, int64_t hn, int64_t start, int64_t kw, int64_t sw,
                                          int64_t V, int64_t outputs, A d, const A* rcp, T* out) {
  int64_t g = 0;
  for (; g + kSharedOutputs <= outputs; g += kSharedOutputs)
    shared_outputs<kSharedOutputs, T, A>(hr, hn, start + g * sw * V, kw, sw, V, d, rcp, out + g * V);
  const int64_t at = start + g * sw * V;
  switch (outputs - g) {
    case 3: shared_outputs<3, T, A>(hr, hn, at, kw, sw, V, d, rcp, out + g * V); break;
    case 2: shared_outputs<2, T, A>(hr, hn, at, kw, sw, V, d, rcp, out + g * V); break;
    case 1: shared_outputs<1, T, A>(hr, hn, at, kw, sw, V, d, rcp, out + g * V); break;
  }
}
#endif

#if defined(__AVX512F__)
// ---- NHWC pixels of a few channels, strided rows: outputs packed in a vector ----
// Job::packed outputs (P) side by side in one 64-byte vector, lane g * V + c
// holding output g's channel c. Tap j of a window row loads the
// (P - 1) * sw + 1 pixels from the first output's tap j (two vectors,
// masked to them) and picks pixel g * sw for each output g (vpermt2ps /
// vpermt2pd). Each lane adds the same terms in the same order (rows then
// columns, from 0) and is divided the same way as one output at a time:
// the same bits, with two loads, one permute and one add per tap for P
// outputs, where narrow_pixels took a masked ymm load and an add per
// output and tap, and one division and one store for P outputs. Four
// groups side by side, four chains of adds in flight: one group at a time
// waited on its single chain (pytorch numerics, windows of 30+ inputs:
// 282x4x557x41 k11 s2 f64 34.5 ms before, 56.4 with one group, 52.0 with
// four; the rule in impls.cpp keeps such rows of three outputs a vector
// on narrow_pixels). Each window row's span of the next output row is
// prefetched (jb.prefetch, rows read once): without it the loads waited on
// memory (4392x4x51x51 k2 s2 p0x1 f32, 182 MB: 16.8 ms, 9.9 with it, 16.1
// before; oneDNN 10.5; 2-core Intel Xeon AVX-512 VM, 2026-12-07).
template <class A>
__attribute__((noinline)) void packed_run(const A* const* hr, int64_t hn, int64_t start, int64_t kw, int64_t sw,
                                          int64_t V, int64_t P, const int32_t* packed_idx, int64_t below,
                                          int64_t outputs, A d, const A* rcp, A* out) {
  constexpr int N = simd<A>::n;
  typedef int32_t lanes32 __attribute__((vector_size(N * 4)));
  lanes32 from;
  __builtin_memcpy(&from, packed_idx, sizeof from);
  const vidx<A> idx = __builtin_convertvector(from, vidx<A>);  // lane l: (l / V) * sw * V + l % V
  const vec<A> dv = zero<A>() + d, rv = zero<A>() + (rcp ? *rcp : A(0));
  const int64_t step = P * sw * V;  // elements from one group's window to the next one's
  // G groups from output g side by side (G chains of adds), m outputs in
  // the last one (a tap reads ((m - 1) * sw + 1) * V elements)
  auto groups = [&](auto Gc, int64_t g, int64_t m) {
    constexpr int G = decltype(Gc)::value;
    const int64_t need = ((m - 1) * sw + 1) * V;
    const int64_t k0 = imin(need, N), k1 = need - k0;
    vec<A> a[G];
#pragma GCC unroll 4
    for (int q = 0; q < G; ++q) a[q] = zero<A>();
    for (int64_t r = 0; r < hn; ++r) {
      const A* s = hr[r] + start + g * sw * V;
      if (below) prefetch_lines(s + below, G * step * (int64_t)sizeof(A));
      for (int64_t j = 0; j < kw; ++j, s += V)
#pragma GCC unroll 4
        for (int q = 0; q < G; ++q) a[q] += perm2(load_part(s + q * step, k0), load_part(s + q * step + N, k1), idx);
    }
#pragma GCC unroll 4
    for (int q = 0; q < G; ++q)
      store_part(out + (g + q * P) * V, rcp ? quot_fast(a[q], dv, rv) : a[q] / dv, (q + 1 < G ? P : m) * V);
  };
  int64_t g = 0;
  for (; g + 4 * P <= outputs; g += 4 * P) groups(std::integral_constant<int, 4>{}, g, P);
  if (g + 2 * P <= outputs) {
    groups(std::integral_constant<int, 2>{}, g, P);
    g += 2 * P;
  }
  for (; g < outputs; g += P) groups(std::integral_constant<int, 1>{}, g, imin(P, outputs - g));
}
#endif

// T is the storage type of hr and out: A itself, or f16/bf16 read from the
// input rows and written to dst with conversions in registers (then in
// channel vectors at any width: the pixel-by-pixel pass for wide channels
// accumulates in out, which a half type cannot hold). input: hr are the
// input rows (nhwc_output_fours prefetches them).
template <bool NT, class T, class A>
void horizontal_nhwc(const Job& jb, const T* const* hr, int64_t hn, int64_t xa, int64_t ob0,
                     int64_t ob1, const A* div, const A* rcp, bool input, T* out) {
  constexpr int N = simd<A>::n;
  constexpr bool direct = same<T, A>::value;
  auto store_full = [](T* p, vec<A> x) {
    if constexpr (direct) store_out<NT>(p, x);
    else store_lanes<A>(p, x, N);
  };
  const int64_t V = jb.vec;
  if constexpr (!NT) {
    // The interior outputs [i0, i1) (every window inside the row) through
    // run when there are at least min of them, the edges on either side
    // through this function; false (nothing done) otherwise.
    auto interior_run = [&](int64_t min, auto&& run) {
      const int64_t i0 = imin(imax(ob0, jb.ox_lo), ob1), i1 = imax(imin(ob1, jb.ox_hi), i0);
      if (i1 - i0 < min) return false;
      if (i0 > ob0) horizontal_nhwc<NT>(jb, hr, hn, xa, ob0, i0, div, rcp, input, out);
      run((jb.cols[i0].begin - xa) * V, i1 - i0, div[i0], rcp ? rcp + i0 : nullptr, out + (i0 - ob0) * V);
      if (ob1 > i1) horizontal_nhwc<NT>(jb, hr, hn, xa, i1, ob1, div, rcp, input, out + (i1 - ob0) * V);
      return true;
    };
#if defined(__AVX512F__)
    if (jb.shared_run && hn * jb.kw * V * (int64_t)sizeof(T) > kSharedWindow &&
        interior_run(2, [&](int64_t start, int64_t n, A d, const A* r, T* o) {
          shared_run<T, A>(hr, hn, start, jb.kw, jb.sw, V, n, d, r, o);
        }))
      return;
    if constexpr (direct) {
      if (jb.packed > 1 && interior_run(jb.packed, [&](int64_t start, int64_t n, A d, const A* r, T* o) {
            // each window row's span of the next output row (sh rows below)
            const int64_t below = input && jb.prefetch ? jb.sh * jb.w * V : 0;
            packed_run<A>(hr, hn, start, jb.kw, jb.sw, V, jb.packed, jb.packed_idx, below, n, d, r, o);
          }))
        return;
    }
#endif
    if (jb.flat_run && interior_run(1, [&](int64_t start, int64_t n, A d, const A* r, T* o) {
          flat_run<T, A>(hr, hn, start, jb.kw, V, n * V, d, r, o);
        }))
      return;
  }
#if defined(AVGPOOL_CPU_NARROW_NHWC)
  return horizontal_nhwc_narrow<T, A>(jb, hr, hn, xa, ob0, ob1, div, rcp, input, out);
#elif defined(AVGPOOL_CPU_YMM)
  // AVX-512: pixels of one ymm vector of channels or less (8 floats, 4
  // doubles) as the AVX2 build sums them (narrow_pixels), each load and
  // store one AVX-512VL masked instruction. The 64-byte kernels' masked
  // zmm loads of a few channels and their four chains of adds ran slower
  // (2-core Intel Xeon AVX-512 VM, 2026-12-05, two threads, both ways in
  // one process, fastest of two alternated: tuned on the 506 NHWC rows of
  // 1-8 channels (f64 1-4) of sweep seeds 200-212, 1.08x / 1.21x fast /
  // pytorch numerics, 170 / 276 faster by more than 10 %, 9 / 9 slower;
  // not tuned on, the 537 of seeds 213-226: 1.05x / 1.18x, 117 / 284
  // faster, 10 / 9 slower, worst 0.81x (2x1x701x560 k10x6 s1 f32) and
  // 0.79x (1912x2x38x38 k7 s1 f64); 350x3x53x169 k10 ceil f32 pytorch
  // numerics 1.30 -> 0.99 ms, oneDNN 0.86). Eight outputs at a time on
  // strided rows too ran 0.97x over 433 of seeds 200-212. Windows of one
  // input keep the 64-byte kernels (f64 0.95x over 10).
  if constexpr (!NT)
    if (V <= nar<A>::n && jb.kh * jb.kw > 1) return narrow_pixels<1, T, A>(jb, hr, hn, xa, ob0, ob1, div, rcp, input, out);
#endif
  // f32 pixels of one or two vectors four outputs at a time. So are f64
  // pixels of one vector on AVX-512 (5-8 channels; fewer take
  // narrow_pixels), four chains of adds where one output at a time was one
  // (2-core Intel Xeon AVX-512 VM, 2026-12-06, two threads, both ways
  // alternated, best of two, the NHWC f64 rows of 5-16 channels of sweep
  // seeds 8401-8800: 5-8 channels 1.04-1.21x by window overlap, 9-16
  // channels (two vectors) 0.98-1.04x, which keep the loop below; 36 rows
  // of 5-8 channels of seeds 8801-9300, not tuned on: 1.10x / 1.15x fast /
  // pytorch numerics, 11 / 17 faster by more than 10 %, none slower).
#if defined(__AVX512F__)
  constexpr bool one_vector_fours = true;
#else
  constexpr bool one_vector_fours = is_f32<A>;
#endif
  if constexpr (one_vector_fours)
    if (V <= N) return nhwc_output_fours<1, NT>(jb, hr, hn, xa, ob0, ob1, div, rcp, input, out);
  if constexpr (is_f32<A>)
    if (V <= 2 * N) return nhwc_output_fours<2, NT>(jb, hr, hn, xa, ob0, ob1, div, rcp, input, out);
#if defined(__AVX512F__)
  // Pixels of NV = 3 or 4 vectors of channels: two outputs of one window
  // length side by side, 2 * NV chains of adds in flight, where one output
  // at a time kept NV (narrow_pixels on the 64-byte vectors, without the
  // span prefetch). Each output's order is unchanged. 2-core Intel Xeon
  // AVX-512 VM, 2026-12-06, two threads, both ways alternated, best of two,
  // NHWC rows of such pixels (33-64 channels, f64 17-32) of sweep seeds
  // 8401-8800: 1.040x / 1.034x fast / pytorch numerics over 150, 25 / 30
  // faster by more than 10 %, 1 / 3 slower, every dtype and overlap
  // 1.01-1.06x; with the f64 pixels of one vector above, 160 rows of seeds
  // 8801-9300 not tuned on: 1.042x / 1.049x, 27 / 29 faster, 0 / 1 slower
  // (worst 0.90x). 1x38x92x92 k5 s2 ceil f32 pytorch numerics 0.0425 ->
  // 0.0393 ms (oneDNN 0.036).
#if defined(__AVX512BW__)
  // bf16 pixels of 49-64 channels: two 64-byte loads of channel pairs a
  // pixel (bf16_pair_lanes), two outputs side by side, where the vec_lanes
  // pairs below convert four halves. 2-core Intel Xeon AVX-512 VM,
  // 2026-12-06, two threads, both ways alternated, best of two: tuned on
  // the NHWC bf16 rows of 33-64 channels of sweep seeds 14201-14500, 49-64
  // channels 1.08x (53 rows, 17 faster by more than 10 %, 1 slower), 33-48
  // channels 0.94-1.00x (a second load mostly empty: 0.94x under 24 MiB);
  // the 103 rows of 49-64 channels of seeds 14501-14700, not tuned on:
  // 1.073x / 1.076x fast / pytorch numerics, 32 / 39 faster, 1 / 0 slower
  // (0.90x); 1x60x1229x1229 k8 s8x9 p3x0 excl 7.9 -> 6.3 ms (oneDNN 9.7).
  if constexpr (!NT && same<T, BF16>::value)
    if (V > 3 * N && V <= 4 * N) return narrow_pixels<2, T, A, bf16_pair_lanes>(jb, hr, hn, xa, ob0, ob1, div, rcp, false, out, jb.prefetch);
#endif
  if constexpr (!NT)
    if (V > 2 * N && V <= 4 * N) {
      const bool pf_px = !direct && jb.prefetch;
      if (V <= 3 * N) return narrow_pixels<3, T, A, vec_lanes<A>>(jb, hr, hn, xa, ob0, ob1, div, rcp, false, out, pf_px);
      return narrow_pixels<4, T, A, vec_lanes<A>>(jb, hr, hn, xa, ob0, ob1, div, rcp, false, out, pf_px);
    }
#endif
  // Wide pixels (below) of inputs of kWideAheadInput bytes or more: each
  // pixel's lines prefetched one output on along the row (sw pixels),
  // where kPrefetch elements on fell mostly within this window's next
  // pixel, already being read. 2-core AMD EPYC Zen 4 AVX-512 VM,
  // 2026-12-07, two threads, both ways alternated, best of two, NHWC
  // f32/f64 rows of 257+ channels of generator seeds 20301-20700: tuned on
  // 40 (24+ MiB 1.10x / 1.14x fast / pytorch numerics over 30, 14 / 15
  // faster by more than 10 %, 2 / 1 slower; under 24 MiB 1.00x over 10;
  // two outputs on, 1.03x over all 40); not tuned on, 35 of 24+ MiB:
  // 1.07x / 1.09x, 11 / 12 faster, 2 / 1 slower (worst 0.80x,
  // 1x641x138x38 k5x8 s6 p0x4 f64, 0.27 ms); 3x272x166x166 k6 s6 p2x1 f32
  // 3.77 -> 3.59 ms (oneDNN 2.7), 4x512x100x100 k4 s4 f64 6.0 -> 4.8.
  const int64_t wide_ahead =
      jb.planes * jb.h * jb.w * V * (int64_t)sizeof(A) >= kWideAheadInput ? jb.sw * V : kPrefetch;
  for (int64_t ox = ob0; ox < ob1; ++ox) {
    const int64_t b = jb.cols[ox].begin - xa, e = jb.cols[ox].end - xa;
    const A d = div[ox];
    const vec<A> dv = zero<A>() + d;
    const vec<A> rv = zero<A>() + (rcp ? rcp[ox] : A(0));
    auto Q = [&](vec<A> a) { return rcp ? quot_fast(a, dv, rv) : a / dv; };
    T* o = out + (ox - ob0) * V;
    if constexpr (direct) if (V > kWideChannels) {
      // Many channels: pixel by pixel over all channels, accumulating in o
      // (L1), so each pixel is one contiguous read; same order per output.
      // Up to four pixels per pass over o, added in window order
      // (((o + p0) + p1) + p2) + p3: four read streams, a quarter of the
      // accumulator traffic, each output's order unchanged.
      // f16/bf16 the same way into a float row of V (the unit's output
      // buffer) was not kept: 0.98x / 0.97x fast / pytorch numerics over
      // 122 NHWC rows of 257+ channels (generator seeds 17400-17440; f16
      // 0.92-0.98x, windows overlapping down the plane 0.92-0.97x), and for
      // bf16 with kh <= sh (1.04x / 1.03x over 34 there) 1.01x / 1.00x over
      // 70 rows of seeds 17441-17520, 9 / 14 slower by more than 10 %; 2-core
      // Intel Xeon AVX-512 VM, 2026-12-07, two threads, both ways alternated,
      // best of two (bench/cpu/results/vm-intel-xeon-2026-12-07-wide-half-
      // pixel-pass-*.log).
      bool first = true;
      const A* px[4];
      int np = 0;
      auto flush = [&]() {
        int64_t c = 0;
        for (; c + N <= V; c += N) {
          vec<A> a = first ? zero<A>() : loadu(o + c);
          for (int q = 0; q < np; ++q) {
            if (jb.prefetch) __builtin_prefetch(px[q] + c + wide_ahead, 0, 3);
            a += loadu(px[q] + c);
          }
          storeu(o + c, a);
        }
        if (c < V) {
          const int64_t k = V - c;
          vec<A> a = first ? zero<A>() : load_part(o + c, k);
          for (int q = 0; q < np; ++q) a += load_part(px[q] + c, k);
          store_part(o + c, a, k);
        }
        first = false;
        np = 0;
      };
      for (int64_t r = 0; r < hn; ++r)
        for (int64_t x = b; x < e; ++x) {
          px[np++] = hr[r] + x * V;
          if (np == 4) flush();
        }
      if (np > 0) flush();
      int64_t c = 0;
      if (first)  // empty window
        for (; c < V; c += N) store_part(o + c, zero<A>(), imin(N, V - c));
      for (c = 0; c + N <= V; c += N) storeu(o + c, Q(loadu(o + c)));
      if (c < V) store_part(o + c, Q(load_part(o + c, V - c)), V - c);
      continue;
    }
    // Four vectors of channels at a time over the window. f16/bf16 prefetch
    // 1 KiB ahead; f32/f64, whose next pixel that mostly is, ran faster
    // without (2-core Intel Xeon AVX-512 VM, 2026-12-06, two threads, both
    // ways alternated, NHWC rows of 64-256 channels (f64 32-256) of windows
    // read once, sweep seeds 200-240: f32 1.05x / 1.09x fast / pytorch
    // numerics over 64, f64 1.05x / 1.10x over 81, f16/bf16 0.97-1.02x;
    // seeds 301-340, not tuned on: f32 1.01x / 1.05x over 61, f64 1.03x /
    // 1.08x over 92, 4 / 5 slower by more than 10 %; bench/cpu/results/
    // vm-intel-xeon-2026-12-06-channel-fours-prefetch-*). Prefetching the
    // window of the output two ahead, every row's span, at the start of
    // each output ran 0.97x over 108 f16/bf16 rows of 65+ channels
    // (generator seeds 17385-17399, the same VM, 2026-12-07, bench/cpu/
    // results/vm-intel-xeon-2026-12-07-channel-fours-next-window-prefetch.log;
    // 328x265x25x25 k5 s6 bf16 faster, 26 slower by more than 10 %).
    int64_t c0 = 0;
    for (; c0 + 4 * N <= V; c0 += 4 * N) {
      vec<A> a0 = zero<A>(), a1 = zero<A>(), a2 = zero<A>(), a3 = zero<A>();
      for (int64_t r = 0; r < hn; ++r)
        for (int64_t x = b; x < e; ++x) {
          const T* s = hr[r] + x * V + c0;
          if (!direct && jb.prefetch)
            for (int k = 0; k < 4; ++k) __builtin_prefetch(s + kHalfPrefetch + k * N, 0, 3);
          a0 += load_lanes<A>(s, N);
          a1 += load_lanes<A>(s + N, N);
          a2 += load_lanes<A>(s + 2 * N, N);
          a3 += load_lanes<A>(s + 3 * N, N);
        }
      store_full(o + c0, Q(a0));
      store_full(o + c0 + N, Q(a1));
      store_full(o + c0 + 2 * N, Q(a2));
      store_full(o + c0 + 3 * N, Q(a3));
    }
    // The last 1-4 vectors (the last one partial or full) in one pass over
    // the window, side by side: each pixel's remaining channels are read in
    // one forward sweep with M chains of adds in flight, instead of one pass
    // per vector, each a single chain of kh * kw adds waiting on its loads
    // (2-core AMD EPYC VM, 2026-12-02, AVX-512 kernels, ms: 1x42x633x1112 k8
    // s10 p4 ceil f32 2.59 -> 1.96, 1x52x976x152 k4x7 s4x1 bf16 1.05 ->
    // 0.84). Each output's order is unchanged.
    if (c0 < V) {
      const int64_t m = (V - c0 + N - 1) / N, k = V - c0 - (m - 1) * N;  // vectors, lanes of the last
      auto rest = [&](auto M) {
        constexpr int kM = decltype(M)::value;
        vec<A> a[kM];
        for (int q = 0; q < kM; ++q) a[q] = zero<A>();
        for (int64_t r = 0; r < hn; ++r)
          for (int64_t x = b; x < e; ++x) {
            const T* s = hr[r] + x * V + c0;
            for (int q = 0; q + 1 < kM; ++q) a[q] += load_lanes<A>(s + q * N, N);
            a[kM - 1] += load_lanes<A>(s + (kM - 1) * N, k);
          }
        for (int q = 0; q + 1 < kM; ++q) store_full(o + c0 + q * N, Q(a[q]));
        store_lanes<A>(o + c0 + (kM - 1) * N, Q(a[kM - 1]), k);
      };
      switch (m) {
        case 1: rest(std::integral_constant<int, 1>{}); break;
        case 2: rest(std::integral_constant<int, 2>{}); break;
        case 3: rest(std::integral_constant<int, 3>{}); break;
        default: rest(std::integral_constant<int, 4>{}); break;
      }
    }
  }
}

// ---- step 3, NHWC, stride 1 along the row, fast numerics -------------------
// Separable: each input column's vertical sum over the window rows is formed
// once per channel vector (hn loads) and kept in a ring of the last kw
// columns; each output adds the kw sums of its ring (recomputed, not a
// running add/subtract, so no cancellation beyond the float32 bound):
// hn + kw loads per output vector instead of hn * kw. Every output's sum is
// a fixed order of its own window, so results do not depend on the blocks
// or threads. G channel vectors per sweep (V % N == 0).
constexpr int64_t kRingMax = 16;  // largest kw taken

#if defined(AVGPOOL_CPU_NARROW_NHWC)
// AVX2: the same sweep on ymm vectors, two per 64-byte vector of the
// template below (whose 64-byte sums GCC 12 moved through the stack and
// general registers here too: perf annotate of 6x208x654x12 k11 s10x1 f32,
// vpinsrq and stack reloads on the hot adds). Each lane adds the same terms
// in the same order, so the same bits in every instruction set.
template <bool NT, int G, class A>
void nhwc_s1_sweep(const A* const* hr, int64_t hn, int64_t V, int64_t c0, int64_t x0, int64_t n,
                   int64_t kw, const A* div, const A* rcp, A* out) {
  constexpr int n8 = nar<A>::n, M = 2 * G;
  using VU = typename nar<A>::vu;
  nvec<A> ring[kRingMax][M];
  auto vsum = [&](int64_t x, nvec<A>* v) {
    const int64_t off = x * V + c0;
#pragma GCC unroll 8
    for (int m = 0; m < M; ++m) {
      const int64_t o = off + m * n8;
      nvec<A> s0 = *reinterpret_cast<const VU*>(hr[0] + o), s1 = nvec<A>{};
      int64_t r = 1;
      for (; r + 1 < hn; r += 2) {
        s1 += *reinterpret_cast<const VU*>(hr[r] + o);
        s0 += *reinterpret_cast<const VU*>(hr[r + 1] + o);
      }
      if (r < hn) s1 += *reinterpret_cast<const VU*>(hr[r] + o);
      v[m] = s0 + s1;
    }
  };
  for (int64_t j = 0; j + 1 < kw; ++j) vsum(x0 + j, ring[j]);
  int64_t slot = kw - 1;
  for (int64_t i = 0; i < n; ++i) {
    vsum(x0 + i + kw - 1, ring[slot]);
    slot = slot + 1 == kw ? 0 : slot + 1;
    const nvec<A> dv = nvec<A>{} + div[i], rv = nvec<A>{} + rcp[i];
    A* o = out + i * V + c0;
#pragma GCC unroll 8
    for (int m = 0; m < M; ++m) {
      nvec<A> a0 = ring[0][m], a1 = ring[1][m];
      int64_t j = 2;
      for (; j + 1 < kw; j += 2) {
        a0 += ring[j][m];
        a1 += ring[j + 1][m];
      }
      if (j < kw) a0 += ring[j][m];
      *reinterpret_cast<VU*>(o + m * n8) = nquot<A>(a0 + a1, dv, rv);
    }
  }
}
#else
template <bool NT, int G, class A>
void nhwc_s1_sweep(const A* const* hr, int64_t hn, int64_t V, int64_t c0, int64_t x0, int64_t n,
                   int64_t kw, const A* div, const A* rcp, A* out) {
  constexpr int N = simd<A>::n;
  vec<A> ring[kRingMax][G];
  auto vsum = [&](int64_t x, vec<A>* v) {
    const int64_t off = x * V + c0;
    for (int g = 0; g < G; ++g) {
      const int64_t o = off + g * N;
      vec<A> s0 = loadu(hr[0] + o), s1 = zero<A>();
      int64_t r = 1;
      for (; r + 1 < hn; r += 2) {
        s1 += loadu(hr[r] + o);
        s0 += loadu(hr[r + 1] + o);
      }
      if (r < hn) s1 += loadu(hr[r] + o);
      v[g] = s0 + s1;
    }
  };
  for (int64_t j = 0; j + 1 < kw; ++j) vsum(x0 + j, ring[j]);
  int64_t slot = kw - 1;
  for (int64_t i = 0; i < n; ++i) {
    vsum(x0 + i + kw - 1, ring[slot]);
    slot = slot + 1 == kw ? 0 : slot + 1;
    const vec<A> dv = zero<A>() + div[i], rv = zero<A>() + rcp[i];
    A* o = out + i * V + c0;
    for (int g = 0; g < G; ++g) {
      vec<A> a0 = ring[0][g], a1 = ring[1][g];
      int64_t j = 2;
      for (; j + 1 < kw; j += 2) {
        a0 += ring[j][g];
        a1 += ring[j + 1][g];
      }
      if (j < kw) a0 += ring[j][g];
      store_out<NT>(o + g * N, quot_fast(a0 + a1, dv, rv));
    }
  }
}
#endif

template <bool NT, class A>
void horizontal_nhwc_s1(const Job& jb, const A* const* hr, int64_t hn, int64_t xa, int64_t ob0,
                        int64_t ob1, const A* div, const A* rcp, A* out) {
  constexpr int N = simd<A>::n;
  const int64_t V = jb.vec;
  const int64_t i0 = imin(imax(ob0, jb.ox_lo), ob1), i1 = imax(imin(ob1, jb.ox_hi), i0);
  if (i0 > ob0) horizontal_nhwc<NT>(jb, hr, hn, xa, ob0, i0, div, rcp, false, out);
  if (i1 > i0) {
    if (hn == 0) {
      horizontal_nhwc<NT>(jb, hr, hn, xa, i0, i1, div, rcp, false, out + (i0 - ob0) * V);
    } else {
      const int64_t x0 = jb.cols[i0].begin - xa;
      A* o = out + (i0 - ob0) * V;
      int64_t c0 = 0;
      for (; c0 + 4 * N <= V; c0 += 4 * N)
        nhwc_s1_sweep<NT, 4>(hr, hn, V, c0, x0, i1 - i0, jb.kw, div + i0, rcp + i0, o);
      for (; c0 < V; c0 += N)
        nhwc_s1_sweep<NT, 1>(hr, hn, V, c0, x0, i1 - i0, jb.kw, div + i0, rcp + i0, o);
    }
  }
  if (ob1 > i1) horizontal_nhwc<NT>(jb, hr, hn, xa, i1, ob1, div, rcp, false, out + (i1 - ob0) * V);
}

// ---- whole planes, NCHW: one output per plane covering it all -------------
// (global pooling). A plane's window in PyTorch's order is its memory order;
// vectorized across planes with gathers.
template <class A>
void global_planes(const Job& jb, const A* src, A* dst, int64_t p0, int64_t p1) {
  constexpr int N = simd<A>::n;
  const int64_t hw = jb.h * jb.w;
  const A d = *static_cast<const A*>(jb.div_table);
  const vec<A> dv = zero<A>() + d;
  const A* rcp = static_cast<const A*>(jb.rcp_table);
  if (rcp) {
    // fast numerics: each plane summed with contiguous loads in any order,
    // N planes' sums gathered into one vector for the division
    for (int64_t p = p0; p < p1; p += N) {
      const int64_t k = imin(N, p1 - p);
      vec<A> sums = zero<A>();
      for (int64_t l = 0; l < k; ++l) {
        const A* base = src + (p + l) * hw;
#if defined(AVGPOOL_CPU_NARROW_NHWC)
        // the same lanes in two ymm (see interior_run_ymm), joined once
        constexpr int n = nar<A>::n;  // N == 2 * n
        nvec<A> lo = nvec<A>{}, hi = nvec<A>{};
        int64_t e = 0;
        for (; e + N <= hw; e += N) {
          lo += nload<A>(base + e, n);
          hi += nload<A>(base + e + n, n);
        }
        if (e < hw) {
          lo += nload<A>(base + e, imin(n, hw - e));
          if (hw - e > n) hi += nload<A>(base + e + n, hw - e - n);
        }
        const vec<A> a = join(lo, hi);
#else
        vec<A> a = zero<A>();
        int64_t e = 0;
        for (; e + N <= hw; e += N) a += loadu(base + e);
        if (e < hw) a += load_part(base + e, hw - e);
#endif
        sums[l] = reduce_add<A>(a);
      }
      store_part(dst + p, quot_fast(sums, dv, zero<A>() + *rcp), k);
    }
    return;
  }
  // pytorch numerics: lane l adds plane p + l in memory order.
#if defined(__AVX512F__)
  if constexpr (is_f32<A>) {
    // 16 elements of each of 16 planes (one cache line each), transposed in
    // registers, then added column by column: lane l adds plane p + l's
    // elements in order. Gathering from the planes instead (one element of
    // each plane per gather) ran at 0.06 of a read pass (16x64x256x256).
    // Plane l runs l blocks behind plane 0, so the 16 lines loaded together
    // are not all one L1 set apart (planes are often a multiple of 4 KiB
    // apart). Lanes before their first block or after their last add +0,
    // which changes no sum (an accumulator that starts at +0 is never -0).
    const int64_t nb = (hw + N - 1) / N, nfull = hw / N;
    for (int64_t p = p0; p < p1; p += N) {
      const int64_t k = imin(N, p1 - p);
      const A* base = src + p * hw;
      __m512 acc = _mm512_setzero_ps();
      for (int64_t t = 0; t < nb + N - 1; ++t) {
        __m512 r[16];
        if (k == N && t >= N - 1 && t < nfull) {
#pragma GCC unroll 16
          for (int l = 0; l < 16; ++l) r[l] = _mm512_loadu_ps(base + l * hw + (t - l) * N);
        } else {
          for (int l = 0; l < 16; ++l) {
            const int64_t b = t - l;
            r[l] = l < k && b >= 0 && b < nb ? (__m512)load_part(base + l * hw + b * N, imin(N, hw - b * N))
                                             : _mm512_setzero_ps();
          }
        }
        transpose16(r);
#pragma GCC unroll 16
        for (int j = 0; j < 16; ++j) acc = _mm512_add_ps(acc, r[j]);
      }
      store_part(dst + p, (vec<A>)acc / dv, k);
    }
    return;
  }
#endif
  for (int64_t p = p0; p < p1; p += N) {
    const int64_t k = imin(N, p1 - p);
    const A* base = src + p * hw;
    vec<A> acc = zero<A>();
    if (k == N)
      for (int64_t e = 0; e < hw; ++e) acc += gather(base + e, hw);
    else
      for (int64_t e = 0; e < hw; ++e) acc += gather_part(base + e, hw, k);
    store_part(dst + p, acc / dv, k);
  }
}

// ---- NCHW, stride 1, output as wide as the input ("same" padding) ----------
// Interior output rows [r0, r1) of one plane (full row windows, begins one
// apart) are contiguous in dst, and so are their inputs: one 1-D pass over
// the flattened rows (interior column kernels, so the same order per output)
// covering every output from the first interior column of row r0 to the
// last of row r1 - 1; the border columns it wrapped across rows are then
// recomputed from the tables. Every read stays inside the windows' span.
template <class A>
void flat_rows(const Job& jb, const A* plane, A* out_plane, int64_t r0, int64_t r1,
               const A** rp) {
  const int64_t w = jb.w, ow = jb.ow;
  const int64_t lo = jb.ox_lo, hi = jb.ox_hi;
  const int64_t shift = jb.cols[lo].begin - lo;  // input column of output column ox: ox + shift
  const A* div = static_cast<const A*>(jb.flat_div);
  const A* rcp = static_cast<const A*>(jb.flat_rcp);
  for (int64_t c0 = r0; c0 < r1; c0 += jb.flat_chunk) {
    const int64_t c1 = imin(c0 + jb.flat_chunk, r1);
    const int64_t top = jb.rows[c0].begin;
    for (int64_t r = 0; r < jb.kh; ++r) rp[r] = plane + (top + r) * w + shift;
    const int64_t n = (c1 - c0 - 1) * ow + hi - lo;
    A* out = out_plane + c0 * ow;
    interior(jb, rp, jb.kh, lo, n, div + lo, rcp ? rcp + lo : nullptr, false, true, out + lo);
    // borders of each row, columns [0, lo) and [hi, ow) (the pass wrapped
    // across rows there); none where the interior spans whole rows
    // (windows of one column)
    if (lo == 0 && hi == ow) continue;
    const A* rdiv = static_cast<const A*>(jb.div_table) + (int64_t)jb.div_row[c0] * ow;
    for (int64_t oy = c0; oy < c1; ++oy) {
      const A* rows[64];
      const A* const* hr = rp;
      if (jb.kh <= 64) {
        for (int64_t r = 0; r < jb.kh; ++r) rows[r] = plane + (jb.rows[oy].begin + r) * w;
        hr = rows;
      }
      A* o = out_plane + oy * ow;
      auto border = [&](int64_t ox) {
        if (jb.kh > 64) {  // no room on the stack: reuse rp for this row
          for (int64_t r = 0; r < jb.kh; ++r) rp[r] = plane + (jb.rows[oy].begin + r) * w;
        }
        o[ox] = column_sum(jb, hr, jb.kh, 0, ox) / rdiv[ox];
      };
      for (int64_t ox = 0; ox < lo; ++ox) border(ox);
      for (int64_t ox = hi; ox < ow; ++ox) border(ox);
    }
  }
}

// ---- windows of one element (Job::single) -------------------------------------------
// Kernel 1 x 1: output (oy, ox) = (0 + x) / divisor with x the element at
// (rows[oy].begin, cols[ox].begin): PyTorch's sum from 0 (a -0 input gives
// +0) and its true division, so it serves both numerics. Channel vectors in
// NHWC, a strided walk over the row in NCHW.
template <class T, class A>
void single_windows(const Job& jb, const T* src, T* dst, int64_t p0, int64_t p1, int64_t oy0, int64_t oy1,
                    int64_t ox0, int64_t ox1) {
  constexpr int N = simd<A>::n;
  auto one = [](T x, A d) {
    A a = A(0);
    a += to_acc<A>(x);
    return from_acc<T>(a / d);
  };
  const int64_t V = jb.vec;
  const A* div_table = static_cast<const A*>(jb.div_table);
  for (int64_t p = p0; p < p1; ++p)
    for (int64_t oy = oy0; oy < oy1; ++oy) {
      const T* srow = src + (p * jb.h + jb.rows[oy].begin) * jb.w * V;
      T* drow = dst + (p * jb.oh + oy) * jb.ow * V;
      const A* div = div_table + (int64_t)jb.div_row[oy] * jb.ow;
      if (jb.sw == 1 && ox1 > ox0) {  // the row's elements in one run (one divisor: no padding)
        const T* rows[1] = {srow};
        flat_run<T, A>(rows, 1, jb.cols[ox0].begin * V, 1, V, (ox1 - ox0) * V, div[ox0], nullptr, drow + ox0 * V);
        continue;
      }
      if (V == 1) {
        for (int64_t ox = ox0; ox < ox1; ++ox) drow[ox] = one(srow[jb.cols[ox].begin], div[ox]);
        continue;
      }
      // NHWC inputs beyond the caches whose rows are skipped (sh > 1): the
      // first line of each output's pixel in the next output row, sh rows
      // below, prefetched; the hardware prefetcher ran on into the rows
      // skipped. 2-core Intel Xeon AVX-512 VM, 2026-12-07, two threads,
      // both ways alternated, best of two, NHWC k1 rows of 24 MiB or more,
      // sw > 1, of generator seeds 16721-16800: sh > 1 1.10x / 1.10x fast
      // / pytorch numerics over 28, sh == 1 1.00x over 14 (the next row is
      // the next input row); the pixel's every line instead of its first
      // ran 0.75-0.82x on pixels of 1-2.6 KiB; not tuned on, the 72 rows
      // of sh > 1 of seeds 16801-17000: 1.10x / 1.11x, 32 / 33 faster by
      // more than 10 %, 3 / 2 slower (worst 0.75x, 91x234x17x17 k1 s3
      // f64, 0.29 ms); 1112x2x239x239 k1 s3 f16 19.1 -> 9.6 ms; the AVX2
      // kernels on those rows 1.08x / 1.08x, 4 / 3 slower (worst 0.88x)
      // (bench/cpu/results/vm-intel-xeon-2026-12-07-single-prefetch-below-*).
      const int64_t below = jb.prefetch_below && jb.sh > 1 ? jb.sh * jb.w * V : 0;
#if defined(AVGPOOL_CPU_NARROW_NHWC)
      // AVX2: ymm vectors (see horizontal_nhwc_narrow; 2-core AMD EPYC AVX2
      // VM, 2026-12-03, one thread, 94x3x104x104 k1 f32 NHWC: 47.4 -> 6.5 ms)
      for (int64_t ox = ox0; ox < ox1; ++ox) {
        constexpr int n = nar<A>::n;
        const T* sp = srow + jb.cols[ox].begin * V;
        T* dp = drow + ox * V;
        if (below) __builtin_prefetch(sp + below, 0, 3);
        const nvec<A> d = nvec<A>{} + div[ox];
        for (int64_t c = 0; c < V; c += n) {
          const int64_t k = imin(n, V - c);
          nstore<T, A>(dp + c, (nvec<A>{} + nload<A>(sp + c, k)) / d, k);
        }
      }
      continue;
#endif
      for (int64_t ox = ox0; ox < ox1; ++ox) {
        const T* sp = srow + jb.cols[ox].begin * V;
        T* dp = drow + ox * V;
        if (below) __builtin_prefetch(sp + below, 0, 3);
        const vec<A> d = zero<A>() + div[ox];
        // x / 1 is x: no division, which took a vector division per 16
        // channels (2-core Intel Xeon AVX-512 VM, 2026-12-05, two threads,
        // 95x236x17x339 k1 s1x3 ceil bf16 18.4 -> 16.1 ms, 20x64x56x56 k1 s2
        // bf16 0.138 -> 0.108; f32, bound by memory, level)
        if (div[ox] == A(1)) {
          for (int64_t c = 0; c < V; c += N) {
            const int64_t k = imin(N, V - c);
            store_lanes<A>(dp + c, zero<A>() + load_lanes<A>(sp + c, k), k);
          }
          continue;
        }
        for (int64_t c = 0; c < V; c += N) {
          const int64_t k = imin(N, V - c);
          store_lanes<A>(dp + c, (zero<A>() + load_lanes<A>(sp + c, k)) / d, k);
        }
      }
    }
}

// ---- NCHW rows of one or two outputs (Job::short_rows) ----------------------------
// Each output's window summed straight from the input in scalar, rows then
// columns, from 0 in the accumulator type (PyTorch's order, so both
// numerics), and divided once; no row pointers, buffers or partial vectors
// per row. kChains planes side by side: as many independent chains of adds
// in flight (one window's adds depend on each other), one window lookup
// for all of them. Their reads interleave kChains places of memory a plane
// apart; where a group spans 1-4 KiB (planes of 256 B to 1 KiB), the next
// group's planes are prefetched while this one is summed. 2-core AMD EPYC
// (Zen 3, AVX2) VM, 2026-12-02, 122 random configurations of rows of one
// or two outputs, best of three alternated runs, against no prefetch:
// groups of 1-4 KiB 1.15x faster (geomean of both numerics over 34;
// 211x99x17x5 k2x9 s2x8 p1x3 f64 2.1x), groups below 1 KiB 0.96x (40:
// within a few lines, the prefetches only add work), 4-16 KiB 0.99x (25).
// On inputs of 16 MiB or more, groups of 1-64 KiB prefetch the next group
// a piece per output instead, spread evenly over this group's outputs
// (4-64 KiB first, then 1-4 KiB): issued all at once it was as
// many lines as the group (0.98x on 17278x2x18x18 k3 s3 f64, whose
// kChains streams read from memory at 0.45 of the read pass without it).
// 2-core AMD EPYC Zen 4 AVX-512 VM, 2026-12-07, two threads, both ways
// alternated, best of two, NCHW inputs of 16+ MiB that take these rows
// (f64 strided rows of up to 16 outputs, rows of one or two outputs):
// tuned on 45 of generator seeds 19801-20300, groups of 4-64 KiB 1.30x
// over 12 (7 faster by more than 10 %, none slower), larger groups 1.00x
// over 21; not tuned on, 55 more: 1.20x over the 17 of 4-64 KiB (f64
// 1.26x over 13; 8 faster, none slower, worst 0.92x), 390x115x22x24 k4 s4
// excl d12 f64 9.9 -> 4.8 ms (the plain loop 6.3), 17278x2x18x18 k3 s3 f64
// 4.8 -> 2.8 (3.6); the AVX2 and base kernels on those two rows 1.4-1.7x
// and 1.5-1.8x. Inputs of 16 MiB or more only: on those of 1-16 MiB
// of seeds 19701-19800, mostly read from cache, 0.98x over 20 (worst
// 0.89x). Groups of 1-4 KiB of such inputs take the spread too, instead
// of the next group at once: 1.26x over the 19 such rows of the sets
// above; not tuned on, 40 of seeds 20701-21500: 1.16x / 1.18x fast /
// pytorch numerics, 12 faster by more than 10 %, 2 slower (0.69x, 0.73x;
// 0.90x, 1.08x run again); 1031x138x13x12 k6 s6 p1x2 f32 6.1 -> 2.2 ms
// (oneDNN 6.9, the plain loop 4.0).
constexpr int kChains = 4;
constexpr int64_t kShortPrefetchMin = 1024, kShortPrefetchMax = 4096;  // bytes of a group of planes
constexpr int64_t kShortSpreadMax = 65536;  // bytes of a group up to which the next one is prefetched per output
constexpr int64_t kShortSpreadInput = int64_t(16) << 20;  // input bytes from which groups of 1-64 KiB do so

// The window of rn x cn inputs from b (rows w apart), rows then columns,
// from 0.
template <class A, class T>
__attribute__((always_inline)) inline A scalar_window(const T* b, int64_t w, int64_t rn, int64_t cn) {
  A a = A(0);
  for (int64_t y = 0; y < rn; ++y)
    for (int64_t x = 0; x < cn; ++x) a += to_acc<A>(b[y * w + x]);
  return a;
}

// kChains such windows, at b, b + o1, b + o2 and b + o3, side by side: a
// chain of adds each.
template <class A, class T>
__attribute__((always_inline)) inline void scalar_windows(const T* b, int64_t o1, int64_t o2, int64_t o3, int64_t w,
                                                          int64_t rn, int64_t cn, A* a) {
  A a0 = A(0), a1 = A(0), a2 = A(0), a3 = A(0);
  for (int64_t y = 0; y < rn; ++y)
    for (int64_t x = 0; x < cn; ++x) {
      const T* e = b + y * w + x;
      a0 += to_acc<A>(e[0]);
      a1 += to_acc<A>(e[o1]);
      a2 += to_acc<A>(e[o2]);
      a3 += to_acc<A>(e[o3]);
    }
  a[0] = a0;
  a[1] = a1;
  a[2] = a2;
  a[3] = a3;
}

template <class T, class A>
void short_rows(const Job& jb, const T* src, T* dst, int64_t p0, int64_t p1, int64_t oy0, int64_t oy1,
                int64_t ox0, int64_t ox1) {
  auto put = [](A x) { return from_acc<T>(x); };
  const int64_t w = jb.w, P = jb.h * jb.w, Q = jb.oh * jb.ow;
  const A* div_table = static_cast<const A*>(jb.div_table);
  const int64_t group_bytes = P * (int64_t)sizeof(T) * kChains;
  const bool spread = group_bytes >= kShortPrefetchMin && group_bytes <= kShortSpreadMax &&
                      jb.planes * P * (int64_t)sizeof(T) >= kShortSpreadInput;
  const bool pf = !spread && group_bytes >= kShortPrefetchMin && group_bytes <= kShortPrefetchMax;
  const int64_t outputs = (oy1 - oy0) * (ox1 - ox0);
  const int64_t piece = outputs > 0 ? (group_bytes + outputs - 1) / outputs : 0;  // bytes prefetched per output
  for (int64_t p = p0; p < p1; p += kChains) {
    const int64_t g = imin(kChains, p1 - p);
    if (pf && p + kChains < p1)  // the next group's planes
      prefetch_lines(src + (p + kChains) * P, imin(kChains, p1 - p - kChains) * P * (int64_t)sizeof(T));
    const char* next = spread && p + 2 * kChains <= p1 ? reinterpret_cast<const char*>(src + (p + kChains) * P) : nullptr;
    for (int64_t oy = oy0; oy < oy1; ++oy) {
      const AxisWindow rw = jb.rows[oy];
      const A* div = div_table + (int64_t)jb.div_row[oy] * jb.ow;
      for (int64_t ox = ox0; ox < ox1; ++ox) {
        const AxisWindow cw = jb.cols[ox];
        if (next) {
          prefetch_lines(next, piece);
          next += piece;
        }
        const T* base = src + p * P + rw.begin * w + cw.begin;
        const int64_t rn = rw.end - rw.begin, cn = cw.end - cw.begin;
        T* o = dst + p * Q + oy * jb.ow + ox;
        if (g == kChains) {
          A a[kChains];
          scalar_windows<A>(base, P, 2 * P, 3 * P, w, rn, cn, a);
          for (int q = 0; q < kChains; ++q) o[q * Q] = put(a[q] / div[ox]);
        } else {
          for (int64_t l = 0; l < g; ++l) o[l * Q] = put(scalar_window<A>(base + l * P, w, rn, cn) / div[ox]);
        }
      }
    }
  }
}

// short_rows for units of fewer than kChains planes (a few planes of many
// rows): the outputs of one column in kChains consecutive output rows side
// by side instead, where their windows have one number of rows (bands of
// kChains rows, column by column, so each band's input rows are read
// while in L1); each still summed rows then columns from 0. One plane
// alone was one chain of dependent adds per output. 2-core Intel Xeon
// AVX-512 VM, 2026-12-05, two threads, best of three of each alternated:
// the 230 NCHW configurations of rows of one or two outputs, 16+ output
// rows and up to 512 planes of sweep seeds 105-260, 1.15x / 1.16x fast /
// pytorch numerics, 99 / 101 faster by more than 10 %, 0 / 1 slower
// (0.91x); 1x310x1860x10 k5 s5 f32 1.46 -> 0.96 ms, oneDNN 0.97, the plain
// loop 1.07. Outputs grouped along the column across bands (all rows of a
// column, then the next) read each plane once per column: 0.80x on
// 1x201x926x17 k2x11 s4x11 p0x5 (memory-bound).
template <class T, class A>
void short_rows_in_plane(const Job& jb, const T* src, T* dst, int64_t p0, int64_t p1, int64_t oy0, int64_t oy1,
                         int64_t ox0, int64_t ox1) {
  auto put = [](A x) { return from_acc<T>(x); };
  const int64_t w = jb.w, P = jb.h * jb.w, Q = jb.oh * jb.ow;
  const A* div_table = static_cast<const A*>(jb.div_table);
  auto one = [&](int64_t p, int64_t oy, int64_t ox) {
    const AxisWindow rw = jb.rows[oy], cw = jb.cols[ox];
    const A a = scalar_window<A>(src + p * P + rw.begin * w + cw.begin, w, rw.end - rw.begin, cw.end - cw.begin);
    dst[p * Q + oy * jb.ow + ox] = put(a / div_table[(int64_t)jb.div_row[oy] * jb.ow + ox]);
  };
  for (int64_t p = p0; p < p1; ++p)
    for (int64_t oy = oy0; oy < oy1; oy += kChains) {
      const int64_t rn = jb.rows[oy].end - jb.rows[oy].begin;
      bool band = oy + kChains <= oy1;
      for (int q = 1; band && q < kChains; ++q) band = jb.rows[oy + q].end - jb.rows[oy + q].begin == rn;
      for (int64_t ox = ox0; ox < ox1; ++ox) {
        if (!band) {
          for (int64_t y = oy; y < imin(oy + kChains, oy1); ++y) one(p, y, ox);
          continue;
        }
        const AxisWindow cw = jb.cols[ox];
        const int64_t cn = cw.end - cw.begin;
        const T* b0 = src + p * P + jb.rows[oy].begin * w + cw.begin;
        auto below = [&](int q) { return (jb.rows[oy + q].begin - jb.rows[oy].begin) * w; };
        A a[kChains];
        scalar_windows<A>(b0, below(1), below(2), below(3), w, rn, cn, a);
        for (int q = 0; q < kChains; ++q)
          dst[p * Q + (oy + q) * jb.ow + ox] = put(a[q] / div_table[(int64_t)jb.div_row[oy + q] * jb.ow + ox]);
      }
    }
}

// ---- small NCHW planes, 16 at a time (Job::across) -------------------------------
// 16 x 16 transpose of float vectors: v[l][j] -> v[j][l].
inline void transpose_tile(vec<float>* v) {
#if defined(__AVX512F__)
  transpose16(reinterpret_cast<__m512*>(v));
#else
  float t[16][16];
  for (int l = 0; l < 16; ++l) storeu(t[l], v[l]);
  for (int j = 0; j < 16; ++j)
    for (int l = 0; l < 16; ++l) v[j][l] = t[l][j];
#endif
}

// 16 lanes (one per plane). The AVX2 build holds them as two ymm of floats
// (four of doubles) and moves pixels between planes and lanes by 8 x 8
// (4 x 4) transposes of ymm: its vec<float> sums and 16 x 16 tile
// transposes went through the stack (as in interior_run_ymm; 2-core AMD
// EPYC AVX2 VM, 2026-12-04, two threads, pytorch numerics, ms:
// 32x256x56x56 k3 s1 p1 f32 166 -> 32-36, 256x2048x7x7 global 32.5 ->
// 6.3-7.0, with element-by-element moves). The other builds take f32 only.
#if defined(AVGPOOL_CPU_NARROW_NHWC)
constexpr bool kAcrossF64 = true;
inline void transpose_n(nvec<float>* v) { transpose8(v); }
inline void transpose_n(nvec<double>* v) { transpose4(v); }

// Named registers rather than an array: the f32 path ran 3-9 % slower
// with the lanes in an array member (16590x22x10x10 k10 s1 p3, 8822x1x7x50
// k5 s1, pytorch numerics).
template <class A> struct Lanes16;
template <> struct Lanes16<float> {
  nvec<float> lo, hi;
};
template <> struct Lanes16<double> {
  nvec<double> a, b, c, d;
};
template <class A> inline Lanes16<A> lanes_zero() { return Lanes16<A>{}; }
inline void lanes_add(Lanes16<float>& a, const float* p) {
  a.lo += nload<float>(p, 8);
  a.hi += nload<float>(p + 8, 8);
}
inline void lanes_add(Lanes16<double>& a, const double* p) {
  a.a += nload<double>(p, 4);
  a.b += nload<double>(p + 4, 4);
  a.c += nload<double>(p + 8, 4);
  a.d += nload<double>(p + 12, 4);
}
inline void lanes_store(float* p, Lanes16<float> a) {
  nstore<float, float>(p, a.lo, 8);
  nstore<float, float>(p + 8, a.hi, 8);
}
inline void lanes_store(double* p, Lanes16<double> a) {
  nstore<double, double>(p, a.a, 4);
  nstore<double, double>(p + 4, a.b, 4);
  nstore<double, double>(p + 8, a.c, 4);
  nstore<double, double>(p + 12, a.d, 4);
}
inline Lanes16<float> lanes_div(Lanes16<float> a, float d, const float* rcp) {
  const nvec<float> dv = nvec<float>{} + d;
  if (rcp) {
    const nvec<float> rv = nvec<float>{} + *rcp;
    return {nquot<float>(a.lo, dv, rv), nquot<float>(a.hi, dv, rv)};
  }
  return {a.lo / dv, a.hi / dv};
}
inline Lanes16<double> lanes_div(Lanes16<double> a, double d, const double* rcp) {
  const nvec<double> dv = nvec<double>{} + d;
  if (rcp) {
    const nvec<double> rv = nvec<double>{} + *rcp;
    return {nquot<double>(a.a, dv, rv), nquot<double>(a.b, dv, rv), nquot<double>(a.c, dv, rv),
            nquot<double>(a.d, dv, rv)};
  }
  return {a.a / dv, a.b / dv, a.c / dv, a.d / dv};
}
// pix[x * 16 + l] = element x of plane g + l's run src[(g + l) * P, + len)
// (zero for l >= np): n planes by n pixels at a time (n lanes of a ymm),
// transposed in registers. Element by element (one scalar store each, 64
// bytes apart) it was 90 % of the time of 11x111x44x44 k2x7 s4x9 f32 on a
// 2-core AMD EPYC Zen 3 VM.
template <class T, class A>
void planes_to_lanes(const T* src, int64_t g, int64_t np, int64_t P, int64_t len, A* pix) {
  constexpr int n = nar<A>::n;
  // A load from each line of the runs in address order first (whole
  // planes: the group's one run of memory), which the hardware prefetchers
  // follow; the transposes below take n planes a line at a time, an order
  // they do not (327x667x12x12 k4x3 s5x3 f32, 125 MB, one thread: 0.7x the
  // element-by-element moves without this pass, 1.05-1.15x with it; a
  // software prefetch of the next group in either order did not help).
  const int64_t runs = len == P ? 1 : np, run_bytes = (len == P ? np * P : len) * (int64_t)sizeof(T);
  for (int64_t r = 0; r < runs; ++r) {
    const char* first = reinterpret_cast<const char*>(src + (g + r) * P);
    for (int64_t i = 0; i < run_bytes; i += 64) {
      const char c = *reinterpret_cast<const volatile char*>(first + i);
      asm volatile("" ::"r"(c));
    }
  }
  for (int64_t e = 0; e < len; e += n) {
    const int64_t k = imin(n, len - e);
    for (int64_t h = 0; h < 16; h += n) {
      const T* at = src + (g + h) * P + e;
      nvec<A> v[n];
      if (k == n && h + n <= np) {  // the common case without a branch per plane
        for (int l = 0; l < n; ++l) v[l] = nload<A>(at + l * P, n);
      } else {
        for (int64_t l = 0; l < n; ++l) v[l] = h + l < np ? nload<A>(at + l * P, k) : nvec<A>{};
      }
      transpose_n(v);
      for (int64_t j = 0; j < k; ++j) nstore<A, A>(pix + (e + j) * 16 + h, v[j], n);
    }
  }
}
template <class T, class A>
void lanes_to_planes(const A* res, int64_t g, int64_t np, int64_t Q, int64_t len, T* dst) {
  constexpr int n = nar<A>::n;
  for (int64_t e = 0; e < len; e += n) {
    const int64_t k = imin(n, len - e);
    for (int64_t h = 0; h < np; h += n) {
      nvec<A> v[n];
      for (int64_t j = 0; j < n; ++j) v[j] = j < k ? nload<A>(res + (e + j) * 16 + h, n) : nvec<A>{};
      transpose_n(v);
      T* at = dst + (g + h) * Q + e;
      if (k == n && h + n <= np) {
        for (int l = 0; l < n; ++l) nstore<T, A>(at + l * Q, v[l], n);
      } else {
        for (int64_t l = 0; l < n && h + l < np; ++l) nstore<T, A>(at + l * Q, v[l], k);
      }
    }
  }
}
#else
constexpr bool kAcrossF64 = false;
template <class A> using Lanes16 = vec<float>;
template <class A> inline Lanes16<A> lanes_zero() { return zero<float>(); }
inline void lanes_add(vec<float>& a, const float* p) { a += loadu(p); }
inline void lanes_store(float* p, vec<float> a) { storeu(p, a); }
inline vec<float> lanes_div(vec<float> a, float d, const float* rcp) {
  const vec<float> dv = zero<float>() + d;
  return rcp ? quot_fast(a, dv, zero<float>() + *rcp) : a / dv;
}
template <class T, class A>
void planes_to_lanes(const T* src, int64_t g, int64_t np, int64_t P, int64_t len, float* pix) {
  constexpr int N = 16;
  for (int64_t e = 0; e < len; e += N) {
    const int64_t k = imin(N, len - e);
    vec<float> v[N];
    for (int l = 0; l < N; ++l) v[l] = l < np ? load_lanes<float>(src + (g + l) * P + e, k) : zero<float>();
    transpose_tile(v);
    for (int64_t j = 0; j < k; ++j) storeu(pix + (e + j) * N, v[j]);
  }
}
template <class T, class A>
void lanes_to_planes(const float* res, int64_t g, int64_t np, int64_t Q, int64_t len, T* dst) {
  constexpr int N = 16;
  for (int64_t e = 0; e < len; e += N) {
    const int64_t k = imin(N, len - e);
    vec<float> v[N];
    for (int64_t j = 0; j < N; ++j) v[j] = j < k ? loadu(res + (e + j) * N) : zero<float>();
    transpose_tile(v);
    for (int64_t l = 0; l < np; ++l) store_lanes<float>(dst + (g + l) * Q + e, v[l], k);
  }
}
#endif

// Outputs [ox, ox + G) of one output row, windows of len columns, summed
// from the window rows' pixels in lanes: each a chain of adds in its own
// order (rows then columns, from 0), G chains in flight.
template <int G, class A>
__attribute__((always_inline)) inline void across_group(const Job& jb, const A* pix, AxisWindow rw, int64_t ox,
                                                        int64_t len, const A* div, const A* rcp, A* res) {
  constexpr int N = 16;
  Lanes16<A> a[G];
  const A* p[G];
  for (int q = 0; q < G; ++q) {
    a[q] = lanes_zero<A>();
    p[q] = pix + jb.cols[ox + q].begin * N;
  }
  for (int64_t y = rw.begin; y < rw.end; ++y) {
    const int64_t row = y * jb.w * N;
    for (int64_t x = 0; x < len; ++x)
#pragma GCC unroll 4
      for (int q = 0; q < G; ++q) lanes_add(a[q], p[q] + row + x * N);
  }
  for (int q = 0; q < G; ++q)
    lanes_store(res + (ox + q) * N, lanes_div(a[q], div[ox + q], rcp ? rcp + ox + q : nullptr));
}

// One output row's outputs (rw: its window rows in pix), four of one
// window width at a time (two where 16 lanes take four registers: AVX2
// f64), then three, two or one. One output at a time, each output's chain
// of kh * kw dependent adds waited on the one before (2-core Intel Xeon
// AVX-512 VM, 2026-12-06, two threads, both ways alternated, best of two,
// 150 NCHW rows of 16+ planes of up to 32768 pixels, f32/f16/bf16, sweep
// seeds 5101-5400: fours 1.07x / 1.05x pytorch / fast numerics, 36 / 24
// faster by more than 10 %, none slower; threes and twos after them
// 1.01x more; eights 0.90x, rows of fewer outputs then went one at a
// time). 111x113x32x32 k8 s1x2 f32 pytorch numerics 7.7 -> 6.1 ms
// (oneDNN 6.1).
template <class A>
void across_outputs(const Job& jb, const A* pix, AxisWindow rw, const A* div, const A* rcp, A* res) {
  constexpr int G = sizeof(Lanes16<A>) > 64 ? 2 : 4;
  // outputs [ox, ox + m) of one window width
  auto same_len = [&](int64_t ox, int64_t m) {
    if (ox + m > jb.ow) return false;
    const int64_t len = jb.cols[ox].end - jb.cols[ox].begin;
    for (int64_t q = 1; q < m; ++q)
      if (jb.cols[ox + q].end - jb.cols[ox + q].begin != len) return false;
    return true;
  };
  for (int64_t ox = 0; ox < jb.ow;) {
    const int64_t len = jb.cols[ox].end - jb.cols[ox].begin;
    if (same_len(ox, G)) {
      across_group<G, A>(jb, pix, rw, ox, len, div, rcp, res);
      ox += G;
    } else if (G == 4 && same_len(ox, 3)) {
      across_group<G - 1, A>(jb, pix, rw, ox, len, div, rcp, res);
      ox += 3;
    } else if (G == 4 && same_len(ox, 2)) {
      across_group<2, A>(jb, pix, rw, ox, len, div, rcp, res);
      ox += 2;
    } else {
      across_group<1, A>(jb, pix, rw, ox, len, div, rcp, res);
      ox += 1;
    }
  }
}

// Output rows [oy0, oy1) of planes [p0, p1): their window rows' pixels in
// lanes, then their outputs (a band of the planes where those are larger
// than the scratch, Job::across).
template <class T, class A>
void across_planes(const Job& jb, const T* src, T* dst, int64_t p0, int64_t p1, int64_t oy0, int64_t oy1, char* s) {
  constexpr int N = 16;
  const int64_t P = jb.h * jb.w, Q = jb.oh * jb.ow;
  int64_t y0 = jb.rows[oy0].begin, y1 = y0;  // the input rows the band's windows read
  for (int64_t oy = oy0; oy < oy1; ++oy) {
    y0 = imin(y0, jb.rows[oy].begin);
    y1 = imax(y1, jb.rows[oy].end);
  }
  const int64_t band_pixels = (y1 - y0) * jb.w, band_outputs = (oy1 - oy0) * jb.ow;
  A* pix = reinterpret_cast<A*>(s + jb.across_at);  // the band's pixels of N planes
  A* res = pix + band_pixels * N;                    // its outputs of N planes
  A* colsum = res + band_outputs * N;                // w column sums of one output row's window rows
  const A* div_table = static_cast<const A*>(jb.div_table);
  const A* rcp_table = static_cast<const A*>(jb.rcp_table);
  // Fast numerics (rcp_table) sum the window rows of each input column once
  // per output row, then each output its window's columns of those, where
  // that takes at most half the adds (windows overlapping along the row):
  // kh * w + kw * ow per output row instead of kh * kw * ow. 2-core AVX-512
  // VM, 2026-12-02, best of two alternated runs, ms: 15x245x93x93 k9 s2 p2
  // bf16 16.9 -> 8.2 (oneDNN 14.7), 1481x639x10x10 k11x4 s2x1 f16 62.8 ->
  // 38.1, 6018x2x32x14 k6 s1 f16 4.2 -> 2.6, 3181x4x22x22 k9 s2 3.2 -> 2.7;
  // between half and all the adds the gains were within the run-to-run
  // spread (+-20 % on these small problems) and some ran slower. Each column
  // keeps its sum in a register over the window rows; vertical_sum_pf, which
  // adds rows four at a time through the buffer, measured 0.85x of that on
  // the same 30 configurations.
  const int64_t x_lo = jb.cols[0].begin, x_hi = jb.cols[jb.ow - 1].end;
  const int64_t col_terms = jb.col_terms;  // window columns of one output row
  for (int64_t g = p0; g < p1; g += N) {
    const int64_t np = imin(N, p1 - g);
    planes_to_lanes<T, A>(src + y0 * jb.w, g, np, P, band_pixels, pix);
    for (int64_t oy = oy0; oy < oy1; ++oy) {
      AxisWindow rw = jb.rows[oy];
      rw.begin -= y0;
      rw.end -= y0;
      const A* div = div_table + (int64_t)jb.div_row[oy] * jb.ow;
      const A* rcp = rcp_table ? rcp_table + (int64_t)jb.div_row[oy] * jb.ow : nullptr;
      const A* sums = nullptr;  // fast numerics: the window rows' sum of each column
      const int64_t rn = rw.end - rw.begin;
      if (rcp && rn > 1 && 2 * (rn * (x_hi - x_lo) + col_terms) <= rn * col_terms) {
        for (int64_t x = x_lo; x < x_hi; ++x) {
          Lanes16<A> a = lanes_zero<A>();
          for (int64_t y = rw.begin; y < rw.end; ++y) lanes_add(a, pix + (y * jb.w + x) * N);
          lanes_store(colsum + x * N, a);
        }
        sums = colsum;
      } else if (rcp && rn == 1) {
        sums = pix + rw.begin * jb.w * N;
      }
      A* out_row = res + (oy - oy0) * jb.ow * N;
      if (sums) across_outputs(jb, sums, AxisWindow{0, 1, 0}, div, rcp, out_row);  // the sums as one window row
      else across_outputs(jb, pix, rw, div, rcp, out_row);
    }
    lanes_to_planes<T, A>(res, g, np, Q, band_outputs, dst + oy0 * jb.ow);
  }
}

// ---- the block driver ---------------------------------------------------------
// f16/bf16 rows already converted to float in conv: input rows [lo, hi) of
// the whole tensor (row g = plane * h + y) over columns [xa, xa + span /
// vec), row g in slot g % slots. Windows overlapping down the plane (sh <
// kh) then convert only their new rows: each input row once per unit
// instead of once per window that reads it.
struct ConvertedRows {
  int64_t lo = 0, hi = 0, xa = -1, span = -1;
};

// The window rows [srow, srow + nr rows) over input columns [xa, xa + span /
// vec): their pointers in rp at the start of scratch (f16/bf16: converted
// into conv first; with `cached`, the rows it holds are reused and these
// kept for the plane's next window; g0 is this window's first row in the
// tensor, plane * h + y). With `sums` and two rows or
// more, their vertical sum in vbuf instead (one row; it has 128 bytes of
// slack after it, *slack). Returns the rows the horizontal pass adds; *hr
// points at them.
template <class T, class A>
int64_t window_rows(const Job& jb, const T* srow, int64_t nr, int64_t xa, int64_t span, bool sums,
                    char* s, const A* const** hr, bool* slack, ConvertedRows* cached = nullptr, int64_t g0 = 0) {
  const A** rp = reinterpret_cast<const A**>(s);
  const int64_t row_len = jb.w * jb.vec;
  if constexpr (same<T, A>::value) {
    for (int64_t r = 0; r < nr; ++r) rp[r] = srow + r * row_len + xa * jb.vec;
  } else {
    // The rows are converted side by side, a piece of each in turn, with
    // the next pieces prefetched: a row's span is a short stream (8 KiB),
    // and converting whole rows one after another left each of them to the
    // hardware prefetcher's ramp-up.
    A* conv = reinterpret_cast<A*>(s + jb.conv_at);
    int64_t r0 = 0, r1 = 0;  // rows [r0, r1) of this window are in conv already
    if (cached) {
      const int64_t slots = jb.max_rows;
      for (int64_t r = 0; r < nr; ++r) rp[r] = conv + (g0 + r) % slots * jb.conv_stride;
      if (cached->xa == xa && cached->span == span && cached->lo < g0 + nr && g0 < cached->hi) {
        r0 = imax(cached->lo - g0, 0);
        r1 = imin(cached->hi - g0, nr);
      }
      *cached = ConvertedRows{g0, g0 + nr, xa, span};
    } else {
      for (int64_t r = 0; r < nr; ++r) rp[r] = conv + r * jb.conv_stride;
    }
    const T* first = srow + xa * jb.vec;
    for (int64_t i = 0; i < span; i += kConvPiece) {
      const int64_t len = imin(kConvPiece, span - i);
      for (int64_t r = 0; r < nr; ++r) {
        if (r == r0) r = r1;
        if (r >= nr) break;
        const T* sp = first + r * row_len + i;
        for (int64_t k = 0; k < kConvPiece; k += 32) __builtin_prefetch(sp + kConvAhead + k, 0, 3);
        load_block(sp, const_cast<A*>(rp[r]) + i, len);
      }
    }
  }
  *hr = rp;
  *slack = false;
  if (!sums || nr < 2) return nr;
  A* vbuf = reinterpret_cast<A*>(s + jb.vsum_at);
  vertical_sum(jb, rp, nr, span, vbuf);
  rp[0] = vbuf;
  *slack = true;
  return 1;
}

// Step 3 for either layout: out[(ox - ob0) * vec + c] for ox in [ob0, ob1).
template <class A>
void horizontal(const Job& jb, const A* const* hr, int64_t hn, int64_t xa, int64_t ob0, int64_t ob1,
                const A* div, const A* rcp, bool slack, bool nt, bool input, A* out) {
  if (jb.vec == 1) horizontal_nchw(jb, hr, hn, xa, ob0, ob1, div, rcp, slack, input, out);
  else if (rcp && jb.sep_s1) {
    if (nt) horizontal_nhwc_s1<true>(jb, hr, hn, xa, ob0, ob1, div, rcp, out);
    else horizontal_nhwc_s1<false>(jb, hr, hn, xa, ob0, ob1, div, rcp, out);
  } else if (nt) horizontal_nhwc<true>(jb, hr, hn, xa, ob0, ob1, div, rcp, input, out);
  else horizontal_nhwc<false>(jb, hr, hn, xa, ob0, ob1, div, rcp, input, out);
}

// Planes [p0, p1) x output rows [oy0, oy1) x column blocks [b0, b1).
template <class T, class A>
void run_block(const Job& jb, int64_t p0, int64_t p1, int64_t oy0, int64_t oy1, int64_t b0, int64_t b1,
               void* scratch) {
  constexpr bool direct = same<T, A>::value;
  const T* src = static_cast<const T*>(jb.src);
  T* dst = static_cast<T*>(jb.dst);
  if (jb.single)
    return single_windows<T, A>(jb, src, dst, p0, p1, oy0, oy1, b0 * jb.ob, imin(b1 * jb.ob, jb.ow));
  if constexpr (is_f32<A> || kAcrossF64) {
    if (jb.across) return across_planes<T, A>(jb, src, dst, p0, p1, oy0, oy1, static_cast<char*>(scratch));
  }
  if constexpr (direct) {
    if (jb.global) return global_planes<A>(jb, src, dst, p0, p1);
  }
  if (jb.short_rows) {
    if (p1 - p0 < kChains && oy1 - oy0 >= kChains)
      return short_rows_in_plane<T, A>(jb, src, dst, p0, p1, oy0, oy1, b0 * jb.ob, imin(b1 * jb.ob, jb.ow));
    return short_rows<T, A>(jb, src, dst, p0, p1, oy0, oy1, b0 * jb.ob, imin(b1 * jb.ob, jb.ow));
  }
  const int64_t V = jb.vec, row_len = jb.w * V;
  char* s = static_cast<char*>(scratch);  // layout: Job (cpu_job.h)
  A* obuf = reinterpret_cast<A*>(s + jb.out_at);
  const A* div_table = static_cast<const A*>(jb.div_table);
  const A* rcp_table = static_cast<const A*>(jb.rcp_table);
  // Row sums first: strided NCHW windows the fused kernels do not take, and
  // tall windows (Job::tall), whose rows are then read once, in order.
  const bool sums = jb.presum && (jb.tall || !fused_applies<A>(jb));
  const bool nt = direct && jb.nt_out;
  ConvertedRows converted;  // f16/bf16: rows in conv, for the next window of the plane

  // Output row oy of plane p.
  auto one_row = [&](int64_t p, int64_t oy) {
    const AxisWindow rw = jb.rows[oy];
    const int64_t nr = imax(rw.end - rw.begin, 0);
    const A* div = div_table + (int64_t)jb.div_row[oy] * jb.ow;
    const A* rcp = rcp_table ? rcp_table + (int64_t)jb.div_row[oy] * jb.ow : nullptr;
    T* drow = dst + (p * jb.oh + oy) * jb.ow * V;
    const T* srow = src + (p * jb.h + rw.begin) * row_len;
    for (int64_t blk = b0; blk < b1; ++blk) {
      const int64_t ob0 = blk * jb.ob, ob1 = imin(ob0 + jb.ob, jb.ow);
      const int64_t xa = jb.block_cols[2 * blk], xb = jb.block_cols[2 * blk + 1];
      if constexpr (!direct) {
        // f16/bf16 in NHWC, windows summed directly (Job::half_direct): read from the
        // input rows and written to dst with conversions in registers. Pixels of 257+
        // channels an output row at a time instead, each window row read once in order
        // into float sums of the row's outputs (up to four pixels a pass), ran slower:
        // 20x563x92x92 k4 s5 ceil bf16 7.7 -> 8.6-8.8 ms on two threads, 17.0 -> 18.6
        // on one (2-core Intel Xeon AVX-512 VM, 2026-12-07, oneDNN 6.1-6.7 / 14.0). Converting the
        // window rows into a float buffer first cost a second pass through L1/L2 (bf16
        // 4x128x669x370 k4 s4: 10.2 ms against 7.0 with half-size blocks and 4.4-6.2 ms
        // direct; oneDNN 6.5). Also above 256 channels, where f32 goes pixel by pixel
        // through an accumulator row (bf16 16x512x28x28 k2 s2 0.41 -> 0.21 ms, f16
        // 16x300x30x30 k3 s1 p1 1.38 -> 0.52).
        if (jb.half_direct) {
          const T** rows = reinterpret_cast<const T**>(s);
          for (int64_t r = 0; r < nr; ++r) rows[r] = srow + r * row_len + xa * V;
          horizontal_nhwc<false>(jb, rows, nr, xa, ob0, ob1, div, rcp, true, drow + ob0 * V);
          continue;
        }
      }
      const A* const* hr;
      bool slack;
      const int64_t hn = window_rows<T, A>(jb, srow, nr, xa, (xb - xa) * V, sums, s, &hr, &slack,
                                           &converted, p * jb.h + rw.begin);
      A* out;
      if constexpr (direct) out = drow + ob0 * V;
      else out = obuf;
      horizontal(jb, hr, hn, xa, ob0, ob1, div, rcp, slack, nt, direct && !slack, out);
      if constexpr (!direct) store_block(obuf, drow + ob0 * V, (ob1 - ob0) * V);
    }
  };
#if defined(AVGPOOL_CPU_NARROW_NHWC) || defined(__AVX512F__)
  // Job::column_fours: where four planes fit L1, output row oy of four
  // planes side by side (one window, one divisor row); otherwise, and in
  // the planes left over, four consecutive output rows where their windows
  // have one number of rows; the others alone. Four planes of 168 KB side
  // by side ran 0.7x rows side by side (37x10x210x20 k9 s4 p4 f32, pytorch
  // numerics); planes of 1 KB with rows of unequal windows 2x
  // (2828x2x12x12 k9 s10 ceil).
#if defined(AVGPOOL_CPU_NARROW_NHWC)
  using Lanes = ymm_lanes<A>;
#else
  using Lanes = vec_lanes<A>;
#endif
  constexpr int64_t lanes = Lanes::n;
  if (jb.column_fours && V <= 2 * lanes) {
    const T** rows = reinterpret_cast<const T**>(s);
    auto four_rows = [&](int64_t p, int64_t oy, const int64_t* gp, const int64_t* gy, int64_t nr) {
      const T* srow = src + (p * jb.h + jb.rows[oy].begin) * row_len;
      // Consecutive rows of inputs beyond the caches: the 4 sh input rows
      // below the group's windows, which the next group reads first
      // (without: 89x8x1218x28 k8 s3x4 f32, 97 MB, 0.65x the rows alone).
      // Not on into the next plane: on planes of a few rows (3088x22x23x23
      // k4x8 s4x8 p1 f32, 144 MB, 4.5 ms, oneDNN 3.8) that ran 4.6-4.9 ms
      // (2-core Intel Xeon AVX-512 VM, 2026-12-07, two threads).
      const int64_t below = jb.rows[gy[3]].end;
      const int64_t pf_n = jb.prefetch_below && gp[3] == p ? imax(imin(4 * jb.sh, jb.h - below), 0) : 0;
      const T* pf_row = src + (p * jb.h + below) * row_len;
      int64_t off[4], orow[4];
      for (int q = 0; q < 4; ++q) {
        off[q] = ((gp[q] - p) * jb.h + jb.rows[gy[q]].begin - jb.rows[oy].begin) * row_len;
        orow[q] = gp[q] * jb.oh + gy[q];
      }
      for (int64_t blk = b0; blk < b1; ++blk) {
        const int64_t ob0 = blk * jb.ob, ob1 = imin(ob0 + jb.ob, jb.ow), xa = jb.block_cols[2 * blk];
        for (int64_t r = 0; r < nr; ++r) rows[r] = srow + r * row_len + xa * V;
        if (V <= lanes) column_fours<1, T, A, Lanes>(jb, rows, nr, off, orow, gy, xa, ob0, ob1, pf_row, pf_n, dst);
        else column_fours<2, T, A, Lanes>(jb, rows, nr, off, orow, gy, xa, ob0, ob1, pf_row, pf_n, dst);
      }
    };
    int64_t p = p0;
    if (4 * jb.h * row_len * (int64_t)sizeof(T) <= kColumnPlanes) {
      for (; p + 4 <= p1; p += 4)
        for (int64_t oy = oy0; oy < oy1; ++oy) {
          const int64_t nr = imax(jb.rows[oy].end - jb.rows[oy].begin, 0);
          const int64_t gp[4] = {p, p + 1, p + 2, p + 3}, gy[4] = {oy, oy, oy, oy};
          if (nr > 0) four_rows(p, oy, gp, gy, nr);
          else for (int q = 0; q < 4; ++q) one_row(p + q, oy);
        }
    }
    for (; p < p1; ++p)
      for (int64_t oy = oy0; oy < oy1;) {
        const int64_t nr = imax(jb.rows[oy].end - jb.rows[oy].begin, 0);
        bool four = nr > 0 && oy + 4 <= oy1;
        for (int64_t q = 1; four && q < 4; ++q) four = jb.rows[oy + q].end - jb.rows[oy + q].begin == nr;
        if (!four) {
          one_row(p, oy++);
          continue;
        }
        const int64_t gp[4] = {p, p, p, p}, gy[4] = {oy, oy + 1, oy + 2, oy + 3};
        four_rows(p, oy, gp, gy, nr);
        oy += 4;
      }
    return;
  }
#endif
  for (int64_t p = p0; p < p1; ++p) {
    for (int64_t oy = oy0; oy < oy1; ++oy) {
      if constexpr (direct) {
        if (jb.flat && oy >= jb.oy_lo && oy < jb.oy_hi) {
          const int64_t r1 = imin(oy1, jb.oy_hi);
          flat_rows<A>(jb, src + p * jb.h * jb.w, dst + p * jb.oh * jb.ow, oy, r1,
                       reinterpret_cast<const A**>(s));
          oy = r1 - 1;
          continue;
        }
      }
      one_row(p, oy);
    }
  }
  if (nt) nt_fence();  // order the non-temporal stores before the caller's barrier
}

// ---- window rows split over units (fast numerics, few output rows) ------------
// Unit u = (output row r = p * oh + oy, chunk c = u % nchunks): the rows
// [begin + c * chunk_rows, + chunk_rows) of row oy's window, clipped to it,
// summed for every output of the row (rows first where Job::presum, then
// the columns; no division: the divisors are Job::ones) into partials[u]. A chunk without
// rows writes nothing; combine_row reads only the chunks with rows.
template <class T, class A>
void partial_unit(const Job& jb, int64_t u, void* scratch) {
  const int64_t V = jb.vec, n_out = jb.ow * V;
  const int64_t r = u / jb.nchunks, c = u % jb.nchunks;
  const int64_t p = r / jb.oh, oy = r % jb.oh;
  const AxisWindow rw = jb.rows[oy];
  const int64_t r0 = rw.begin + c * jb.chunk_rows;
  const int64_t nr = imax(imin(jb.chunk_rows, rw.end - r0), 0);
  if (nr == 0) return;
  const T* srow = static_cast<const T*>(jb.src) + (p * jb.h + r0) * jb.w * V;
  const A* ones = static_cast<const A*>(jb.ones);
  A* part = static_cast<A*>(jb.partials) + u * n_out;
  char* s = static_cast<char*>(scratch);
  for (int64_t ob0 = 0, blk = 0; ob0 < jb.ow; ob0 += jb.ob, ++blk) {
    const int64_t ob1 = imin(ob0 + jb.ob, jb.ow);
    const int64_t xa = jb.block_cols[2 * blk], xb = jb.block_cols[2 * blk + 1];
    const A* const* hr;
    bool slack;
    const int64_t hn = window_rows<T, A>(jb, srow, nr, xa, (xb - xa) * V, jb.presum, s, &hr, &slack);
    horizontal(jb, hr, hn, xa, ob0, ob1, ones, (const A*)nullptr, slack, false, same<T, A>::value && !slack,
               part + ob0 * V);
  }
}

// Output row r = p * oh + oy of a split job: each output adds its chunks'
// partial sums in chunk order (the same order whatever the threads), then
// divides (quot_fast) and is rounded to the dtype once.
template <class T, class A>
void combine_row(const Job& jb, int64_t r, void*) {
  constexpr int N = simd<A>::n;
  const int64_t V = jb.vec, n_out = jb.ow * V;
  const int64_t oy = r % jb.oh;
  const int64_t nr = imax(jb.rows[oy].end - jb.rows[oy].begin, 0);
  const int64_t nc = (nr + jb.chunk_rows - 1) / jb.chunk_rows;
  const A* part = static_cast<const A*>(jb.partials) + r * jb.nchunks * n_out;
  const A* div = static_cast<const A*>(jb.div_table) + (int64_t)jb.div_row[oy] * jb.ow;
  const A* rcp = static_cast<const A*>(jb.rcp_table) + (int64_t)jb.div_row[oy] * jb.ow;
  T* drow = static_cast<T*>(jb.dst) + r * n_out;
  auto sum = [&](int64_t e, int64_t k) {
    vec<A> a = zero<A>();
    for (int64_t c = 0; c < nc; ++c) a += load_part(part + c * n_out + e, k);
    return a;
  };
  auto put = [&](int64_t e, vec<A> q, int64_t k) {
    if constexpr (same<T, A>::value) {
      store_part(drow + e, q, k);
    } else {
      A t[N];
      memcpy(t, &q, sizeof t);
      store_block(t, drow + e, k);
    }
  };
  if (V == 1) {
    for (int64_t e = 0; e < n_out; e += N) {
      const int64_t k = imin(N, n_out - e);
      put(e, quot_fast(sum(e, k), load_part(div + e, k), load_part(rcp + e, k)), k);
    }
    return;
  }
  for (int64_t ox = 0; ox < jb.ow; ++ox) {
    const vec<A> dv = zero<A>() + div[ox], rv = zero<A>() + rcp[ox];
    for (int64_t c0 = 0; c0 < V; c0 += N) {
      const int64_t k = imin(N, V - c0);
      put(ox * V + c0, quot_fast(sum(ox * V + c0, k), dv, rv), k);
    }
  }
}

}  // namespace

KernelTable table() {
  return KernelTable{
      AVGPOOL_CPU_ISA_NAME,
      {run_block<float, float>, partial_unit<float, float>, combine_row<float, float>},
      {run_block<F16, float>, partial_unit<F16, float>, combine_row<F16, float>},
      {run_block<BF16, float>, partial_unit<BF16, float>, combine_row<BF16, float>},
      {run_block<double, double>, partial_unit<double, double>, combine_row<double, double>},
  };
}

}  // namespace AVGPOOL_CPU_ISA
}  // namespace cpu
}  // namespace avgpool
