// The interface between the CPU backend's driver (impls.cpp: decides the job
// at plan creation, owns OpenMP) and its kernels (kernels.inl, compiled once
// per instruction set: kernels_avx512.cpp, kernels_avx2.cpp, kernels_base.cpp).
//
// Plain data only, no inline functions: the kernel files are compiled with
// different -m flags, so anything inline they shared with the rest of the
// library (helpers here, Eigen, std containers) could be linked as an
// AVX-512 copy for every caller.
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "window.h"

namespace avgpool {
namespace cpu {

// One pooling job, in a layout-free form: a tensor is `planes` planes of
// h x w pixels of `vec` contiguous elements. NCHW: planes = n*c, vec = 1.
// NHWC: planes = n, vec = c (one channel: the same memory as NCHW, taken
// as NCHW). Decided once per plan (CpuConfig in impls.cpp
// owns every table it points to); a call copies it and sets src, dst, rows,
// cols and nt_out.
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
  // over columns), then the columns. Only for strided NCHW windows: in
  // pytorch numerics each output adds rows then columns itself, and with
  // stride 1 or in NHWC summing the window directly measured as fast.
  bool presum;
  // Tall windows (at least kTallRows rows in impls.cpp): fast numerics sum
  // the rows first (presum), pytorch numerics accumulate NCHW outputs of
  // stride 1 rows outer (tall_rows), so each window row is read in memory
  // order instead of a column of rows per vector of outputs.
  bool tall;
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
  // Kernel 1 x 1 (any stride; no padding is legal): each output is one
  // input element, (0 + x) / divisor - a strided copy (single_windows).
  bool single;
  // NCHW, f32/f16/bf16 (and f64 in the AVX2 build), rows too short to fill
  // a vector of outputs: 16 planes at a time, a unit's window rows
  // transposed into scratch at across_at so that lane l holds plane l (16
  // floats, or doubles, a pixel), every output's window summed there as 16
  // lanes (rows then columns, from 0: each lane keeps PyTorch's order), the
  // outputs transposed back. Units are groups of 16 planes, whole or in
  // bands of output rows (impls.cpp).
  bool across;
  int64_t across_at;  // bytes: a unit's window rows' pixels, then its outputs, 16 accumulators each
  int64_t col_terms;  // across: the window columns of one output row (sum of cols' lengths)
  // NCHW rows of at most kScalarRow outputs, and f64 strided rows in
  // pytorch numerics (impls.cpp), not global
  // pooling: each output's window summed in scalar straight from the input,
  // rows then columns from 0, four planes side by side (short_rows in
  // kernels.inl); units of a split job (nchunks) sum theirs in scalar from
  // the window rows (horizontal_nchw). No row sums first unless tall.
  bool short_rows;
  // Software prefetch where input rows are read once (2 * sh >= kh).
  bool prefetch;
  // The CPU's gathers are slow (slow_gathers_for_plan in isa.h): AVX-512
  // f64 strided windows of 3+ columns are transposed in both numerics.
  bool slow_gathers;
  // NHWC, f32/f64, channels a multiple of one vector, output far larger than
  // the caches, dst 64-byte aligned (checked per call): the outputs are
  // written with non-temporal stores straight from the kernel (whole aligned
  // lines, in address order).
  bool nt_out;
  // NHWC, fast numerics, sw == 1, kw in [4, 16], channels a multiple of one
  // vector: interior columns by the separable ring kernel (nhwc_s1_sweep).
  bool sep_s1;
  // NHWC, sw == 1, channels short of a whole number of vectors (impls.cpp):
  // each block's interior outputs [ox_lo, ox_hi) as one contiguous run of
  // elements, summed in whole vectors (flat_run in kernels.inl).
  bool flat_run;
  // NHWC, AVX-512, each input column in 3+ windows of the row: interior
  // outputs side by side, each pixel loaded once for all of them, where the
  // window outgrows L1 (shared_run in kernels.inl).
  bool shared_run;
  // NHWC f32/f64, AVX-512, strided rows of pixels of a few channels: this
  // many interior outputs side by side in one vector (packed_run in
  // kernels.inl); 0: off.
  int64_t packed;
  int32_t packed_idx[16];  // lane l of the vector picks element (l / vec) * sw * vec + l % vec of a tap
  // f16/bf16 NHWC, a vector of channels or more (16 floats), or fewer
  // where impls.cpp measured it faster (half_short), no row sums first, not
  // the ring kernel: the blocks read the input channel vectors
  // directly (run_block). Decided here because the row-chunk split
  // (nchunks), which converts rows first, is turned off for these jobs.
  bool half_direct;
  // NHWC inputs too large for the caches, windows that do not overlap
  // (impls.cpp): bf16 pixels of 17-32 channels taken four outputs at a
  // time (bf16_pair_four) are read as whole 64-byte vectors, unmasked,
  // where the group's reads stay inside the input; masked loads that missed
  // the caches were slower, and the whole vectors' split cache lines were
  // slower on data the caches hold.
  bool wide_loads;
  // The same inputs and windows, windows of 16+ inputs on rows of 4+
  // outputs: the AVX2 build sums pixels of three or four ymm vectors (two:
  // f32/f64) one output at a time over its whole window (narrow_wide_each),
  // not two or more outputs side by side (narrow_pixels).
  bool disjoint_each;
  // f32/f64 (no conversions): the AVX2 build's groups of outputs of pixels
  // of two to four whole ymm vectors on stride-1 rows use offsets known
  // when compiled (narrow_pixels).
  bool fixed_groups;
  // nhwc_output_fours prefetches the span a group's windows take of each
  // window row (two groups ahead) where that span is shorter than this many
  // bytes (impls.cpp, kCachedSpanPrefetch).
  int64_t span_prefetch_limit;
  // NHWC inputs beyond the caches: the AVX2 pairs and single outputs of
  // narrow pixels prefetch the next output row's window (kernels.inl).
  bool prefetch_below;
  // NHWC rows of few outputs (impls.cpp), window rows read from the input
  // (no row sums first; f16/bf16 read directly): four planes or four output
  // rows at a time, the four outputs of one column side by side (AVX2: ymm
  // pixels; AVX-512: pixels of up to two 64-byte vectors; column_fours in
  // kernels.inl), where a row alone leaves outputs in pairs or alone, each
  // one chain of dependent adds.
  bool column_fours;
  // Scratch, one buffer per thread (64-byte aligned, at least scratch_bytes
  // in CpuConfig), laid out once here for the kernels: at 0 the window rows'
  // pointers (max_rows); at vsum_at the vertical sum (span_cap elements, then
  // 128 bytes of slack); at out_at one block's outputs (ob * vec, f16/bf16
  // only); at conv_at the window rows converted to the accumulator type
  // (f16/bf16 only: max_rows rows, conv_stride elements apart). Sized by the
  // windows as clipped to the input, never by the kernel. At least 64 bytes
  // follow the last converted row: the AVX2 transposed windows read up to
  // 7 elements past a row's last window (their columns are not added).
  int64_t vsum_at, out_at, conv_at;  // bytes
  int64_t conv_stride;               // elements
  // Column blocks [b0, b1) per unit: all of them, or one each when output
  // rows are few (the outputs of a row split over threads).
  int64_t nblocks;
  // Fast numerics, few output rows, tall windows: each window's rows are
  // split into nchunks chunks of chunk_rows rows (fixed by the problem, not
  // by the threads); partial_unit sums one chunk for a whole output row
  // into partials (set per call; planes * oh * nchunks rows of ow * vec
  // accumulators), combine_row adds the chunks in order and divides. 0
  // chunks: not split. ones: ow ones (the partial pass's divisors).
  int64_t chunk_rows, nchunks;
  const void* ones;
  void* partials;
};

// Computes outputs (plane p, row oy, column block b) for p in [p0, p1),
// oy in [oy0, oy1), b in [b0, b1). scratch: the layout above.
using BlockFn = void (*)(const Job& job, int64_t p0, int64_t p1, int64_t oy0, int64_t oy1, int64_t b0,
                         int64_t b1, void* scratch);
// A split job's units (Job::nchunks): partial_unit(u) for u < planes * oh *
// nchunks, then, after every one of those, combine_row(r) for r < planes * oh.
using UnitFn = void (*)(const Job& job, int64_t u, void* scratch);

struct DtypeKernels {
  BlockFn block;
  UnitFn partial, combine;
};

struct KernelTable {
  const char* isa;
  DtypeKernels f32, f16, bf16, f64;
};

KernelTable kernels_avx512();
KernelTable kernels_avx2();
KernelTable kernels_base();

}  // namespace cpu
}  // namespace avgpool
