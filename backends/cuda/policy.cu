// The CUDA backend's AUTO policy: for a problem, the implementations to try,
// best first. Plan creation initialises them in this order and keeps the
// first that accepts; an implementation that declines says why. Every
// forward rule below names the measurement behind it (H200, f32 unless said,
// 2026-11-29; docs/cuda.md has the tables); the backward order follows from
// what each implementation must move and compute, as its comment says.
#include <algorithm>

#include "common.cuh"
#include "impls.h"

namespace avgpool {
namespace cuda {
namespace {

const Impl* const kImpls[] = {&kNchwRowStreamImpl, &kNchwVecColumnWalkImpl, &kNchwColumnWalkImpl,
                              &kNchwTiledImpl,     &kNchwRowBulkImpl,       &kNchwStrideEqImpl,
                              &kNhwcTileStreamImpl, &kNhwcColumnWalkImpl,   &kAnyDirectImpl,
                              &kAnyColumnWalkImpl,
                              &kNchwWindowTeamImpl, &kNchwWindowChainImpl,  &kAnyWindowSplitImpl,
                              &kAnyWindowTilesImpl, &kNhwcTiledImpl,       &kAnyPointwiseImpl,
                              &kBackwardAsForwardImpl, &kBackwardBroadcastImpl, &kBackwardTilesImpl,
                              &kBackwardColumnsImpl,   &kBackwardGatherImpl};

// Threads of one cuda:nchw_tiled / cuda:nhwc_tiled block: tiles of fewer
// than two outputs per thread do not pay for themselves.
constexpr int64_t kTiledThreads = 256;

bool half_type(const Problem& q) { return q.element_size == 2; }
bool fast(const Problem& q) { return q.numerics == AVGPOOL_NUMERICS_FAST; }

// cuda:nchw_row_stream for large overlapping windows that feed at most 3
// output rows per input row, on wide output rows (>= 128 outputs, so most
// of its consumer warps work): k11 s4 on 1024x1024 planes 1.36 ms against
// 2.22 on cuda:nchw_row_bulk (pytorch numerics 1.56 against 3.98). Not 5x5
// at stride 1 (3.86 against 1.93 on cuda:nchw_tiled), nor the small windows
// the column walks take, nor 2x2 windows at any width (1x1x1230x1832 k2 s2
// f16: 0.033 ms against 0.005 on cuda:nchw_column_walk), nor problems of
// fewer than kRowStreamUnitsPerSm work units per SM for its persistent grid
// of three blocks per SM (1x2x2028x384 k10x2 s4x2 f16, 36 units: 0.15x
// PyTorch; H200, 2026-12-01, device time).
// Not windows that do not overlap (stride >= kernel), which it took on
// window rows of 16 bytes or more until cuda:any_direct ran tensors of
// 2^31 elements or more in 32-bit batches: forced on the 43 such
// configurations AUTO gave it among seeds 2000-3400 of the sweep generator
// (H200, 2026-12-04, device time, best of two, inputs up to 2 GB), direct
// was 1.17x faster in geomean, faster on 36, below 0.97x PyTorch 15 -> 0
// (7x213x53x1512 k10 s10 f16 0.40x -> 1.17x, 1x188x1176x1176 k9 s9 bf16
// 0.75x -> 1.14x); the stream led on 7, all f64 window rows of 72-88 bytes,
// by 0.5-18 % (1x653x94x1556 k11 s11 f64 1.18x, 5x2x1810x1810 k10 s10 f64
// 1.15x), a class too small here to earn a rule of its own. On the
// seed's 16x64x2048x2048 k11 s11 the two are level in f16 and bf16 (2.016
// ms against 2.014) and within 1 % in f32; beyond 2^31 elements before the
// batches, direct took 1.29 ms against 1.01 on 8x64x2048x2048 f16 (bench/
// gpu/results/h200-2026-12-04-row-stream-non-overlapping-forced.json).
// Only f32 windows of 9+ rows that feed 3 output rows per input row: H100,
// 2026-12-06, device time, best of two, the configurations of sweep seeds
// 6000-6599 in fast numerics (6000-6399 in pytorch numerics) of the shape
// above where the stream could run, 120 (103): it was the fastest
// implementation on 6 (5); on the 13 (11) AUTO gave it, 1.77x (1.83x)
// slower in geomean than the fastest other, below PyTorch on 6 (7)
// (18x705x184x184 k11x5 s9x1 f32 3.45 ms against 0.89 on cuda:any_direct,
// PyTorch 1.73; 131x146x67x624 k8x9 s5x1 f16 5.12 against 2.05 on
// cuda:nchw_row_bulk); it led on 70x6x240x848 k11 s4 f32 (0.159 ms
// against 0.192 on cuda:nchw_row_bulk) and 1x148x724x1204 k9 s3x9 f32
// (0.246 against 0.269 on cuda:any_direct).
constexpr int64_t kRowStreamUnitsPerSm = 6;
bool row_stream_wanted(const Problem& q, const DeviceInfo& device) {
  if (q.ow < 128 || q.element_size != 4 || q.kh < 9 || ceil_div(q.kh, q.sh) != 3) return false;
  return nchw_row_stream_units(q) >= kRowStreamUnitsPerSm * device.sms;
}

// cuda:nchw_tiled, except where another measured faster: stride == kernel
// beyond 2x2 (seed: cuda:nchw_row_bulk 4.04 ms against 4.75), tiles of fewer
// than two outputs per thread (global 7x7: cuda:nchw_row_bulk 0.037-0.057 ms
// against 2.5), and pytorch numerics beyond 5x5 windows (k11 s4:
// cuda:nchw_row_bulk 3.98 ms against 5.25).
bool tiled_wanted(const Problem& q, const DeviceInfo& device) {
  if (q.stride_equals_kernel() && q.kh * q.kw > 4) return false;
  if (!fast(q) && q.kh * q.kw > 25) return false;
  return tiled_shape(q, device).outputs_per_block >= 2 * kTiledThreads;
}

// cuda:nchw_vec_column_walk, except on rows of at most kNarrowVecRow bytes
// without padding along the row under 3x3 and 5x5 windows, which
// cuda:nchw_column_walk takes: every output there sits kw / 2 columns off
// its vector, and the scalar walk ran faster. NCHW rows of 1-4 16-byte
// vectors, 3x3/5x5 without padding, forced (H100, 2026-12-07, device time,
// two random draws): the tuning draw 1.37x faster over 8 (6 by more than
// 10 %, none slower; 9420x56x18x16 k3 bf16 2.87x), the second, not tuned
// on, 1.40x over 11 (9 / 0; 62x33x551x8 k3 f16 1.04x -> 2.67x PyTorch).
// With padding kw / 2 the vectors led (0.26-1.06 of the fastest other's
// time over 16). Wider rows and 5x5 with padding 1 were not measured and
// keep the vectors (bench/gpu/results/
// h100-2026-12-07-narrow-vec-walk-{tune,confirm}.json).
constexpr int64_t kNarrowVecRow = 64;
bool vec_column_walk_wanted(const Problem& q) {
  return q.pw != 0 || q.kw > 5 || q.w * q.element_size > kNarrowVecRow;
}

// cuda:nchw_stride_eq before cuda:nchw_row_bulk for stride == kernel in
// f16/bf16 fast numerics on wide rows (f16 seed 1.97 ms against 2.06; its
// pytorch numerics are slower there: 2.75 against 2.07) and for tiny windows
// (k2 s2 on 112x112 planes: 0.28 ms against 0.40). Not on narrow rows: it
// gives a block to each output row of a plane, and the random sweep (H200,
// 2026-11-30, device time) had it at 1.778 ms against cuda:nchw_row_bulk's
// 0.536 (pytorch numerics, the slower of its two) on 49353x14x30x30 k10
// bf16, 0.439 against 0.167 on 20143x3x61x61 k5 f16, 0.049 against 0.009 on
// 120x52x8x75 k1x10 f16.
constexpr int64_t kStrideEqHalfRow = 1024;
bool stride_eq_before_row_bulk(const Problem& q) {
  return q.stride_equals_kernel() && ((half_type(q) && fast(q) && q.w >= kStrideEqHalfRow) || q.kh * q.kw <= 4);
}

// cuda:any_direct (one thread per output, PyTorch's scheme with 32-bit
// multiply-high index decoding) before the staging kernels where windows
// share little or there is too little to stage. The staging kernels read
// every input element once and share it between overlapping windows; that
// pays where neighbouring windows overlap heavily, rows are long and pixels
// fill 16-byte vectors. The rules come from a random sweep with every CUDA
// implementation forced (bench/gpu/sweep.py --forced; H200, 2026-12-01,
// seeds 11 and 12, 200 configurations, device time), where cuda:any_direct
// was the fastest on 146 of 200 in fast numerics; they were confirmed on
// seeds not tuned on (docs/performance.md, "Random-configuration sweeps").
// NCHW, in order:
//  - both strides 1: staged (each input is read kh * kw times by direct:
//    cuda:nchw_tiled 0.37 of direct's time on 12x1x1888x1888 k7x8 s1 f64,
//    0.57 on 88x9x1264x919 k4x1 s1 bf16);
//  - few outputs of wide windows (few_outputs_of_wide_windows, below):
//    staged (a thread per output waits on its window's loads one after
//    another where cuda:nchw_row_bulk stages the plane's rows with the
//    whole block; the benchmark's global 7x7 is one);
//  - output rows shorter than kDirectRow: direct (151x9x130x130 k8 s4 f16
//    1.16x faster than the best staging kernel, 69x4x47x47 k7 s1x7 bf16
//    1.29x);
//  - f64, except stride == kernel on rows of kStrideEqRow or more: direct
//    (1x38x294x294 k8 s3 1.84x, 4x14x141x141 k6 s8x1 1.42x; 1x42x23x1311
//    k9 s9 stays on cuda:nchw_stride_eq, 0.66 of direct's time);
//  - windows that hold fewer than twice the inputs between neighbouring
//    window origins, stride != kernel (kh * kw < 2 * sh * sw: gaps, strided
//    1x1, little overlap): direct (14x2x734x650 k1x11 s1x7 3.1x, 1x5x1416x505 k7x2
//    s6x2 f64 1.48x);
//  - a window that moves by one along an axis it spans: staged
//    (cuda:nchw_row_bulk 0.36 of direct's time on 144402x2x44x44 k5 s6x1,
//    2026-11-30);
//  - gaps between windows along either axis: direct (24x143x157x157 k4
//    s5x4 f16 1.77x, 14x111x634x534 k2 s4x2 1.16x);
//  - stride == kernel beyond 2x2 on rows shorter than kStrideEqRow: direct
//    (cuda:nchw_row_bulk, which AUTO took there, gives a block a few short
//    rows: 1.81x direct's time on 26x364x59x59 k8 s8; cuda:nchw_stride_eq
//    1.02-1.14x on it and on 10x179x360x360 k9x5 s9x5).
// The column walks' windows (square 2, 3 or 5 at strides of 1 or 2) stay
// with them whatever the width: they were tuned on such windows over the
// benchmark's narrow planes and led every sweep configuration of the kind
// (1x264x176x283 k2 s2 0.020 ms against direct's 0.036, 6x3x476x333 k2 s2
// f16 0.0058 against 0.0084).
constexpr int64_t kStrideEqRow = 1024;
constexpr int64_t kDirectRow = 64;
bool column_walk_window(const Problem& q) {
  return q.kh == q.kw && (q.kh == 2 || q.kh == 3 || q.kh == 5) && q.sh <= 2 && q.sw <= 2;
}
// Except f16/bf16 3x3 and 5x5 windows at stride 2, which go direct in both
// numerics: forced on 80 random f16/bf16 column-walk windows (H200,
// 2026-12-02, device time), direct ran 5x5 at stride 2 in 0.43-0.61 of
// cuda:nchw_column_walk's time (9 configurations; 5753x25x56x56 k5 s2 p1
// bf16 0.56) and 3x3 at stride 2 in 0.70-1.02 (11; 47748x8x18x150 0.84),
// the same in pytorch numerics; 2x2 at stride 2 came out even (0.82-1.18)
// and stays walked, as do stride 1 (the walk 1.0-1.9x faster) and 4- and
// 8-byte types (10489x2x131x131 k2 s2 f32: the walk 0.84 of direct's time).
bool half_strided_walk_window(const Problem& q) {
  return half_type(q) && column_walk_window(q) && q.kh >= 3 && q.sh == 2 && q.sw == 2;
}
constexpr int64_t kFewOutputs = 8;
constexpr int64_t kWideWindow = 49;
// Windows of kWideWindow inputs or more over output columns of one output
// in planes of several output rows (a warp of cuda:any_direct then spans 32
// output rows: 848x43x155x10 k9 s7 f32 cuda:nchw_row_bulk 0.58 of its
// time, 411x939x43x13 k7 s8 0.76; H200, 2026-12-02, forced sweep seeds
// 11-15), or over planes of at most kFewOutputs outputs when there are too
// few outputs for cuda:any_direct to give each SM a block of
// kDirectBlockThreads (3x169x13x30 k7 s8 f64 0.55 of its time, 11x116x12x12
// k10 s11 f64 0.29). With more outputs such planes go to it: on 80 random
// configurations of the kind (H200, 2026-12-02, forced, device time) it
// runs at 0.96-1.37x PyTorch where the staging kernel's per-plane work
// fell to 0.64x (3554x232x19x19 k10 s10 f32, a window over 28 % of each
// plane) and 0.79x (27832x100x12x12 k8 s8x7); always staged 1.275x
// geomean, 24 of 80 below 0.97x, with this rule 1.374x, 3 below (worst
// 0.91x). Staging on windows covering most of the plane instead gave 8 to
// 18 below. Windows that hold the whole plane (global pooling) stay staged
// whatever the count: the benchmark's 256x2048x7x7 global 7x7 ran 0.070 ms
// on cuda:any_direct against 0.034 on cuda:nchw_row_bulk, which reads the
// packed planes with whole-block copies.
// One output column is staged for 4- and 8-byte types only: on 36 random
// configurations of one output column and several output rows (H200,
// 2026-12-02, forced, device time) the staging kernel ran f32/f64 in 0.71
// of direct's time (geomean of 14, fast numerics; 0.93 in pytorch
// numerics), but f16/bf16 in 1.61x (fast; 1.25x pytorch numerics; 22
// configurations), where 15 of the 22 fell below 0.97x PyTorch in fast
// numerics (474x8x649x13 k11x7 s3x8 f16 0.26x, 6030x3x1823x5 k10x5 s5 f16
// 0.35x) and direct left 1 (17x256x1114x6 k10x6 s11x9 f16, 0.93x against
// 0.91x staged). Checked on 16 more random f16/bf16 ones, not tuned on:
// 1.17x faster in fast numerics and 1.13x in pytorch numerics
// (geomean), but slower on 6 and 7 of them (904x3x1814x16 k11x10 s2x12
// f16 0.35x, 2.90x -> 1.03x PyTorch; 1185x2x1363x16 k9 s6x11 0.52x, 1.75x
// -> 0.92x); below 0.97x PyTorch 8 -> 1 in each numerics (bench/gpu/
// results/h200-2026-12-02-one-column-half-types.json).
constexpr int64_t kDirectBlockThreads = 256;
// cuda:nchw_row_bulk sums one output per lane from shared memory: 32
// consecutive outputs of a column read their first window rows sh * w
// elements apart (the next plane's after oh). The most distinct 4-byte
// words any bank holds among those 32 addresses is the serialisation of
// each of their loads.
int64_t column_bank_conflict(const Problem& q) {
  int64_t words[32];
  for (int64_t j = 0; j < 32; ++j) {
    const int64_t plane = j / q.oh, oy = j % q.oh;
    const int64_t row = plane * q.h + std::max<int64_t>(0, oy * q.sh - q.ph);
    words[j] = row * q.w * q.element_size / 4;
  }
  std::sort(words, words + 32);
  int64_t per_bank[32] = {};
  for (int64_t j = 0; j < 32; ++j) {
    if (j == 0 || words[j] != words[j - 1]) ++per_bank[words[j] % 32];
  }
  return *std::max_element(per_bank, per_bank + 32);
}
// f16/bf16 columns: staged where those loads serialise less than 16 ways
// and the input (32 MiB or more) does not stay in L2 between launches.
// Forced over 145 configurations of windows of 49+ inputs (H100,
// 2026-12-06, device time, seeds 7350-8149): staged 71, in 0.73 of
// direct's time (57 faster by more than 10 %, 5 slower: 750x18x820x7 k11
// s4 f16 1.51x); rows of 16 bytes at sh 4 or 8 conflict 16 ways or more
// and ran up to 3.37x direct's time staged (3622x113x145x8 k8 s4x10 bf16).
// Not tuned on, the 70 such configurations of seeds 8150-8449 (H100,
// 2026-12-07, device time; 68 staged): 1.25x / 1.28x faster than direct in
// fast / pytorch numerics (geomean; 51 / 52 faster by more than 10 %, 10 /
// 6 slower: 26836x13x231x9 k10x7 s1x7 bf16 0.44x, 1305x2x1262x8 k11
// s2x11 f16 0.27x in pytorch numerics), 1.17x -> 1.46x / 1.49x PyTorch,
// below 0.97x PyTorch 9 -> 5 / 3 (bench/gpu/results/
// h100-2026-12-07-one-column-half-staged-confirm-*.json).
constexpr int64_t kStagedColumnMinBytes = int64_t(32) << 20;  // below: the input stays in L2
constexpr int64_t kStagedColumnBankWords = 16;                 // words on one bank from which loads serialise
bool stage_half_column(const Problem& q) {
  return q.src_elements * q.element_size >= kStagedColumnMinBytes && column_bank_conflict(q) < kStagedColumnBankWords;
}
bool few_outputs_of_wide_windows(const Problem& q, const DeviceInfo& device) {
  if (q.window_inputs() < kWideWindow) return false;
  if (q.ow == 1 && q.oh > 1) return !half_type(q) || stage_half_column(q);
  const bool whole_plane = q.window_inputs() == q.h * q.w;
  return q.oh * q.ow <= kFewOutputs && (q.dst_elements < kDirectBlockThreads * device.sms || whole_plane);
}
bool nchw_direct_first(const Problem& q, const DeviceInfo& device) {
  const int64_t window = q.kh * q.kw;
  if (half_strided_walk_window(q)) return true;
  if ((q.sh == 1 && q.sw == 1 && window > 1) || column_walk_window(q)) return false;
  if (few_outputs_of_wide_windows(q, device)) return false;
  const bool wide_stride_eq = q.stride_equals_kernel() && q.w >= kStrideEqRow;
  if (q.ow < kDirectRow || (q.element_size == 8 && !wide_stride_eq)) return true;
  if (window < 2 * q.sh * q.sw && !q.stride_equals_kernel()) return true;
  if ((q.sh == 1 && q.kh > 1) || (q.sw == 1 && q.kw > 1)) return false;
  if (q.sh > q.kh || q.sw > q.kw) return true;
  return q.stride_equals_kernel() && window > 4 && q.w < kStrideEqRow;
}

// cuda:any_direct after the row stream and the column walks, before the
// other staging kernels (cuda:nchw_tiled, cuda:nchw_row_bulk,
// cuda:nchw_stride_eq), since its 32-register, plain-load kernel is 1.13x
// faster (geomean of 147 forced configurations) than the one the rules
// above were measured on. Forced sweeps (H200, 2026-12-02, device time;
// seeds 11-13 tuned on, 14-15 checked), AUTO before -> with this rule,
// geomean against PyTorch and configurations below 0.97x:
//  - pytorch numerics: everything but the column walks' windows and few
//    outputs of wide windows (the staging kernels' pytorch numerics keep one
//    chain per output in shared memory and lost to it on 32 of 500:
//    2x149x283x283 k11x2 s11x1 bf16 0.35 of their time, 1x35x66x249 k8 s2
//    0.46; tuned 1.440x, 16 below -> 1.491x, 0; checked 1.435x, 12 ->
//    1.494x, 1 at 0.94x, where cuda:any_direct is the fastest there is);
//  - fast numerics: all but windows at row stride 1 holding four times the
//    inputs between column origins (kh * kw >= 4 * sw: rows re-read kh
//    times, which the staging kernels read once: 12x1x1888x1888 k7x8 s1 f64 cuda:nchw_tiled
//    0.44 of direct's time, 156x103x15x1636 k8 s1 0.43, 88x9x1264x919 k4x1
//    s1 0.66), unless output rows are shorter than kShortRow (5242x5x15x15
//    k9 s1: direct 0.56 of cuda:nchw_row_bulk's time). Direct before them:
//    4237x6x11x1086 k8x3 s5x2 0.47 of cuda:nchw_tiled's time, 1x342x309x309
//    k3x5 s1x4 0.49, 17x8x69x69 k1 s1 0.44. Tuned 1.494x, 6 below ->
//    1.507x, 0; checked 1.446x, 12 -> 1.494x, 1 (417x5x64x64 k8 s3x8 f64,
//    0.93x; cuda:nchw_row_bulk 1.14x there). Stride == kernel on rows of
//    kStrideEqRow or more goes to it as well (the row stream, which the
//    seed takes, comes first): on the AUTO sweeps of seeds 7, 8, 10 and 16,
//    where those rows stayed on cuda:nchw_stride_eq and cuda:nchw_row_bulk
//    in fast numerics, the same kernel ran 1.13-1.35x PyTorch in pytorch
//    numerics against 0.40-0.92x (76x226x11x1227 k4 bf16 1.35x against
//    0.92x, 19x2x150x1272 k3x9 f32 1.13x against 0.40x).
//
// Since cuda:any_direct unrolls its window rows (any_direct.cu), the
// fast-numerics bound above is narrower: at row stride 1, cuda:nchw_tiled comes
// first only for windows of kTallWindow rows or more and two columns or more
// where both strides are 1; at column stride above 1, for 4- and 8-byte types with windows
// of kTiledRows rows or more holding kTiledInputsPerStep inputs per column step
// (kh * kw >= 16 * sw); and only where the tiles hold enough outputs
// (tiled_wanted), else direct, not cuda:nchw_row_bulk (50x36x27x27 k10x7 s1
// f16: direct 0.17 of its time). Forced on 40 random NCHW configurations at row
// stride 1 (H200, 2026-12-02, device time, fast numerics; each rule's pick of
// the two times) the rule before put 16 of them 10 % or more behind the faster
// of the two kernels (8 below 0.97x PyTorch: 8x3x1229x261 k5x3 s1x3 f16 0.73x,
// direct 2.8x faster; 47x127x267x141 k4x3 s1x2 f16, direct 2.1x), this one 7 (1
// below): 0.82 -> 0.95 of the faster one's speed in geomean, 1.33x -> 1.54x
// PyTorch. The tiles kept their lead on tall windows at both strides 1
// (10556x2x50x50 k6 s1 f32 0.64 of direct's time, 1x197x83x1331 k7 s1 f16 0.66)
// and on f32 windows of many inputs per column step (3x14x654x364 k9 s1x4 0.56,
// 43x23x216x216 k8x6 s1x2 0.64), and lost on f16/bf16 and short windows
// (21x109x77x561 k3x7 s1x3 bf16: direct 2.2x faster). On 40 more of a second
// seed: 0.89 -> 0.98 of the faster one's speed, 1.39x -> 1.54x PyTorch, below
// 0.97x 6 -> 1
// (bench/gpu/results/h200-2026-12-02-nchw-row-stride-one-forced.json).
// Windows of one column or one row at both strides 1 went to the tiles
// too, unmeasured; forced on 24 random one-column windows (H200,
// 2026-12-03, device time, best of two), direct was faster on 22 (up to
// 4.1x where the tiles were taken: 4x896x34x34 k2x1 bf16, 0.59x -> 2.4x
// PyTorch), the tiles 1.12x at most (353x1x241x533 k6x1 f32); on the three
// one-row windows among 70 random configurations at both strides 1,
// direct 1.4-2.4x faster (1x12x184x184 k1x11 f64 0.72x PyTorch on the tiles)
// (bench/gpu/results/h200-2026-12-03-nchw-stride-one-forced.json).
constexpr int64_t kShortRow = 16;
constexpr int64_t kTallWindow = 6;
constexpr int64_t kTiledRows = 5;
constexpr int64_t kTiledInputsPerStep = 16;
bool nchw_tiles_before_direct(const Problem& q) {
  if (q.sh != 1) return false;
  if (q.sw == 1) return q.kh >= kTallWindow && q.kw > 1;
  return q.element_size >= 4 && q.kh >= kTiledRows && q.kh * q.kw >= kTiledInputsPerStep * q.sw;
}
bool nchw_direct_before_staging(const Problem& q, const DeviceInfo& device) {
  if (column_walk_window(q) || few_outputs_of_wide_windows(q, device)) return false;
  if (!fast(q)) return true;
  if (q.sh == 1 && q.sw == 1 && q.kh * q.kw > 1 && q.ow < kShortRow) return true;
  return !(nchw_tiles_before_direct(q) && tiled_wanted(q, device));
}

// NHWC: the tile and column kernels move a pixel's channels as 16-byte
// vectors; pixels that are not whole vectors, or only one, and strided f64
// windows go to cuda:any_direct (same sweep: 4x165x75x75 k11 s3 bf16 2.35x faster than
// cuda:nhwc_column_walk, 187x3x419x419 k11x7 s1x7 f16 2.13x; 31x8x61x61
// k11 s2 f16 (one vector) 3.2x faster than cuda:nhwc_tile_stream,
// 117424x4x19x7 k4 s3 f64 14.6x, 2x22x240x240 k7 s7 f64 2.0x than
// cuda:nhwc_column_walk; with vectors of 2- and 4-byte channels the staging
// kernels keep their lead: 0.33 of direct's time on 11x312x834x43 k5x1
// s3x2 bf16, 0.42 on 604x244x20x20 k11 s2 f32; and f64 at stride 1, 0.37
// on 3x14x1419x1419 k1 s1).
//
// Also where the windows cover less than half of the input (stride ==
// kernel with a large remainder, gaps): the staging kernels read every
// input row, direct only the covered ones (29099x8x21x21 k11 s11 f32, one
// window over 27 % of each plane: cuda:nhwc_tile_stream 0.17x PyTorch;
// 1x68x12x338 k11x1 s10x3 f32, 33 %: 1.79x direct's time; one of four
// forced configurations went the other way, 448x208x17x17 k10 s10, 0.94).
//
// And pixels of at most kFewVectors vectors on planes of fewer than
// kSmallPlane pixels, but for windows moving by one along both axes: there
// the staging kernels' tiles hold few pixels, and direct, which groups a
// pixel's channels (any_direct.cu), was faster than the kernel AUTO took
// before on 32 of the 35 such among 45 random configurations of small NHWC
// planes (H200, 2026-12-02, forced, device time; 2.34x geomean, worst
// 0.72x; over the 45 in fast numerics 0.978x PyTorch geomean, 21 below
// 0.97x -> 1.893x, 1 below:
// 233706x16x13x22 k3 s3 bf16 0.59x -> 2.5x, 1796x16x30x8 k8 s4 f16 0.06x
// -> 1.40x; 62x4x199x31 k1 s1 f64, a plane of 6169 pixels, 0.43x ->
// 1.98x in an AUTO sweep). Kept staged: both strides 1 (368x32x9x26 k5 s1
// bf16: cuda:nhwc_tile_stream 0.65 of direct's time) and larger planes,
// where the AUTO sweeps of seeds 25-28 had the staging kernels ahead on 4
// of 7 planes of 15 000 to 56 000 pixels (2768x16x48x315 k4 s4 f16 0.50
// of direct's time, 403x16x45x817 k2 s2 f32 0.70; 2x16x1763x1763 k9x1
// s11x1 bf16 0.75).
constexpr int64_t kFewVectors = 8;
constexpr int64_t kSmallPlane = 8192;
bool nhwc_direct_first(const Problem& q) {
  const int64_t pixel_bytes = q.c * q.element_size;
  const bool strided = q.sh > 1 || q.sw > 1;
  const double covered_rows = q.oh * q.kh < q.h ? double(q.oh * q.kh) / double(q.h) : 1.0;
  const double covered_cols = q.ow * q.kw < q.w ? double(q.ow * q.kw) / double(q.w) : 1.0;
  const bool few_vectors_small_plane =
      pixel_bytes <= 16 * kFewVectors && q.h * q.w < kSmallPlane && !(q.sh == 1 && q.sw == 1 && q.kh * q.kw > 1);
  return pixel_bytes % 16 != 0 || pixel_bytes < 32 || (q.element_size == 8 && strided) ||
         covered_rows * covered_cols < 0.5 || few_vectors_small_plane;
}

// Where NHWC goes direct, cuda:nhwc_tiled first in fast numerics when its
// tiles spare at least kTiledReuse loads of the window per staged input
// (clipped window inputs per output over the inputs staged per output),
// hold at least two outputs per thread, and the windows overlap along the
// rows (kw > sw), where its horizontal sums share their terms; sharing rows
// alone, direct keeps up through L1. H200, 2026-12-02, device time, fast
// numerics, direct's time over the tiles':
//  - forced on 90 random NHWC configurations of overlapping windows
//    (seeds 40-51): at a reuse of 7 or more faster on all 8 (9x3x178x1407
//    k11 s1 f16 4.26x, 2x3x1788x471 k8 s1 f64 1.74x, 4x17x75x737 k7 s1 f64
//    1.33x, 115x1x170x656 k2x8 s1 f32 1.23x); between 5 and 7 on 2 of 4
//    (3x90x1471x129 k3 s1 f16 0.61x); below 5, 0.07-1.35x, mostly slower:
//    pixels of many channels leave a tile few pixels wide, and direct
//    groups their channels;
//  - the 21 configurations the reuse bound alone took among the sweeps of
//    seeds 29-32 and 53-60: 1.49x geomean, 16 faster (38x5x984x984 k11 s1
//    f16 5.01x, 1x23x1593x1593 k9 s1 bf16 3.17x), the slower ones windows
//    not overlapping along rows (1x6x939x107 k11x8 s1x10 0.50x, 8x17x982x1530
//    k10 s1x10 0.84x, 195x7x1534x128 k9x4 s1x6 0.80x), a 13-pixel row
//    (5482x7x166x13 k9x5 s1x3 0.84x) and an 8-microsecond problem (0.84x).
// Pytorch numerics sum each window from the tile one element at a time,
// which was slower than direct (0.45x geomean over the 90) and stays direct.
// The same rule for cuda:nchw_tiled where NCHW goes direct was tried and
// not kept: at a reuse of 10 or more it was 1.23x faster than direct in
// geomean on 40 configurations of seeds 700-899, but slower on 10, and 6
// of those fell below PyTorch (3x291x1395x14 k10x7 s2 f64 0.57x of direct's
// speed, 825x2x1173x63 k10 s1x5 bf16 0.60x), where direct was above it on
// all 40.
constexpr double kTiledReuse = 7;
bool nhwc_tiles_before_direct(const Problem& q, const DeviceInfo& device) {
  if (!fast(q) || q.kw <= q.sw) return false;
  const TiledShape t = tiled_shape(q, device);
  return t.window_reuse >= kTiledReuse && t.outputs_per_block >= 2 * kTiledThreads;
}

// cuda:nhwc_tile_stream, except where cuda:nhwc_column_walk measured faster
// in fast numerics (ms there against here):
//  - square 3/5/7 windows at row stride 2, and 7x7 (k3 s2 p1 ceil 0.073
//    against 0.078);
//  - 3x3 and 5x5 at stride 1 in 2-byte types, and 5x5 in f64 (f16 k3 s1 p1
//    on 32x256x56x56 0.059 against 0.069, k5 s1 p2 on 8x64x512x512 0.274
//    against 0.335; bf16 0.059 / 0.064, 0.276 / 0.307; f64 k5 0.762 /
//    0.860). f32 stays on the stream (0.066 / 0.070, 1.356 / 1.450).
bool tile_stream_wanted(const Problem& q) {
  if (!fast(q) || q.kh != q.kw) return true;
  if ((q.kh == 3 || q.kh == 5 || q.kh == 7) && (q.sh == 2 || q.kh == 7)) return false;
  if (q.sh == 1 && q.sw == 1 && (q.kh == 3 || q.kh == 5))
    return !(half_type(q) || (q.element_size == 8 && q.kh == 5));
  return true;
}

// Where cuda:nhwc_tile_stream would run, cuda:any_direct before it when
// the ring has too little to stream: an input under kStreamMinBytes (about
// 10 microseconds of copy: a unit's ring fill and drain are then much of
// its time), or tiles in which fewer than kStreamMinBusy of the consumer
// threads own an item (narrow output rows of pixels of few 16-byte groups:
// 52x16x1687x73 k10 s6 f16, 24 items for 256 consumers, ran 3.2x direct's
// time, 0.81x PyTorch). H200, 2026-12-03, device time, best of two:
//  - tuned: forced on the 346 configurations AUTO gave the stream among
//    seeds 1000-1399 of the sweep generator (inputs up to 256 MB, fewer
//    than four rounds of work units over the grid), direct's time over the
//    stream's, geomean: inputs under 4 MB 0.73, 4-8 MB 0.75, 8-16 MB 0.80,
//    16-32 MB 0.84, 32-64 MB 1.15, from 64 MB 1.11; a quarter of the
//    consumers busy or fewer 0.58 (27 of 29 faster). Rule: 1.17x faster
//    over the 312 the stream took in fast numerics, below 0.97x PyTorch
//    27 -> 3 (pytorch numerics, 346: 1.17x, 33 -> 3); slower on 22, worst
//    0.50x (1x112x648x103 k9 s2 f16, 14 MB, still 1.36x PyTorch);
//  - confirmed on the 546 configurations AUTO gave the stream among seeds
//    1400-1999 (inputs up to 512 MB, no bound on work units), not tuned on:
//    the 307 the rule moves 1.31x faster (238 faster by more than 3 %, 55
//    slower, worst 0.37x on 1x128x218x218 k5 s1 f32, still 2.94x PyTorch),
//    1.16x over all 546, 2.00x -> 2.32x PyTorch, below 0.97x 44 -> 1; pytorch
//    numerics (585) 1.17x, 44 -> 0.
// Not cuda:nhwc_tiled first, as for nhwc_direct_first's problems: in that
// run the rule sent 7 such to it, 0.72x the stream's speed in geomean;
// forced again, direct ran them at 0.93x the stream's speed and faster than
// the tiles on 5 of the 7 (1x14x93x145 k3x5 s1 f64: 0.93x PyTorch on the
// tiles, 1.70x direct).
constexpr int64_t kStreamMinBytes = int64_t(32) << 20;
constexpr double kStreamMinBusy = 0.25;
bool tile_stream_starved(const Problem& q) {
  return q.src_elements * q.element_size < kStreamMinBytes || nhwc_tile_stream_busy_consumers(q) < kStreamMinBusy;
}

// Large windows: at least kLargeWindow inputs per output (the window as
// clipped to the input). Below it every window fits one thread's loop well
// (k11: 121 inputs, global 7x7: 49); from it on, one thread per output
// waits on hundreds of loads in a row, and the window is split over threads
// (fast numerics) or staged by the block for one thread's chain (pytorch
// numerics). H200, 2026-11-30, f32 NCHW, against the implementations AUTO
// took before (docs/performance.md, "Large windows"): global 1024x1024
// planes fast 0.203 ms against 109.5, pytorch 3.75 against 109.5; global
// 64x64 planes 0.067 / 0.222 against 0.184 / 1.09; k64 s32 fast 0.547
// against 2.19; k32 s16 pytorch 1.29 against 2.84. The implementations size
// their teams, tiles and clusters from the window against the outputs and
// planes at plan creation.
constexpr int64_t kLargeWindow = 512;

// Overlapping windows (along an axis with more than one output) are read
// (kh / sh) * (kw / sw) times; the tiled and streamed kernels share those
// reads between neighbouring outputs, a team per output goes through L2 for
// each. In fast numerics (and in NHWC, which has no staged chain) they stay
// with the earlier kernels below kLargeOverlapping inputs: k32 s16 (1024
// inputs) fast ran 0.338 ms on what AUTO took before against 0.720 on
// cuda:nchw_window_team, k64 s32 (4096) 2.19 against 0.547; the bound lies
// between the two (not measured in between).
constexpr int64_t kLargeOverlapping = 2048;

bool windows_overlap(const Problem& q) { return (q.kh > q.sh && q.oh > 1) || (q.kw > q.sw && q.ow > 1); }

// Large NHWC windows in pytorch numerics go to cuda:nhwc_column_walk while
// the channels fill 16-byte vectors: its vector lanes keep PyTorch's order
// and beat cuda:any_window_split's 4-byte lanes (global 64x64 window on
// 32x512x64x64, f32: 0.283 ms against 0.439; H200, 2026-11-30).
bool nhwc_vector_chain(const Problem& q) {
  return q.layout == AVGPOOL_LAYOUT_NHWC && !fast(q) && (q.c * q.element_size) % 16 == 0;
}

bool large_window(const Problem& q) {
  const bool staged_chain = q.layout == AVGPOOL_LAYOUT_NCHW && !fast(q);
  return q.window_inputs() >= (windows_overlap(q) && !staged_chain ? kLargeOverlapping : kLargeWindow);
}

// A window row this wide keeps a warp's lanes side by side on it
// (cuda:nchw_window_team); narrower, taller windows take lanes over adjacent
// outputs instead (cuda:any_window_split).
constexpr int64_t kTeamRow = 32;

// Fast numerics take a team per output, not cuda:nchw_window_chain, also
// for overlapping windows: staging each tile's inputs once in shared memory
// (with four partial sums per thread) measured slower (H200, 8x64x512x512,
// k32 s16: 1.295 ms against 0.720; k64 s32: 1.345 against 0.547).

// Fast numerics, large windows made of large tiles (g = gcd(kernel,
// stride) per axis, g_h x g_w >= kTileInputs inputs) that overlap or are a
// plane's only output along an axis: cuda:any_window_tiles reads each input
// once per band and adds (kernel / g)^2 tile sums per output. H200,
// 2026-11-30 (bench/gpu/torch_compare_large.py --queued, device time):
// 8x64x512x512 k32 s16 0.179 ms against 0.289 on cuda:nchw_row_bulk, k64
// s32 0.148 against 0.542 on cuda:nchw_window_team; the (4096, 1) bf16
// column over one 4096x4096 plane 0.018 against 0.041 on
// cuda:any_window_split; k32 s16 NHWC 0.193 against 0.291 on
// cuda:nhwc_column_walk. Global windows stay with the team (forced there:
// global 1024^2 0.214 against 0.203, 64^2 0.168 against 0.065). Stride ==
// kernel (no tile shared by two windows) is not measured and stays where
// it was.
constexpr int64_t kTileInputs = 64;
bool window_tiles_wanted(const Problem& q) {
  return fast(q) && q.oh * q.ow > 1 && (windows_overlap(q) || q.oh == 1 || q.ow == 1) &&
         q.window_inputs() >= kLargeWindow && any_window_tiles_tile_inputs(q) >= kTileInputs;
}

// Pytorch numerics, NCHW, large windows that overlap along rows while an
// input row feeds at most 3 output rows: cuda:nchw_row_stream's per-column
// chains (one accumulator per open output row, rows streamed through a
// ring) before cuda:nchw_window_chain. H200, 2026-11-30, device time:
// 8x64x512x512 k32 s16 0.611 ms against 1.288 (PyTorch 1.123), k64 s32
// 1.187 against 1.412. Global windows stay on the chain (row stream 0.991
// against 0.220 on 32x512x64x64).
bool row_stream_chains(const Problem& q) {
  return q.layout == AVGPOOL_LAYOUT_NCHW && !fast(q) && q.kh > q.sh && q.oh > 1 && ceil_div(q.kh, q.sh) <= 3;
}

// Windows of one element at stride 1: an elementwise pass over 16-byte
// vectors (cuda:any_pointwise), in both layouts and numerics. Forced on 32
// such configurations of 1 MB to 2 GB (H200, 2026-12-02, device time): 2.16x
// faster than cuda:any_direct in geomean, never slower (1.00-5.26x); the 16
// of 64 MB or more at 0.86-0.97 of the copy roofline, against 0.26-0.68
// (bench/gpu/results/h200-2026-12-02-pointwise-forced.json).
bool pointwise(const Problem& q) { return q.kh == 1 && q.kw == 1 && q.sh == 1 && q.sw == 1; }

// cuda:any_column_walk wherever cuda:any_direct would run, in fast
// numerics, for windows of kWalkRows rows or more at row stride 1, with at
// least kh output rows and kWalkOutputs outputs, in NHWC or where NCHW
// windows overlap along the row (kw > sw): one thread per output reads each
// input row kh times, the walk once per column and run (a ring of row
// sums). H100, 2026-12-05, device time, best of two, forced against
// cuda:any_direct on the sweep generator's configurations of windows of 8+
// rows at row stride 1 (bench/gpu/results/h100-2026-12-05-any-column-walk-*):
//  - tuned on seeds 6000-6061, the rule's 37 there: 1.47x faster in
//    geomean, 30 faster by more than 10 %, 4 slower (worst 0.75x,
//    527x37x22x39 k10x5 s1x5 bf16 NHWC), 2.16x -> 3.17x PyTorch. Without
//    the NCHW condition 1.30x with 12 slower: NCHW windows apart along the
//    row, whose rows direct reads in 16-byte chunks (3x579x119x205 k10x8
//    s1x10 f64 0.54x); without the output-row bound, planes of 1-4 output
//    rows fell below 0.97x PyTorch (1360x201x11x101 k11 s1 f32, one output
//    row, 0.39x of direct's speed);
//  - checked on seeds 6062-6161, not tuned on: the 63 it moves 1.46x
//    faster (46 faster by more than 10 %, 8 slower, worst 0.58x on
//    112x2x962x96 k8 s1x10 f64 NHWC), 1.97x -> 2.87x PyTorch, below 0.97x
//    PyTorch 1 -> 1 (4x6x686x686 k11x8 s1x8 f32 NHWC 0.89x -> 1.41x;
//    112x2x962x96 1.66x -> 0.96x), at 0.6 of the copy roofline or more 3 ->
//    8 of the 49 of 64 MB or more.
// Windows of fewer rows or at larger row strides share fewer loads: over
// the 138 configurations of seeds 6000-6003 with rows overlapping at any
// row stride, the walk (forced, its first versions) ran 0.73-0.76x AUTO's
// speed in geomean.
// NHWC f64 windows of kWalkWindowF64 inputs or more that overlap down the
// plane (kh > sh), at any row stride: one thread per output (one channel,
// 8 bytes a lane) fell below PyTorch there (260x196x60x60 k8 s5x8 0.91x,
// 386x15x45x120 k10x9 s3x10 0.57x). H100, 2026-12-07, device time, the
// walk forced against cuda:any_direct on random NHWC f64 configurations of
// 9-600 MB (bench/gpu/results/h100-2026-12-07-f64-nhwc-walk-*.json):
//  - tuned on (seven draws, windows of 36+ inputs): the 56 of 64+ inputs
//    1.11x faster in geomean, 29 faster by more than 10 %, 6 slower (worst
//    0.75x, 76x2x780x62 k8 s1x7); of 36-63 inputs 1.01x, 8 of 34 slower
//    (28518x6x12x36 k11x5 s7x1 0.65x);
//  - not tuned on, 50 of 64+ inputs: 1.06x, 15 faster, 10 slower (worst
//    0.72x, 16x50x885x10 k8 s3x5, still 0.97x PyTorch), 1.32x -> 1.40x
//    PyTorch, below 0.97x 5 -> 3 (4x78x412x54 k10x11 s4x6 0.98x -> 1.47x).
// f16/bf16/f32 stay direct: on 29 such with windows of 7+ rows at row
// strides 2 or more the walk ran 0.78x of direct's speed, 20 slower.
constexpr int64_t kWalkRows = 8;
constexpr int64_t kWalkWindowF64 = 64;
constexpr int64_t kWalkOutputs = int64_t(1) << 20;
bool column_walk_before_direct(const Problem& q) {
  if (!fast(q)) return false;
  if (q.layout == AVGPOOL_LAYOUT_NHWC && q.dtype == AVGPOOL_DTYPE_F64 && q.kh * q.kw >= kWalkWindowF64 &&
      q.kh > q.sh)
    return true;
  if (q.sh != 1 || q.kh < kWalkRows || q.oh < q.kh || q.dst_elements < kWalkOutputs) return false;
  return q.layout == AVGPOOL_LAYOUT_NHWC || q.kw > q.sw;
}

size_t auto_order(const Problem& q, const DeviceInfo& device, Direction direction, const Impl** out, size_t cap) {
  size_t n = 0;
  auto add = [&](const Impl* impl) {
    for (size_t i = 0; i < n; ++i)
      if (out[i] == impl) return;
    if (n < cap) out[n++] = impl;
  };
  // cuda:any_direct, after cuda:any_column_walk where it reads tall windows
  auto add_direct = [&]() {
    if (column_walk_before_direct(q)) add(&kAnyColumnWalkImpl);
    add(&kAnyDirectImpl);
  };
  if (direction == Direction::kBackward) {
    // Fast numerics at stride 1 with one divisor for every window (it
    // declines the rest): the forward of grad_output with the mirrored
    // padding, on the forward's kernels, which read each element once and
    // sum in registers with no division per term.
    if (fast(q) && q.sh == 1 && q.sw == 1) add(&kBackwardAsForwardImpl);
    // Windows that do not overlap (stride >= kernel on both axes): each
    // grad_input element takes at most one term, so cuda:backward_broadcast
    // computes a window row's values once and then only streams 16-byte
    // stores of them (and zeros) - one write per element, no per-element
    // gather of windows, which is all a pass that writes 121 times more than
    // it reads (the seed) can do. It declines axes of 2^28 or more and rows
    // of 2^30 elements, which the gather takes.
    // Before it, where grad_input rows are whole groups of four in NCHW,
    // cuda:backward_columns (below), which writes a thread's four columns
    // as one vector per row and loads each window column once per thread
    // (H200, 2026-12-01, device time, ms, fast / pytorch numerics): k2 s2
    // on 64x128x112x112 0.166 / 0.172 against 0.238 / 0.238; the seed f32
    // 4.53 / 4.55 against 4.63 / 4.63, f16 fast 2.28 against 2.51. Not f16
    // or bf16 in pytorch numerics (seed 3.14 against 2.52: a division per
    // window column and thread), nor rows that are not whole groups (global
    // 7x7 NCHW 0.252 against 0.034 on the broadcast's planes_kernel), nor
    // NHWC (k2 s2 0.159 / 0.171 against 0.162 / 0.163; f16 seed 2.41
    // against 2.27).
    const bool non_overlapping = q.sh >= q.kh && q.sw >= q.kw;
    if (non_overlapping && q.layout == AVGPOOL_LAYOUT_NCHW && q.w % 4 == 0 && (fast(q) || !half_type(q)))
      add(&kBackwardColumnsImpl);
    if (non_overlapping) add(&kBackwardBroadcastImpl);
    // Overlapping windows: cuda:backward_columns (NCHW four columns, NHWC
    // four channels of a pixel column per thread, a register ring of the
    // window rows' terms, no shared memory; it declines more than 5 window
    // rows per row or 8 window columns per four columns in NCHW, more than
    // 3 windows per axis or channels not in groups of four in NHWC).
    // Against the kernels below (H200, 2026-12-01, f32, device time, ms,
    // fast / pytorch numerics): NCHW k3 s2 p1 ceil 0.087 / 0.092 against
    // 0.172 / 0.176 (cuda:backward_gather), k11 s4 1.31 / 1.66 against
    // 2.33 / 2.53 (gather), k3 s1 p1 with count_include_pad = False 0.086 /
    // 0.109 against 0.167 / 0.168 (gather), k5 s1 p2 pytorch numerics 2.36
    // against 3.28 (cuda:backward_tiles); NHWC k3 s2 p1 ceil 0.082 / 0.106
    // against 0.183 / 0.182, k11 s4 1.23 / 2.08 against 2.57 / 2.98 (gather).
    else add(&kBackwardColumnsImpl);
    // Overlapping NCHW windows of 5x5 or more at stride 1: cuda:backward_tiles
    // stages a tile's quotients g / d in shared memory (one division per
    // grad_output element and tile) and sums 8 elements of a column per
    // thread from them, each staged value read once per thread. Measured
    // against cuda:backward_gather (H200, 2026-12-01, f32 NCHW, device
    // time, ms): k5 s1 p2 on 8x64x1024x1024 3.98 against 4.55 (pytorch
    // numerics 4.29 against 5.59); not k3 s1 p1 on 32x256x56x56 (0.199
    // against 0.197), k3 s2 p1 ceil (0.282 against 0.176) nor k11 s4 (3.99
    // against 2.20), where fewer terms share each staged quotient. A
    // persistent grid walking column strips with the next band's loads in
    // registers measured slower (k5 s1 p2 6.33, k3 s1 p1 0.349).
    if (q.layout == AVGPOOL_LAYOUT_NCHW && q.sh == 1 && q.sw == 1 && q.kh >= 5 && q.kw >= 5)
      add(&kBackwardTilesImpl);
    // The rest (and everything the others decline): each element gathers
    // its windows' terms, computed once per window row and column walk.
    add(&kBackwardGatherImpl);
    return n;
  }
  if (pointwise(q)) add(&kAnyPointwiseImpl);
  if (window_tiles_wanted(q)) add(&kAnyWindowTilesImpl);
  if (large_window(q)) {
    if (q.layout == AVGPOOL_LAYOUT_NCHW) {
      if (row_stream_chains(q)) add(&kNchwRowStreamImpl);
      if (!fast(q)) add(&kNchwWindowChainImpl);
      else if ((q.kw < q.w ? q.kw : q.w) >= kTeamRow) add(&kNchwWindowTeamImpl);
    } else if (nhwc_vector_chain(q)) {
      add(&kNhwcColumnWalkImpl);
    }
    add(&kAnyWindowSplitImpl);
  }
  if (q.layout == AVGPOOL_LAYOUT_NCHW) {
    if (nchw_direct_first(q, device)) add_direct();
    if (row_stream_wanted(q, device)) add(&kNchwRowStreamImpl);
    if (vec_column_walk_wanted(q)) add(&kNchwVecColumnWalkImpl);  // fast numerics, 3x3/5x5/7x7 at stride 1
    add(&kNchwColumnWalkImpl);     // 2x2/3x3/5x5 at row stride 1 or 2
    if (nchw_direct_before_staging(q, device)) add_direct();
    if (tiled_wanted(q, device)) add(&kNchwTiledImpl);
    if (stride_eq_before_row_bulk(q)) add(&kNchwStrideEqImpl);
    add(&kNchwRowBulkImpl);        // rows that fit in shared memory
    add(&kNchwStrideEqImpl);       // stride == kernel at any width
  } else {
    if (nhwc_direct_first(q)) {
      if (nhwc_tiles_before_direct(q, device)) add(&kNhwcTiledImpl);
      add_direct();
    }
    if (tile_stream_wanted(q)) {
      if (tile_stream_starved(q)) add_direct();
      add(&kNhwcTileStreamImpl);
    }
    // Where cuda:nhwc_column_walk does not walk (pytorch numerics, windows
    // other than its own), it runs a thread per output pixel and 16-byte
    // channel group with 64-bit index math; cuda:any_direct first there.
    // Forced on the configurations AUTO gave it (H200, 2026-12-04, device
    // time, best of two): seeds 2000-2400, 44 in fast numerics, direct
    // 1.07x faster in geomean, below 0.97x PyTorch 2 -> 0; checked on seeds
    // 2401-2800, not tuned on, 41: 1.11x, 1.62x -> 1.80x PyTorch, below
    // 0.97x 1 -> 0; the walk faster on 15 (at most 1.37x: 3x152x180x531 k11
    // s10 f16, where direct is still 1.81x PyTorch); pytorch numerics, 50 of
    // seeds 2000-2800: 1.02x, below 0.97x 3 -> 0 (27x872x26x26 k11 s11 f32
    // 0.80x -> 1.34x), the walk faster on 22 (at most 1.52x: 1x208x364x165
    // k7 s6 f32, direct 1.93x PyTorch). Bounds by
    // input size or output rows (the walk's losses were mostly under 32 MB
    // or of few output rows) did worse on the seeds not tuned on (bench/gpu/
    // results/h200-2026-12-04-nhwc-column-walk-not-walking-forced.json).
    if (!nhwc_column_walk_walks(q)) add_direct();
    add(&kNhwcColumnWalkImpl);
  }
  add_direct();  // anything: one thread per output
  return n;
}

}  // namespace
}  // namespace cuda

const Backend* cuda_backend() {
  static const Backend backend = {
      /* .id         = */ AVGPOOL_BACKEND_CUDA,
      /* .impls      = */ cuda::kImpls,
      /* .count      = */ sizeof cuda::kImpls / sizeof cuda::kImpls[0],
      /* .device     = */ cuda::current_device,
      /* .auto_order = */ cuda::auto_order,
  };
  return &backend;
}

}  // namespace avgpool
