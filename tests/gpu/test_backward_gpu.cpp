// The CUDA backward (grad_input from grad_output) against the reference
// backward (tests/data/README.md, "Backward").
//
// gpu_small: every CUDA backward implementation, forced by name (a decline
// is counted as a skip, never as a pass), on random configurations - every
// kernel, stride and padding, ceil_mode, both count_include_pad, divisor
// overrides (bf16 and f16 rounded divisors among them), NCHW and NHWC, all
// four dtypes, both numerics - bitwise equal to the reference in pytorch
// numerics and, in fast numerics, within the float32 summation bound of the
// float64 reference (1 ulp of the dtype at it + (K + 2) * 2^-24 * sum|g / d|
// over the element's terms, K the most terms an element has). grad_input is
// poisoned between guard bands; pointers are sometimes element-aligned but
// not 16-byte aligned; grad_output sometimes holds NaN/Inf; two runs are
// bitwise equal; NHWC equals NCHW element for element; elements no window
// covers are +0; AUTO picks by the windows' overlap; bad calls are refused;
// every case of PyTorch's backward golden file, both layouts, bitwise in
// pytorch numerics.
// Small enough for compute-sanitizer (AVGPOOL_GPU_TEST_QUICK=1 draws fewer
// configurations; AVGPOOL_GPU_TEST_CONFIGS sets how many).
//
// gpu_large: the seed shape 16x64x2048x2048 f32 kernel 11 (grad_input of
// exactly 2^32 elements, 17 GB; PyTorch fails there) on AUTO's choice
// (NCHW cuda:backward_columns, NHWC cuda:backward_broadcast), on
// cuda:backward_broadcast forced in NCHW and on cuda:backward_gather, both
// layouts and numerics, checked against avgpool_reference_grad_inputs on the whole last plane, the elements around
// 2^31 and 2^32 and random samples, and one run checked in full; and an
// overlapping configuration (f16, kernel 3, stride 2, padding 1, ceil mode)
// with grad_input of 2^32 elements on AUTO's choice (cuda:backward_columns),
// on cuda:backward_gather forced and, in NCHW, on cuda:backward_tiles forced.
#if defined(AVGPOOL_WITH_CUDA)  // the whole file: without CUDA main() skips

#include <doctest/doctest.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <algorithm>
#include <map>
#include <random>
#include <sstream>

#include "check.h"
#include "../impl_helpers.h"
#include "gpu_helpers.h"
#include "tensor_util.h"

using namespace avgpool_support;
using namespace gpu_test;

