// The interface between the CPU backend's driver (impls.cpp: plans the work,
// owns OpenMP) and its kernels (kernels.inl, compiled once per instruction
// set: kernels_avx512.cpp, kernels_avx2.cpp, kernels_base.cpp).
//
// Plain data only: the kernel files are compiled with different -m flags, so
// they must not share inline functions (Eigen, std containers) with the rest
// of the library, or the linker could pick an AVX-512 copy for every caller.
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "window.h"

namespace avgpool {
namespace cpu {

// One pooling job, in a layout-free form: a tensor is `planes` planes of
// h x w pixels of `vec` contiguous elements. NCHW: planes = n*c, vec = 1.
// NHWC: planes = n, vec = c. Windows and divisors come from the Problem.
struct Job {
  const void* src;
  void* dst;
  int64_t planes, vec;
  int64_t h, w, oh, ow;
  int64_t kh, kw, sh, sw;
  int64_t max_rows;  // most input rows one window sums (<= min(kh, h))
  const AxisWindow* rows;  // oh entries (Problem::rows)
  const AxisWindow* cols;  // ow entries (Problem::cols)
  // Divisors, converted once to the accumulator type (float, double for
  // f64): output (oy, ox) divides by div_table[div_row[oy] * ow + ox].
  const void* div_table;
  const int32_t* div_row;
  // Fast numerics: 1 / divisor, rounded, same layout (multiply and one FMA
  // correction instead of a division); NULL in pytorch numerics.
  const void* rcp_table;
  // Output columns [ox_lo, ox_hi) have full windows (end - begin == kw) whose
  // begins step by sw: cols[ox].begin = cols[ox_lo].begin + (ox - ox_lo) * sw.
  // The NCHW kernels vectorize across these outputs.
  int64_t ox_lo, ox_hi;
  int64_t ob;        // output columns per block
  const int64_t* block_cols;  // per block: first input column, one past the last
  int64_t span_cap;  // most elements (columns * vec) one block's windows span
  // Fast numerics: sum each output row's window rows first (one pass, SIMD
  // over columns), then the columns. Off in pytorch numerics (each output
  // adds rows then columns itself) and where windows do not overlap along
  // a row in NHWC (no sharing to gain).
  bool presum;
  // NCHW, one output per plane whose window covers the plane: vectorized
  // across planes (global pooling).
  bool global;
  // NCHW, sh == sw == 1, ow == w, f32/f64: interior rows [oy_lo, oy_hi) are
  // done flat, flat_chunk rows at a time, with the interior rows' divisors
  // repeated flat_chunk times (flat_div, flat_rcp).
  bool flat;
  int64_t oy_lo, oy_hi, flat_chunk;
  const void* flat_div;
  const void* flat_rcp;
  // Stride-1 fused kernel: prefetch the window's last row (the one new to
  // this output row) and the outputs about to be written.
  bool pf_last, pf_out;
  // Software prefetch in the vertical sums (input rows read once).
  bool prefetch;
  // Outputs far beyond the caches: each parallel unit computes its outputs
  // (a contiguous range of dst) into scratch, then writes them with
  // non-temporal stores (no read-for-ownership of dst). f32/f64 only.
  bool stream;
  // NHWC, f32/f64, channels a multiple of one vector, dst 64-byte aligned and
  // far larger than the caches: the outputs are written with non-temporal
  // stores straight from the kernel (whole aligned lines, in address order).
  bool nt_out;
  // NHWC, fast numerics, sw == 1, kw in [2, 16], channels a multiple of one
  // vector: interior columns by the separable ring kernel (nhwc_s1_sweep).
  bool sep_s1;
};

// Computes outputs (plane p, row oy) for p in [p0, p1), oy in [oy0, oy1).
// scratch: at least scratch_bytes(job, dtype) bytes, 64-byte aligned.
using BlockFn = void (*)(const Job& job, int64_t p0, int64_t p1, int64_t oy0, int64_t oy1,
                         void* scratch);

struct KernelTable {
  const char* isa;
  BlockFn f32, f16, bf16, f64;
};

KernelTable kernels_avx512();
KernelTable kernels_avx2();
KernelTable kernels_base();

inline size_t align64(size_t n) { return (n + 63) & ~(size_t)63; }

// Scratch layout (kernels.inl follows it): row pointers (max_rows), the
// vertical sum (span_cap, then 128 bytes of slack), the block's outputs
// (ob * vec), then max_rows converted input rows (span_cap each) for
// f16/bf16. Sized by the windows as clipped to the input, never by the
// kernel (a valid kernel may be far larger than the input).
// With streaming (f32/f64 only), the last part instead holds one parallel
// unit's outputs (stage_elements).
inline size_t scratch_bytes(const Job& j, size_t acc_size, bool converts, int64_t stage_elements) {
  const size_t last = converts ? (size_t)j.max_rows * align64((size_t)j.span_cap * acc_size)
                    : j.stream ? align64((size_t)stage_elements * acc_size) : 0;
  return align64((size_t)j.max_rows * sizeof(void*)) + align64((size_t)j.span_cap * acc_size) + 128 +
         align64((size_t)(j.ob * j.vec) * acc_size) + last + 64;
}

}  // namespace cpu
}  // namespace avgpool
