// The CPU backend: one implementation, cpu:simd, and its driver. At plan
// creation init turns the Problem into a Job (divisor tables, interior
// columns and rows, column blocks, the kernel paths, parallel units, the
// scratch layout) and picks the kernels for this CPU, all kept in a
// CpuConfig; execute copies the Job, points it at src and dst, and runs the
// units on OpenMP threads. The kernels are in kernels.inl.
#include <stdint.h>

#include <algorithm>
#include <atomic>
#include <limits>
#include <memory>
#include <new>
#include <stdexcept>
#include <vector>

#if defined(AVGPOOL_WITH_OPENMP)
#include <omp.h>
#endif

#include "backward.h"
#include "cpu_job.h"
#include "driver.h"
#include "error.h"
#include "impl.h"
#include "isa.h"
#include "problem.h"

namespace avgpool {
namespace cpu {
namespace {

DtypeKernels kernel_for(Isa isa, avgpool_dtype dtype) {
#if defined(AVGPOOL_CPU_X86_KERNELS)  // compiled for x86 targets only (CMakeLists.txt)
  const KernelTable t = isa == Isa::kAvx512 ? kernels_avx512() : isa == Isa::kAvx2 ? kernels_avx2() : kernels_base();
#else
  (void)isa;
  const KernelTable t = kernels_base();
#endif
  switch (dtype) {
    case AVGPOOL_DTYPE_F16: return t.f16;
    case AVGPOOL_DTYPE_BF16: return t.bf16;
    case AVGPOOL_DTYPE_F64: return t.f64;
    case AVGPOOL_DTYPE_F32:
    default: return t.f32;
  }
}

// ---- the configuration -----------------------------------------------------------
// Everything a call needs, decided at plan creation. Read-only afterwards:
// a plan may execute on several threads at once.
struct CpuConfig : Config {
  Job job;          // the template; src, dst, rows, cols, nt_out and partials are set per call
  DtypeKernels fn;  // the kernels for the dtype and instruction set
  // NHWC non-temporal output stores, for a 64-byte-aligned dst (checked per
  // call).
  bool nt_out = false;
  // Parallel units: rb output rows of one plane, or pb whole planes, times
  // bpu column blocks (col_units of them). A split job (job.nchunks > 0)
  // runs `units` partial units, then `rows` combine units.
  int64_t rb = 1, pb = 1, row_units = 1, bpu = 1, col_units = 1, units = 1, rows = 0;
  size_t scratch_bytes = 0;  // per thread, a multiple of 64
  size_t partial_bytes = 0;  // split jobs: the partial sums, after the caller's scratch
  std::vector<int32_t> div_row;
  std::vector<int64_t> block_cols;
};

// The tables in the accumulator type A (float; double for f64).
template <class A>
struct CpuConfigOf final : CpuConfig {
  std::vector<A> div, rcp, flat_div, flat_rcp, ones;
};

constexpr int64_t kHalfSpan = 512;              // the same for f16/bf16 NHWC rows converted first
constexpr int64_t kHalfDirectFast = 6;           // f16/bf16 NHWC channels read directly from (fast numerics)
constexpr int64_t kHalfDirectPytorch = 6;        // the same in pytorch numerics
constexpr int64_t kHalfDirectFastColumn = 4;     // fast numerics, windows one column wide, from this many
constexpr int64_t kHalfDirectPytorchSpaced = 4;  // and from this many where windows do not overlap along the row
constexpr int64_t kHalfDirectFastGaps = 4;       // fast numerics, windows with gaps between them along the row
constexpr int64_t kHalfDirectSmallWindow = 4;    // of more inputs than this
constexpr int64_t kHalfDirectRow = 8;            // and output rows of at least this many outputs
// NHWC inputs from this size on, whose windows do not overlap (each pixel
// read once, from memory): bf16 pixels of 17-32 channels of groups of four
// outputs are read as whole vectors (Job::wide_loads). 2-core AMD EPYC Zen 5
// VM, 2026-12-03, one thread, bf16 pixels of 19-22 channels, ms masked ->
// whole vectors: N x 20 x 486 x 67 k10x4 s10x4, 15.6 MB 0.29 -> 0.33, 30 MB
// 1.40 -> 1.12, 173 MB 11.4 -> 8.0; N x 22 x 240 x 240 k7 s7, 15 MB 0.24 ->
// 0.29, 30 MB level, 61 MB 2.60 -> 2.22 (the L3 is 32 MiB); overlapping
// windows, whose pixels are read again from the caches, 1679x19x413x10
// k11x4 s6x2 (263 MB) 12.9 -> 21.3. The same for the partial vectors of the
// other types (f32, f16, bf16 below 17 channels) measured level: the 9 f16
// NHWC rows of 17-31 channels of sweep seeds 17-40 it took, 0.95x / 0.96x
// (fast / pytorch numerics, one thread), against 0.96x for the 39 f16 rows
// it left alone in the same runs.
constexpr int64_t kWideLoadBytes = int64_t(24) << 20;
constexpr int64_t kPackedOutputs = 4;      // outputs a vector from which Job::packed holds (plan_job)
constexpr int64_t kPackedLongWindow = 30;  // three a vector: fast numerics, or windows of fewer inputs
constexpr int64_t kHalfSepChannels = 192;  // f16/bf16 pixels from which fast stride-1 rows skip the ring (plan_job)
// Inputs below kWideLoadBytes: nhwc_output_fours prefetches a group's span
// of each window row only where it is shorter than this (Job::
// span_prefetch_limit). A burst of prefetches per row, one a cache line,
// over spans of 1 KiB or more waited on fill buffers: 3x23x57x385 k10 s10
// excl f32 NHWC, pytorch numerics, 0.126-0.134 ms against 0.081-0.084
// without it (oneDNN 0.078-0.086); summing rows outer into the outputs
// instead ran 0.104-0.117. 2-core Intel Xeon AVX-512 VM, 2026-12-06, two
// threads, both ways alternated, fastest of the rounds, NHWC f32/f16/bf16
// pixels of 9-32 channels of spans of 1 KiB or more, without the prefetch
// against with it, sweep seeds 200-260 (tuning), by input size: up to 24 MB
// 1.04-1.08x / 1.04-1.11x fast / pytorch numerics over 244; 24-40 MB
// 1.00-1.04x / 1.01-1.13x over 40; 48 MB or more 0.85-1.00x over 46 (f16/
// bf16 0.85x, 54x23x525x63 k8 s7x8 bf16 0.61x). Not tuned on, seeds
// 301-370, the rule against the prefetch everywhere, inputs under 24 MB:
// f32 1.00x / 1.06x over 156, bf16 1.02x / 1.02x over 65, f16 0.97x /
// 0.99x over 49, while the 147 larger ones, unchanged, ran 0.98-0.99x (the
// run-to-run spread). Spans under 1 KiB and inputs under 16 MB, without
// the prefetch: 1.00-1.02x, f16 down to 0.90x. (bench/cpu/results/
// vm-intel-xeon-2026-12-06-span-prefetch-limit-*.log) Windows overlapping
// down the plane (kh > sh), whose rows the next output row reads again,
// without the prefetch under 24 MB: 1.02x over 76 of seeds 17201-17260,
// 1.01x over 109 of seeds 17261-17360 (the same VM and method, 2026-12-07;
// 106x29x44x44 k11x2 s6x2 pytorch numerics 0.49 -> 0.44 ms): level, kept.
constexpr int64_t kCachedSpanPrefetch = 1024;
constexpr int64_t kDisjointEachWindow = 16;      // inputs of a window from which Job::disjoint_each holds
constexpr int64_t kDisjointEachRow = 4;          // and outputs of a row
constexpr int64_t kDisjointEachRowTwo = 8;       // the same for pixels of two ymm vectors
constexpr int64_t kShortSumRow = 256;            // elements of a row below which NHWC row sums may be skipped (plan_job)
constexpr int64_t kDirectF64Pixel = 256;         // bytes of an f64 pixel and
constexpr int64_t kDirectF32Pixel = 32;          // of an f32 one from which fast windows of
constexpr int64_t kDirectRows = 6;               // up to this many rows may skip row sums (plan_job)
constexpr int64_t kRowPassAdds = 4;              // a row pass's set-up and tail in that rule, in vector adds
constexpr int64_t kOneColumnPixel = 64;          // bytes of a pixel from which one-column NHWC windows skip row sums (plan_job)
constexpr int64_t kDisjointWindow = 16;          // inputs of a window up to which non-overlapping NHWC windows skip row sums
constexpr int64_t kDisjointPixel = 512;          // and bytes of a pixel below which (plan_job)
constexpr int64_t kSpanTarget = 4096;            // elements one block's windows span (<= 16 KiB f32)
constexpr int64_t kFlatRunWindow = 32768;        // window bytes up to which NHWC stride-1 rows run flat (plan_job)
constexpr int64_t kNtBytes = int64_t(32) << 20;  // NHWC outputs streamed from this size on
constexpr int64_t kUnitTarget = 32768;           // elements of work per parallel unit
// Large windows (the AUTO rules of this backend; docs/cpu.md, "Large
// windows", has the measurements):
// - windows of kTallRows rows or more (Job::tall): fast numerics sum the
//   rows first (NCHW; NHWC where that saves reads), pytorch numerics
//   accumulate NCHW outputs of stride 1 rows outer;
// - fewer than kFewRows output rows (planes x oh): the work is split below
//   the output row, by a fixed partition (the bits do not depend on the
//   threads): fast numerics with windows of two chunks or more split the
//   window rows into chunks of at least kChunkElems input elements (at most
//   kMaxChunks chunks); otherwise (pytorch numerics: one chain per output)
//   the outputs of a row are split into column blocks, kFewRows units in all
//   where the row is wide enough.
// NCHW planes across planes (Job::across, the rule in plan_job): output
// rows shorter than kShortRow, or than kAcrossRow in some cases; planes and
// outputs of at most kAcrossPixels, larger planes on rows shorter than
// kShortRow (fast numerics: overlapping windows of fewer than
// kAcrossBandWindow inputs, or windows that do not overlap whose rows span
// at most kAcrossDisjointRow inputs of a plane). Planes beyond kAcrossBand
// pixels go in bands of output rows whose window rows span at most that
// many (16 planes of them: 256 KiB of f32, in L2) where a band holds
// kAcrossBandRows output rows; planes beyond kAcrossPixels whose rows are
// too wide for that take bands of up to kAcrossBandRows rows within
// kAcrossPixels.
constexpr int64_t kShortRow = 16;
constexpr int64_t kAcrossRow = 64;
constexpr int64_t kAcrossWindow = 16;
constexpr int64_t kAcrossPixels = 32768;
constexpr int64_t kAcrossBand = 4096;
constexpr int64_t kAcrossBandWindow = 64;
constexpr int64_t kAcrossBandRows = 4;
constexpr int64_t kAcrossDisjointRow = 256;
constexpr int64_t kAcrossF64Pixels = 1024;  // f64 planes up to this many pixels (AVX2 build)
constexpr int64_t kAcrossSparse = 16;  // inputs per output from which rows of many outputs skip it (plan_job)
constexpr int64_t kAcrossGlobal = 1024;  // global pooling in f32 pytorch numerics too, on planes up to this size
constexpr int64_t kAcrossGlobalFast = 64;  // and in fast numerics, on planes up to this size
constexpr int64_t kTallRows = 16;
constexpr int64_t kNhwcRowSumRows = 3;  // fast numerics, NHWC: window rows summed first from this many (plan_job)
// NCHW rows of at most kScalarRow outputs (Job::short_rows, not global
// pooling): every output summed in scalar straight from the input, four
// planes side by side (short_rows in kernels.inl), in place of the row
// kernels (per-row set-up and mostly empty vectors for one or two outputs)
// and of the 16-plane path (which transposes every pixel of a plane, most
// of them outside these few windows, and takes no f64). 2-core AMD EPYC
// (Zen 3, AVX2) VM, 2026-12-02, random configurations of this kind (NCHW,
// ow <= 2, planes up to 32768 pixels, 1-32 MiB, every dtype), best of three
// runs alternated with the paths before: 82 not tuned on 4.7x (fast) and
// 4.8x (pytorch numerics) faster in geomean, all faster; 0.63 -> 2.9-3.0x
// the plain OpenMP loop (60 -> 2 below it); f64 3289x5x8x8 k1x4 s3x5
// 5.76 -> 0.23 ms (loop 0.59). Rows of three or more outputs keep the
// row kernels and the 16-plane path, except f64 strided rows of up to
// kScalarRowF64 outputs and, on the base instruction set, of windows
// kScalarWindowF64 columns wide or more (the rules in plan_job).
// Measured against the present 16-plane path and row kernels, the scalar
// rows lead only in f64 (which the 16-plane path takes on AVX2 alone),
// and in f32 where the windows read little of the plane (fewer inputs,
// counted with their overlaps, than kScalarRowReads4 / 4 of its pixels)
// or there is one output row: the 16-plane path converts (f16/bf16) and
// transposes every pixel of 16 planes at once, which pays where most
// pixels are read. 2-core Intel Xeon AVX-512 VM, 2026-12-06, two threads,
// both ways alternated, fastest of the rounds, the NCHW rows of one or two
// outputs of 16+ planes of up to 32768 pixels (not f64): every such row
// off the scalar rows ran 1.53x / 1.57x faster (fast / pytorch numerics)
// over 348 of sweep seeds 200-250 (266 faster by more than 10 %, 36
// slower), f16/bf16 1.13-2.20x in every group, f32 1.32x / 1.36x where
// the windows read 3/4 of the plane or more on 2+ output rows, 0.72-0.90x
// elsewhere. The rule, not tuned on, seeds 301-350: 1.56x / 1.60x over 343
// (249 / 254 faster, 15 / 11 slower; 68x483x59x12 k10 s10 p5 bf16 4.3 ->
// 2.6 ms, oneDNN 3.0-3.4); f32 rows it moves 1.28x / 1.32x over 75, the
// f32 rows it leaves 0.98-1.00x (the spread). The AVX2 kernels, on the
// same VM (AVGPOOL_CPU_ISA=avx2), seeds 200-250: 1.52x / 1.55x over 348,
// the f32 rows moved 1.16x / 1.19x over 82 (12 / 10 slower). Not on the
// base instruction set, whose 16-plane path and row kernels ran 0.43x
// the scalar rows on 120 of those of seeds 301-350 (96 slower). (bench/
// cpu/results/vm-intel-xeon-2026-12-06-short-rows-reads-*.log)
constexpr int64_t kScalarRow = 2;
constexpr int64_t kScalarRowReads4 = 3;
constexpr int64_t kScalarRowF64 = 16;
constexpr int64_t kScalarWindowF64 = 4;
constexpr int64_t kScalarRowsFast = 6;  // window rows up to which fast numerics take those f64 scalar rows
constexpr int64_t kScalarColumnsFast = 7;  // window columns below which fast numerics take those f64 scalar rows
constexpr int64_t kScalarRowsFastWide = 2;  // and wider windows of at most this many rows
constexpr int64_t kScalarRowTallFast = 4;  // and any window on rows of at most this many outputs
constexpr int64_t kFewRows = 64;
constexpr int64_t kChunkElems = 65536;
constexpr int64_t kSplitWindow = 4 * kChunkElems;  // elements of a short window split by rows
constexpr int64_t kMaxChunks = 32;
constexpr int64_t kMaxPartialBytes = int64_t(16) << 20;

int64_t align64(int64_t n) { return (n + 63) & ~int64_t(63); }

// Whether a window has at most m inputs (kh * kw <= m), without forming the
// product: kernel sides are bounded by INT64_MAX / 8, their product is not.
bool window_at_most(const Problem& q, int64_t m) { return q.kw <= m / q.kh; }

// Fills c for q. Throws std::bad_alloc (or length_error) when a table does
// not fit.
template <class A>
void plan_job(const Problem& q, Isa isa, CpuConfigOf<A>* c) {
  Job& j = c->job;
  j = Job{};
  build_divisors<A>(q, &c->div, &c->div_row, [](int64_t d) { return static_cast<A>(d); });  // in the accumulator type
  const bool nchw = q.layout == AVGPOOL_LAYOUT_NCHW || q.c == 1;  // one channel: the same memory
  const bool fast = q.numerics == AVGPOOL_NUMERICS_FAST;
  const bool converts = q.dtype == AVGPOOL_DTYPE_F16 || q.dtype == AVGPOOL_DTYPE_BF16;
  j.planes = nchw ? q.n * q.c : q.n;
  j.vec = nchw ? 1 : q.c;
  j.h = q.h; j.w = q.w; j.oh = q.oh; j.ow = q.ow;
  j.kh = q.kh; j.kw = q.kw; j.sh = q.sh; j.sw = q.sw;
  j.max_rows = 1;
  for (const AxisWindow& r : q.rows)
    if (r.end - r.begin > j.max_rows) j.max_rows = r.end - r.begin;
  j.div_table = c->div.data();
  j.div_row = c->div_row.data();
  if (q.numerics == AVGPOOL_NUMERICS_FAST) {
    c->rcp.resize(c->div.size());
    for (size_t i = 0; i < c->div.size(); ++i) c->rcp[i] = A(1) / c->div[i];
    j.rcp_table = c->rcp.data();
  }
  // Vertical sums first: fast numerics, NCHW, strided windows (the sums
  // save gathers). With stride 1 the columns are contiguous and summing the
  // window directly measured as fast or faster (no store-to-load stalls).
  // Tall windows (kTallRows). Fast numerics: row sums first where they save
  // reads or loads: NCHW; NHWC windows that overlap along the row (each
  // output row's sums serve several outputs) or channels that leave vectors
  // partly empty. Non-overlapping NHWC windows over whole channel vectors
  // are summed in registers, each input read once, as they are (global
  // 16x64x256x256 NHWC: 1.07-1.11 of a read pass with row sums first, 1.20
  // without). Pytorch numerics: NCHW windows of stride 1 along the row
  // accumulate rows outer (tall_rows in kernels.inl).
  const int64_t lanes = 64 / (int64_t)sizeof(A);
  j.tall = j.max_rows >= kTallRows && (!fast || nchw || q.kw > q.sw || q.c % lanes != 0);
  // Pytorch numerics, NCHW windows one column wide: the vertical sum of a
  // column's window rows, in row order, is each output's own chain, so the
  // sums first keep PyTorch's bits (they start from the first row, not
  // from +0, which differs only while every term so far is -0; the
  // horizontal pass adds the sum to +0, which gives PyTorch's +0 there).
  const bool column_windows = !fast && j.vec == 1 && q.kw == 1 && j.max_rows > 1;
  const bool global = nchw && q.oh == 1 && q.ow == 1 && q.rows[0].begin == 0 && q.rows[0].end == q.h &&
                      q.cols[0].begin == 0 && q.cols[0].end == q.w && q.h * q.w < (int64_t(1) << 26);
  // NCHW rows of at most kScalarRow outputs (Job::short_rows; global
  // pooling keeps its own paths): each output sums its window in scalar, in
  // PyTorch's order, straight from the input rows; row sums first would add
  // every column of the short span into a buffer for one or two outputs
  // that share no columns. Tall windows keep their row sums where the
  // window rows are split over units (few output rows, fast numerics).
  // Also f64 pytorch numerics on strided rows of up to kScalarRowF64
  // outputs: the row kernels gather each window column four doubles at a
  // time (2-core AMD EPYC Zen 3 VM, 2026-12-04, two
  // threads, seeds 79-82: 1.1-3.6x on 7 of the 8 such configurations,
  // 29x246x33x40 k6 s6 3.6x, 1x446x75x42 k5 s5x3 2.6x, 3x908x14x72 k8 s9
  // 0.74x; stride-1 rows 0.5x, wider strided rows mixed; the 29 of seeds
  // 83-92, not tuned on: 2.33x, none slower); and, on the base
  // instruction set, on longer strided rows of windows kScalarWindowF64
  // columns wide or more, which gather that many columns per output (the
  // same VM, 2026-12-04, both ways in one process, rounds alternated,
  // fastest of 7, two threads, AVX2 then gathering too, f64 NCHW strided
  // rows of 17+ outputs of sweep seeds 78-130: from 4 columns 1.51x over
  // 85 not tuned on, 6 slower). On AVX2 the row kernels now transpose
  // those windows (transposed_windows_ymm) and ran 1.61x faster than the
  // scalar rows over 141 such rows of seeds 500-560 not tuned on (2026-12-05,
  // 2 slower by more than 10 %, worst 1x174x116x110 k1x7 s2x4 0.79x), while
  // on rows of up to kScalarRowF64 outputs the scalar rows stayed ahead
  // (transposed 0.81x over 90). The bits are PyTorch's on every path.
  // AVX-512 (eight-lane gathers), 2-core Intel Xeon VM, 2026-12-05, two
  // threads, `avgpool_sweep_cpu`, both ways alternated, fastest of two
  // passes, f64 NCHW strided rows of 3-16 outputs: the scalar rows 1.32x
  // faster over 40 of seeds 7100-7249 (29 faster by more than 10 %, 7
  // slower, worst 0.50x on 1x40x1191x48 k3 s3) and 1.41x over 40 of
  // seeds 7250-7399, not tuned on (28 / 6, worst 0.50x 1x43x1455x17 k2
  // s2); below the plain loop 27 -> 5 of those 40 (and 110x7x191x10 k7
  // s2 ceil excl of sweep seed 104: 3.5 -> 1.07 ms, the loop 1.33).
  // Fast numerics take them too for f64 strided rows of up to
  // kScalarRowF64 outputs of windows of at most kScalarRowsFast rows and
  // fewer than kScalarColumnsFast columns (wider ones were not measured
  // there), on every instruction set (the path sets fast numerics' bits,
  // so the rule cannot depend on it): the same VM, 2026-12-05, both ways
  // in one process as above, against the gathers, sweep seeds 500-560:
  // tuned on half of those rows, 52, where scalar rows ran 1.29x faster
  // but 0.81x on windows of 7+ rows (the row sums serve them: 368x1x676x48
  // k11x4 s6x4 0.47x), 1.44x up to 6 rows; the other half, not tuned on:
  // the 42 of up to 6 rows 1.48x, 28 faster by more than 10 %, 5 slower,
  // worst 2x413x94x94 k5 s4x6 0.69x; the AVX2 transposed windows there
  // instead: 0.80x over 30. AVX-512 not measured.
  // Windows of kScalarColumnsFast columns or more take them too where they
  // have at most kScalarRowsFastWide rows (the row sums then save little):
  // 2-core Intel Xeon AVX-512 VM, 2026-12-05, two threads, both ways
  // alternated, best of two: tuned on 50 such rows of 1-6 window rows of
  // seeds 105-400 (1.25x, 10 slower, every one of 3+ rows; the 13 of 1-2
  // rows all faster, 1.24-3.9x); not tuned on, the 80 of 1-2 rows of
  // seeds 401-700: 1.85x, 74 faster by more than 10 %, 3 slower (worst
  // 0.73x on 217x16x32x101 k2x10 s2x9, whose pytorch numerics, unchanged,
  // moved 0.80x in the same runs); 32x21x18x18 k1x7 s2x8 ceil 0.094 ->
  // 0.021 ms.
  // Windows of more than kScalarRowsFast rows take them too on rows of at
  // most kScalarRowTallFast outputs, where each row pass of the row sums
  // covers a row of which the few windows read little: 2-core Intel Xeon
  // AVX-512 VM, 2026-12-07, two threads, both ways alternated, best of two,
  // such rows of fewer than 7 columns: tuned on seeds 15011-15210 (rows of
  // up to 4 outputs 1.27x over 38, of 5-16 outputs 0.81x over 45); not
  // tuned on, the 82 of seeds 15500-16100: 1.28x, 44 faster by more than
  // 10 %, 7 slower (worst 0.68x, 27x18x1818x24 k9x6 s7; planes of up to
  // 4096 pixels 1.33x over 62, larger ones 1.12x over 20); 66920x2x11x11
  // k7x5 s4x5 p3x2 ceil 15.4 -> 6.6 ms. The AVX2 kernels on those 82
  // rows: 1.25x, 39 faster, 6 slower. On those rows windows of
  // kScalarColumnsFast columns or more take them at any height (rows of
  // 1-2 outputs take the scalar rows already): the same VM and
  // method, tuned on seeds 16101-16200 (rows of 3-4 outputs 1.20x over
  // 44, 25 faster by more than 10 %, 4 slower); not tuned on, the 135 of
  // seeds 16201-16450: 1.21x, 79 faster, 19 slower, those on planes of
  // more than 4096 pixels 1.10x over 21 (rows of 3 outputs) and 0.91x
  // over 17 (rows of 4; worst 0.61x, 26x24x873x34 k9x8 s7x8, where the
  // row sums of tall planes pay); 3x246x17x17 k3x7 s3x8 ceil 0.084 ->
  // 0.025 ms. The AVX2 kernels on those 135 rows: 1.08x, 51 faster, 27
  // slower.
  const bool f64_scalar_rows =
      sizeof(A) == 8 && q.sw > 1 &&
      (fast ? q.ow <= kScalarRowTallFast ||
                  (q.ow <= kScalarRowF64 && (q.kw < kScalarColumnsFast || q.kh <= kScalarRowsFastWide) &&
                   q.kh <= kScalarRowsFast)
            : q.ow <= kScalarRowF64 || (isa == Isa::kBase && q.kw >= kScalarWindowF64));
  // AVX2 / AVX-512, 16 planes or more of up to kAcrossPixels (where it
  // was measured): rows of one or two outputs in f16/bf16, and in f32
  // where the windows read at least 3/4 of the plane's pixels over two
  // output rows or more, go to the 16-plane path or the row kernels
  // instead (the measurements at kScalarRow).
  int64_t row_reads = 0, col_reads = 0;
  for (const AxisWindow& r : q.rows) row_reads += r.end - r.begin;
  for (const AxisWindow& cw : q.cols) col_reads += cw.end - cw.begin;
  const bool scalar_short_row =
      q.ow <= kScalarRow &&
      (isa == Isa::kBase || j.planes < 16 || q.h * q.w > kAcrossPixels ||
       (q.dtype != AVGPOOL_DTYPE_F16 && q.dtype != AVGPOOL_DTYPE_BF16 &&
        (q.dtype == AVGPOOL_DTYPE_F64 || q.oh == 1 || 4 * row_reads * col_reads < kScalarRowReads4 * q.h * q.w)));
  j.short_rows = nchw && (scalar_short_row || f64_scalar_rows) && !global;
  j.presum = !(j.short_rows && !j.tall) && ((fast && ((j.vec == 1 && q.sw > 1) || j.tall)) || column_windows);
  // Software prefetch where most input rows are read once (NCHW row sums,
  // NHWC window sums).
  j.prefetch = 2 * q.sh >= q.kh;
  j.slow_gathers = slow_gathers_for_plan();
  j.span_prefetch_limit =
      q.src_elements * q.element_size < kWideLoadBytes ? kCachedSpanPrefetch : std::numeric_limits<int64_t>::max();
  const int64_t out_rows = j.planes * q.oh;  // planes x output rows (<= dst elements)
  const bool few_rows = out_rows < kFewRows;
  c->nt_out = !nchw && !converts && q.c % (64 / q.element_size) == 0 &&
              q.dst_elements * q.element_size >= kNtBytes;
  j.global = global;

  // Interior output columns: full windows with begins sw apart.
  int64_t lo = 0;
  while (lo < q.ow && q.cols[(size_t)lo].end - q.cols[(size_t)lo].begin != q.kw) ++lo;
  int64_t hi = lo;
  while (hi < q.ow && q.cols[(size_t)hi].end - q.cols[(size_t)hi].begin == q.kw &&
         (hi == lo || q.cols[(size_t)hi].begin - q.cols[(size_t)hi - 1].begin == q.sw))
    ++hi;
  j.ox_lo = lo;
  j.ox_hi = hi;
  // NHWC stride-1 rows, fast numerics, kw >= 4 (k3 s1 measured slower with
  // it: 6 loads instead of 9 do not pay for the ring): the separable ring
  // kernel (its kRingMax is 16 in kernels.inl; channels a multiple of one
  // 64-byte vector).
  // Not f16/bf16 pixels of kHalfSepChannels or more: the ring reads rows
  // converted to float first, and the blocks' converted rows of such
  // pixels outgrow L1; their windows summed from the input directly
  // (Job::half_direct) ran faster, also once the converted rows were kept
  // for the next window (8x256x56x56 k5 s1 p2 bf16: 2.5 ms direct, 3.8-4.0
  // through the ring; same VM, 2026-12-07). 2-core Intel Xeon AVX-512 VM,
  // 2026-12-06, two threads, both ways alternated, the NHWC f16/bf16 rows
  // of stride-1 rows, windows 4-16 wide and whole vectors of channels of
  // sweep seeds 200-700: 256+ channels 2.19x over 13, all faster; 192-255
  // 1.50x over 2; 128-191 1.00x over 4; under 128 0.88-1.09x. Seeds
  // 701-1300, not tuned on: 1.76x over the 13 of 192+ channels, 12 faster
  // by more than 10 %, 1 slower (21x192x73x73 k11 s1 p3 bf16 0.88x);
  // 1x208x313x54 k6x4 s3x1 p3x0 bf16 0.80-0.83 -> 0.62 ms, oneDNN 0.54-0.56
  // (bench/cpu/results/vm-intel-xeon-2026-12-06-half-ring-channels-*.log).
  j.sep_s1 = !nchw && q.numerics == AVGPOOL_NUMERICS_FAST && q.sw == 1 && q.kw >= 4 &&
             q.kw <= 16 && q.c % lanes == 0 && hi > lo && !(converts && q.c >= kHalfSepChannels);
  // NHWC stride-1 rows of channels short of a whole number of the kernels'
  // vectors (32 bytes on AVX2, 64 otherwise): the interior outputs as one
  // flat run (Job::flat_run; the same bits as pixel by pixel). 2-core AMD
  // EPYC Zen 3 VM, AVX2, 2026-12-05, both ways in one process, rounds
  // alternated, fastest of 7, two threads: tuned on the 160 such rows of
  // sweep seeds 500-530, where windows of up to kFlatRunWindow bytes ran
  // 1.53x / 1.65x faster (fast / pytorch numerics, 147 rows) and wider ones
  // of many channels were level (1.01x, 2-3 of 13 slower: the pixel kernels
  // keep such a window's rows in L1); not tuned on, 400 of seeds 601-700:
  // 1.63x / 1.65x, 4 / 2 of 200 slower by more than 10 % (worst 0.85x,
  // 190x21x934x9 k9 f16 rows of 7 outputs). 1x10x789x789 k2 s1 p0x1 ceil
  // f32, one thread: 5.4 -> 2.5 ms (oneDNN 4.0); channels of few vectors
  // gain most (c <= 16: 2.3x), above 64 channels 1.08x.
  const int64_t run_lanes = (isa == Isa::kAvx2 ? 32 : 64) / (int64_t)sizeof(A);
  const double window_bytes = (double)q.kh * (double)q.kw * (double)q.c * (double)q.element_size;
  j.flat_run = !nchw && q.sw == 1 && hi > lo && q.c % run_lanes != 0 && window_bytes <= (double)kFlatRunWindow;
  // Windows overlapping along the row, each input column in three or more
  // of them, outgrowing L1: the AVX-512 build sums a block's interior
  // outputs four side by side (Job::shared_run; the kernel checks the
  // window it is given, hn rows of row sums or of the input, against
  // kSharedWindow). One output at a time re-read its window from L2 for
  // every output. 2-core Intel Xeon AVX-512 VM, 2026-12-06, two threads,
  // both ways alternated, best of two: tuned on sweep seeds 4541-4800 (150
  // stride-1 NHWC rows of windows beyond 4 KiB, 150 of sw < kw beyond 32
  // KiB): beyond 32 KiB, stride 1, 1.26x / 1.09x pytorch / fast numerics
  // over 44, none slower by more than 10 % in pytorch numerics; kw < 3 * sw
  // about 1.00x. Not tuned on, 150 rows of seeds 4801-5100: 1.19x / 1.06x,
  // 76 / 29 faster by more than 10 %, 4 / 0 slower (bench/cpu/results/
  // vm-intel-xeon-2026-12-06-shared-run-*.log). 283x152x11x11 k9 s1 f32
  // pytorch numerics 0.71 -> 0.61 ms (oneDNN 0.63). The AVX2 build's
  // chunks of one to four ymm vectors, three outputs side by side, ran
  // 1.04x over 88 such rows with the AVX-512 machine's AVX2 kernels, 5
  // slower, worst 0.65x: it keeps its kernels.
  j.shared_run = isa == Isa::kAvx512 && !nchw && q.kw >= 3 * q.sw && hi > lo + 1 && !j.sep_s1;
  // NHWC f32/f64 strided rows of pixels of a few channels, AVX-512: a
  // row's interior outputs P at a time in one 64-byte vector (Job::packed,
  // packed_run in kernels.inl; the same bits), P as many as fit the vector
  // and whose taps ((P - 1) * sw + 1 pixels) fit two. 2-core Intel Xeon
  // AVX-512 VM, 2026-12-07, two threads, both ways alternated, best of
  // two, the NHWC f32/f64 rows of 2-8 channels (f64 2-4) of generator
  // seeds 16451-16500 (bench/cpu/results/vm-intel-xeon-2026-12-07-packed-
  // pixels-*): two outputs a vector 0.96x / 0.82x fast / pytorch numerics
  // over 100 (two loads and a permute per tap where one output took one
  // load), three 1.14x / 1.04x over 27 (pytorch numerics, windows of 30+
  // inputs, 0.94x over 13: kPackedLongWindow), four or more 1.32-2.2x
  // over 42. Not tuned on, the 137 rows of three or more of seeds
  // 16501-16600: 1.26x / 1.26x, 93 / 77 faster by more than 10 %, 5 / 4
  // slower (worst 0.73x, 5522x2x16x16 k4x5 s4x5 p2, whose rows of four
  // outputs hold two interior ones: a partial group alone saves nothing
  // and splits the row in three, so rows of fewer than P interior outputs
  // keep narrow_pixels, 0.56 ms either way then). Against oneDNN on the
  // 94 of them it runs: 1.93 -> 2.48x / 1.58 -> 2.06x (geomean), 19 -> 9
  // / 19 -> 8 below it. 1010x2x59x176 k7x2 s7x2 ceil f32 pytorch
  // numerics 6.6 -> 1.9 ms (oneDNN 4.5).
  {
    const int64_t N = 64 / (int64_t)sizeof(A);
    const int64_t P = q.c <= N / 2 ? std::min(N / q.c, (2 * N - q.c) / (q.sw * q.c) + 1) : 1;
    const bool packs = P >= kPackedOutputs ||
                       (P == kPackedOutputs - 1 && (fast || q.kh * q.kw < kPackedLongWindow));
    j.packed = isa == Isa::kAvx512 && !nchw && !converts && q.sw > 1 && hi - lo >= P && packs ? P : 0;
    for (int64_t l = 0; l < 16; ++l)
      j.packed_idx[l] = l < j.packed * q.c ? (int32_t)((l / q.c) * q.sw * q.c + l % q.c) : 0;
  }
  // NHWC, fast numerics, windows of 3 rows or more that the ring does not
  // take: row sums first, as for tall windows. Summing each window directly
  // reads its kh rows as kh interleaved streams; the row sums read one row
  // at a time (2-core AVX-512 VM, 2026-12-01, f32, C = 64 unless noted, ms:
  // 2x64x2048^2 k11 34.2 -> 29.9, k11 s4 49.4 -> 30.6, k7 s3 p3 23.7 -> 12.1,
  // k8 C = 3 8.1 -> 4.0, 32x256x56^2 k3 s1 p1 7.4 -> 4.4, k3 s2 6.2 ->
  // 5.6-5.9, global 7x7 2.06 -> 1.81, k5 s5 12.4 -> 12.0). Not for two-row
  // windows (k2 s1 12.4 -> 13.3) nor half types with a vector of channels or
  // more (bf16 k3 s2 7.1 -> 7.3); half types with fewer channels, whose
  // rows are converted anyway, gain (bf16, ms: 281x2x146x146 k5 s1x5 8.5 ->
  // 4.4, oneDNN 6.0; 1x2x1264x1264 k6x8 s6x8 0.46 -> 0.21; 11x6x1153x459
  // k5x2 s5x1 5.9 -> 4.2; 9x5x961x961 k10x11 s10 3.7 -> 2.3). Not for
  // f32/f64 windows with gaps between them along the row (sw > kw): the row
  // sums would read the gaps too (2-core Intel Xeon VM, 2026-12-02, sweep
  // seeds 1, 3, 5: 2x143x202x202 k5x9 s1x11 f32 3.67 -> 2.24 ms, 0.67 ->
  // 0.89x oneDNN; 1x31x148x148 k4 s4x5 f64 0.138 -> 0.097; geomean 1.04x
  // faster over the 11 such configurations, the ones under 0.1 ms within
  // +-20 %). Half types keep it there (their rows are converted anyway:
  // 434x10x36x36 k10x5 s10x6 bf16 0.38 -> 0.76 ms without it).
  const bool row_gaps = q.sw > q.kw && !converts;
  // f16/bf16 NHWC short of a vector of channels, read directly as well
  // (Job::half_direct) where that measured faster than converting the rows
  // first (2-core AMD EPYC Zen 5 VM, 2026-12-02, best of three alternated,
  // with nhwc_output_fours' prefetch): pytorch numerics from
  // kHalfDirectPytorch channels (C = 6-8 1.1-1.7x; C = 4-5 0.8-1.4x, C = 2
  // level), fast numerics from kHalfDirectFast (C = 9 0.98-1.8x over 11
  // configurations, C = 6-8 0.80-1.4x) and not where the row sums first
  // serve several outputs (windows overlapping along the row: 8x12x200x200
  // k5 s1 p2 0.81x; tall windows): 1x12x515x515 k3 s3 ceil 2.0x,
  // 1x14x402x1260 k2x3 s3x5 1.7x, 281x15x146x146 k5 s1x5 2.0x. Only on rows of kHalfDirectRow outputs or more, which go four at
  // a time with the prefetch: 6000x12x16x16 k8 s8x9 ceil (rows of two,
  // one output at a time) ran 0.28x.
  // Pytorch numerics, from kHalfDirectPytorchSpaced channels, where windows
  // do not overlap along the row (kw <= sw) and hold more than
  // kHalfDirectSmallWindow inputs: each converted element is then read by
  // one output only, so the conversion pass is a second trip through the
  // data for nothing (2-core Intel Xeon AVX-512 VM, 2026-12-05, two
  // threads, best of two of each alternated, f16/bf16 NHWC rows of 8+
  // outputs: tuned on sweep seeds 105-108 (C = 2-5: C = 4-5 without
  // overlap 1.13x / 1.08x, C = 2-3 and overlapping windows 0.90-0.98x) and
  // 130-160 (C = 4-5, kw <= sw: 1.09x over 129, windows of 2x2 and smaller
  // 0.98x, 6 of 34 slower down to 0.63x); not tuned on, the 73 of seeds
  // 161-185 this takes: 1.10x, 37 faster by more than 10 %, 2 slower
  // (worst 0.84x, 999x4x168x66 k3 s3 f16); 432x4x22x573 k7 s7 bf16 2.22 ->
  // 1.82 ms, oneDNN 1.46-1.57; 225x3x56x1930 k11 s11 p2x3 excl bf16 (C = 3,
  // left out with its class) 10.8 -> 7.9).
  // Fast numerics, windows one column wide, from kHalfDirectFastColumn
  // channels: the row sums are then the window sums themselves, converted
  // and summed in a buffer, stored and read back (the same VM and method:
  // tuned on the 67 such rows of seeds 105-160 of 2-15 channels, C = 4-8
  // 1.17-1.53x by channel count, 24 of 27 faster by more than 10 %, C = 2-3
  // mixed, C >= 9 direct already; not tuned on, the 40 of C = 4-8 of seeds
  // 161-260: 1.36x, 33 faster, 1 slower, 0.80x on 5431x5x106x13 k8x1 s6x1
  // bf16; 4x7x139x951 k8x1 s3x1 bf16 0.56 -> 0.29 ms, oneDNN 1.01).
  // Fast numerics from 6 channels (kHalfDirectFast) since the AVX-512
  // build reads such pixels as ymm vectors with masked loads (kernels.inl,
  // horizontal_nhwc): the same VM and method, rows of windows not
  // overlapping along the row: tuned on seeds 200-230, C = 6-8 with windows
  // of more than 4 inputs 1.20x over 57 (5 slower), C = 4-5 1.00x over 50
  // (12 slower); not tuned on, the 118 of C = 6-8 of seeds 231-300: 1.21x,
  // 83 faster by more than 10 %, 2 slower (worst 0.79x, 647x7x37x37 k10x5
  // s10x5 f16); 1x7x1580x1580 k10 s10 p4x1 ceil bf16 0.98 -> 0.72 ms,
  // oneDNN 0.90. The AVX2 kernels on the same VM (AVGPOOL_CPU_ISA=avx2),
  // those 118: 1.095x, 42 faster, 22 slower (worst 0.71x, 5x6x99x295 k2
  // s1x2 f16).
  // Fast numerics (AVX-512) also from kHalfDirectFastGaps channels where windows
  // leave gaps along the row (kw < sw), which the conversion pass converts
  // for nothing (the same VM and method, f16/bf16 NHWC rows of 8+ outputs:
  // tuned on seeds 9701-10300, 120 rows of 2-5 channels, 2 channels 0.67-0.85x,
  // 3 0.99x, 4-5 1.09-1.24x; not tuned on, 120 rows of 4-5 channels of
  // seeds 10301-11200: 1.13x, 64 faster by more than 10 %, 7 slower, all
  // f16 of 4 channels, worst 0.76x, 59x4x227x227 k8 s8x9 f16);
  // 1x4x793x1046 k2 s3 ceil bf16 0.28 -> 0.235 ms, oneDNN 0.25). The AVX-512
  // build only: the AVX2 kernels on those 120 rows 1.05x, 20 slower.
  // Fast numerics from kHalfDirectFast channels also where windows overlap
  // along the row but have fewer than kNhwcRowSumRows rows, which take no
  // row sums: converting the rows first was a pass of its own before the
  // same window sums (the same VM and method, f16/bf16 NHWC rows of 8+
  // outputs, 6-15 channels, kw > sw: tuned on the 54 of seeds 14201-14600,
  // 1.34x, 45 faster by more than 10 %, 1 slower; not tuned on, the 42 of
  // seeds 14601-15000: 1.35x, 37 faster, 1 slower, 0.79x on 20187x10x22x22
  // k2 s4x1 p0x1 excl f16; 2x13x631x569 k2x8 s2x7 p1 excl bf16 0.74 ->
  // 0.40 ms, oneDNN 0.59). Windows of 3+ rows, which the row sums serve,
  // lost: 0.86x over 110 of seeds 14201-14300. The AVX-512 build only: the
  // AVX2 kernels on those 42 rows 1.09x, 10 slower (bf16 1.03x).
  const bool half_short =
      converts && !nchw && q.c < 16 && q.ow >= kHalfDirectRow &&
      (fast ? (q.c >= kHalfDirectFast || (q.kw == 1 && q.c >= kHalfDirectFastColumn) ||
               (isa == Isa::kAvx512 && q.kw < q.sw && q.c >= kHalfDirectFastGaps)) &&
                  !j.tall &&
                  (q.kw <= q.sw || (isa == Isa::kAvx512 && q.kh < kNhwcRowSumRows && q.c >= kHalfDirectFast))
            : q.c >= kHalfDirectPytorch ||
                  (q.c >= kHalfDirectPytorchSpaced && q.kw <= q.sw && !window_at_most(q, kHalfDirectSmallWindow)));
  // Not for short f32/f64 rows whose windows overlap down the plane (kh >
  // sh) where the row sums save less than half the adds (counted in 32-byte
  // vectors, the same rule on every instruction set, so fast numerics keep
  // one set of bits): each output row's sums are a few short passes over
  // kh rows, the sh new ones read from memory all at once in the last
  // pass, and summing each window directly ran faster (2-core AMD EPYC AVX2
  // VM, 2026-12-04, one thread, best of three alternated, the 26 f32/f64
  // NHWC rows of sweep seeds 41-43, 46-48, 61-63 with kh > sh and rows of
  // fewer than 2048 elements, ms: 89x8x1218x28 k8 s3x4 f32 15.9 -> 9.7,
  // oneDNN 5.4; 62x4x853x21 k8 s3 f64 5.5 -> 4.0; 2085x2x262x21 k9 s5 f64
  // 20.3 -> 15.5; 1782x3x14x13 k10 s1x10 f64 0.79 -> 0.41; the rows this
  // leaves alone lost up to 0.5x without their row sums: 130x2x89x89 k8 s3,
  // 13x36x198x26 k10 s1, rows of 256 elements or more). Each row pass also
  // costs its set-up and a masked tail, counted as kRowPassAdds vectors:
  // rows of a few vectors are mostly that (2-core AMD EPYC Zen 3 VM,
  // 2026-12-04, one thread, best of two alternated, the 45 f32/f64 NHWC
  // rows of sweep seeds 41-43, 46-48, 61-63, 78-83 with kh > sh, kh >= 3,
  // rows under 2048 elements, both ways forced: 430x3x1587x7 k6 s1x6 p3
  // ceil f32 row sums 2.5x slower than direct, 1118x2x128x11 k6x9 s2x9
  // 1.4x, 1231x3x110x8 k4 s1 p2 f64 1.07x, which this count moves to
  // direct; the rows kept on row sums there ran 0.32-0.99x without them,
  // and any count from 8 on would also move 1885x2x26x11 k9 s1 (0.86x) and
  // 4279x3x18x18 k6 s3 (0.68x)).
  // Counted in double: a window as tall as a huge plane makes the int64
  // products overflow.
  const double vecs = (double)((q.c * q.element_size + 31) / 32);  // 32-byte vectors of a pixel
  const double direct_adds = (double)q.ow * (double)q.kh * (double)q.kw * vecs;
  const double sum_adds = (double)q.kh * (double)((q.w * q.c * q.element_size + 31) / 32 + kRowPassAdds) +
                          (double)q.ow * (double)q.kw * vecs;
  const bool short_rows_direct = !converts && q.kh > q.sh && q.kw > 1 && q.w * q.c < kShortSumRow &&
                                 direct_adds < 2 * sum_adds;
  // Nor f32/f64 windows one column wide over pixels of kOneColumnPixel
  // bytes or more: the row sums are then the outputs, and their second pass
  // (the buffer read back, divided and stored) is all they add; summing
  // each window in registers and storing it ran faster (2-core AMD EPYC Zen
  // 3 VM, 2026-12-04, two threads, both ways in one process, rounds
  // alternated, fastest of 11: tuned on the 67 NHWC f32/f64 one-column
  // rows of sweep seeds 78-160, where pixels of under 32 bytes lost up to
  // 0.65x, those of 32-99 bytes were level and those of 100 bytes or more
  // gained 1.11x in geomean; the 45 of seeds 161-420 from 64 bytes, not
  // tuned on: 1.14x, 31 faster by more than 10 %, 3 slower, worst
  // 2x17x592x592 k11x1 s2x1 0.70x; 1x55x699x699 k8x1 s8x1 6.3 -> 5.3 ms).
  const bool one_column_wide = !converts && q.kw == 1 && q.c * q.element_size >= kOneColumnPixel;
  // Nor f32/f64 windows that do not overlap (each input in one window) of
  // at most kDisjointWindow inputs over pixels under kDisjointPixel bytes:
  // the row sums read each input once as the window sums do, and add a
  // store and a reload of the buffer per element, which a few taps per
  // output do not repay (2-core AMD EPYC Zen 3 VM, 2026-12-05, two
  // threads, both ways in one process, rounds alternated, fastest of 7:
  // tuned on the 103 such rows of sweep seeds 601-700, 1.09x faster
  // without them, 43 faster by more than 10 %, 5 slower; not tuned on, the
  // 76 of seeds 701-800: 1.065x, 29 / 5, worst 0.83x. Windows of 17-25
  // inputs gained 1.05x / 1.02x, larger ones lost (0.95x over 186 of 37+),
  // pixels of 512 bytes or more were level or slower: they keep the row
  // sums).
  // Any such window where a row holds a single one (ow == 1): its row
  // passes then serve one output each, and the pass set-up and the buffer's
  // store and reload were most of the work (2-core AMD EPYC Zen 4 VM,
  // 2026-12-07, two threads, both ways alternated, best of three, NHWC
  // f32/f64 disjoint windows of 17+ inputs: of generator seeds 18001-18200,
  // rows of up to 8 outputs 1.05x over 40 (one output 1.22x over 11, two to
  // eight mixed); not tuned on, 45 rows of one output of seeds 18201-18500:
  // 1.135x, 20 faster by more than 10 %, 5 slower, worst 0.79x,
  // 2046x9x12x12 k11 f64; 1604x46x12x12 k11 f32 1.04 -> 0.66 ms, oneDNN
  // 0.59).
  const bool disjoint_small = !converts && q.kh <= q.sh && q.kw <= q.sw &&
                              (window_at_most(q, kDisjointWindow) || q.ow == 1) &&
                              q.c * q.element_size < kDisjointPixel;
  // Nor f64 pixels of kDirectF64Pixel bytes or more under windows of at most
  // kDirectRows rows where the row sums save less than half the adds (the
  // count above): such a pixel is four 64-byte vectors or more, whose store
  // to the buffer and reload cost about what a window's adds do. 2-core
  // Intel Xeon AVX-512 VM, 2026-12-07, two threads, both ways alternated,
  // best of two, NHWC f64 rows of 32+ channels: tuned on seeds 15011-15110
  // (windows of 3 rows 1.08x over 32, of 4-6 rows 1.06x over 96, of 7-8
  // rows 1.00x; where the row sums save more, 0.92x over 13 of seeds
  // 15211-15350). Not tuned on, the 212 rows it moves of seeds
  // 15351-15499: 1.043x, 45 faster by more than 10 %, 13 slower (worst
  // 0.72x, 37x477x33x33 k6x9 s5x4); 1x298x175x175 k3 s1 6.6 -> 5.0 ms.
  // The AVX2 kernels on those rows: 1.019x, 43 faster, 26 slower.
  const bool wide_f64_direct = q.dtype == AVGPOOL_DTYPE_F64 && q.c * q.element_size >= kDirectF64Pixel &&
                               q.kh <= kDirectRows && direct_adds < 2 * sum_adds;
  // Nor f32 pixels of kDirectF32Pixel bytes or more (8+ channels) under
  // windows of at most kDirectRows rows where the row sums save under a
  // fifth of the adds: the buffer's store and reload then cost more than
  // they save. 2-core Intel Xeon AVX-512 VM, 2026-12-07, two threads, both
  // ways alternated, best of two, the NHWC f32 rows of 8+ channels and 3-8
  // rows that took row sums: tuned on seeds 17007-17066 (all 162 rows
  // without them 1.00x, 34 faster by more than 10 %, 31 slower; windows of
  // up to 6 rows where the sums save under a fifth 1.07x over 72, 2
  // slower). Not tuned on, the 151 it moves of seeds 17067-17200: 1.04x,
  // 38 faster, 18 slower (worst 0.71x, 1x21x1726x1636 k4x11 s2x11 ceil),
  // below oneDNN on 56 -> 39 of 126; the AVX2 kernels 1.047x, 16 slower.
  // 26x84x17x467 k6x2 s7x1 p2x1 1.85 -> 1.40 ms, oneDNN 1.40. Pixels under
  // 32 bytes where the row sums save nothing (direct adds under 1.25x the
  // count with them) summed directly too were level: 1.00x over the 52 f32
  // rows of seeds 17701-18000 (12 faster by more than 10 %, 10 slower;
  // 27922x6x13x10 k4 s5x3 2.7 -> 1.8 ms), f64 slower (same VM, 2026-12-07).
  const bool f32_direct = q.dtype == AVGPOOL_DTYPE_F32 && q.c * q.element_size >= kDirectF32Pixel &&
                          q.kh <= kDirectRows && 4 * direct_adds < 5 * sum_adds;
  if (!nchw && fast && !j.sep_s1 && (!converts || q.c < 16) && q.kh >= kNhwcRowSumRows && j.max_rows < kTallRows &&
      !row_gaps && !half_short && !short_rows_direct && !one_column_wide && !disjoint_small && !wide_f64_direct &&
      !f32_direct)
    j.tall = j.presum = true;
  // Blocks that read f16/bf16 channel vectors directly (Job::half_direct):
  // 16 floats are one vector in every instruction set (simd.inl), and with
  // more than one channel run_block's row sums are exactly presum.
  j.half_direct = converts && (j.vec >= 16 || half_short) && !j.presum && !(j.rcp_table && j.sep_s1);
  j.wide_loads = !nchw && q.src_elements * q.element_size >= kWideLoadBytes && q.kw <= q.sw && q.kh <= q.sh;
  // Pixels of two to four ymm vectors side by side read from twice as many
  // places in memory at once as one output over its window: 2-core AMD
  // EPYC Zen 3 VM, 2026-12-05, two threads, both ways in one process,
  // fastest of 5, the rows of sweep seeds 601-800 with such inputs and
  // windows, both numerics. Three or four vectors: 1.17x over 92, 54
  // faster by more than 10 %, none slower (243x13x44x138 k8 s8 f64 pytorch
  // numerics 5.8 -> 4.0 ms, the plain loop 5.1); seeds 801-1000, not tuned
  // on: 1.11x over 140, 63 faster, 2 slower. Windows of fewer inputs were
  // level (1.02x over 74); rows of 2-3 outputs slower (0.95x over 18). Two
  // vectors, f32/f64: 1.16x over 64, none slower (132x16x42x712 k6 s6x8
  // excl f32, 240 MB, 10.4 -> 7.1 ms, the plain loop 6.6); seeds 801-1000:
  // 1.17x over 100, 48 faster, 3 slower, all on rows of 4-7 outputs
  // (13660x8x14x14 k10x2 s10x4 f64 0.68x; seed 101's 9410x10x21x21 k4 s4
  // 0.80x), which over both sets ran 0.99x (26 rows) against 1.21x over
  // 138 rows of 8+ outputs, none slower: two vectors need rows of 8
  // (seeds 1001-1300, not looked at before: 1.21x over 90, none slower). f16/bf16
  // 1.03x over 56 with 10 slower, and one vector 0.80x over 120 (the groups
  // of eight outputs), so those keep them.
  j.fixed_groups = !converts;  // kernels.inl has the measurements
  const int64_t ymm_vectors = (j.vec * (int64_t)sizeof(A) + 31) / 32;  // of a pixel's accumulators
  j.disjoint_each = j.wide_loads && q.ow >= kDisjointEachRow &&
                    !window_at_most(q, kDisjointEachWindow - 1) &&
                    (ymm_vectors >= 3 || (ymm_vectors == 2 && !converts && q.ow >= kDisjointEachRowTwo));
  // 2-core AMD EPYC AVX2 VM, 2026-12-03, one thread, pytorch numerics:
  // 5322x5x27x27 k11x8 s11x8 p0x4 ceil f32 (77 MB) 15-19 -> 6.0-7.2 ms.
  // Inputs the caches hold (not measured) keep it off.
  j.prefetch_below = !nchw && q.src_elements * q.element_size >= kWideLoadBytes;

  // Flat interior rows (see flat_rows in kernels.inl).
  int64_t ylo = 0;
  while (ylo < q.oh && q.rows[(size_t)ylo].end - q.rows[(size_t)ylo].begin != q.kh) ++ylo;
  int64_t yhi = ylo;
  while (yhi < q.oh && q.rows[(size_t)yhi].end - q.rows[(size_t)yhi].begin == q.kh &&
         (yhi == ylo || q.rows[(size_t)yhi].begin - q.rows[(size_t)yhi - 1].begin == q.sh) &&
         c->div_row[(size_t)yhi] == c->div_row[(size_t)ylo])
    ++yhi;
  j.oy_lo = ylo;
  j.oy_hi = yhi;
  j.flat = nchw && !converts && !few_rows && q.sh == 1 && q.sw == 1 && q.ow == q.w && hi > lo && yhi > ylo;
  j.flat_chunk = q.ow >= 4096 ? 1 : 4096 / q.ow;
  if (j.flat) {
    const size_t n = (size_t)(j.flat_chunk * q.ow);
    const size_t row = (size_t)c->div_row[(size_t)ylo] * (size_t)q.ow;
    c->flat_div.resize(n);
    for (size_t i = 0; i < n; ++i) c->flat_div[i] = c->div[row + i % (size_t)q.ow];
    j.flat_div = c->flat_div.data();
    if (j.rcp_table) {
      c->flat_rcp.resize(n);
      for (size_t i = 0; i < n; ++i) c->flat_rcp[i] = c->rcp[row + i % (size_t)q.ow];
      j.flat_rcp = c->flat_rcp.data();
    }
  }

  // Column blocks: windows spanning about kSpanTarget elements.
  // Tall windows in NHWC: blocks four times as wide (row sums of 64 KiB,
  // in L2), so that neighbouring blocks, whose windows overlap, sum fewer
  // columns twice (k32 s16, 64 channels: 64 columns a block, 48 new).
  // f16/bf16 NHWC with channels short of a vector, whose rows are converted
  // to float first: blocks of kHalfSpan elements, so that the converted rows
  // stay in L1 (9x5x961x961 k10x11 s10 bf16: 4.8 -> 3.5 ms; 11x6x1153x459
  // k5x2 s5x1: 6.5 -> 5.9).
  const int64_t cols_target =
      (j.presum && j.tall && j.vec > 1 && !converts ? 4 * kSpanTarget
       : converts && j.vec > 1 && j.vec < 16 && !j.half_direct ? kHalfSpan
                                                   : kSpanTarget) / j.vec;
  j.ob = cols_target > q.kw ? (cols_target - q.kw) / q.sw + 1 : 1;
  if (j.ob > q.ow) j.ob = q.ow;
  // Few output rows: split fast numerics' tall windows by rows (below);
  // otherwise narrower blocks, so that the rows' outputs give about
  // kFewRows units (whole vectors of outputs in NCHW).
  if (few_rows && out_rows > 0) {
    int64_t cr = (kChunkElems + q.w * j.vec - 1) / (q.w * j.vec);
    if (cr < (j.max_rows + kMaxChunks - 1) / kMaxChunks) cr = (j.max_rows + kMaxChunks - 1) / kMaxChunks;
    const int64_t nc = (j.max_rows + cr - 1) / cr;
    const int64_t acc = (int64_t)sizeof(A);
    // Not where the blocks read f16/bf16 channel vectors directly
    // (Job::half_direct): a chunk converts its rows to float first. 24 random
    // NHWC f16/bf16 configurations of 16+ channels and few output rows
    // (2-core Intel Xeon VM, 2026-12-02, best of two alternated runs): fast
    // numerics 1.77x faster, geomean (34x510x9x73 k8 s8 bf16 1.24 -> 0.62
    // ms, 0.56 -> 1.12x oneDNN; 1x69x20x857 k11x1 s13x1 3.7x), now level
    // with pytorch numerics, whose unchanged path moved 0.95x in the same
    // runs (the spread).
    // Only windows of kTallRows rows or more, or outputs too few for the
    // column blocks below to give kFewRows units: shorter windows of wide
    // rows were split too, and the partial sums, their second pass and the
    // barrier cost more than they spread (2-core AMD EPYC Zen 5 VM,
    // 2026-12-02, f32 NHWC, best of three alternated, ms: 1x520x80x80 k4 s6
    // 0.061 -> 0.050, oneDNN 0.035; 3x96x30x500 k3 s3 0.43 -> 0.24;
    // 1x64x40x2000 k6 s6 0.30 -> 0.19).
    // Short windows with too few outputs for the column blocks: only windows
    // of kSplitWindow elements or more (2-core AMD EPYC AVX2 VM, 2026-12-03,
    // fast numerics, one thread, best of three alternated, ms, split ->
    // column blocks: 1x976x56x56 k10 s10x8 f32 NHWC (98 K elements a window,
    // 30 outputs) 0.53-0.65 -> 0.27-0.31, oneDNN 0.18-0.27, two threads
    // 0.41-0.43 -> 0.19-0.20; 1x16x12x2048 k12x512 s12x512 (98 K) 0.045 ->
    // 0.031; 1x1x10x100000 k10x12500 NCHW (125 K) 16.3 -> 0.13; windows of
    // 1 M elements gain from the split: 1x64x8x4096 k8x2048 s8x2048 0.21 ->
    // 0.14-0.19).
    const bool split = j.max_rows >= kTallRows ||
                       (q.ow * out_rows < kFewRows && q.window_inputs() * j.vec >= kSplitWindow);
    if (fast && nc >= 2 && split && !j.half_direct && q.ow * j.vec <= kMaxPartialBytes / acc / nc / out_rows) {
      j.chunk_rows = cr;
      j.nchunks = nc;
      c->partial_bytes = (size_t)align64(out_rows * nc * q.ow * j.vec * acc);
    } else {
      const int64_t per_row = (kFewRows + out_rows - 1) / out_rows;
      int64_t ob = (q.ow + per_row - 1) / per_row;
      if (j.vec == 1) ob = (ob + 15) / 16 * 16;
      if (ob < j.ob) j.ob = ob;
    }
  }
  // NHWC rows of few outputs whose windows are summed from the input rows
  // (AVX2 build, pixels of one or two ymm vectors, narrow_column_fours in
  // kernels.inl; AVX-512 build, of one or two 64-byte vectors,
  // column_fours there, with its measurements): along a row, outputs go four at a time only where
  // four in a row have windows of one length, so short rows and their edges
  // left pairs and single outputs, one or two chains of kh * kw dependent
  // adds each (perf annotate of 1885x2x26x11 k9 s1 excl f32, rows of three,
  // pytorch numerics: two thirds of the time on those chains' adds). The
  // outputs of one column in four planes, or in four consecutive output rows
  // of one length of window, have windows of one length. 2-core AMD EPYC
  // AVX2 VM, 2026-12-03, one thread, best of three alternated, ms (oneDNN):
  // that row 5.99 -> 3.31 (3.93); 2828x2x12x12 k9 s10 ceil 0.49 -> 0.24
  // (0.41); 16x16x95x14 k7 s3x8 p2 0.053 -> 0.036 (0.037); 37x10x210x20 k9
  // s4 p4 0.63 -> 0.54 (0.45).
  // Only where a row alone leaves fewer than half its outputs in groups of
  // four (counted as narrow_pixels takes them): 89x8x1218x28 k8 s3x4 f32
  // (97 MB), rows of a four and a pair, ran 0.69-0.76x with rows side by
  // side, which read the input in a less sequential order.
  int64_t in_fours = 0;
  for (int64_t ox = 0; ox + 4 <= q.ow;) {
    const int64_t len = q.cols[(size_t)ox].end - q.cols[(size_t)ox].begin;
    bool four = true;
    for (int64_t k = 1; four && k < 4; ++k)
      four = q.cols[(size_t)(ox + k)].end - q.cols[(size_t)(ox + k)].begin == len;
    if (four) in_fours += 4;
    ox += four ? 4 : q.cols[(size_t)ox + 1].end - q.cols[(size_t)ox + 1].begin == len ? 2 : 1;
  }
  // AVX-512, pytorch numerics, f32/f64 pixels of more than 32 bytes (those of
  // fewer take narrow_pixels' ymm groups), windows overlapping down the
  // plane and rows of up to 16 outputs: also where a row leaves any
  // outputs outside its fours (41x11x331x45 k9 s2x9 p3 f32, rows of a
  // four and one output of a shorter window: 1.02 -> 0.93 ms, oneDNN
  // 0.77). The four rows' windows share most of their input rows, which
  // stay in L1. 2-core Intel Xeon AVX-512 VM, 2026-12-06, two threads,
  // both ways alternated, best of two, NHWC rows of f32/f64 pixels of up
  // to 128 bytes with some but at most half the outputs outside fours:
  // tuned on sweep seeds 6801-7300 (150 rows; pixels of 32 bytes or fewer
  // 0.86-0.94x, kh <= sh 1.03x, fast numerics 0.97x), confirmed on 120
  // rows of seeds 7301-8000 not tuned on: 1.09x, 57 faster by more than
  // 10 %, 9 slower (worst 0.82x, 116x6x99x69 k9 s8 f64); the AVX2 kernels
  // 1.03x there (18 / 6), so they keep the rule above. Eight outputs (two
  // columns of four rows) instead of four ran that first row 0.94x.
  const bool overlap_rows = isa == Isa::kAvx512 && !fast && !converts && q.kh > q.sh && q.ow <= 16 &&
                            q.c * q.element_size > 32 && in_fours < q.ow;
  // Not where the stride-1 ring sums the interior (fast numerics: its own
  // order of terms, which every instruction set keeps).
  j.column_fours = !nchw && (2 * in_fours < q.ow || overlap_rows) && !j.presum && !(fast && j.sep_s1) &&
                   (!converts || j.half_direct) && j.nchunks == 0;
  j.span_cap = 0;
  c->block_cols.reserve((size_t)(2 * ((q.ow + j.ob - 1) / j.ob)));
  for (int64_t ob0 = 0; ob0 < q.ow; ob0 += j.ob) {
    const int64_t ob1 = ob0 + j.ob < q.ow ? ob0 + j.ob : q.ow;
    int64_t xa = q.cols[(size_t)ob0].begin, xb = q.cols[(size_t)ob0].end;
    for (int64_t ox = ob0 + 1; ox < ob1; ++ox) {
      if (q.cols[(size_t)ox].begin < xa) xa = q.cols[(size_t)ox].begin;
      if (q.cols[(size_t)ox].end > xb) xb = q.cols[(size_t)ox].end;
    }
    if (xb < xa) xb = xa;
    c->block_cols.push_back(xa);
    c->block_cols.push_back(xb);
    if ((xb - xa) * j.vec > j.span_cap) j.span_cap = (xb - xa) * j.vec;
  }
  j.block_cols = c->block_cols.data();
  j.nblocks = (q.ow + j.ob - 1) / j.ob;
  if (j.nchunks > 0) {
    c->ones.assign((size_t)q.ow, A(1));
    j.ones = c->ones.data();
  }

  j.col_terms = col_reads;  // across_planes' choice of column sums, once here rather than per call
  // Small NCHW planes, 16 at a time (Job::across): rows of fewer than
  // kShortRow outputs leave most lanes of the row kernels empty and pay
  // their per-row set-up for a few outputs; up to kAcrossRow where the row
  // kernels keep no order of their own to exploit (pytorch numerics), convert
  // every row (f16/bf16) or sum windows of 16 inputs or more. 2-core AVX-512
  // VM, 2026-12-01, f32 unless noted, ms before -> after (oneDNN):
  // 127x14x16x10 k3 s3 ceil 0.208 -> 0.028 (0.041); 256x2048x7x7 k2 s2
  // 20.9 -> 5.0 (5.1); 64x512x14x14 k3 s1 p1 4.0 -> 2.2 (3.0); 1619x8x14x14
  // k11 s6 0.46 -> 0.18 (0.24); 64x64x28x28 k3 s2 p1 0.86 -> 0.43 (0.55);
  // 2531x19x20x20 k1 s2 13.9 -> 2.9 (5.5); 16x74x47x19 k9 s2 bf16 0.94 ->
  // 0.22 (0.21); pytorch numerics 32x128x64x64 k3 s2 p1 13.1 -> 2.7, k2 s2
  // 8.0 -> 2.3; 64x64x56x56 k3 s1 p1 bf16 fast 7.2 -> 3.0 (3.1), 128x64x30x30
  // k5 s1 p2 4.7 -> 3.3 (2.7). Fast f32 windows of 2x2 and 3x3 on rows of
  // 28-32 outputs stay on the rows (k2 s2 on 64x64 planes 1.8 against 2.4).
  // Pytorch numerics with strided rows at any row length (the rows gather
  // each column of a window): 32x64x128x128 k2 s2 29.2 -> 5.4, 16x64x160x160
  // k3 s2 bf16 7.5 -> 3.2; not stride-1 rows (k3 s1 p1 on 128x128 planes
  // 9.5 -> 12.0). Planes up to kAcrossPixels: 30x9x665x13 k1 s2x3 bf16
  // 1.58 -> 0.15 (0.26-0.29); 8x32x181x181 k5 s5 pytorch 3.9 -> 0.8.
  const int64_t window = q.window_inputs();
  // Rows summed in PyTorch's order: pytorch numerics, and one-element
  // windows in either numerics (32x64x112x112 k1 s2 fast 7.2 -> 2.9 ms).
  const bool in_order = !fast || window == 1;
  // Global pooling (its own path for f32 in fast numerics) on small planes:
  // 76977x8x8x8 k11 p2 pytorch numerics 27 -> 4.0 ms (oneDNN 4.5),
  // 256x2048x7x7 13.6 -> 2.9 (4.3), f16 fast 16.0 -> 2.4, bf16 14x14 fast
  // 0.92 -> 0.21 (0.18); 64x64 planes f32 pytorch 7.1 -> 8.2 and bf16 fast
  // 3.0 -> 5.0 stay off it, bf16 pytorch 21.2 -> 5.1 takes it. f32 fast
  // numerics on planes of up to kAcrossGlobalFast pixels, whose own path
  // pays a horizontal sum and a lane insert per plane (2-core AMD EPYC AVX2
  // VM, 2026-12-04, two threads, ms: 256x2048x7x7 15.2 -> 6.3, 1024x256x8x8
  // 7.8 -> 4.6, 64x256x4x4 0.48 -> 0.08; larger planes ran slower here:
  // 64x512x14x14 1.0 -> 2.2, 8x512x28x28 0.19 -> 1.5).
  const bool across_global =
      ((!fast || converts) && (q.h * q.w <= kAcrossGlobal || (converts && !fast))) ||
      q.h * q.w <= kAcrossGlobalFast;
  // Not planes of kAcrossSparse inputs or more per output on rows of
  // kShortRow outputs or more in fast numerics, nor f32 ones on rows of
  // kAcrossRow outputs or more in pytorch numerics: the path moves every
  // input pixel through its transposes once, for few outputs, where the
  // row kernels (row sums, transposed windows) read each input row once
  // and keep their lanes full (2-core AMD EPYC Zen 3 VM, 2026-12-05, two
  // threads, both ways in one process, rounds alternated, fastest of 5:
  // tuned on seeds 601-700, planes of 4097-32768 pixels, rows of 16+
  // outputs with 16+ inputs an output, without it: f32 1.62x over 52 (3
  // slower), f16/bf16 fast numerics 1.31x over 35 (4 slower), f16/bf16
  // pytorch numerics 0.99x over 74 (25 slower); seeds 701-800, all plane
  // sizes: f32 fast numerics 1.63x over 52 planes above 4096 pixels (45
  // faster by more than 10 %, 1 slower), 1.13x over 16 smaller (6 / 3);
  // f32 pytorch numerics on rows of 64+ outputs 1.81x / 1.63x over 17 / 31
  // (1 / 4 slower), but on rows of 16-63 outputs 0.97x over 74 with 36
  // slower, which keep it; f16/bf16 fast numerics 1.33x over 157, 112 /
  // 18; the f32 rule on seeds 801-900, not looked at before: 1.67x over
  // 116, 7 slower).
  const bool sparse = (fast || q.dtype == AVGPOOL_DTYPE_F32) && q.h * q.w / kAcrossSparse >= q.oh * q.ow &&
                      q.ow >= (fast ? kShortRow : kAcrossRow);
  // f64 (AVX2 build): windows that overlap along the row (by half a window
  // or more, or also down the plane) on planes of up to kAcrossF64Pixels,
  // where the row kernels read each input again for every window it is
  // in, also those the scalar rows take (f64_scalar_rows). 2-core AMD EPYC
  // Zen 3 VM, 2026-12-05, two threads, both ways in one process, fastest
  // of 5, f64 NCHW rows of sweep seeds 601-700 on planes of up to 32768
  // pixels: windows overlapping along the row 1.25x over 27 (13 faster by
  // more than 10 %, 1 slower; 1059x6x11x20 k10 s1 p4x3 pytorch numerics
  // 14.0 -> 3.0 ms); on larger planes 0.91x over 50, and windows that do
  // not overlap along the row 0.72x over 123. Seeds 701-900: 1.34x over
  // 120, 12 slower; over both sets the windows overlapping along the row by
  // less than half a window and not down the plane ran 0.97x over 26 (6
  // slower), the others 1.42x over 121 (7 slower). Seeds 101-400, not
  // looked at before, against the code before these changes: 1.35x over
  // 112 such rows, 65 faster, 10 slower (worst 0.64x, 8x43x13x36 k5x3
  // s5x1 pytorch numerics, 0.04 ms); the rows it leaves 1.01x over 28.
  // run_block takes the 16-plane path before the scalar rows, so the
  // scalar rows' flag left set on these jobs is not read.
  const bool across_f64 = sizeof(A) == 8 && isa == Isa::kAvx2 && q.kw > q.sw && (q.kw >= 2 * q.sw || q.kh > q.sh) &&
                          q.h * q.w <= kAcrossF64Pixels;
  // Planes beyond kAcrossPixels: rows of fewer than kShortRow outputs, in
  // pytorch numerics, and in fast numerics where the windows overlap and
  // hold fewer than kAcrossBandWindow inputs. The row kernels fill a few
  // lanes of such rows and, in pytorch numerics, gather each window column;
  // where fast numerics' windows do not overlap, their row sums add each
  // input once as the path does, without its transposes. 2-core Intel Xeon
  // AVX-512 VM, 2026-12-06, two threads, both ways alternated, best of two,
  // 16+ planes, f32/f16/bf16 (bench/cpu/results/vm-intel-xeon-2026-12-06-
  // across-bands-*.log): tuned on 137 rows of seeds 2000-2300 (bands of
  // 4096 pixels against 32768: 1.59x faster over 125; 2048: 0.98x);
  // seeds 2701-3100, not tuned on, 270 planes beyond 32768 pixels on rows
  // under 16 outputs: pytorch numerics 2.16x, 234 faster by more than 10 %,
  // 8 slower (worst 0.52x, 1x17x1620x75 k3 s5 p0x1 excl f32, 0.19 ms);
  // fast numerics 1.14x (43 / 5, the disjoint windows unchanged);
  // 1x215x1223x41 k3x7 s3x7 ceil bf16 4.2 -> 1.9 ms (pytorch numerics),
  // 2.9 -> 1.8 (fast), oneDNN 2.9; 42x21x1419x25 k7 s1x7 p2x0 f16 pytorch
  // 79 -> 5.7. Planes of 4097-32768 pixels the path took before, in bands
  // rather than whole: 1.10x / 1.06x (pytorch / fast) over 272 of seeds
  // 2151-2300, not tuned on (95 / 48 faster, 10 / 4 slower).
  // Fast numerics' disjoint windows take the path too where a window's rows
  // span at most kAcrossDisjointRow inputs of the plane (kh * w): on such
  // narrow planes and short windows each row pass of the row kernels is a
  // few vectors behind its set-up. The same VM and method
  // (vm-intel-xeon-2026-12-06-across-disjoint-*.log): all disjoint windows
  // on the path, 154 rows of seeds 3702-4300, 1.04x (61 faster by more
  // than 10 %, 76 slower): kh * w <= 256 1.74x over 52 (42 / 3), 257-384
  // 1.28x (17 / 5), beyond 384 0.70x (2 / 68). The rule on 114 other rows
  // of those seeds, not tuned on: 1.60x (85 / 11; f32 windows with gaps down
  // the plane 0.93x over 17, worst 3x6x582x75 k3x9 s5x9 0.47x, 0.06 ms);
  // 187x4x1410x24 k5 s6 f32 9.8 -> 3.4 ms.
  const bool small_planes = q.h * q.w <= kAcrossPixels && q.oh * q.ow <= kAcrossPixels;
  const bool large_planes_wanted = q.ow < kShortRow && window > 1 &&
                                   (!fast || ((q.kh > q.sh || q.kw > q.sw) && window < kAcrossBandWindow) ||
                                    (q.kh <= q.sh && q.kw <= q.sw && q.w > 0 && q.kh <= kAcrossDisjointRow / q.w));
  // Bands (the constants' comment): as many output rows as fit kAcrossBand
  // pixels, or up to kAcrossBandRows within kAcrossPixels on large planes.
  auto band_rows = [&](int64_t pixels) {  // output rows whose window rows fit `pixels`
    const int64_t spare_rows = pixels / q.w - q.kh;  // input rows beyond one window's
    return spare_rows >= 0 ? std::min(spare_rows / q.sh + 1, q.oh) : int64_t(0);
  };
  int64_t across_rows = q.oh, across_in_rows = q.h;
  bool banded = false;
  if (q.h * q.w > kAcrossBand) {
    int64_t rows = band_rows(kAcrossBand);
    if (rows < kAcrossBandRows && !small_planes) rows = std::min(band_rows(kAcrossPixels), kAcrossBandRows);
    if (rows >= kAcrossBandRows || !small_planes) {
      banded = true;
      across_rows = std::min(rows, kAcrossPixels / q.ow);
      across_in_rows = std::min(q.h, (across_rows - 1) * q.sh + q.kh);  // bounds a band's window rows
    }
  }
  j.across = nchw && (sizeof(A) == 4 || across_f64) && (!j.short_rows || (across_f64 && q.ow > kScalarRow)) &&
             (!j.global || across_global) && !few_rows && j.planes >= 16 &&
             (small_planes || large_planes_wanted) && across_rows > 0 && !sparse &&
             (q.ow < kShortRow || (q.ow < kAcrossRow && (in_order || converts || window >= kAcrossWindow)) ||
              (in_order && q.sw > 1));

  // Windows of one element (kernel 1 x 1, a strided subsampling) that the
  // 16-plane path (Job::across) does not take (NHWC; NCHW planes beyond its
  // size or few rows): a strided copy that divides (single_windows). Measured (ms,
  // the path before -> this one, oneDNN): NHWC bf16 2531x19x20x20 s2 1.33
  // -> 0.90-1.09 (0.47-0.72), 222x36x12x9 s2 0.037 -> 0.019-0.028 (0.019-
  // 0.025). In NCHW the 16-plane path is faster where it applies
  // (30x9x665x13 s2x3 bf16 0.15 against 0.37; 32x64x112x112 s2 fast 3.0
  // against 6.8, oneDNN 4.5).
  j.single = q.kh == 1 && q.kw == 1 && !j.across;

  // Scratch layout (cpu_job.h). The 128 bytes after the vertical sum are
  // slack for even_lanes, which reads past the last lane it uses.
  const int64_t acc = (int64_t)sizeof(A);
  int64_t at = align64(j.max_rows * (int64_t)sizeof(void*));
  j.vsum_at = at;
  at += align64(j.span_cap * acc) + 128;
  j.out_at = at;
  if (converts) at += align64(j.ob * j.vec * acc);
  j.conv_at = at;
  j.conv_stride = align64(j.span_cap * acc) / acc;
  if (converts) at += (j.nchunks > 0 ? j.chunk_rows : j.max_rows) * j.conv_stride * acc;  // rows one unit converts
  j.across_at = at = align64(at);
  if (j.across) at += (across_in_rows * q.w + across_rows * q.ow + q.w) * 16 * acc;  // pixels, outputs, column sums
  c->scratch_bytes = (size_t)align64(at + 64);

  // Parallel units: a run of output rows of one plane, or whole planes.
  int64_t new_rows = q.sh < q.kh ? q.sh : q.kh;  // input rows each output row adds
  if (new_rows > q.h) new_rows = q.h;
  const int64_t row_work = new_rows * q.w * j.vec + q.ow * j.vec;  // <= elements, no overflow
  int64_t rb = kUnitTarget / (row_work > 0 ? row_work : 1);
  if (rb < 1) rb = 1;
  int64_t pb = 1;
  if (rb >= q.oh) {
    rb = q.oh;
    pb = kUnitTarget / (q.oh * row_work);
    if (pb < 1) pb = 1;
    if (pb > j.planes) pb = j.planes > 0 ? j.planes : 1;  // n == 0: no units run
  }
  if (few_rows) rb = pb = 1;
  if (j.across) {  // whole planes in groups of 16, or a band of one group
    rb = across_rows;
    pb = banded ? 16 : (pb + 15) / 16 * 16;
  }
  // Global pooling: at least one vector of planes (16 f32) per unit where
  // there are two such vectors or more (pytorch numerics sums across the
  // planes of a vector; a unit of one plane leaves 15 lanes idle).
  if (j.global && j.planes >= 32 && pb < 16) pb = 16;
  c->rb = rb;
  c->pb = pb;
  c->row_units = (q.oh + rb - 1) / rb;
  c->bpu = few_rows ? 1 : j.nblocks;
  c->col_units = j.nblocks > 0 ? (j.nblocks + c->bpu - 1) / c->bpu : 1;
  c->units = (j.planes + pb - 1) / pb * c->row_units * c->col_units;
  if (j.nchunks > 0) {
    c->rows = out_rows;
    c->units = out_rows * j.nchunks;
  }
}

avgpool_status init(const Problem& q, const DeviceInfo&, ConfigPtr* config, Decline* why) {
  const Isa isa = isa_for_plan();
  const DtypeKernels fn = kernel_for(isa, q.dtype);
  try {
    std::unique_ptr<CpuConfig> c;
    if (q.dtype == AVGPOOL_DTYPE_F64) {
      auto d = std::make_unique<CpuConfigOf<double>>();
      plan_job(q, isa, d.get());
      c = std::move(d);
    } else {
      auto f = std::make_unique<CpuConfigOf<float>>();
      plan_job(q, isa, f.get());
      c = std::move(f);
    }
    c->fn = fn;
    *config = std::move(c);
  } catch (const std::bad_alloc&) {
    return decline(why, AVGPOOL_ERROR_OUT_OF_MEMORY, "cpu:simd: no memory for the plan's tables");
  } catch (const std::length_error&) {
    return decline(why, AVGPOOL_ERROR_OUT_OF_MEMORY, "cpu:simd: the plan's tables are too large");
  }
  return AVGPOOL_SUCCESS;
}

// ---- execute ---------------------------------------------------------------------------
avgpool_status execute(const Problem& q, const Config& config, const void* src, void* dst, void*) {
  const CpuConfig& c = static_cast<const CpuConfig&>(config);
  ActiveCall active;
  Job j = c.job;
  j.src = src;
  j.dst = dst;
  j.rows = q.rows.data();
  j.cols = q.cols.data();
  j.nt_out = c.nt_out && ((uintptr_t)dst & 63) == 0;
  const DtypeKernels fn = c.fn;
  const int64_t units = c.units, row_units = c.row_units, col_units = c.col_units, rb = c.rb, pb = c.pb,
                bpu = c.bpu, rows = c.rows;
  const bool split = j.nchunks > 0;
  auto run_unit = [&](int64_t u, void* scratch) {
    if (split) return fn.partial(j, u, scratch);
    const int64_t cu = u % col_units, pr = u / col_units;
    const int64_t pu = pr / row_units, ru = pr % row_units;
    const int64_t p0 = pu * pb, p1 = p0 + pb < j.planes ? p0 + pb : j.planes;
    const int64_t oy0 = ru * rb, oy1 = oy0 + rb < j.oh ? oy0 + rb : j.oh;
    const int64_t b0 = cu * bpu, b1 = b0 + bpu < j.nblocks ? b0 + bpu : j.nblocks;
    fn.block(j, p0, p1, oy0, oy1, b0, b1, scratch);
  };
  // The calling thread takes its scratch (and, for a split job, the partial
  // sums after it, shared by the team) before any output is written: when
  // it cannot, the call fails with dst untouched. Another thread that cannot
  // takes no units (the others do them).
  void* scratch = thread_scratch(c.scratch_bytes + c.partial_bytes);
  if (scratch == nullptr)
    return set_error(AVGPOOL_ERROR_OUT_OF_MEMORY, "no memory for %zu bytes of scratch",
                     c.scratch_bytes + c.partial_bytes);
  if (split) j.partials = static_cast<char*>(scratch) + c.scratch_bytes;
  const int nt = threads_for(units);
  if (nt <= 1) {
    for (int64_t u = 0; u < units; ++u) run_unit(u, scratch);
    for (int64_t r = 0; r < rows; ++r) fn.combine(j, r, scratch);
    thread_scratch_trim();
    return AVGPOOL_SUCCESS;
  }
#if defined(AVGPOOL_WITH_OPENMP)
  // Units from UnitShares, with no barrier before the first. Every output
  // is computed by one unit, so the result does not depend on who runs it.
  // A split job's combine units start after every partial unit is done
  // (the barrier); they need no scratch.
  UnitShares shares(units, nt);
  std::atomic<int64_t> next_row{0};
#pragma omp parallel num_threads(nt)
  {
    void* mine = thread_scratch(c.scratch_bytes);  // the caller's: the buffer above
    if (mine != nullptr)
      for (int64_t u0, u1; shares.next(omp_get_thread_num(), &u0, &u1);)
        for (int64_t u = u0; u < u1; ++u) run_unit(u, mine);
    if (split) {
#pragma omp barrier
      for (int64_t r; (r = next_row.fetch_add(1, std::memory_order_relaxed)) < rows;) fn.combine(j, r, mine);
    }
    thread_scratch_trim();
  }
#endif
  return AVGPOOL_SUCCESS;
}

// ---- the implementations ---------------------------------------------------------------
// One forward implementation for every problem, both layouts: the Job picks
// the kernel paths (kernels.inl) from the geometry at plan creation. The
// backward implementations are in backward.cpp.
const Impl kSimd = {"cpu:simd", AVGPOOL_BACKEND_CPU, Direction::kForward, init, execute};
const Impl* const kImpls[] = {&kSimd, &kCpuBackwardBroadcast, &kCpuBackwardGather};

size_t auto_order(const Problem& problem, const DeviceInfo& device, Direction direction, const Impl** out,
                  size_t cap) {
  if (direction == Direction::kBackward) return cpu_backward_auto_order(problem, device, out, cap);
  if (cap < 1) return 0;
  out[0] = &kSimd;
  return 1;
}

}  // namespace
}  // namespace cpu

const Backend& cpu_backend() {
  static const Backend backend = {AVGPOOL_BACKEND_CPU, cpu::kImpls, sizeof cpu::kImpls / sizeof cpu::kImpls[0],
                                  host_device, cpu::auto_order};
  return backend;
}

}  // namespace avgpool