namespace {


int64_t stride_h_of(const avgpool_params& p) { return p.stride_h != 0 ? p.stride_h : p.kernel_h; }
int64_t stride_w_of(const avgpool_params& p) { return p.stride_w != 0 ? p.stride_w : p.kernel_w; }

bool windows_overlap(const avgpool_params& p) {
  return stride_h_of(p) < p.kernel_h || stride_w_of(p) < p.kernel_w;
}

// What cuda:backward_tiles takes (for the small tests' shapes, whose tiles of
// quotients fit in shared memory): NCHW, overlapping windows, row stride up
// to 16.
bool tiles_takes(const avgpool_params& p) {
  return p.layout == AVGPOOL_LAYOUT_NCHW && windows_overlap(p) && stride_h_of(p) <= 16;
}

// What cuda:backward_columns takes: NCHW with at most 5 window rows per
// grad_input row and 8 window columns per four columns, NHWC with channels
// in groups of four and at most 3 windows per element along each axis.
bool columns_takes(const avgpool_params& p) {
  const int64_t mh = (p.kernel_h - 1) / stride_h_of(p) + 1;
  // Four columns (NCHW) or four pixels of a channel (NHWC, pytorch numerics).
  const bool four_columns = mh <= 5 && (4 + p.kernel_w - 2) / stride_w_of(p) + 1 <= 8;
  if (p.layout == AVGPOOL_LAYOUT_NHWC)
    return (p.c % 4 == 0 && mh <= 3 && (p.kernel_w - 1) / stride_w_of(p) + 1 <= 3) ||
           (p.numerics == AVGPOOL_NUMERICS_PYTORCH && four_columns);
  return four_columns;
}

// What cuda:backward_as_forward takes: fast numerics, stride 1 on both
// axes, padding k - 1 - p within k / 2 (the forward's limit), and one divisor
// for every window (computed here by PyTorch's formula, window by window).
bool as_forward_takes(const avgpool_params& p) {
  if (p.numerics != AVGPOOL_NUMERICS_FAST || stride_h_of(p) != 1 || stride_w_of(p) != 1) return false;
  if (p.kernel_h - 1 - p.padding_h > p.kernel_h / 2 || p.kernel_w - 1 - p.padding_w > p.kernel_w / 2) return false;
  if (p.divisor_override != 0) return true;
  // The divisor factors of every window along one axis (stride 1: the
  // output size is size + 2 pad - kernel + 1 in both modes).
  auto factors = [&](int64_t size, int64_t k, int64_t pad) {
    std::vector<int64_t> f;
    for (int64_t o = 0; o < size + 2 * pad - k + 1; ++o) {
      const int64_t start = o - pad, padded_end = std::min(start + k, size + pad);
      f.push_back(p.count_include_pad ? padded_end - start : std::min(padded_end, size) - std::max(start, int64_t(0)));
    }
    return f;
  };
  const std::vector<int64_t> rows = factors(p.h, p.kernel_h, p.padding_h), cols = factors(p.w, p.kernel_w, p.padding_w);
  return std::all_of(rows.begin(), rows.end(), [&](int64_t v) { return v == rows[0]; }) &&
         std::all_of(cols.begin(), cols.end(), [&](int64_t v) { return v == cols[0]; });
}

// Element counts and output dims of p (a reference plan's).

// The reference backward of p on host grad_output, in p's numerics.
void reference_backward(const avgpool_params& p, const void* gout, void* gin) {
  avgpool_params r = p;
  r.backend = AVGPOOL_BACKEND_REFERENCE;
  REQUIRE_MESSAGE(avgpool_backward(&r, gout, gin, nullptr) == AVGPOOL_SUCCESS, avgpool_last_error_message());
}

// The float64 reference: p's problem in f64 and pytorch numerics (a double
// accumulator, one true division per term, oh then ow ascending) on
// grad_output widened to double, or on its absolute values (sum|g / d|).
std::vector<double> reference_f64(const avgpool_params& p, const void* gout, int64_t gout_n, int64_t gin_n,
                                  bool absolute) {
  std::vector<double> g((size_t)gout_n), out((size_t)gin_n);
  for (int64_t i = 0; i < gout_n; ++i) {
    const double v = load_double(p.dtype, gout, i);
    g[(size_t)i] = absolute ? fabs(v) : v;
  }
  avgpool_params r = p;
  r.dtype = AVGPOOL_DTYPE_F64;
  r.numerics = AVGPOOL_NUMERICS_PYTORCH;
  reference_backward(r, g.data(), out.data());
  return out;
}

// One unit in the last place of dtype at magnitude |v|.
double ulp_at(avgpool_dtype dtype, double v) {
  const int digits = dtype == AVGPOOL_DTYPE_F64 ? 53 : dtype == AVGPOOL_DTYPE_F32 ? 24 : dtype == AVGPOOL_DTYPE_F16 ? 11 : 8;
  const int min_exp = dtype == AVGPOOL_DTYPE_F64 ? -1022 : dtype == AVGPOOL_DTYPE_F16 ? -14 : -126;
  int e = 0;
  frexp(fabs(v), &e);
  if (e - 1 < min_exp) e = min_exp + 1;
  return ldexp(1.0, e - digits);
}

double max_finite(avgpool_dtype dtype) {
  switch (dtype) {
    case AVGPOOL_DTYPE_F16: return 65504.0;
    case AVGPOOL_DTYPE_BF16: return 3.3895313892515355e38;
    case AVGPOOL_DTYPE_F32: return 3.4028234663852886e38;
    case AVGPOOL_DTYPE_F64: return 1.7976931348623157e308;
  }
  return 0;
}

// The most terms one grad_input element sums.
double max_terms(const avgpool_params& p, const int64_t out_dims[4]) {
  const int64_t sh = stride_h_of(p), sw = stride_w_of(p);
  return (double)std::min((p.kernel_h + sh - 1) / sh, out_dims[2]) *
         (double)std::min((p.kernel_w + sw - 1) / sw, out_dims[3]);
}

// The fast-numerics rule for one element: NaN where the float64 reference
// is NaN, the same infinity, else within the float32 summation bound; a sum
// beyond the dtype's range may also round to the infinity of its sign.
bool fast_ok(avgpool_dtype dtype, double got, double want, double abs_sum, double terms, double* bound) {
  *bound = 0;
  if (isnan(want) || isinf(want)) return (isnan(want) && isnan(got)) || got == want;
  *bound = ulp_at(dtype, want) + (terms + 2) * 0x1.0p-24 * abs_sum * 1.0001;
  if (isinf(got)) return signbit(got) == signbit(want) && fabs(want) + *bound >= max_finite(dtype);
  return fabs(got - want) <= *bound;
}

// Compares got (a dense grad_input of p on host) with the reference: ref_pyt
// (the reference in pytorch numerics) bitwise, or fast's bound.
Mismatch compare_grad(const avgpool_params& p, const void* gout, const void* got, const void* ref_pyt) {
  const PlanSizes s = sizes_of(p);
  const int64_t es = element_size(p.dtype);
  Mismatch m;
  m.what = "grad_input elements";
  auto note = [&](int64_t i, double g, double w, double b) {
    if (m.count++ == 0) {
      m.first = i; m.got = g; m.want = w; m.bound = b;
    }
  };
  if (p.numerics == AVGPOOL_NUMERICS_PYTORCH) {
    for (int64_t i = 0; i < s.src; ++i) {
      const double g = load_double(p.dtype, got, i), r = load_double(p.dtype, ref_pyt, i);
      if (memcmp((const char*)got + i * es, (const char*)ref_pyt + i * es, (size_t)es) != 0 && !(isnan(g) && isnan(r)))
        note(i, g, r, 0);
    }
    return m;
  }
  const std::vector<double> want = reference_f64(p, gout, s.dst, s.src, false);
  const std::vector<double> abs_sum = reference_f64(p, gout, s.dst, s.src, true);
  const double terms = max_terms(p, s.dims);
  for (int64_t i = 0; i < s.src; ++i) {
    double bound = 0;
    const double g = load_double(p.dtype, got, i);
    if (!fast_ok(p.dtype, g, want[(size_t)i], abs_sum[(size_t)i], terms, &bound)) note(i, g, want[(size_t)i], bound);
  }
  return m;
}

// A backward run on the device: the plan's forward by AUTO, the backward
// forced (impl) or AUTO (NULL); grad_output and grad_input in guarded
// buffers at byte offsets gout_off / gin_off, grad_input poisoned.
RunResult run_backward(const avgpool_params& p, const char* impl, const void* gout, int64_t gout_off = 0,
                       int64_t gin_off = 0, int repeats = 1, cudaStream_t stream = nullptr) {
  RunResult r;
  avgpool_params cp = p;
  cp.backend = AVGPOOL_BACKEND_CUDA;
  avgpool_plan* plan = nullptr;
  r.status = avgpool_plan_create_with_impls(&cp, nullptr, impl, &plan);
  if (r.status != AVGPOOL_SUCCESS) {
    r.message = avgpool_last_error_message();
    return r;
  }
  const char* name = nullptr;
  if (avgpool_plan_backward_impl_name(plan, &name) != AVGPOOL_SUCCESS) {
    r.status = AVGPOOL_ERROR_UNSUPPORTED;
    r.message = avgpool_last_error_message();
    avgpool_plan_destroy(plan);
    return r;
  }
  r.impl = name;
  return run_plan_on_device(plan, element_size(p.dtype), true, gout, gout_off, gin_off, stream, repeats, r);
}

// grad_output values: small, large (cancellation, half-type overflow in
// sums), small integers, or mixed with NaN/Inf.
std::vector<char> random_grad_output(const avgpool_params& p, int64_t count, std::mt19937_64& rng, int kind) {
  std::vector<char> g((size_t)(count * element_size(p.dtype)));
  if (kind == 0) fill_random(p.dtype, g.data(), count, rng(), -1.0, 1.0);
  else if (kind == 1) fill_random(p.dtype, g.data(), count, rng(), -1000.0, 3000.0);
  else if (kind == 2) fill_small_ints(p.dtype, g.data(), count, rng(), 8);
  else {
    fill_random(p.dtype, g.data(), count, rng(), -4.0, 4.0);
    sprinkle_specials(p.dtype, g.data(), count, std::vector<double>{0.002, 0.02, 0.1}[(size_t)(rng() % 3)], rng);
  }
  return g;
}

// Random valid parameters, biased toward the backward's cases: windows that
// do not overlap (stride at or beyond the kernel), divisors whose f16/bf16
// rounding matters, channels and rows of 16-byte vectors.
avgpool_params random_backward_params(std::mt19937_64& rng) {
  for (;;) {
    RandomParamsLimits lim;
    if (rng() % 10 == 9) {  // larger planes: several items, chunks and segments per plane
      lim.max_hw = 300;
      lim.max_kernel = 13;
      lim.max_stride = 13;
      lim.max_c = 4;
    }
    avgpool_params p = random_params(rng, lim);
    if (rng() % 4 == 0) {
      p.stride_h = p.kernel_h + (int64_t)(rng() % 3);
      p.stride_w = p.kernel_w + (int64_t)(rng() % 3);
    }
    if (rng() % 3 == 0) {  // stride 1, padding k - 1 - p within k / 2, mostly counted: the backward as a forward
      p.stride_h = p.stride_w = 1;
      p.padding_h = p.kernel_h / 2 - (p.kernel_h % 2 == 0 ? (int64_t)(rng() % 2) : 0);
      p.padding_w = p.kernel_w / 2 - (p.kernel_w % 2 == 0 ? (int64_t)(rng() % 2) : 0);
      p.count_include_pad = rng() % 4 != 0;
      p.ceil_mode = (int32_t)(rng() % 2);
    }
    if (rng() % 6 == 0) p.divisor_override = std::vector<int64_t>{257, 289, 300, 1000, 2049, 3000, 70000}[(size_t)(rng() % 7)];
    if (rng() % 5 == 0) p.c = 8 * (1 + (int64_t)(rng() % 4));
    if (rng() % 5 == 0) p.w = 8 * (1 + (int64_t)(rng() % 16));
    p.backend = AVGPOOL_BACKEND_CUDA;
    int64_t sn = 0, dn = 0;
    if (element_counts(p, &sn, &dn)) return p;
  }
}

// Every CUDA backward implementation on p and gout against the reference;
// counts runs and declines per implementation.
void check_all_backward(const avgpool_params& p, const void* gout, std::map<std::string, int>* runs,
                        std::map<std::string, int>* declined, std::mt19937_64& rng, bool check_determinism) {
  const PlanSizes s = sizes_of(p);
  const int64_t es = element_size(p.dtype);
  std::vector<char> ref;
  if (p.numerics == AVGPOOL_NUMERICS_PYTORCH) {
    ref.resize((size_t)(s.src * es));
    reference_backward(p, gout, ref.data());
  }
  for (const std::string& name : cuda_backward_impl_names()) {
    // Element-aligned pointers that are not 16-byte aligned one time in four.
    const int64_t gout_off = rng() % 4 == 0 ? es : 0;
    const int64_t gin_off = rng() % 4 == 0 ? es : 0;
    RunResult r = run_backward(p, name.c_str(), gout, gout_off, gin_off);
    if (r.status == AVGPOOL_ERROR_UNSUPPORTED) {
      ++(*declined)[name];
      // cuda:backward_broadcast declines overlapping windows only (the
      // draws' axes are small), cuda:backward_tiles NHWC, windows that do
      // not overlap and row strides above 16, cuda:backward_as_forward what
      // as_forward_takes says; cuda:backward_gather takes everything.
      CHECK_MESSAGE((name == "cuda:backward_broadcast" || name == "cuda:backward_tiles" ||
                     name == "cuda:backward_as_forward" || name == "cuda:backward_columns"),
                    name << " declined " << describe(p) << ": " << r.message);
      if (name == "cuda:backward_columns")
        CHECK_MESSAGE(!columns_takes(p), name << " declined " << describe(p) << ": " << r.message);
      if (name == "cuda:backward_as_forward")
        CHECK_MESSAGE(!as_forward_takes(p), name << " declined " << describe(p) << ": " << r.message);
      if (name == "cuda:backward_broadcast")
        CHECK_MESSAGE(windows_overlap(p), name << " declined " << describe(p) << ": " << r.message);
      if (name == "cuda:backward_tiles")
        CHECK_MESSAGE(!tiles_takes(p), name << " declined " << describe(p) << ": " << r.message);
      continue;
    }
    INFO(name << " on " << describe(p) << " gout_off " << gout_off << " gin_off " << gin_off);
    REQUIRE_MESSAGE(r.status == AVGPOOL_SUCCESS, r.message);
    CHECK(r.impl == name);
    REQUIRE(r.device_error == cudaSuccess);
    CHECK(r.guards_ok);
    const Mismatch m = compare_grad(p, gout, r.out.data(), ref.data());
    CHECK_MESSAGE(m.count == 0, m.message());
    if (check_determinism) {
      RunResult again = run_backward(p, name.c_str(), gout, gout_off, gin_off, 2);
      REQUIRE(again.status == AVGPOOL_SUCCESS);
      CHECK_MESSAGE(memcmp(again.out.data(), r.out.data(), r.out.size()) == 0, "results differ between runs");
    }
    ++(*runs)[name];
  }
}

}  // namespace

