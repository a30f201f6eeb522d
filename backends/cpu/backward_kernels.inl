// The CPU backward kernels, compiled once per instruction set: the including
// file defines AVGPOOL_CPU_ISA (the namespace) and AVGPOOL_CPU_ISA_NAME and
// compiles with the matching -m flags (CMakeLists.txt). Only intrinsics,
// GCC/Clang vector extensions and plain loops (see backward_job.h).
//
// One unit = planes [p0, p1) x input rows [y0, y1) x one column block. Per
// input row:
//   1. the q rows of its covering output rows, each computed once per unit
//      into a ring slot (q = grad_output / divisor: a true division in
//      pytorch numerics, f16/bf16 rounded to the type as PyTorch CUDA does;
//      a multiplication by the reciprocal in fast numerics);
//   2. fast numerics with several covering rows: their sum, one pass;
//   3. each input element adds its terms from the slots: rows ascending,
//      columns ascending, from +0. Where a vector lane has fewer terms than
//      the others it adds +0 from the slot's zeros instead, which changes
//      nothing: a sum that starts at +0 is never -0, and x + 0 == x for
//      every other x (NaN and infinities included);
//   4. one rounding to the dtype, stored (or staged and streamed).
#if defined(__SSE2__)
#include <immintrin.h>
#endif
#include <stdint.h>
#include <string.h>

#include "backward_job.h"

#ifndef AVGPOOL_CPU_ISA
#error "define AVGPOOL_CPU_ISA before including backward_kernels.inl"
#endif

