// The interface between the CPU backward's driver (backward.cpp: decides
// everything at plan creation, owns OpenMP) and its kernels
// (backward_kernels.inl, compiled once per instruction set).
//
// Plain data only, for the same reason as cpu_job.h: the kernel files are
// compiled with different -m flags and must not share inline functions with
// the rest of the library.
//
// The work, in a layout-free form: grad_input is `planes` planes of h x w
// pixels of `vec` contiguous elements (NCHW: planes = n*c, vec = 1; NHWC:
// planes = n, vec = c), and grad_output the same with oh x ow pixels. Every
// grad_input pixel is the sum of the terms q = grad_output / divisor of the
// windows that contain it; the kernels compute the q rows an input row
// needs once into a small ring (one slot per covering output row), then
// each input element sums its terms from the ring: output rows ascending,
// output columns ascending, from 0 (PyTorch's order).
#pragma once

#include <stddef.h>
#include <stdint.h>

namespace avgpool {
namespace cpu {

enum BackwardScheme : int32_t {
  // NCHW, every input in at most one window (stride >= kernel on both
  // axes): each output row's terms are spread over one input row's width
  // once (a gather by table), then copied to every input row the window
  // covers; the rest is zero.
  kBackwardBroadcastRows = 0,
  // NCHW, any windows: each input row sums, per covering q row, the terms
  // of its covering columns: contiguous shifted loads when sw == 1, a
  // gather by table otherwise. Vectorized across input columns.
  kBackwardRows = 1,
  // Per input pixel, vectorized across the vec contiguous elements (NHWC).
  kBackwardPixels = 2,
  // NCHW, one window per plane (global pooling): each plane is its one term
  // where the window is and 0 elsewhere; the terms of a vector of planes at
  // once, whole planes written as one run.
  kBackwardOneWindow = 3,
};

constexpr int64_t kBackwardLanes = 16;  // column tables are padded to this many lanes

// One vector's worth of a spread row (see BackwardJob::spread): lane l takes
// q[first + index[l]] when bit l of mask is set, else 0.
struct BackwardSpread {
  int64_t first;
  uint32_t mask;
  int32_t index[kBackwardLanes];
};

struct BackwardJob {
  int32_t scheme;
  bool pytorch;  // pytorch numerics (else fast)
  // Fast numerics, more than one covering output row: the q rows are summed
  // first (one pass), then the columns of that sum (any order is allowed).
  bool presum;
  // grad_input written with non-temporal stores from a staging buffer (far
  // larger than the caches: no read-for-ownership of its lines).
  bool nt;
  int64_t planes, vec, h, w, oh, ow;
  int64_t kw, sw, pw;
  // Per input row: the covering output rows [row_first, row_first + row_count).
  const int64_t* row_first;
  const int32_t* row_count;
  int32_t ring_slots;  // most output rows covering one input row (>= 1)
  // Per input column: the covering output columns (kBackwardPixels).
  const int64_t* col_first;
  const int32_t* col_count;
  // Column blocks: input columns [block_x[b], block_x[b + 1]) need the q
  // values of output columns [block_ow[2b], block_ow[2b + 1]). NCHW blocks
  // are multiples of kBackwardLanes wide (but the last).
  int64_t blocks;
  const int64_t* block_x;   // blocks + 1 entries
  const int64_t* block_ow;  // 2 * blocks entries
  // A ring slot (elements of the accumulator type): `lead` zeros, the q
  // values of the block's output columns (times vec), zeros up to `slot`.
  int64_t lead, slot;
  // kBackwardRows with sw > 1: a slot holds the q row spread over the
  // block's input columns, one row of width `spread_width` per tap
  // (`expanded` rows), computed from the q row in a buffer of q_elements.
  // Fast numerics (any kBackwardRows): one row per slot, the sum of the
  // taps; with sw == 1 (hsum) the sums of kw neighbours of the q row, which
  // the q buffer holds padded as a q-row slot would be (`lead` zeros first).
  int32_t expanded;
  bool hsum;
  int64_t spread_width, q_elements;
  // Spreading a q row (those slots, and kBackwardBroadcastRows' rows, one
  // tap): for tap t and the lanes of input columns [x, x + lanes) (x a
  // multiple of the vector's lanes), spread[t * spread_chunks + x / lanes]
  // says which output columns' q values the lanes take (a run of at most
  // one vector from `first`: a column's t-th covering output column grows
  // by at most one per column) and which lanes have none.
  const BackwardSpread* spread;
  int64_t spread_chunks;
  int32_t taps;  // tables in spread
  // kBackwardOneWindow: lane l of the plane's vector v (elements [v * lanes,
  // (v + 1) * lanes)) is in the window when bit l of plane_mask[v] is set;
  // NULL when the window covers the whole plane.
  const uint32_t* plane_mask;
  // Divisors, per distinct row pattern: output (oy, ox) uses
  // div_values[div_row[oy] * ow + ox] (accumulator type): the value to
  // divide by in pytorch numerics (f16/bf16: already rounded to the type),
  // the reciprocal to multiply by in fast numerics.
  const void* div_values;
  const int32_t* div_row;
  // Parallel units: (plane block, input row block, column block), column
  // block fastest.
  int64_t planes_per_unit, rows_per_unit, row_units, units;
  // nt: a unit's grad_input is staged whole when it is one contiguous run
  // (a single column block) of at most stage_elements; else row by row.
  bool stage_unit;
  // nt, NHWC, stride >= kernel, f32/f64: every pixel is one q vector (or
  // zeros), streamed straight from its slot.
  bool pixel_copy;
  int64_t stage_elements;   // staging buffer (grad_input elements)
  int64_t spread_elements;  // kBackwardBroadcastRows: one spread row
  size_t scratch_bytes;     // per thread, 64-byte aligned
};

// Runs unit u of the job: grad_input from grad_output.
using BackwardUnitFn = void (*)(const BackwardJob& job, const void* grad_output, void* grad_input, int64_t unit,
                                void* scratch);

// Indexed [dtype][numerics] with avgpool_dtype and avgpool_numerics values.
struct BackwardKernels {
  const char* isa;
  BackwardUnitFn run[4][2];
};

BackwardKernels backward_kernels_avx512();
BackwardKernels backward_kernels_avx2();
BackwardKernels backward_kernels_base();

inline size_t backward_align64(size_t n) { return (n + 63) & ~(size_t)63; }

// Per-thread scratch layout (backward_kernels.inl follows it): ring tags
// (ring_slots int64), row pointers (ring_slots), the ring (ring_slots
// slots), the row sum (one slot), the q buffer (q_elements), the staging
// buffer (stage_elements of at most 8 bytes), the spread row
// (spread_elements of at most 8 bytes). Slots are whole vectors: j.slot is
// a multiple of 16.
inline size_t backward_scratch_bytes(const BackwardJob& j, size_t acc_size) {
  return backward_align64((size_t)j.ring_slots * sizeof(int64_t)) +
         backward_align64((size_t)j.ring_slots * sizeof(void*)) +
         (size_t)(j.ring_slots + 1) * backward_align64((size_t)j.slot * acc_size) +
         backward_align64((size_t)j.q_elements * acc_size) + backward_align64((size_t)j.stage_elements * 8) +
         backward_align64((size_t)j.spread_elements * 8) + 64;
}

}  // namespace cpu
}  // namespace avgpool