TEST_SUITE("gpu_small") {

TEST_CASE("backward: the CUDA backward implementations are listed; AUTO picks by the windows' overlap") {
  CHECK(cuda_backward_impl_names() ==
        std::vector<std::string>{"cuda:backward_as_forward", "cuda:backward_broadcast", "cuda:backward_tiles",
                                 "cuda:backward_columns", "cuda:backward_gather"});
  for (const std::string& name : cuda_impl_names()) CHECK(name.find("backward") == std::string::npos);
  struct Want {
    int64_t kh, kw, sh, sw, ph, pw;
    int ceil;
    avgpool_layout layout;
    const char* impl;       // pytorch numerics
    const char* fast_impl;  // fast numerics, where it differs
  };
  const avgpool_layout nchw = AVGPOOL_LAYOUT_NCHW, nhwc = AVGPOOL_LAYOUT_NHWC;
  const Want wants[] = {
      {11, 11, 11, 11, 0, 0, 0, nchw, "cuda:backward_columns"},    // the seed's windows, rows of groups of four
      {11, 11, 11, 11, 0, 0, 0, nhwc, "cuda:backward_broadcast"},
      {2, 2, 2, 2, 0, 0, 0, nchw, "cuda:backward_columns"},
      {2, 3, 3, 5, 1, 1, 1, nhwc, "cuda:backward_broadcast"},      // strides beyond the kernel
      // stride 1, one divisor: fast numerics run the forward of grad_output
      // overlapping NCHW windows: the columns walk, where it takes them
      {3, 3, 1, 1, 1, 1, 0, nchw, "cuda:backward_columns", "cuda:backward_as_forward"},
      {5, 5, 1, 1, 2, 2, 0, nchw, "cuda:backward_columns", "cuda:backward_as_forward"},
      {5, 7, 1, 1, 2, 3, 0, nhwc, "cuda:backward_gather", "cuda:backward_as_forward"},
      {5, 5, 1, 1, 1, 1, 0, nchw, "cuda:backward_columns"},        // padding 3 mirrored: beyond k / 2
      {9, 9, 1, 1, 3, 3, 0, nchw, "cuda:backward_tiles"},          // 12 window columns per four columns
      {3, 3, 2, 2, 1, 1, 1, nhwc, "cuda:backward_columns"},
      {3, 3, 3, 2, 0, 0, 0, nchw, "cuda:backward_columns"},        // overlapping along one axis
      {11, 11, 4, 4, 0, 0, 0, nchw, "cuda:backward_columns"},
      {11, 11, 4, 4, 0, 0, 0, nhwc, "cuda:backward_columns"},
      // 4 windows per element along an axis: the channels walk declines,
      // pytorch numerics walk four pixels per thread
      {13, 13, 4, 4, 0, 0, 0, nhwc, "cuda:backward_columns", "cuda:backward_gather"},
      {5, 5, 1, 1, 2, 2, 0, nhwc, "cuda:backward_columns", "cuda:backward_as_forward"},
      {20, 3, 17, 1, 0, 0, 0, nchw, "cuda:backward_columns"},      // row stride above 16: the tiles decline
      {13, 13, 2, 2, 6, 6, 0, nchw, "cuda:backward_gather"},       // 7 window rows per row: the columns decline
  };
  for (const Want& w : wants) {
    avgpool_params p;
    avgpool_params_init(&p);
    p.n = 2; p.c = 8; p.h = 64; p.w = 64;
    p.kernel_h = w.kh; p.kernel_w = w.kw; p.stride_h = w.sh; p.stride_w = w.sw;
    p.padding_h = w.ph; p.padding_w = w.pw; p.ceil_mode = w.ceil; p.layout = w.layout;
    p.backend = AVGPOOL_BACKEND_CUDA;
    for (avgpool_numerics num : {AVGPOOL_NUMERICS_FAST, AVGPOOL_NUMERICS_PYTORCH}) {
      p.numerics = num;
      avgpool_plan* plan = nullptr;
      REQUIRE(avgpool_plan_create(&p, &plan) == AVGPOOL_SUCCESS);
      const char* name = nullptr;
      REQUIRE_MESSAGE(avgpool_plan_backward_impl_name(plan, &name) == AVGPOOL_SUCCESS, avgpool_last_error_message());
      INFO(describe(p));
      CHECK(std::string(name) == (num == AVGPOOL_NUMERICS_FAST && w.fast_impl != nullptr ? w.fast_impl : w.impl));
      avgpool_plan_destroy(plan);
    }
  }
}

TEST_CASE("backward: random configurations on every CUDA backward implementation against the reference") {
  std::mt19937_64 rng(20261201);
  std::map<std::string, int> runs, declined;
  const int count = configs_to_run(600, 40);
  for (int i = 0; i < count; ++i) {
    const avgpool_params p = random_backward_params(rng);
    const PlanSizes s = sizes_of(p);
    const std::vector<char> gout = random_grad_output(p, s.dst, rng, (int)(rng() % 4));
    check_all_backward(p, gout.data(), &runs, &declined, rng, i % 8 == 0);
  }
  printf("backward random configurations: %d\n", count);
  print_runs("backward runs", runs);
  print_runs("backward declined (skipped, not passed)", declined);
  // cuda:backward_as_forward takes fast numerics at stride 1 only (a draw
  // in four is biased to stride 1, half of them in fast numerics).
  for (const std::string& name : cuda_backward_impl_names())
    CHECK(runs[name] > (name == "cuda:backward_as_forward" ? count / 20 : count / 8));
  CHECK(declined["cuda:backward_gather"] == 0);
}

TEST_CASE("backward: targeted shapes (seed-like rows, the generic suite's windows, wide and narrow rows, big windows)") {
  std::mt19937_64 rng(11);
  std::map<std::string, int> runs, declined;
  const Shape shapes[] = {
      {2, 3, 64, 2048, 11, 11, 11, 11, 0, 0, 0, 1, 0},   // seed rows: 2 uncovered rows and columns at the end
      {1, 2, 23, 4501, 11, 11, 11, 11, 5, 5, 1, 0, 0},   // chunked rows, padding, ceil, exclude
      {2, 16, 56, 56, 3, 3, 1, 1, 1, 1, 0, 1, 0},        // k3 s1 p1
      {2, 16, 56, 56, 3, 3, 1, 1, 1, 1, 0, 0, 0},        // ... exclude padding
      {2, 8, 112, 112, 2, 2, 2, 2, 0, 0, 0, 1, 0},       // k2 s2
      {2, 8, 113, 113, 3, 3, 2, 2, 1, 1, 1, 1, 0},       // k3 s2 p1 ceil
      {3, 64, 7, 7, 7, 7, 7, 7, 0, 0, 0, 1, 0},          // global pooling: rows of 7, packed items
      {1, 4, 200, 200, 11, 11, 4, 4, 0, 0, 0, 1, 0},     // k11 s4
      {1, 4, 130, 130, 5, 5, 1, 1, 2, 2, 0, 1, 0},       // k5 s1 p2
      {1, 2, 40, 40, 9, 9, 1, 1, 4, 4, 1, 0, 0},         // 9 windows per axis: the direct walk
      {1, 1, 70, 70, 33, 33, 2, 3, 16, 16, 1, 0, 0},     // big windows, strides 2 and 3
      {2, 3, 33, 37, 4, 2, 4, 2, 2, 1, 1, 0, 0},         // kh != kw
      {1, 2, 31, 29, 2, 3, 5, 4, 1, 1, 1, 1, 0},         // strides beyond the kernel, ceil
      {1, 2, 17, 17, 17, 17, 17, 17, 0, 0, 0, 1, 289},   // bf16 rounds the divisor 289 to 288
      {2, 5, 20, 300, 1, 1, 1, 1, 0, 0, 0, 1, 0},        // kernel 1: grad_input = grad_output
      {1, 3, 1, 5000, 1, 7, 1, 7, 0, 3, 1, 0, 0},        // one row
      {1, 2, 5000, 1, 7, 1, 3, 1, 3, 0, 1, 1, 0},        // one column, tall
      // cuda:backward_tiles' edges: tiles of 64 (32) columns x 8 rows per
      // thread and stride phase, window halos across tile edges, partial
      // tiles, planes smaller than a tile, 4 windows per axis (run as 5,
      // masked), 6 and more (run-time loops), strides that do not divide
      // the kernel (elements with fewer windows), row strides above 8
      // (tiles of 32 columns), overlap along one axis only.
      {1, 3, 70, 130, 3, 3, 1, 1, 1, 1, 0, 1, 0},        // 3 column tiles (the last of 2), 3 row tiles
      {2, 2, 67, 65, 5, 5, 1, 1, 2, 2, 0, 0, 0},         // rows not a multiple of 8, 1 column in the last tile
      {3, 5, 5, 6, 3, 3, 1, 1, 1, 1, 1, 1, 0},           // planes smaller than a tile
      {1, 2, 45, 100, 4, 4, 1, 1, 2, 2, 1, 0, 0},        // 4 windows per axis, ceil, exclude
      {1, 2, 40, 90, 6, 6, 1, 1, 3, 3, 0, 1, 0},         // 6 windows per axis: run-time loops
      {1, 2, 50, 77, 7, 3, 3, 2, 3, 1, 1, 1, 0},         // row stride 3 (3 phases), 2 or 3 windows per row
      {1, 2, 100, 70, 11, 11, 4, 4, 5, 5, 1, 0, 0},      // k11 s4 p5 ceil exclude
      {1, 2, 80, 50, 20, 5, 10, 2, 10, 2, 1, 1, 0},      // row stride 10: 32-column tiles of 10 phases
      {1, 2, 33, 70, 2, 3, 3, 1, 0, 1, 1, 1, 0},         // overlap along columns only, uncovered rows
      {1, 2, 20, 100, 1, 5, 1, 1, 0, 2, 0, 1, 0},        // kernel of one row
      {2, 2, 9, 9, 9, 9, 1, 1, 0, 0, 0, 1, 0},           // one window covering the plane at stride 1
      {1, 2, 60, 70, 17, 17, 2, 2, 8, 8, 0, 1, 0},       // divisors 289 and less: f16/bf16 round them
      {1, 2, 40, 40, 3, 3, 1, 1, 1, 1, 0, 1, 257},       // divisor override 257 (bf16: 256)
  };
  for (const Shape& sh : shapes)
    for_each_variant(sh, [&](avgpool_params p, int dt) {
      p.backend = AVGPOOL_BACKEND_CUDA;
      const std::vector<char> gout = random_grad_output(p, sizes_of(p).dst, rng, dt % 3);
      check_all_backward(p, gout.data(), &runs, &declined, rng, false);
    });
  print_runs("backward targeted runs", runs);
  CHECK(declined["cuda:backward_gather"] == 0);
  CHECK(runs["cuda:backward_tiles"] > 0);
}

TEST_CASE("backward: NaN and Inf in grad_output, every CUDA backward implementation") {
  std::mt19937_64 rng(57);
  std::map<std::string, int> runs, declined;
  const int count = configs_to_run(600, 40) / 4;
  for (int i = 0; i < count; ++i) {
    avgpool_params p = random_backward_params(rng);
    const PlanSizes s = sizes_of(p);
    std::vector<char> gout((size_t)(s.dst * element_size(p.dtype)));
    fill_random(p.dtype, gout.data(), s.dst, rng(), -4.0, 4.0);
    sprinkle_specials(p.dtype, gout.data(), s.dst, std::vector<double>{0.002, 0.02, 0.1, 0.4}[(size_t)i % 4], rng);
    check_all_backward(p, gout.data(), &runs, &declined, rng, false);
  }
  print_runs("backward NaN/Inf runs", runs);
  if (!quick())
    for (const std::string& name : cuda_backward_impl_names()) CHECK(runs[name] > 0);
}

TEST_CASE("backward: NHWC equals NCHW element for element (pytorch numerics, with padding)") {
  std::mt19937_64 rng(58);
  int compared = 0;
  for (int i = 0; i < (quick() ? 10 : 80); ++i) {
    avgpool_params p = random_backward_params(rng);
    if (i % 2 == 0) {  // padding: where PyTorch's own channels_last backward goes wrong
      p.padding_h = p.kernel_h / 2;
      p.padding_w = p.kernel_w / 2;
    }
    int64_t sn = 0, dn = 0;
    if (!element_counts(p, &sn, &dn)) continue;
    p.numerics = AVGPOOL_NUMERICS_PYTORCH;
    p.layout = AVGPOOL_LAYOUT_NCHW;
    const PlanSizes s = sizes_of(p);
    const std::vector<char> gout = random_grad_output(p, s.dst, rng, (int)(rng() % 3));
    const int64_t es = element_size(p.dtype);
    const int64_t in_dims[4] = {p.n, p.c, p.h, p.w};
    avgpool_params q = p;
    q.layout = AVGPOOL_LAYOUT_NHWC;
    const std::vector<char> gout_nhwc = relayout(gout.data(), s.dims, es, AVGPOOL_LAYOUT_NCHW, AVGPOOL_LAYOUT_NHWC);
    for (const std::string& name : cuda_backward_impl_names()) {
      RunResult a = run_backward(p, name.c_str(), gout.data());
      RunResult b = run_backward(q, name.c_str(), gout_nhwc.data());
      if (a.status == AVGPOOL_ERROR_UNSUPPORTED || b.status == AVGPOOL_ERROR_UNSUPPORTED) continue;
      REQUIRE(a.status == AVGPOOL_SUCCESS);
      REQUIRE(b.status == AVGPOOL_SUCCESS);
      INFO(name << " " << describe(p));
      const std::vector<char> b_nchw = relayout(b.out.data(), in_dims, es, AVGPOOL_LAYOUT_NHWC, AVGPOOL_LAYOUT_NCHW);
      CHECK(memcmp(a.out.data(), b_nchw.data(), a.out.size()) == 0);
      ++compared;
    }
  }
  CHECK(compared > 0);
}

TEST_CASE("backward: elements no window covers are +0; -0 gradients give +0 in pytorch numerics (PyTorch adds to 0)") {
  // 1x3x11x13, kernel 2, stride 3 (and 4 across): rows 2, 5, 8, 10 and the
  // columns between windows are covered by none. overlap 1: kernel 3, stride
  // 2 across instead (overlapping windows, for cuda:backward_tiles): only the
  // rows between windows are uncovered. overlap 2: 3x3 at stride 1, every
  // element covered (cuda:backward_as_forward in fast numerics, whose sums
  // of -0 terms may keep the sign: fast numerics promise a zero there).
  for (int dt = 0; dt < 4; ++dt)
    for (avgpool_layout layout : {AVGPOOL_LAYOUT_NCHW, AVGPOOL_LAYOUT_NHWC})
      for (avgpool_numerics num : {AVGPOOL_NUMERICS_FAST, AVGPOOL_NUMERICS_PYTORCH})
        for (int pad = 0; pad <= 1; ++pad)
          for (int overlap = 0; overlap <= 2; ++overlap) {
            avgpool_params p;
            avgpool_params_init(&p);
            p.c = 3; p.h = 11; p.w = 13;
            p.kernel_h = p.kernel_w = 2; p.stride_h = 3; p.stride_w = 4;
            if (overlap == 1) {
              p.kernel_w = 3;
              p.stride_w = 2;
            } else if (overlap == 2) {  // 3x3 at stride 1: every element covered, -0 sums only
              p.kernel_h = p.kernel_w = 3;
              p.stride_h = p.stride_w = 1;
            }
            p.padding_h = p.padding_w = pad;
            p.dtype = (avgpool_dtype)dt; p.layout = layout; p.numerics = num;
            p.backend = AVGPOOL_BACKEND_CUDA;
            const PlanSizes s = sizes_of(p);
            const int64_t es = element_size(p.dtype);
            for (double value : {-0.0, -1.0, (double)NAN}) {
              std::vector<char> gout((size_t)(s.dst * es));
              for (int64_t i = 0; i < s.dst; ++i) store_double(p.dtype, gout.data(), i, value);
              std::vector<char> cover((size_t)(s.src * es));  // the reference on ones: which elements a window holds
              {
                std::vector<char> ones((size_t)(s.dst * es));
                for (int64_t i = 0; i < s.dst; ++i) store_double(p.dtype, ones.data(), i, 1.0);
                reference_backward(p, ones.data(), cover.data());
              }
              for (const std::string& name : cuda_backward_impl_names()) {
                RunResult r = run_backward(p, name.c_str(), gout.data());
                if (r.status == AVGPOOL_ERROR_UNSUPPORTED &&
                    ((name == "cuda:backward_broadcast" && overlap) || (name == "cuda:backward_tiles" && !tiles_takes(p)) ||
                     (name == "cuda:backward_as_forward" && !as_forward_takes(p)) ||
                     (name == "cuda:backward_columns" && !columns_takes(p))))
                  continue;
                REQUIRE_MESSAGE(r.status == AVGPOOL_SUCCESS, r.message);
                INFO(name << " " << describe(p) << " grad_output " << value);
                int64_t bad = 0, zeros = 0;
                for (int64_t i = 0; i < s.src; ++i) {
                  const double g = load_double(p.dtype, r.out.data(), i);
                  const bool covered = load_double(p.dtype, cover.data(), i) != 0;
                  if (covered && value == 0 && num == AVGPOOL_NUMERICS_FAST) {
                    bad += g != 0;  // fast numerics: a sum of zeros is a zero of either sign
                  } else if (!covered || value == 0) {
                    // +0 exactly: every byte zero
                    bool all_zero = true;
                    for (int64_t b = 0; b < es; ++b) all_zero = all_zero && r.out[(size_t)(i * es + b)] == 0;
                    bad += !all_zero;
                    zeros += !covered;
                  } else {
                    bad += isnan(value) ? !isnan(g) : !(g < 0);
                  }
                }
                CHECK(bad == 0);
                CHECK((zeros > 0) == (overlap < 2));
              }
            }
          }
}

TEST_CASE("backward: element-aligned pointers that are not 16-byte aligned, on shapes of 16-byte vectors") {
  std::mt19937_64 rng(59);
  std::map<std::string, int> runs;
  for (int dt = 0; dt < 4; ++dt)
    for (avgpool_layout layout : {AVGPOOL_LAYOUT_NCHW, AVGPOOL_LAYOUT_NHWC})
      for (int k : {2, 3, -3}) {  // -3: 3x3 at stride 1 in fast numerics (cuda:backward_as_forward)
        avgpool_params p;
        avgpool_params_init(&p);
        p.n = 2; p.c = 16; p.h = 24; p.w = 64;  // rows and pixels of whole 16-byte vectors in every dtype
        p.kernel_h = p.kernel_w = std::abs(k); p.stride_h = p.stride_w = k > 0 ? 2 : 1; p.padding_h = p.padding_w = 1;
        p.dtype = (avgpool_dtype)dt; p.layout = layout;
        p.numerics = k > 0 ? AVGPOOL_NUMERICS_PYTORCH : AVGPOOL_NUMERICS_FAST;
        p.backend = AVGPOOL_BACKEND_CUDA;
        const PlanSizes s = sizes_of(p);
        const int64_t es = element_size(p.dtype);
        const std::vector<char> gout = random_grad_output(p, s.dst, rng, 0);
        std::vector<char> ref((size_t)(s.src * es));
        reference_backward(p, gout.data(), ref.data());
        for (const std::string& name : cuda_backward_impl_names())
          for (int64_t go : {int64_t(0), es})
            for (int64_t gi : {int64_t(0), es}) {
              RunResult r = run_backward(p, name.c_str(), gout.data(), go, gi);
              if (r.status == AVGPOOL_ERROR_UNSUPPORTED) continue;
              REQUIRE_MESSAGE(r.status == AVGPOOL_SUCCESS, r.message);
              INFO(name << " " << describe(p) << " offsets " << go << " " << gi);
              CHECK(r.guards_ok);
              CHECK(compare_grad(p, gout.data(), r.out.data(), ref.data()).count == 0);
              ++runs[name];
            }
      }
  print_runs("backward unaligned runs", runs);
  for (const std::string& name : cuda_backward_impl_names()) CHECK(runs[name] > 0);
}

TEST_CASE("backward: determinism and streams (two runs, a non-default stream, bitwise equal)") {
  cudaStream_t stream;
  CUDA_OK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  std::mt19937_64 rng(60);
  for (int k : {2, 3}) {
    avgpool_params p;
    avgpool_params_init(&p);
    p.n = 2; p.c = 16; p.h = 128; p.w = 160;
    p.kernel_h = p.kernel_w = k; p.stride_h = p.stride_w = k == 2 ? 2 : 1; p.padding_h = p.padding_w = k / 2;
    p.numerics = AVGPOOL_NUMERICS_FAST;
    p.backend = AVGPOOL_BACKEND_CUDA;
    const PlanSizes s = sizes_of(p);
    const std::vector<char> gout = random_grad_output(p, s.dst, rng, 1);
    for (const std::string& name : cuda_backward_impl_names()) {
      RunResult a = run_backward(p, name.c_str(), gout.data(), 0, 0, 1, stream);
      if (a.status == AVGPOOL_ERROR_UNSUPPORTED) continue;
      RunResult b = run_backward(p, name.c_str(), gout.data(), 0, 0, 3, stream);
      REQUIRE(a.status == AVGPOOL_SUCCESS);
      REQUIRE(b.status == AVGPOOL_SUCCESS);
      CHECK(memcmp(a.out.data(), b.out.data(), a.out.size()) == 0);
      CHECK(compare_grad(p, gout.data(), a.out.data(), nullptr).count == 0);
    }
  }
  cudaStreamDestroy(stream);
}

TEST_CASE("backward: bad calls are refused and write nothing") {
  avgpool_params p;
  avgpool_params_init(&p);
  p.n = 1; p.c = 2; p.h = 32; p.w = 32; p.kernel_h = p.kernel_w = 3; p.stride_h = p.stride_w = 1;
  p.backend = AVGPOOL_BACKEND_CUDA;
  // A backward implementation is not a forward one, and the other way round.
  avgpool_plan* plan = nullptr;
  CHECK(avgpool_plan_create_with_impl(&p, "cuda:backward_gather", &plan) == AVGPOOL_ERROR_INVALID_ARGUMENT);
  CHECK(avgpool_plan_create_with_impls(&p, nullptr, "cuda:nchw_row_bulk", &plan) == AVGPOOL_ERROR_INVALID_ARGUMENT);
  // Broadcast declines overlapping windows, with the reason.
  CHECK(avgpool_plan_create_with_impls(&p, nullptr, "cuda:backward_broadcast", &plan) == AVGPOOL_ERROR_UNSUPPORTED);
  CHECK(std::string(avgpool_last_error_message()).find("stride") != std::string::npos);
  // The tiles decline NHWC, with the reason.
  {
    avgpool_params q = p;
    q.layout = AVGPOOL_LAYOUT_NHWC;
    CHECK(avgpool_plan_create_with_impls(&q, nullptr, "cuda:backward_tiles", &plan) == AVGPOOL_ERROR_UNSUPPORTED);
    CHECK(std::string(avgpool_last_error_message()).find("NCHW") != std::string::npos);
  }
  // The backward as a forward declines pytorch numerics and padding that
  // does not count, with the reason.
  {
    avgpool_params q = p;
    q.padding_h = q.padding_w = 1;
    q.numerics = AVGPOOL_NUMERICS_PYTORCH;
    CHECK(avgpool_plan_create_with_impls(&q, nullptr, "cuda:backward_as_forward", &plan) == AVGPOOL_ERROR_UNSUPPORTED);
    CHECK(std::string(avgpool_last_error_message()).find("fast numerics") != std::string::npos);
    q.numerics = AVGPOOL_NUMERICS_FAST;
    q.count_include_pad = 0;
    CHECK(avgpool_plan_create_with_impls(&q, nullptr, "cuda:backward_as_forward", &plan) == AVGPOOL_ERROR_UNSUPPORTED);
    CHECK(std::string(avgpool_last_error_message()).find("one divisor") != std::string::npos);
  }
  for (const char* name : {"cuda:backward_broadcast", "cuda:backward_tiles", "cuda:backward_gather"}) {
    avgpool_params q = p;
    if (std::string(name) == "cuda:backward_broadcast") q.stride_h = q.stride_w = 3;
    const PlanSizes qs = sizes_of(q);
    REQUIRE(avgpool_plan_create_with_impls(&q, nullptr, name, &plan) == AVGPOOL_SUCCESS);
    INFO(name);
    // host pointers
    std::vector<float> gout_h((size_t)qs.dst, 1.0f), gin_h((size_t)qs.src, 7.0f);
    void *gout_d = nullptr, *gin_d = nullptr;
    CUDA_OK(cudaMalloc(&gout_d, (size_t)(qs.dst * 4)));
    CUDA_OK(cudaMalloc(&gin_d, (size_t)(qs.src + qs.dst) * 4));
    CHECK(avgpool_plan_backward(plan, gout_h.data(), gin_d, nullptr) == AVGPOOL_ERROR_INVALID_ARGUMENT);
    CHECK(std::string(avgpool_last_error_message()).find("not device memory") != std::string::npos);
    CHECK(avgpool_plan_backward(plan, gout_d, gin_h.data(), nullptr) == AVGPOOL_ERROR_INVALID_ARGUMENT);
    CHECK(gin_h[0] == 7.0f);
    // NULL, misaligned, overlapping
    CHECK(avgpool_plan_backward(plan, nullptr, gin_d, nullptr) == AVGPOOL_ERROR_INVALID_ARGUMENT);
    CHECK(avgpool_plan_backward(plan, gout_d, nullptr, nullptr) == AVGPOOL_ERROR_INVALID_ARGUMENT);
    CHECK(avgpool_plan_backward(plan, (char*)gout_d + 2, gin_d, nullptr) == AVGPOOL_ERROR_INVALID_ARGUMENT);
    CHECK(avgpool_plan_backward(plan, gin_d, (char*)gin_d + 4 * qs.dst - 4, nullptr) ==
          AVGPOOL_ERROR_INVALID_ARGUMENT);
    CHECK(std::string(avgpool_last_error_message()).find("overlap") != std::string::npos);
    cudaFree(gout_d);
    cudaFree(gin_d);
    avgpool_plan_destroy(plan);
  }
  CHECK(cudaGetLastError() == cudaSuccess);
}

TEST_CASE("backward: every golden case (PyTorch's own gradients) on every CUDA backward implementation") {
  // pytorch numerics bitwise against PyTorch (f32 vs gin32, f16 vs gin16,
  // bf16 vs ginbf16, f64 vs gin), fast numerics within the bound of the
  // float64 reference; both layouts. Quick runs take every 4th case and
  // those of stride 1 (for cuda:backward_as_forward).
  std::map<std::string, int> runs, declined;
  const std::vector<std::string> names = cuda_backward_impl_names();
  int cases = 0;
  for (size_t ci = 0; ci < golden_backward().cases.size(); ++ci) {
    const GoldenBackwardCase& gc = golden_backward().cases[ci];
    if (quick() && ci % 4 != 0 && !(gc.sh == 1 && gc.sw == 1)) continue;
    ++cases;
    for (int dtype = 0; dtype < 4; ++dtype)
      for (avgpool_layout layout : {AVGPOOL_LAYOUT_NCHW, AVGPOOL_LAYOUT_NHWC})
        for (avgpool_numerics num : {AVGPOOL_NUMERICS_PYTORCH, AVGPOOL_NUMERICS_FAST}) {
          avgpool_params p = golden_params(gc, AVGPOOL_BACKEND_CUDA, num);
          p.dtype = (avgpool_dtype)dtype;
          p.layout = layout;
          const PlanSizes s = sizes_of(p);
          REQUIRE(s.dst == (int64_t)gc.gout.size());
          // grad_output rounded to the dtype (PyTorch's .half() / .bfloat16()).
          const std::vector<unsigned char> gout = to_tensor(gc.gout, s.dims, p.dtype, p.layout);
          for (const std::string& name : names) {
            CAPTURE(gc.name);
            INFO(name << " " << describe(p));
            RunResult r = run_backward(p, name.c_str(), gout.data());
            if (r.status == AVGPOOL_ERROR_UNSUPPORTED) {
              ++declined[name];
              CHECK_MESSAGE(name != "cuda:backward_gather", r.message);
              if (name == "cuda:backward_as_forward") CHECK_MESSAGE(!as_forward_takes(p), r.message);
              if (name == "cuda:backward_columns") CHECK_MESSAGE(!columns_takes(p), r.message);
              continue;
            }
            REQUIRE_MESSAGE(r.status == AVGPOOL_SUCCESS, r.message);
            REQUIRE(r.device_error == cudaSuccess);
            CHECK(r.guards_ok);
            if (num == AVGPOOL_NUMERICS_PYTORCH) {
              std::string first;
              CHECK_MESSAGE(bitwise_mismatches(p, r.out.data(), pytorch_gradient(gc, p.dtype), &first) == 0, first);
            } else {
              const Mismatch m = compare_grad(p, gout.data(), r.out.data(), nullptr);
              CHECK_MESSAGE(m.count == 0, m.message());
            }
            ++runs[name];
          }
        }
  }
  print_runs("backward golden runs", runs);
  print_runs("backward golden declined (skipped, not passed)", declined);
  CHECK(runs["cuda:backward_gather"] == cases * 16);
  for (const std::string& name : names) CHECK(runs[name] > 0);
}

}  // TEST_SUITE gpu_small