namespace avgpool {
namespace cpu {
namespace AVGPOOL_CPU_ISA {
namespace {

#include "simd.inl"  // half types and conversions, vectors, load_part / store_part

// ---- storage type <-> accumulator: N lanes (or the first k) ----------------
inline vec<float> load_in(const float* p) { return loadu(p); }
inline vec<double> load_in(const double* p) { return loadu(p); }
inline vec<float> load_in(const F16* s) {
  const uint16_t* p = reinterpret_cast<const uint16_t*>(s);
#if defined(__AVX512F__)
  return (vec<float>)_mm512_cvtph_ps(_mm256_loadu_si256((const __m256i*)p));
#elif defined(__F16C__)
  union { vec<float> v; __m256 h[2]; } u;
  u.h[0] = _mm256_cvtph_ps(_mm_loadu_si128((const __m128i*)p));
  u.h[1] = _mm256_cvtph_ps(_mm_loadu_si128((const __m128i*)(p + 8)));
  return u.v;
#else
  vec<float> v;
  for (int l = 0; l < 16; ++l) v[l] = f16_to_float(p[l]);
  return v;
#endif
}
inline vec<float> load_in(const BF16* s) {
  const uint16_t* p = reinterpret_cast<const uint16_t*>(s);
  vec<float> v;
  for (int l = 0; l < 16; ++l) v[l] = bf16_to_float(p[l]);
  return v;
}
template <class T, class A> inline vec<A> load_in_part(const T* p, int64_t k) {
  if constexpr (sizeof(T) == sizeof(A)) {
    return load_part(reinterpret_cast<const A*>(p), k);
  } else {
    T tmp[16] = {};
    memcpy(tmp, p, (size_t)k * sizeof(T));
    return load_in(tmp);
  }
}

inline void store_out(float* p, vec<float> x) { storeu(p, x); }
inline void store_out(double* p, vec<double> x) { storeu(p, x); }
inline void store_out(F16* d, vec<float> x) {
  uint16_t* p = reinterpret_cast<uint16_t*>(d);
#if defined(__AVX512F__)
  _mm256_storeu_si256((__m256i*)p, _mm512_cvtps_ph((__m512)x, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
#elif defined(__F16C__)
  union { vec<float> v; __m256 h[2]; } u{x};
  _mm_storeu_si128((__m128i*)p, _mm256_cvtps_ph(u.h[0], _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
  _mm_storeu_si128((__m128i*)(p + 8), _mm256_cvtps_ph(u.h[1], _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
#else
  for (int l = 0; l < 16; ++l) p[l] = float_to_f16(x[l]);
#endif
}
inline void store_out(BF16* d, vec<float> x) {
  uint16_t* p = reinterpret_cast<uint16_t*>(d);
  for (int l = 0; l < 16; ++l) p[l] = float_to_bf16(x[l]);
}
template <class T, class A> inline void store_out_part(T* p, vec<A> x, int64_t k) {
  if constexpr (sizeof(T) == sizeof(A)) {
    store_part(reinterpret_cast<A*>(p), x, k);
  } else {
    T tmp[16];
    store_out(tmp, x);
    memcpy(p, tmp, (size_t)k * sizeof(T));
  }
}

// x rounded to T and back (pytorch numerics' per-term rounding for halves).
template <class T> inline vec<float> round_to(vec<float> x) {
  T tmp[16];
  store_out(tmp, x);
  return load_in(tmp);
}

// ---- spreading q values over input columns: one permutation per vector ----
// Lanes l with bit l of e.mask: the q value of output column e.first +
// e.index[l]; the others 0. q holds the values from output column q_first
// on, with a vector of slack after them.
inline vec<float> spread_lanes(const float* q, int64_t q_first, const BackwardSpread& e) {
  const float* run = q + (e.first - q_first);
#if defined(__AVX512F__)
  return (vec<float>)_mm512_maskz_permutexvar_ps((__mmask16)e.mask, _mm512_loadu_si512(e.index), _mm512_loadu_ps(run));
#else
  vec<float> v = vec<float>{};
  for (int l = 0; l < 16; ++l)
    if (e.mask >> l & 1u) v[l] = run[e.index[l]];
  return v;
#endif
}
inline vec<double> spread_lanes(const double* q, int64_t q_first, const BackwardSpread& e) {
  const double* run = q + (e.first - q_first);
#if defined(__AVX512F__)
  const __m512i idx = _mm512_cvtepi32_epi64(_mm256_loadu_si256((const __m256i*)e.index));
  return (vec<double>)_mm512_maskz_permutexvar_pd((__mmask8)e.mask, idx, _mm512_loadu_pd(run));
#else
  vec<double> v = vec<double>{};
  for (int l = 0; l < 8; ++l)
    if (e.mask >> l & 1u) v[l] = run[e.index[l]];
  return v;
#endif
}

// ---- copies of short runs without a library call ---------------------------------
inline void copy_bytes(void* dst, const void* src, size_t n) {
  char* d = static_cast<char*>(dst);
  const char* s = static_cast<const char*>(src);
  size_t i = 0;
  for (; i + 64 <= n; i += 64) memcpy(d + i, s + i, 64);
#if defined(__AVX512BW__)
  if (i < n) {
    const __mmask64 m = ((__mmask64)1 << (n - i)) - 1;  // n - i < 64
    _mm512_mask_storeu_epi8(d + i, m, _mm512_maskz_loadu_epi8(m, s + i));
  }
#else
  memcpy(d + i, s + i, n - i);
#endif
}

// ---- streaming a staged run of grad_input ------------------------------------
// Whole aligned 64-byte lines with non-temporal stores, the ragged ends with
// ordinary ones.
__attribute__((always_inline)) inline void stream_copy(void* dst, const void* src, size_t bytes) {
  char* d = static_cast<char*>(dst);
  const char* s = static_cast<const char*>(src);
  size_t head = (64 - ((uintptr_t)d & 63)) & 63;
  if (head > bytes) head = bytes;
  memcpy(d, s, head);
  size_t i = head;
#if defined(__AVX512F__)
  for (; i + 64 <= bytes; i += 64) _mm512_stream_si512((__m512i*)(d + i), _mm512_loadu_si512(s + i));
#elif defined(__AVX__)
  for (; i + 64 <= bytes; i += 64) {
    _mm256_stream_si256((__m256i*)(d + i), _mm256_loadu_si256((const __m256i*)(s + i)));
    _mm256_stream_si256((__m256i*)(d + i + 32), _mm256_loadu_si256((const __m256i*)(s + i + 32)));
  }
#elif defined(__SSE2__)
  for (; i + 16 <= bytes; i += 16) _mm_stream_si128((__m128i*)(d + i), _mm_loadu_si128((const __m128i*)(s + i)));
#endif
  memcpy(d + i, s + i, bytes - i);
}

// ---- the unit -------------------------------------------------------------------
template <class T, class A, bool PYTORCH>
struct Unit {
  static constexpr int N = simd<A>::n;
  static constexpr bool kHalf = sizeof(T) == 2;

  const BackwardJob& j;
  const T* gout;
  T* gin;
  int64_t* tags;  // ring: the output row each slot holds (-1: none)
  const A** rp;   // ring_slots row pointers
  A* ring;
  A* vsum;
  A* qbuf;
  T* stage;
  T* spread;
  int64_t p0, y0, y1, ow_lo, ow_hi, x0, x1;

  // The term of one grad_output vector with its divisor values.
  static vec<A> term(vec<A> g, vec<A> d) {
    if constexpr (!PYTORCH) {
      return g * d;  // d holds the reciprocal
    } else if constexpr (kHalf) {
      return round_to<T>(g / d);  // T(float(g) / float(T(divisor)))
    } else {
      return g / d;
    }
  }

  // The q values of plane p, output row oy, block columns, into q (n * vec).
  void q_row(A* q, int64_t p, int64_t oy) {
    const int64_t V = j.vec, n = (ow_hi - ow_lo) * V;
    const T* g = gout + ((p * j.oh + oy) * j.ow + ow_lo) * V;
    const A* div = static_cast<const A*>(j.div_values) + (int64_t)j.div_row[oy] * j.ow + ow_lo;
    if (V == 1) {
      int64_t i = 0;
      // The next output row's grad_output is read soon (by the next input
      // rows): fetch it while this one is computed.
      if (oy + 1 < j.oh) prefetch_lines(g + j.ow, n * (int64_t)sizeof(T));
      for (; i + N <= n; i += N) storeu(q + i, term(load_in(g + i), loadu(div + i)));
      if (i < n) store_part(q + i, term(load_in_part<T, A>(g + i, n - i), load_part(div + i, n - i)), n - i);
    } else {
      for (int64_t o = 0; o < ow_hi - ow_lo; ++o) {
        const vec<A> d = zero<A>() + div[o];
        const T* go = g + o * V;
        A* qo = q + o * V;
        int64_t c = 0;
        // + 0 for pixel copies: the slot is the result (a lone -0 term gives +0).
        const vec<A> z = zero<A>();
        for (; c + N <= V; c += N) storeu(qo + c, z + term(load_in(go + c), d));
        if (c < V) store_part(qo + c, z + term(load_in_part<T, A>(go + c, V - c), d), V - c);
      }
    }
  }

  // Fills slot s for plane p, output row oy. q-row slots: the q values
  // after `lead` (the zeros around them are written once per unit, by
  // zero_ring). Spread slots (kBackwardRows, sw > 1): for each tap t, every
  // block column's t-th term from this row (0 where it has none), one
  // permutation of the q row per vector.
  void fill_slot(A* s, int64_t p, int64_t oy) {
    if (j.expanded == 0) {
      q_row(s + j.lead, p, oy);
      return;
    }
    const int64_t width = x1 - x0;
    if (j.hsum) {  // fast, sw == 1: the kw-sums of the padded q row
      q_row(qbuf + j.lead, p, oy);
      const A* q = qbuf + j.lead + x0 + j.pw - j.kw + 1 - ow_lo;
      for (int64_t x = 0; x < width; x += N) {
        vec<A> sum = loadu(q + x);
        for (int64_t t = 1; t < j.kw; ++t) sum += loadu(q + x + t);
        storeu(s + x, sum);
      }
      return;
    }
    q_row(qbuf, p, oy);
    const BackwardSpread* e0 = j.spread + x0 / N;
    if (!PYTORCH) {  // one row: the taps' sum
      for (int64_t x = 0; x < width; x += N) {
        const BackwardSpread* e = e0 + x / N;
        vec<A> sum = spread_lanes(qbuf, ow_lo, *e);
        for (int64_t t = 1; t < j.taps; ++t) sum += spread_lanes(qbuf, ow_lo, e[t * j.spread_chunks]);
        storeu(s + x, sum);
      }
      return;
    }
    for (int64_t t = 0; t < j.expanded; ++t) {
      A* row = s + t * j.spread_width;
      const BackwardSpread* e = e0 + t * j.spread_chunks;
      for (int64_t x = 0; x < width; x += N, ++e) storeu(row + x, spread_lanes(qbuf, ow_lo, *e));
    }
  }

  // The zeros of q-row slots (before `lead`, after the q values), for this
  // unit's column block.
  void zero_ring() {
    if (j.hsum)
      for (int64_t i = 0; i < j.q_elements; i += N) storeu(qbuf + i, zero<A>());
    if (j.expanded != 0 || j.scheme == kBackwardBroadcastRows) return;
    for (int64_t r = 0; r < j.ring_slots; ++r)
      for (int64_t i = 0; i < j.slot; i += N) storeu(ring + r * j.slot + i, zero<A>());
  }

  // The slot holding row oy of plane p (computed if not there yet).
  const A* slot_of(int64_t p, int64_t oy) {
    const int64_t r = oy % j.ring_slots;
    A* s = ring + r * j.slot;
    const int64_t tag = p * j.oh + oy;
    if (tags[r] != tag) {
      fill_slot(s, p, oy);
      tags[r] = tag;
    }
    return s;
  }

  // The rows input row y adds, and how many; fast numerics with several
  // q-row slots: their sum, as one row.
  int64_t rows_of(int64_t p, int64_t y) {
    const int64_t first = j.row_first[y], count = j.row_count[y];
    for (int64_t r = 0; r < count; ++r) rp[r] = slot_of(p, first + r);
    if (!j.presum || count < 2) return count;
    for (int64_t i = 0; i < j.slot; i += N) {
      vec<A> s = loadu(rp[0] + i);
      for (int64_t r = 1; r < count; ++r) s += loadu(rp[r] + i);
      storeu(vsum + i, s);
    }
    rp[0] = vsum;
    return 1;
  }

  static void store(T* dst, vec<A> acc, int64_t k) {
    if (k == N) store_out(dst, acc);
    else store_out_part<T, A>(dst, acc, k);
  }

  // Where row y of plane p (the block's part of it) is written: grad_input
  // itself, or (nt) the staging buffer, which holds the whole unit or one row.
  int64_t row_elements() const { return (x1 - x0) * j.vec; }
  T* row_dst(int64_t p, int64_t y) const { return gin + ((p * j.h + y) * j.w + x0) * j.vec; }
  T* row_out(int64_t p, int64_t y) const {
    if (!j.nt) return row_dst(p, y);
    if (j.stage_unit) return stage + ((p - p0) * (y1 - y0) + (y - y0)) * row_elements();
    return stage;
  }
  // After row y is in row_out: stream it when staged row by row.
  void row_done(int64_t p, int64_t y) {
    if (j.nt && !j.stage_unit) stream_copy(row_dst(p, y), stage, (size_t)row_elements() * sizeof(T));
  }
  void zero_row(int64_t p, int64_t y) {
    memset(row_out(p, y), 0, (size_t)row_elements() * sizeof(T));
    row_done(p, y);
  }

  // ---- NCHW, one input row: sums over the covering rows and columns -------
  void nchw_row(int64_t nrows, T* out) {
    const int64_t width = x1 - x0;
    if (j.expanded != 0) {
      // Spread slots: contiguous loads, rows then taps (PyTorch's order).
      const int64_t taps = j.expanded;
      for (int64_t x = 0; x < width; x += N) {
        vec<A> acc = zero<A>();
        for (int64_t r = 0; r < nrows; ++r)
          for (int64_t t = 0; t < taps; ++t) acc += loadu(rp[r] + t * j.spread_width + x);
        store(out + x, acc, imin(N, width - x));
      }
      return;
    }
    // sw == 1: column x's taps are the slot's positions from x + pw - kw + 1 on.
    const int64_t base = j.lead + x0 + j.pw - j.kw + 1 - ow_lo;
    if (j.kw == 3) {  // the common case, unrolled
      for (int64_t x = 0; x < width; x += N) {
        vec<A> acc = zero<A>();
        for (int64_t r = 0; r < nrows; ++r) {
          const A* s = rp[r] + base + x;
          acc += loadu(s);
          acc += loadu(s + 1);
          acc += loadu(s + 2);
        }
        store(out + x, acc, imin(N, width - x));
      }
      return;
    }
    for (int64_t x = 0; x < width; x += N) {
      vec<A> acc = zero<A>();
      for (int64_t r = 0; r < nrows; ++r) {
        const A* s = rp[r] + base + x;
        for (int64_t t = 0; t < j.kw; ++t) acc += loadu(s + t);
      }
      store(out + x, acc, imin(N, width - x));
    }
  }

  void run_rows(int64_t p) {
    for (int64_t y = y0; y < y1; ++y) {
      if (j.row_count[y] == 0) {
        zero_row(p, y);
        continue;
      }
      nchw_row(rows_of(p, y), row_out(p, y));
      row_done(p, y);
    }
  }

  // ---- NCHW, stride >= kernel: spread each output row once, copy it ---------
  // The spread: each output column's term over its window's input columns
  // (one permutation per vector), zeros where no window is.
  void spread_row(const A* q) {
    const int64_t width = x1 - x0;
    const BackwardSpread* e = j.spread + x0 / N;
    for (int64_t x = 0; x < width; x += N, ++e)  // + 0: a -0 term gives +0, as in PyTorch's sum
      store(spread + x, zero<A>() + spread_lanes(q, ow_lo, *e), imin(N, width - x));
  }

  static void copy(T* dst, const T* src, int64_t n) { copy_bytes(dst, src, (size_t)n * sizeof(T)); }

  void run_broadcast(int64_t p) {
    const int64_t width = x1 - x0;
    int64_t spread_oy = -1;  // the output row the spread holds
    for (int64_t y = y0; y < y1; ++y) {
      if (j.row_count[y] == 0) {
        zero_row(p, y);
        continue;
      }
      const int64_t oy = j.row_first[y];
      if (spread_oy != oy) {
        q_row(qbuf, p, oy);
        spread_row(qbuf);
        spread_oy = oy;
      }
      // nt row by row: straight from the spread row (in L1) to grad_input.
      if (j.nt && !j.stage_unit) stream_copy(row_dst(p, y), spread, (size_t)width * sizeof(T));
      else copy(row_out(p, y), spread, width);
    }
  }

  // ---- NCHW, one window per plane: planes [p0, p1) as one run ---------------
  void run_one_window(int64_t p1) {
    const int64_t hw = j.h * j.w;
    const vec<A> d = zero<A>() + static_cast<const A*>(j.div_values)[0];
    T* out = j.nt ? stage : gin + p0 * hw;  // nt: the unit is staged whole
    for (int64_t p = p0; p < p1; p += N) {
      const int64_t k = imin(N, p1 - p);
      A terms[N];  // one per plane: grad_output has one element per plane
      storeu(terms, term(load_in_part<T, A>(gout + p, k), d));
      for (int64_t l = 0; l < k; ++l) {
        const vec<A> v = zero<A>() + (A(0) + terms[l]);  // + 0: a -0 term gives +0
        T* o = out + (p - p0 + l) * hw;
        for (int64_t i = 0, c = 0; i < hw; i += N, ++c)
          store(o + i, j.plane_mask ? select(j.plane_mask[c], v) : v, imin(N, hw - i));
      }
    }
  }

  // Lanes of v whose bit in mask is set; the others +0.
  static vec<A> select(uint32_t mask, vec<A> v) {
#if defined(__AVX512F__)
    if constexpr (sizeof(A) == 4) return (vec<A>)_mm512_maskz_mov_ps((__mmask16)mask, (__m512)v);
    else return (vec<A>)_mm512_maskz_mov_pd((__mmask8)mask, (__m512d)v);
#else
    vec<A> r = zero<A>();
    for (int l = 0; l < N; ++l)
      if (mask >> l & 1u) r[l] = v[l];
    return r;
#endif
  }

  // ---- per pixel, vec elements each (NHWC) --------------------------------------
  void run_pixels(int64_t p) {
    const int64_t V = j.vec;
    for (int64_t y = y0; y < y1; ++y) {
      if (j.row_count[y] == 0) {
        zero_row(p, y);
        continue;
      }
      const int64_t nrows = rows_of(p, y);
      if (j.pixel_copy) {
        // Each pixel is one q vector or zeros: streamed straight from the
        // slot (its -0 already made +0 by q_row) or from a zeroed stage.
        T* dst = row_dst(p, y);
        for (int64_t x = x0; x < x1; ++x) {
          const size_t bytes = (size_t)V * sizeof(T);
          if (j.col_count[x] == 0) {
            memset(stage, 0, bytes);
            stream_copy(dst + (x - x0) * V, stage, bytes);
          } else {
            stream_copy(dst + (x - x0) * V, rp[0] + (j.col_first[x] - ow_lo) * V, bytes);
          }
        }
        continue;
      }
      T* out = row_out(p, y);
      for (int64_t x = x0; x < x1; ++x) {
        const int64_t first = (j.col_first[x] - ow_lo) * V + j.lead, count = j.col_count[x];
        T* o = out + (x - x0) * V;
        int64_t c = 0;
        for (; c + 4 * N <= V; c += 4 * N) {
          vec<A> a0 = zero<A>(), a1 = zero<A>(), a2 = zero<A>(), a3 = zero<A>();
          for (int64_t r = 0; r < nrows; ++r)
            for (int64_t t = 0; t < count; ++t) {
              const A* s = rp[r] + first + t * V + c;
              a0 += loadu(s);
              a1 += loadu(s + N);
              a2 += loadu(s + 2 * N);
              a3 += loadu(s + 3 * N);
            }
          store_out(o + c, a0);
          store_out(o + c + N, a1);
          store_out(o + c + 2 * N, a2);
          store_out(o + c + 3 * N, a3);
        }
        for (; c < V; c += N) {
          const int64_t k = imin(N, V - c);
          vec<A> a = zero<A>();
          for (int64_t r = 0; r < nrows; ++r)
            for (int64_t t = 0; t < count; ++t) a += load_part(rp[r] + first + t * V + c, k);
          store(o + c, a, k);
        }
      }
      row_done(p, y);
    }
  }
};

template <class T, class A, bool PYTORCH>
void run_unit(const BackwardJob& j, const void* grad_output, void* grad_input, int64_t u, void* scratch) {
  const int64_t b = u % j.blocks;
  const int64_t rest = u / j.blocks;
  const int64_t ru = rest % j.row_units, pu = rest / j.row_units;
  const int64_t p0 = pu * j.planes_per_unit, p1 = imin(p0 + j.planes_per_unit, j.planes);
  const int64_t y0 = ru * j.rows_per_unit, y1 = imin(y0 + j.rows_per_unit, j.h);

  char* s = static_cast<char*>(scratch);
  int64_t* tags = reinterpret_cast<int64_t*>(s);
  s += backward_align64((size_t)j.ring_slots * sizeof(int64_t));
  const A** rp = reinterpret_cast<const A**>(s);
  s += backward_align64((size_t)j.ring_slots * sizeof(void*));
  A* ring = reinterpret_cast<A*>(s);
  s += (size_t)j.ring_slots * backward_align64((size_t)j.slot * sizeof(A));
  A* vsum = reinterpret_cast<A*>(s);
  s += backward_align64((size_t)j.slot * sizeof(A));
  A* qbuf = reinterpret_cast<A*>(s);
  s += backward_align64((size_t)j.q_elements * sizeof(A));
  T* stage = reinterpret_cast<T*>(s);
  s += backward_align64((size_t)j.stage_elements * 8);
  T* spread = reinterpret_cast<T*>(s);
  for (int64_t r = 0; r < j.ring_slots; ++r) tags[r] = -1;

  Unit<T, A, PYTORCH> unit{j,    static_cast<const T*>(grad_output), static_cast<T*>(grad_input), tags, rp, ring, vsum,
                           qbuf, stage, spread, p0, y0, y1, j.block_ow[2 * b], j.block_ow[2 * b + 1], j.block_x[b],
                           j.block_x[b + 1]};
  unit.zero_ring();
  if (j.scheme == kBackwardOneWindow) unit.run_one_window(p1);
  else for (int64_t p = p0; p < p1; ++p) {
    switch (j.scheme) {
      case kBackwardBroadcastRows: unit.run_broadcast(p); break;
      case kBackwardRows: unit.run_rows(p); break;
      default: unit.run_pixels(p); break;
    }
  }
  if (j.nt) {
    if (j.stage_unit)  // the unit's grad_input is one run: planes [p0, p1) x rows [y0, y1)
      stream_copy(unit.row_dst(p0, y0), stage, (size_t)((p1 - p0) * (y1 - y0) * unit.row_elements()) * sizeof(T));
    nt_fence();  // order the streamed stores before the caller's barrier
  }
}

}  // namespace

BackwardKernels backward_table() {
  BackwardKernels k{AVGPOOL_CPU_ISA_NAME, {}};
  k.run[0][0] = run_unit<float, float, false>;
  k.run[0][1] = run_unit<float, float, true>;
  k.run[1][0] = run_unit<F16, float, false>;
  k.run[1][1] = run_unit<F16, float, true>;
  k.run[2][0] = run_unit<BF16, float, false>;
  k.run[2][1] = run_unit<BF16, float, true>;
  k.run[3][0] = run_unit<double, double, false>;
  k.run[3][1] = run_unit<double, double, true>;
  return k;
}

}  // namespace AVGPOOL_CPU_ISA
}  // namespace cpu
}  // namespace avgpool