// ---- large ----------------------------------------------------------------------------------
namespace {

struct DeviceBuffer {
  void* p = nullptr;
  explicit DeviceBuffer(size_t bytes) {
    if (cudaMalloc(&p, bytes) != cudaSuccess) {
      p = nullptr;
      cudaGetLastError();
    }
  }
  ~DeviceBuffer() { cudaFree(p); }
};

constexpr int64_t kTail = 4096;  // poisoned bytes after grad_input

// Copies grad_input elements idx[first..last) - sorted, within one range
// of the device tensor - to got (element i of got for idx[i]) with one copy.
void copy_span(const void* gin_dev, int64_t es, const std::vector<int64_t>& idx, size_t first, size_t last,
               std::vector<char>* got) {
  const int64_t lo = idx[first], hi = idx[last - 1];
  std::vector<char> span((size_t)((hi - lo + 1) * es));
  CUDA_OK(cudaMemcpy(span.data(), (const char*)gin_dev + lo * es, span.size(), cudaMemcpyDeviceToHost));
  for (size_t i = first; i < last; ++i)
    memcpy(got->data() + i * (size_t)es, span.data() + (size_t)((idx[i] - lo) * es), (size_t)es);
}

// Runs p's backward (impl forced, or AUTO when NULL) from device gout into
// poisoned device gin and checks, against avgpool_reference_grad_inputs,
// the whole last plane, the first rows of the first plane, the elements
// around 2^31 and at the end of the tensor, and random ones; and that the
// poisoned bytes after grad_input stay. Returns the implementation's name.
std::string run_and_sample(const avgpool_params& p, const char* impl, const void* gout_host, void* gout_dev,
                           void* gin_dev) {
  avgpool_plan* plan = nullptr;
  REQUIRE_MESSAGE(avgpool_plan_create_with_impls(&p, nullptr, impl, &plan) == AVGPOOL_SUCCESS,
                  avgpool_last_error_message());
  const char* name_c = nullptr;
  REQUIRE(avgpool_plan_backward_impl_name(plan, &name_c) == AVGPOOL_SUCCESS);
  const std::string name = name_c;
  int64_t gin_n = 0, gout_n = 0, out_dims[4];
  avgpool_plan_sizes(plan, &gin_n, &gout_n);
  avgpool_plan_output_dims(plan, out_dims);
  const int64_t es = element_size(p.dtype);
  CUDA_OK(cudaMemset(gin_dev, kPoisonByte, (size_t)(gin_n * es + kTail)));
  REQUIRE(avgpool_plan_backward(plan, gout_dev, gin_dev, nullptr) == AVGPOOL_SUCCESS);
  CUDA_OK(cudaDeviceSynchronize());
  std::vector<unsigned char> tail((size_t)kTail);
  CUDA_OK(cudaMemcpy(tail.data(), (char*)gin_dev + gin_n * es, (size_t)kTail, cudaMemcpyDeviceToHost));
  CHECK(is_poisoned(tail.data(), kTail));

  // Indices: two sorted blocks (copied as one range each), then single ones.
  const int64_t dims[4] = {p.n, p.c, p.h, p.w};
  std::vector<int64_t> idx;
  for (int64_t y = 0; y < std::min<int64_t>(p.h, 13); ++y)  // the first rows of the first plane
    for (int64_t x = 0; x < p.w; ++x) idx.push_back(dense_index(p.layout, dims, 0, 0, y, x));
  const size_t first_rows_end = idx.size();
  for (int64_t y = 0; y < p.h; ++y)  // the last plane
    for (int64_t x = 0; x < p.w; ++x) idx.push_back(dense_index(p.layout, dims, p.n - 1, p.c - 1, y, x));
  const size_t last_plane_end = idx.size();
  for (int64_t i = -64; i < 64; ++i) {
    if ((int64_t(1) << 31) + i < gin_n) idx.push_back((int64_t(1) << 31) + i);
    if (gin_n - 128 + i >= 0) idx.push_back(gin_n - 128 + i);
  }
  std::mt19937_64 rng(42);
  for (int i = 0; i < 20000; ++i) idx.push_back((int64_t)(rng() % (uint64_t)gin_n));
  std::vector<char> got((size_t)(idx.size() * (size_t)es));
  std::sort(idx.begin(), idx.begin() + (ptrdiff_t)first_rows_end);
  std::sort(idx.begin() + (ptrdiff_t)first_rows_end, idx.begin() + (ptrdiff_t)last_plane_end);
  copy_span(gin_dev, es, idx, 0, first_rows_end, &got);
  copy_span(gin_dev, es, idx, first_rows_end, last_plane_end, &got);
  for (size_t i = last_plane_end; i < idx.size(); ++i)
    CUDA_OK(cudaMemcpy(got.data() + i * (size_t)es, (const char*)gin_dev + idx[i] * es, (size_t)es,
                       cudaMemcpyDeviceToHost));

  // The reference in the plan's numerics; for fast also sum|g / d| (the
  // reference on |grad_output|, rounded to the dtype: hence 1.01).
  std::vector<double> want(idx.size()), abs_sum;
  REQUIRE_MESSAGE(avgpool_reference_grad_inputs(plan, gout_host, (int64_t)idx.size(), idx.data(), want.data()) ==
                      AVGPOOL_SUCCESS,
                  avgpool_last_error_message());
  if (p.numerics == AVGPOOL_NUMERICS_FAST) {
    std::vector<char> abs_g((size_t)(gout_n * es));
    for (int64_t i = 0; i < gout_n; ++i) store_double(p.dtype, abs_g.data(), i, fabs(load_double(p.dtype, gout_host, i)));
    abs_sum.resize(idx.size());
    REQUIRE(avgpool_reference_grad_inputs(plan, abs_g.data(), (int64_t)idx.size(), idx.data(), abs_sum.data()) ==
            AVGPOOL_SUCCESS);
  }
  const double terms = max_terms(p, out_dims);
  int64_t bad = 0;
  for (size_t i = 0; i < idx.size(); ++i) {
    const double g = load_double(p.dtype, got.data(), (int64_t)i);
    double bound = 0;
    const bool ok = p.numerics == AVGPOOL_NUMERICS_PYTORCH
                        ? g == want[i] || (isnan(g) && isnan(want[i]))
                        : fast_ok(p.dtype, g, want[i], abs_sum[i] * 1.01, terms, &bound);
    if (!ok && bad++ < 5)
      printf("  %s %s: grad_input[%lld] got %.9g want %.9g\n", name.c_str(), describe(p).c_str(), (long long)idx[i], g,
             want[i]);
  }
  CHECK_MESSAGE(bad == 0, name << " " << describe(p) << ": " << bad << " of " << idx.size() << " sampled elements wrong");
  printf("backward %s on %s: %zu sampled elements (the last plane whole), %lld wrong\n", describe(p).c_str(),
         name.c_str(), idx.size(), (long long)bad);
  avgpool_plan_destroy(plan);
  return name;
}

}  // namespace

TEST_SUITE("gpu_large") {

TEST_CASE("backward seed case 16x64x2048x2048 f32 k11: grad_input of exactly 2^32 elements") {
  const int64_t N = 16, C = 64, H = 2048, W = 2048, K = 11, OH = 186, OW = 186;
  const int64_t gin_n = N * C * H * W, gout_n = N * C * OH * OW;
  REQUIRE(gin_n == (int64_t(1) << 32));
  DeviceBuffer gin((size_t)(gin_n * 4 + kTail)), gout((size_t)(gout_n * 4));
  if (gin.p == nullptr || gout.p == nullptr) {
    MESSAGE("skipped: not enough device memory for the backward seed case (17.2 GB)");
    return;
  }
  // grad_output in [-1, 1), as NCHW; the NHWC runs use its relayout.
  std::vector<float> g_nchw((size_t)gout_n);
  fill_random(AVGPOOL_DTYPE_F32, g_nchw.data(), gout_n, 1234, -1.0, 1.0);
  const int64_t gout_dims[4] = {N, C, OH, OW};
  for (avgpool_layout layout : {AVGPOOL_LAYOUT_NCHW, AVGPOOL_LAYOUT_NHWC}) {
    std::vector<char> g_host;
    const void* g_ptr = g_nchw.data();
    if (layout == AVGPOOL_LAYOUT_NHWC) {
      g_host = relayout(g_nchw.data(), gout_dims, 4, AVGPOOL_LAYOUT_NCHW, AVGPOOL_LAYOUT_NHWC);
      g_ptr = g_host.data();
    }
    CUDA_OK(cudaMemcpy(gout.p, g_ptr, (size_t)(gout_n * 4), cudaMemcpyHostToDevice));
    for (avgpool_numerics num : {AVGPOOL_NUMERICS_FAST, AVGPOOL_NUMERICS_PYTORCH}) {
      if (layout == AVGPOOL_LAYOUT_NHWC && num == AVGPOOL_NUMERICS_FAST) continue;
      avgpool_params p;
      avgpool_params_init(&p);
      p.n = N; p.c = C; p.h = H; p.w = W; p.kernel_h = p.kernel_w = K;
      p.layout = layout; p.numerics = num; p.backend = AVGPOOL_BACKEND_CUDA;
      for (const char* impl : {(const char*)nullptr, "cuda:backward_broadcast", "cuda:backward_gather"}) {
        if (impl != nullptr && layout == AVGPOOL_LAYOUT_NHWC && std::string(impl) == "cuda:backward_broadcast") continue;
        const std::string name = run_and_sample(p, impl, g_ptr, gout.p, gin.p);
        if (impl == nullptr)
          CHECK(name == (layout == AVGPOOL_LAYOUT_NCHW ? "cuda:backward_columns" : "cuda:backward_broadcast"));
        if (layout == AVGPOOL_LAYOUT_NCHW && num == AVGPOOL_NUMERICS_PYTORCH) {
          // Every element, on the host: g / 121 inside the windows (rows and
          // columns 0..2045), +0 in the two rows and columns no window covers.
          int64_t bad = 0;
          const int64_t rows_per_chunk = 4096;  // 32 MiB of grad_input per copy
          std::vector<float> chunk((size_t)(rows_per_chunk * W));
          for (int64_t r0 = 0; r0 < N * C * H; r0 += rows_per_chunk) {
            CUDA_OK(cudaMemcpy(chunk.data(), (char*)gin.p + r0 * W * 4, chunk.size() * 4, cudaMemcpyDeviceToHost));
#pragma omp parallel for reduction(+ : bad)
            for (int64_t r = 0; r < rows_per_chunk; ++r) {
              const int64_t row = r0 + r, plane = row / H, y = row % H;
              for (int64_t x = 0; x < W; ++x) {
                const float got = chunk[(size_t)(r * W + x)];
                float want = 0.0f;
                if (y < OH * K && x < OW * K) want = 0.0f + g_nchw[(size_t)((plane * OH + y / K) * OW + x / K)] / 121.0f;
                bad += memcmp(&got, &want, 4) != 0;
              }
            }
          }
          CHECK_MESSAGE(bad == 0, name << ": " << bad << " of 2^32 grad_input elements wrong");
          printf("backward seed NCHW pytorch on %s: all 2^32 elements checked, %lld wrong\n", name.c_str(),
                 (long long)bad);
        }
      }
    }
  }
}

TEST_CASE("backward of overlapping windows with grad_input of 2^32 elements (f16, k3 s2 p1 ceil)") {
  avgpool_params p;
  avgpool_params_init(&p);
  p.n = 16; p.c = 64; p.h = 2048; p.w = 2048;
  p.kernel_h = p.kernel_w = 3; p.stride_h = p.stride_w = 2; p.padding_h = p.padding_w = 1; p.ceil_mode = 1;
  p.dtype = AVGPOOL_DTYPE_F16;
  p.backend = AVGPOOL_BACKEND_CUDA;
  const PlanSizes s = sizes_of(p);
  REQUIRE(s.src == (int64_t(1) << 32));
  DeviceBuffer gin((size_t)(s.src * 2 + kTail)), gout((size_t)(s.dst * 2));
  if (gin.p == nullptr || gout.p == nullptr) {
    MESSAGE("skipped: not enough device memory (11 GB)");
    return;
  }
  std::vector<uint16_t> g_nchw((size_t)s.dst);
  fill_random(AVGPOOL_DTYPE_F16, g_nchw.data(), s.dst, 99, -4.0, 4.0);
  for (avgpool_layout layout : {AVGPOOL_LAYOUT_NCHW, AVGPOOL_LAYOUT_NHWC}) {
    p.layout = layout;
    std::vector<char> g_host;
    const void* g_ptr = g_nchw.data();
    if (layout == AVGPOOL_LAYOUT_NHWC) {
      g_host = relayout(g_nchw.data(), s.dims, 2, AVGPOOL_LAYOUT_NCHW, AVGPOOL_LAYOUT_NHWC);
      g_ptr = g_host.data();
    }
    CUDA_OK(cudaMemcpy(gout.p, g_ptr, (size_t)(s.dst * 2), cudaMemcpyHostToDevice));
    for (avgpool_numerics num : {AVGPOOL_NUMERICS_FAST, AVGPOOL_NUMERICS_PYTORCH}) {
      p.numerics = num;
      const std::string name = run_and_sample(p, nullptr, g_ptr, gout.p, gin.p);
      CHECK(name == "cuda:backward_columns");
      // The other kernels' 64-bit offsets, forced.
      CHECK(run_and_sample(p, "cuda:backward_gather", g_ptr, gout.p, gin.p) == "cuda:backward_gather");
      if (layout == AVGPOOL_LAYOUT_NCHW)
        CHECK(run_and_sample(p, "cuda:backward_tiles", g_ptr, gout.p, gin.p) == "cuda:backward_tiles");
    }
  }
}

}  // TEST_SUITE gpu_large

#endif  // AVGPOOL_WITH_CUDA
