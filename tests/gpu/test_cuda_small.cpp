// The CUDA implementations on small shapes: every golden case on every CUDA
// implementation, random configurations against the reference (all dtypes,
// both layouts, both numerics, poisoned outputs, guard bands, unaligned
// pointers), run-to-run determinism, CPU == CUDA in pytorch numerics, bad
// pointers. Fast enough to run under compute-sanitizer (suite gpu_small;
// AVGPOOL_GPU_TEST_CONFIGS sets the number of random configurations).
#if defined(AVGPOOL_WITH_CUDA)  // the whole file: without CUDA main() skips

#include <doctest/doctest.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <functional>
#include <map>
#include <random>

#include "check.h"
#include "golden_file.h"
#include "../golden_cases.h"
#include "gpu_helpers.h"
#include "tensor_util.h"

using namespace avgpool_support;
using namespace gpu_test;

namespace {

// Implementations whose shapes the golden cases and the general random draw
// (almost) never have: each has a test of its own shapes below.
bool has_own_test(const std::string& name) {
  return name == "cuda:nchw_vec_column_walk" || name == "cuda:any_pointwise";
}

// AVGPOOL_GPU_TEST_QUICK=1 (for compute-sanitizer): every 8th golden case,
// 60 random configurations, targeted shapes in f32 only.

// Every CUDA implementation that accepts p, on src, against the reference.
int check_all_impls(const avgpool_params& p, const void* src, std::map<std::string, int>* runs,
                    std::mt19937_64& rng, bool check_determinism) {
  return check_impls(p, src, cuda_impl_names(), runs, rng, check_determinism);
}

// check_all_impls on `count` problems from random_params reshaped by
// shape(i, rng, &p) (a draw the shape makes illegal is redrawn, up to 20
// times count), with inputs in [-2, 2) and NaN/Inf in every fourth draw
// (from draw specials_phase on); prints and returns the runs per
// implementation.
std::map<std::string, int> check_shaped_draws(const std::string& label, uint64_t seed, int count, int specials_phase,
                                              const std::function<void(int, std::mt19937_64&, avgpool_params*)>& shape) {
  std::mt19937_64 rng(seed);
  std::map<std::string, int> runs;
  int configs = 0;
  for (int i = 0; configs < count && i < 20 * count; ++i) {
    avgpool_params p = random_params(rng);
    shape(i, rng, &p);
    int64_t sn = 0, dn = 0;
    if (!element_counts(p, &sn, &dn)) continue;  // e.g. a stride the draw made illegal
    std::vector<char> src((size_t)(sn * element_size(p.dtype)));
    fill_random(p.dtype, src.data(), sn, rng(), -2.0, 2.0);
    if (i % 4 == specials_phase) sprinkle_specials(p.dtype, src.data(), sn, 0.01, rng);
    check_all_impls(p, src.data(), &runs, rng, i % 8 == 0);
    ++configs;
  }
  printf("%s configurations: %d\n", label.c_str(), configs);
  print_runs((label + " runs").c_str(), runs);
  CHECK(configs == count);
  return runs;
}

}  // namespace

TEST_SUITE("gpu_small") {

TEST_CASE("the CUDA implementations are registered; AUTO follows the measured choices") {
  // In registration order (the order a listing shows).
  CHECK(cuda_impl_names() == std::vector<std::string>{"cuda:nchw_row_stream", "cuda:nchw_vec_column_walk",
                                                      "cuda:nchw_column_walk", "cuda:nchw_tiled",
                                                      "cuda:nchw_row_bulk", "cuda:nchw_stride_eq",
                                                      "cuda:nhwc_tile_stream", "cuda:nhwc_column_walk",
                                                      "cuda:any_direct", "cuda:any_column_walk",
                                                      "cuda:nchw_window_team",
                                                      "cuda:nchw_window_chain", "cuda:any_window_split",
                                                      "cuda:any_window_tiles", "cuda:nhwc_tiled",
                                                      "cuda:any_pointwise"});
  // (kernel, stride, padding, numerics) -> what AUTO picks on 2x3x64x64 f32 NCHW
  struct Want {
    int k, s, pad;
    avgpool_numerics num;
    const char* impl;
    int64_t w = 64;
    avgpool_dtype dtype = AVGPOOL_DTYPE_F32;
    int64_t c = 3;
    avgpool_layout layout = AVGPOOL_LAYOUT_NCHW;
    int64_t n = 2;  // batch (cuda:nchw_row_stream wants several work units per SM)
    int64_t h = 64;
    int64_t sw = 0;  // column stride when not s
  };
  const avgpool_dtype f32 = AVGPOOL_DTYPE_F32;
  const avgpool_layout nhwc = AVGPOOL_LAYOUT_NHWC;
  const Want wants[] = {
      {4, 0, 0, AVGPOOL_NUMERICS_FAST, "cuda:any_direct"},     // stride == kernel beyond 2x2, rows < 1024
      {1, 1, 0, AVGPOOL_NUMERICS_FAST, "cuda:any_pointwise"},  // windows of one element at stride 1
      {1, 1, 0, AVGPOOL_NUMERICS_PYTORCH, "cuda:any_pointwise", 64, AVGPOOL_DTYPE_BF16, 5, AVGPOOL_LAYOUT_NHWC},
      {1, 2, 0, AVGPOOL_NUMERICS_FAST, "cuda:any_direct"},     // ... not strided
      {11, 0, 0, AVGPOOL_NUMERICS_FAST, "cuda:any_direct", 1024},  // ... and rows of 1024 (ow < 128)
      {2, 0, 0, AVGPOOL_NUMERICS_FAST, "cuda:nchw_column_walk", 160}, // 2x2 stride 2
      {4, 2, 1, AVGPOOL_NUMERICS_FAST, "cuda:any_direct"},     // output rows < 64
      {4, 2, 1, AVGPOOL_NUMERICS_FAST, "cuda:any_direct", 256},  // ... and of 127: row stride 2
      {6, 1, 1, AVGPOOL_NUMERICS_FAST, "cuda:nchw_tiled", 256},  // tall windows re-read at row stride 1
      {4, 1, 1, AVGPOOL_NUMERICS_FAST, "cuda:any_direct", 256},  // ... shorter ones: direct
      {8, 1, 0, AVGPOOL_NUMERICS_FAST, "cuda:nchw_tiled", 512, f32, 3, AVGPOOL_LAYOUT_NCHW, 2, 64, 2},  // f32, 32 inputs a column step
      {8, 1, 0, AVGPOOL_NUMERICS_FAST, "cuda:any_direct", 512, AVGPOOL_DTYPE_F16, 3, AVGPOOL_LAYOUT_NCHW, 2, 64, 2},
      // ... over 2^20 outputs or more: row sums walked down the columns (fast numerics)
      {8, 1, 0, AVGPOOL_NUMERICS_FAST, "cuda:any_column_walk", 512, AVGPOOL_DTYPE_F16, 3, AVGPOOL_LAYOUT_NCHW, 64, 64, 2},
      {8, 1, 0, AVGPOOL_NUMERICS_PYTORCH, "cuda:any_direct", 512, AVGPOOL_DTYPE_F16, 3, AVGPOOL_LAYOUT_NCHW, 64, 64, 2},
      {9, 1, 0, AVGPOOL_NUMERICS_FAST, "cuda:any_column_walk", 576, AVGPOOL_DTYPE_F16, 3, nhwc, 128, 64, 9},
      {9, 1, 0, AVGPOOL_NUMERICS_FAST, "cuda:any_direct", 576, AVGPOOL_DTYPE_F16, 3, nhwc, 64, 64, 9},  // 688K outputs
      {4, 2, 1, AVGPOOL_NUMERICS_FAST, "cuda:any_direct", 256, AVGPOOL_DTYPE_F64},  // f64
      {4, 3, 0, AVGPOOL_NUMERICS_FAST, "cuda:any_direct", 512},  // little overlap (16 < 2 * 9)
      {3, 1, 1, AVGPOOL_NUMERICS_FAST, "cuda:nchw_vec_column_walk"}, // overlapping 3x3, 5x5 stride 1
      {5, 1, 2, AVGPOOL_NUMERICS_FAST, "cuda:nchw_vec_column_walk"},
      {3, 1, 1, AVGPOOL_NUMERICS_PYTORCH, "cuda:nchw_column_walk"},
      {3, 2, 1, AVGPOOL_NUMERICS_FAST, "cuda:nchw_column_walk", 160},
      {3, 2, 1, AVGPOOL_NUMERICS_PYTORCH, "cuda:nchw_column_walk", 160},
      {5, 1, 2, AVGPOOL_NUMERICS_PYTORCH, "cuda:nchw_column_walk"},
      {5, 2, 2, AVGPOOL_NUMERICS_FAST, "cuda:nchw_column_walk", 160},
      {5, 2, 2, AVGPOOL_NUMERICS_FAST, "cuda:any_direct", 160, AVGPOOL_DTYPE_F16},  // f16/bf16 at stride 2: direct
      {3, 2, 1, AVGPOOL_NUMERICS_PYTORCH, "cuda:any_direct", 160, AVGPOOL_DTYPE_BF16},
      {2, 2, 0, AVGPOOL_NUMERICS_FAST, "cuda:nchw_column_walk", 160, AVGPOOL_DTYPE_BF16},  // ... not 2x2
      {7, 1, 3, AVGPOOL_NUMERICS_FAST, "cuda:nchw_vec_column_walk"},
      // rows of 64 bytes or less without padding: 3x3, 5x5 on the scalar walk, 7x7 on the vectors
      {3, 1, 0, AVGPOOL_NUMERICS_FAST, "cuda:nchw_column_walk", 16},
      {5, 1, 0, AVGPOOL_NUMERICS_FAST, "cuda:nchw_column_walk", 32, AVGPOOL_DTYPE_F16},
      {3, 1, 1, AVGPOOL_NUMERICS_FAST, "cuda:nchw_vec_column_walk", 16},
      {7, 1, 0, AVGPOOL_NUMERICS_FAST, "cuda:nchw_vec_column_walk", 16},
      {3, 1, 0, AVGPOOL_NUMERICS_FAST, "cuda:nchw_vec_column_walk", 32},  // rows of 128 bytes
      {7, 2, 3, AVGPOOL_NUMERICS_FAST, "cuda:any_direct", 160},          // 7x7 beyond stride 1
      {11, 4, 0, AVGPOOL_NUMERICS_PYTORCH, "cuda:any_direct", 512},  // pytorch numerics: direct before staging
      {7, 5, 0, AVGPOOL_NUMERICS_FAST, "cuda:nchw_row_bulk", 10},    // one output column of wide windows
      {7, 5, 0, AVGPOOL_NUMERICS_FAST, "cuda:any_direct", 10, AVGPOOL_DTYPE_F16},  // ... in f16 under 32 MiB: direct
      // ... in f16 of 40 MiB, loads spread over the shared-memory banks: staged
      {7, 5, 0, AVGPOOL_NUMERICS_FAST, "cuda:nchw_row_bulk", 10, AVGPOOL_DTYPE_F16, 4096, AVGPOOL_LAYOUT_NCHW, 8},
      {7, 5, 0, AVGPOOL_NUMERICS_PYTORCH, "cuda:nchw_row_bulk", 10, AVGPOOL_DTYPE_BF16, 4096, AVGPOOL_LAYOUT_NCHW, 8},
      // ... rows of 16 bytes at row stride 4: 17 words on one bank, direct
      {8, 4, 0, AVGPOOL_NUMERICS_FAST, "cuda:any_direct", 8, AVGPOOL_DTYPE_F16, 8192, AVGPOOL_LAYOUT_NCHW, 8},
      {20, 19, 0, AVGPOOL_NUMERICS_FAST, "cuda:nchw_row_bulk", 40},   // 6 outputs a plane of 400-input windows, few planes
      {20, 19, 0, AVGPOOL_NUMERICS_FAST, "cuda:any_direct", 40, f32, 4096},  // ... and many planes: a block per SM
      {7, 2, 0, AVGPOOL_NUMERICS_FAST, "cuda:nchw_row_bulk", 7, f32, 4096, AVGPOOL_LAYOUT_NCHW, 16, 7},  // global 7x7 stays staged
      // wide rows, stride == kernel (windows that do not overlap): direct,
      // the seed's shape of row included
      {11, 0, 0, AVGPOOL_NUMERICS_FAST, "cuda:any_direct", 2048, f32, 3, AVGPOOL_LAYOUT_NCHW, 64},
      {11, 0, 0, AVGPOOL_NUMERICS_PYTORCH, "cuda:any_direct", 2048, AVGPOOL_DTYPE_F16, 3, AVGPOOL_LAYOUT_NCHW, 128},
      {11, 0, 0, AVGPOOL_NUMERICS_FAST, "cuda:any_direct", 2048, AVGPOOL_DTYPE_BF16, 3, AVGPOOL_LAYOUT_NCHW, 128},
      {11, 0, 0, AVGPOOL_NUMERICS_FAST, "cuda:any_direct", 96, AVGPOOL_DTYPE_F16},  // narrow half rows
      {11, 0, 0, AVGPOOL_NUMERICS_FAST, "cuda:any_direct", 1024, AVGPOOL_DTYPE_F16},  // wide half rows, ow < 128
      {3, 4, 0, AVGPOOL_NUMERICS_FAST, "cuda:any_direct"},       // gaps between windows
      {2, 3, 0, AVGPOOL_NUMERICS_PYTORCH, "cuda:any_direct", 2048},
      {8, 10, 0, AVGPOOL_NUMERICS_FAST, "cuda:any_direct", 200, f32, 200, AVGPOOL_LAYOUT_NCHW, 2, 200, 1},  // rows apart, columns overlapping
      {8, 10, 0, AVGPOOL_NUMERICS_PYTORCH, "cuda:any_direct", 200, f32, 200, AVGPOOL_LAYOUT_NCHW, 2, 200, 1},
      {11, 4, 0, AVGPOOL_NUMERICS_FAST, "cuda:nchw_row_stream", 1024, f32, 3, AVGPOOL_LAYOUT_NCHW, 256},  // large overlapping windows
      {11, 4, 0, AVGPOOL_NUMERICS_PYTORCH, "cuda:nchw_row_stream", 1024, f32, 3, AVGPOOL_LAYOUT_NCHW, 256},
      // NHWC: tiles streamed through shared memory where channels come in
      // 16-byte groups and the input holds 32 MiB or more; the column walk
      // keeps fast 3x3 stride 2
      {3, 1, 1, AVGPOOL_NUMERICS_FAST, "cuda:nhwc_tile_stream", 64, f32, 64, nhwc, 32},
      {3, 1, 1, AVGPOOL_NUMERICS_PYTORCH, "cuda:nhwc_tile_stream", 64, f32, 64, nhwc, 32},
      {3, 1, 1, AVGPOOL_NUMERICS_FAST, "cuda:any_direct", 64, f32, 64, nhwc},  // 2 MiB: too little to stream
      {3, 3, 0, AVGPOOL_NUMERICS_FAST, "cuda:any_direct", 30, f32, 8, nhwc, 40, 1024},  // 20 items, 256 consumers
      {3, 3, 0, AVGPOOL_NUMERICS_FAST, "cuda:nhwc_tile_stream", 240, f32, 8, nhwc, 5, 1024},  // 160 items
      {5, 1, 2, AVGPOOL_NUMERICS_FAST, "cuda:nhwc_tile_stream", 64, f32, 64, nhwc, 32},
      {2, 0, 0, AVGPOOL_NUMERICS_FAST, "cuda:nhwc_tile_stream", 64, f32, 64, nhwc, 32},
      {11, 4, 0, AVGPOOL_NUMERICS_FAST, "cuda:nhwc_tile_stream", 64, f32, 64, nhwc, 32},
      {11, 4, 0, AVGPOOL_NUMERICS_PYTORCH, "cuda:nhwc_tile_stream", 64, AVGPOOL_DTYPE_F16, 128, nhwc, 32},
      {11, 4, 0, AVGPOOL_NUMERICS_PYTORCH, "cuda:any_direct", 64, AVGPOOL_DTYPE_F16, 64, nhwc},  // 8 vectors, small plane
      {3, 3, 0, AVGPOOL_NUMERICS_FAST, "cuda:any_direct", 64, AVGPOOL_DTYPE_BF16, 32, nhwc},     // 4 vectors, small plane
      {3, 2, 1, AVGPOOL_NUMERICS_FAST, "cuda:nhwc_column_walk", 64, f32, 64, nhwc},
      {3, 1, 1, AVGPOOL_NUMERICS_FAST, "cuda:nhwc_column_walk", 64, AVGPOOL_DTYPE_BF16, 64, nhwc},  // 2-byte types
      {3, 1, 1, AVGPOOL_NUMERICS_PYTORCH, "cuda:nhwc_tile_stream", 64, AVGPOOL_DTYPE_F16, 64, nhwc, 64},
      {5, 1, 2, AVGPOOL_NUMERICS_FAST, "cuda:nhwc_column_walk", 64, AVGPOOL_DTYPE_F64, 64, nhwc},
      {3, 1, 1, AVGPOOL_NUMERICS_FAST, "cuda:nhwc_tile_stream", 64, AVGPOOL_DTYPE_F64, 64, nhwc, 16},
      {3, 2, 1, AVGPOOL_NUMERICS_PYTORCH, "cuda:nhwc_tile_stream", 64, f32, 64, nhwc, 32},
      {3, 1, 1, AVGPOOL_NUMERICS_PYTORCH, "cuda:any_direct", 64, f32, 3, nhwc},  // 12-byte pixels
      {3, 1, 1, AVGPOOL_NUMERICS_FAST, "cuda:nhwc_tiled", 64, f32, 3, nhwc},     // ... a tile spares 8 loads per input
      {11, 1, 1, AVGPOOL_NUMERICS_FAST, "cuda:nhwc_tiled", 256, AVGPOOL_DTYPE_F16, 3, nhwc, 2, 128},  // ... 60
      {11, 1, 1, AVGPOOL_NUMERICS_PYTORCH, "cuda:any_direct", 256, AVGPOOL_DTYPE_F16, 3, nhwc, 2, 128},
      {7, 6, 0, AVGPOOL_NUMERICS_FAST, "cuda:any_direct", 256, f32, 17, nhwc},  // little overlap: direct
      {3, 1, 1, AVGPOOL_NUMERICS_PYTORCH, "cuda:any_direct", 64, f32, 4, nhwc},  // one 16-byte vector per pixel
      {3, 1, 1, AVGPOOL_NUMERICS_FAST, "cuda:nhwc_tiled", 64, f32, 4, nhwc},
      {3, 3, 0, AVGPOOL_NUMERICS_FAST, "cuda:any_direct", 64, f32, 4, nhwc},     // no overlap along rows
      {3, 2, 1, AVGPOOL_NUMERICS_FAST, "cuda:any_direct", 64, AVGPOOL_DTYPE_F64, 64, nhwc},  // strided f64
      // f64 windows of 64+ inputs overlapping down the plane: the column walk
      // at any row stride in fast numerics; direct where they do not overlap
      {8, 4, 0, AVGPOOL_NUMERICS_FAST, "cuda:any_column_walk", 64, AVGPOOL_DTYPE_F64, 64, nhwc},
      {8, 4, 0, AVGPOOL_NUMERICS_PYTORCH, "cuda:any_direct", 64, AVGPOOL_DTYPE_F64, 64, nhwc},
      {8, 8, 0, AVGPOOL_NUMERICS_FAST, "cuda:any_direct", 64, AVGPOOL_DTYPE_F64, 64, nhwc},
      {11, 0, 0, AVGPOOL_NUMERICS_FAST, "cuda:any_direct", 20, f32, 64, nhwc},  // windows over 47 % of the input
      {11, 0, 0, AVGPOOL_NUMERICS_FAST, "cuda:any_direct", 2048, f32, 64, nhwc},  // a tile's rows too wide, no walk
      // windows of 512 inputs or more: split over threads, or staged for one chain
      {64, 0, 0, AVGPOOL_NUMERICS_FAST, "cuda:nchw_window_team"},
      {64, 0, 0, AVGPOOL_NUMERICS_PYTORCH, "cuda:nchw_window_chain"},
      {32, 16, 0, AVGPOOL_NUMERICS_PYTORCH, "cuda:nchw_row_stream"},  // a row feeds 2 output rows
      {32, 16, 0, AVGPOOL_NUMERICS_FAST, "cuda:any_window_tiles"},     // 16 x 16 tiles
      {32, 16, 0, AVGPOOL_NUMERICS_FAST, "cuda:any_window_tiles", 64, f32, 64, nhwc},
      {64, 0, 0, AVGPOOL_NUMERICS_FAST, "cuda:any_window_split", 64, f32, 64, nhwc},
      {64, 0, 0, AVGPOOL_NUMERICS_PYTORCH, "cuda:nhwc_column_walk", 64, AVGPOOL_DTYPE_BF16, 64, nhwc},
      {64, 0, 0, AVGPOOL_NUMERICS_PYTORCH, "cuda:any_window_split", 64, AVGPOOL_DTYPE_BF16, 3, nhwc},
      // NHWC of one channel: the NCHW problem of the same bytes
      {11, 4, 0, AVGPOOL_NUMERICS_FAST, "cuda:nchw_row_stream", 1024, f32, 1, nhwc, 768},
      {3, 1, 1, AVGPOOL_NUMERICS_FAST, "cuda:nchw_vec_column_walk", 64, f32, 1, nhwc, 6},
  };
  // Without the bulk-copy implementations (below sm_90, e.g. under
  // AVGPOOL_CUDA_TREAT_AS_SM=80) AUTO goes on down policy.cu's order: NHWC to
  // cuda:nhwc_column_walk where it walks, else cuda:any_direct; these NCHW
  // shapes to cuda:any_direct, which comes before the remaining staging
  // kernels for them.
  const bool bulk = bulk_copy_expected();
  // Where cuda:nhwc_column_walk walks columns (fast numerics, square 3, 5
  // or 7 at stride 1 or 2, 11 at stride 4 in 4- and 8-byte types);
  // elsewhere cuda:any_direct comes before it.
  auto walks = [&](const Want& w) {
    const int s = w.s ? w.s : w.k;
    if (w.num != AVGPOOL_NUMERICS_FAST || w.sw) return false;
    if (w.k == 11) return s == 4 && w.dtype != AVGPOOL_DTYPE_F16 && w.dtype != AVGPOOL_DTYPE_BF16;
    return (w.k == 3 || w.k == 5 || w.k == 7) && (s == 1 || s == 2);
  };
  auto expected = [&](const Want& w) -> std::string {
    if (bulk || !is_bulk_copy_impl(w.impl)) return w.impl;
    if (w.k * w.k >= 512) return "cuda:nchw_window_chain";  // large windows: the staged chain next
    // one-channel NHWC runs as the NCHW problem of the same bytes
    if (w.layout == nhwc && w.c != 1) return walks(w) ? "cuda:nhwc_column_walk" : "cuda:any_direct";
    return "cuda:any_direct";
  };
  for (const Want& w : wants) {
    avgpool_params p;
    avgpool_params_init(&p);
    p.n = w.n; p.c = w.c; p.h = w.h; p.w = w.w;
    p.dtype = w.dtype;
    p.layout = w.layout;
    p.kernel_h = p.kernel_w = w.k;
    p.stride_h = p.stride_w = w.s;
    if (w.sw) p.stride_w = w.sw;
    p.padding_h = p.padding_w = w.pad;
    p.numerics = w.num;
    avgpool_plan* plan = nullptr;
    REQUIRE(avgpool_plan_create(&p, &plan) == AVGPOOL_SUCCESS);
    const char* name = nullptr;
    avgpool_plan_impl_name(plan, &name);
    CAPTURE(w.k);
    CAPTURE(w.s);
    CAPTURE(w.c);
    CAPTURE((int)w.layout);
    CAPTURE(bulk);
    CHECK(std::string(name) == expected(w));
    avgpool_plan_destroy(plan);
  }
}

TEST_CASE("the bulk-copy implementations run from sm_90 on and decline older devices with the reason") {
  // A problem each takes on sm_90: wide 16-byte rows (NCHW), 16-byte channel
  // groups (NHWC).
  struct Case {
    const char* impl;
    avgpool_layout layout;
  };
  const Case cases[] = {{"cuda:nchw_row_stream", AVGPOOL_LAYOUT_NCHW},
                        {"cuda:nchw_row_bulk", AVGPOOL_LAYOUT_NCHW},
                        {"cuda:nhwc_tile_stream", AVGPOOL_LAYOUT_NHWC}};
  printf("plans see sm_%d; bulk-copy implementations %s\n", effective_sm(),
         bulk_copy_expected() ? "expected" : "not expected (declined)");
  for (const Case& c : cases) {
    avgpool_params p;
    avgpool_params_init(&p);
    p.n = 2; p.c = 8; p.h = 64; p.w = 512;
    p.kernel_h = p.kernel_w = 4;
    p.layout = c.layout;
    p.backend = AVGPOOL_BACKEND_CUDA;
    CAPTURE(c.impl);
    avgpool_plan* plan = nullptr;
    const avgpool_status s = avgpool_plan_create_with_impl(&p, c.impl, &plan);
    const std::string message = s == AVGPOOL_SUCCESS ? "" : avgpool_last_error_message();
    if (bulk_copy_expected()) {
      CHECK_MESSAGE(s == AVGPOOL_SUCCESS, message);
    } else {
      CHECK(s == AVGPOOL_ERROR_UNSUPPORTED);
      CHECK_MESSAGE(message.find("sm_90") != std::string::npos, message);
    }
    avgpool_plan_destroy(plan);
  }
}

TEST_CASE("every golden case on every CUDA implementation") {
  std::map<std::string, int> runs, declined;
  int case_index = 0;
  for (const GoldenCase& gc : golden().cases) {
    if (quick() && case_index++ % 8 != 0) continue;
    for (const std::string& name : cuda_impl_names()) {
      for (avgpool_numerics num : {AVGPOOL_NUMERICS_FAST, AVGPOOL_NUMERICS_PYTORCH}) {
        for (avgpool_layout layout : {AVGPOOL_LAYOUT_NCHW, AVGPOOL_LAYOUT_NHWC}) {
          avgpool_params p = golden_params(gc, AVGPOOL_BACKEND_CUDA, num);
          p.layout = layout;
          const int64_t in_dims[4] = {gc.n, gc.c, gc.h, gc.w};
          std::vector<char> src = relayout(gc.in.data(), in_dims, 4, AVGPOOL_LAYOUT_NCHW, layout);
          RunResult r = run_on_device(p, name.c_str(), src.data());
          if (r.status == AVGPOOL_ERROR_UNSUPPORTED) {
            ++declined[name];
            continue;
          }
          INFO(gc.name << " on " << name << " " << describe(p));
          REQUIRE_MESSAGE(r.status == AVGPOOL_SUCCESS, r.message);
          REQUIRE(r.device_error == cudaSuccess);
          CHECK(r.guards_ok);
          const int64_t* d = gc.out_dims;
          std::vector<char> out = relayout(r.out.data(), d, 4, layout, AVGPOOL_LAYOUT_NCHW);
          const float* got = reinterpret_cast<const float*>(out.data());
          REQUIRE(out.size() == gc.out32.size() * 4);
          int64_t bad = 0, first = -1;
          for (size_t i = 0; i < gc.out32.size(); ++i) {
            bool ok;
            if (num == AVGPOOL_NUMERICS_PYTORCH) {
              ok = memcmp(&got[i], &gc.out32[i], 4) == 0 || (isnan(got[i]) && isnan(gc.out32[i]));
            } else {
              ok = true;  // fast: checked below against the reference's bound
            }
            if (!ok && bad++ == 0) first = (int64_t)i;
          }
          if (num == AVGPOOL_NUMERICS_FAST) {
            std::vector<char> ref(r.out.size());
            REQUIRE(run_reference(p, src.data(), ref.data()) == AVGPOOL_SUCCESS);
            const Mismatch m = compare_to_reference(p, src.data(), r.out.data(), ref.data());
            CHECK_MESSAGE(m.count == 0, m.message());
          }
          CHECK_MESSAGE(bad == 0, bad << " outputs wrong, first at " << first << ": got "
                                      << got[first < 0 ? 0 : first] << " want " << gc.out32[first < 0 ? 0 : first]);
          ++runs[name];
        }
      }
    }
  }
  print_runs("golden runs", runs);
  print_runs("golden declined", declined);
  // No golden case has cuda:nchw_vec_column_walk' shape (square 3/5/7 window,
  // stride 1, a width of 16-byte multiples) or cuda:any_pointwise's (1x1
  // windows at stride 1): their own tests below check them against the
  // reference. Below sm_90 the bulk-copy implementations decline every case.
  for (const std::string& name : cuda_impl_names()) {
    CAPTURE(name);
    if (is_bulk_copy_impl(name) && !bulk_copy_expected()) CHECK(runs[name] == 0);
    else if (!has_own_test(name)) CHECK(runs[name] > 0);
  }
}

TEST_CASE("random configurations against the reference") {
  std::mt19937_64 rng(20261129);
  std::map<std::string, int> runs;
  const int count = configs_to_run(1200, 60);
  int configs = 0;
  for (int i = 0; i < count; ++i) {
    RandomParamsLimits lim;
    if (i % 10 == 9) {  // some larger planes: chunked rows, several tiles
      lim.max_hw = 300;
      lim.max_kernel = 13;
      lim.max_stride = 13;
      lim.max_c = 4;
    }
    avgpool_params p = random_params(rng, lim);
    int64_t sn = 0, dn = 0;
    REQUIRE(element_counts(p, &sn, &dn));
    std::vector<char> src((size_t)(sn * element_size(p.dtype)));
    // values of both signs, sometimes large (cancellation), sometimes small ints
    const int kind = (int)(rng() % 3);
    if (kind == 0) fill_random(p.dtype, src.data(), sn, rng(), -1.0, 1.0);
    else if (kind == 1) fill_random(p.dtype, src.data(), sn, rng(), -1000.0, 3000.0);
    else fill_small_ints(p.dtype, src.data(), sn, rng(), 8);
    check_all_impls(p, src.data(), &runs, rng, i % 8 == 0);
    ++configs;
  }
  printf("random configurations: %d\n", configs);
  print_runs("random runs", runs);
  // cuda:nchw_column_walk takes square 2/3/5/7 windows with row stride 1 or 2,
  // about 1 draw in 130 here: the quick suite's 60 draws may miss it (its own
  // test below covers it in every mode). cuda:nchw_vec_column_walk' shapes
  // (square 3/5/7 window, stride 1, fast numerics, width a multiple of 16
  // bytes) and cuda:any_pointwise's (1x1 windows at stride 1) are rarer
  // still: their own tests below.
  for (const std::string& name : cuda_impl_names()) {
    CAPTURE(name);
    if (is_bulk_copy_impl(name) && !bulk_copy_expected()) CHECK(runs[name] == 0);
    else if (!(quick() && name == "cuda:nchw_column_walk") && !has_own_test(name)) CHECK(runs[name] > 0);
  }
}

TEST_CASE("random configurations of the column walks' shapes (square 2/3/5/7, row stride 1 or 2)") {
  // cuda:nchw_column_walk and cuda:nhwc_column_walk's column walk take only these shapes, which
  // the general random draw rarely makes: redraw kernel, strides and padding.
  const int count = quick() ? 30 : 400;
  std::map<std::string, int> runs =
      check_shaped_draws("column-walk", 314, count, 0, [](int /*draw*/, std::mt19937_64& rng, avgpool_params* p) {
    const int k = std::vector<int>{2, 3, 5, 7}[(size_t)(rng() % 4)];
    p->kernel_h = p->kernel_w = k;
    p->stride_h = 1 + (int64_t)(rng() % 2);
    p->stride_w = 1 + (int64_t)(rng() % 3);
    p->padding_h = (int64_t)(rng() % (k / 2 + 1));
    p->padding_w = (int64_t)(rng() % (k / 2 + 1));
    p->h = k + (int64_t)(rng() % 40);
    p->w = k + (int64_t)(rng() % 40);
  });
  CHECK(runs["cuda:nchw_column_walk"] > count / 8);
  CHECK(runs["cuda:nhwc_column_walk"] > count / 8);
}

TEST_CASE("random configurations of cuda:nchw_vec_column_walk' shapes (square 3/5/7, stride 1, 16-byte rows)") {
  // Every padding of each axis (outputs over the vectors or shifted from
  // them), ceil mode, divisors, every dtype, NaN/Inf, unaligned pointers
  // (check_all_impls); one draw in sixteen with thousands of planes, so runs
  // are long enough for several row blocks and the ring's carry-over.
  const int count = quick() ? 20 : 200;
  std::map<std::string, int> runs =
      check_shaped_draws("vector column-walk", 1618, count, 1, [](int i, std::mt19937_64& rng, avgpool_params* p) {
    const int k = std::vector<int>{3, 5, 7}[(size_t)(rng() % 3)];
    p->layout = AVGPOOL_LAYOUT_NCHW;
    p->numerics = AVGPOOL_NUMERICS_FAST;
    p->kernel_h = p->kernel_w = k;
    p->stride_h = p->stride_w = 1;
    p->padding_h = (int64_t)(rng() % (k / 2 + 1));
    p->padding_w = (int64_t)(rng() % (k / 2 + 1));
    p->w = 8 * (1 + (int64_t)(rng() % 24));  // rows of 16-byte multiples in every dtype
    p->h = k + (int64_t)(rng() % 40);
    if (i % 16 == 0) {
      p->n = 32;
      p->c = 64;
      p->h = 64;
      p->w = 64;
    }
  });
  CHECK(runs["cuda:nchw_vec_column_walk"] > count / 2);
}

TEST_CASE("random configurations of cuda:nhwc_tile_stream's shapes (NHWC, 16-byte channel groups)") {
  // Channels in 16-byte groups for every dtype (multiples of 8), from one
  // group to thousands (two items per thread, tiles of one column), every
  // slot count, padding, ceil, divisors, both numerics, NaN/Inf, unaligned
  // pointers (check_all_impls: they fall back to cuda:nhwc_column_walk).
  const int count = quick() ? 20 : 200;
  std::map<std::string, int> runs =
      check_shaped_draws("nhwc-stream", 4669, count, 2, [](int /*draw*/, std::mt19937_64& rng, avgpool_params* p) {
    p->layout = AVGPOOL_LAYOUT_NHWC;
    p->n = 1 + (int64_t)(rng() % 3);
    p->c = 8 * std::vector<int64_t>{1, 2, 3, 8, 16, 32, 128, 256}[(size_t)(rng() % 8)];
    p->kernel_h = 1 + (int64_t)(rng() % 13);
    p->kernel_w = 1 + (int64_t)(rng() % 13);
    p->stride_h = 1 + (int64_t)(rng() % 14);
    p->stride_w = 1 + (int64_t)(rng() % 14);
    p->padding_h = (int64_t)(rng() % (p->kernel_h / 2 + 1));
    p->padding_w = (int64_t)(rng() % (p->kernel_w / 2 + 1));
    const int64_t extra = p->c >= 1024 ? 12 : 70;
    p->h = p->kernel_h + (int64_t)(rng() % extra);
    p->w = p->kernel_w + (int64_t)(rng() % extra);
  });
  if (bulk_copy_expected()) CHECK(runs["cuda:nhwc_tile_stream"] > count / 2);
  else CHECK(runs["cuda:nhwc_tile_stream"] == 0);  // below sm_90: declined
}

TEST_CASE("random configurations of cuda:nhwc_tiled's shapes (NHWC, any channel count, overlapping windows)") {
  // Channel counts that are not 16-byte groups (1, 3, 5, 23, 106 ...) and
  // some that are, windows up to 11x11 moving by less than their size (the
  // tiles' case) and some that do not, rows whose bytes are not multiples
  // of 16 (element loads), padding, ceil, divisors, both numerics, NaN/Inf,
  // unaligned pointers.
  const int count = quick() ? 20 : 200;
  std::map<std::string, int> runs =
      check_shaped_draws("nhwc-tiled", 20261203, count, 2, [](int /*draw*/, std::mt19937_64& rng, avgpool_params* p) {
    p->layout = AVGPOOL_LAYOUT_NHWC;
    p->n = 1 + (int64_t)(rng() % 3);
    p->c = std::vector<int64_t>{1, 2, 3, 4, 5, 7, 8, 12, 23, 66, 106, 130}[(size_t)(rng() % 12)];
    p->kernel_h = 1 + (int64_t)(rng() % 11);
    p->kernel_w = 1 + (int64_t)(rng() % 11);
    p->stride_h = 1 + (int64_t)(rng() % (rng() % 4 == 0 ? 12 : p->kernel_h));
    p->stride_w = 1 + (int64_t)(rng() % (rng() % 4 == 0 ? 12 : p->kernel_w));
    p->padding_h = (int64_t)(rng() % (p->kernel_h / 2 + 1));
    p->padding_w = (int64_t)(rng() % (p->kernel_w / 2 + 1));
    p->h = p->kernel_h + (int64_t)(rng() % 60);
    p->w = p->kernel_w + (int64_t)(rng() % 60);
  });
  CHECK(runs["cuda:nhwc_tiled"] > count / 2);
}

TEST_CASE("random configurations of cuda:any_column_walk's shapes (fast numerics, windows of 2-32 rows overlapping down the plane)") {
  // Both layouts with any channel count, window rows up to the ring's 32
  // and widths past the unrolled bound of 11 (the run-time row loop), row
  // strides below the kernel, any column stride, padding, ceil mode,
  // divisors, every dtype, NaN/Inf; one draw in eight with many planes, so
  // that runs are split and each thread walks several. The ring is shared
  // memory written and read by its own thread only.
  const int count = quick() ? 20 : 200;
  std::map<std::string, int> runs =
      check_shaped_draws("any-column-walk", 20261205, count, 3, [](int i, std::mt19937_64& rng, avgpool_params* p) {
    p->numerics = AVGPOOL_NUMERICS_FAST;
    p->c = std::vector<int64_t>{1, 2, 3, 5, 8, 23, 64}[(size_t)(rng() % 7)];
    p->kernel_h = 2 + (int64_t)(rng() % (rng() % 4 == 0 ? 31 : 11));
    p->kernel_w = 1 + (int64_t)(rng() % (rng() % 4 == 0 ? 16 : 11));
    p->stride_h = 1 + (int64_t)(rng() % (p->kernel_h - 1));
    p->stride_w = 1 + (int64_t)(rng() % (p->kernel_w + 2));
    p->padding_h = (int64_t)(rng() % (p->kernel_h / 2 + 1));
    p->padding_w = (int64_t)(rng() % (p->kernel_w / 2 + 1));
    p->h = p->kernel_h + (int64_t)(rng() % 60);
    p->w = p->kernel_w + (int64_t)(rng() % 40);
    if (i % 8 == 0) {
      p->n = 16;
      p->c = 64;
      p->h = p->kernel_h + 80;
    }
  });
  CHECK(runs["cuda:any_column_walk"] > count / 2);
}

TEST_CASE("random configurations of cuda:nchw_row_stream's shapes (wide NCHW rows, 1 to 3 output rows per input row)") {
  // The general draw has narrow planes; cuda:nchw_row_stream wants rows of 16-byte
  // multiples and ow <= 1024: draw wide rows, every slot count (stride gaps
  // too), padding, ceil, divisors, both column counts per thread (ow over
  // 256), and the vector path (column stride and padding multiples of 16 bytes).
  const int count = quick() ? 15 : 150;
  std::map<std::string, int> runs =
      check_shaped_draws("row-stream", 2718, count, 0, [](int /*draw*/, std::mt19937_64& rng, avgpool_params* p) {
    p->n = 1 + (int64_t)(rng() % 2);
    p->c = 1 + (int64_t)(rng() % 3);
    p->layout = AVGPOOL_LAYOUT_NCHW;
    p->kernel_h = 1 + (int64_t)(rng() % 13);
    p->stride_h = (p->kernel_h + 2) / 3 + (int64_t)(rng() % 12);  // at most 3 output rows per input row
    p->kernel_w = 1 + (int64_t)(rng() % 13);
    p->stride_w = rng() % 3 == 0 ? 4 * (1 + (int64_t)(rng() % 3)) : 1 + (int64_t)(rng() % 14);
    p->padding_h = (int64_t)(rng() % (p->kernel_h / 2 + 1));
    p->padding_w = rng() % 2 == 0 ? 0 : (int64_t)(rng() % (p->kernel_w / 2 + 1));
    p->h = p->kernel_h + (int64_t)(rng() % 60);
    p->w = 16 * (4 + (int64_t)(rng() % 120));  // 64 .. 1968 columns: every dtype's rows are 16-byte multiples
  });
  if (bulk_copy_expected()) CHECK(runs["cuda:nchw_row_stream"] > count / 3);
  else CHECK(runs["cuda:nchw_row_stream"] == 0);  // below sm_90: declined
}

TEST_CASE("random NaN/Inf placements: every CUDA implementation agrees with the reference") {
  // compare_to_reference demands NaN/Inf exactly where the reference has
  // them, in both numerics (the reference follows PyTorch's rule; see
  // tests/test_nan_inf.cpp for its oracle).
  std::mt19937_64 rng(56);
  std::map<std::string, int> runs;
  const int count = configs_to_run(1200, 60) / 4;
  for (int i = 0; i < count; ++i) {
    RandomParamsLimits lim;
    lim.max_hw = 24;
    avgpool_params p = random_params(rng, lim);
    int64_t sn = 0, dn = 0;
    REQUIRE(element_counts(p, &sn, &dn));
    std::vector<char> src((size_t)(sn * element_size(p.dtype)));
    fill_random(p.dtype, src.data(), sn, rng(), -4.0, 4.0);
    sprinkle_specials(p.dtype, src.data(), sn, std::vector<double>{0.002, 0.02, 0.1, 0.4}[(size_t)i % 4], rng);
    check_all_impls(p, src.data(), &runs, rng, false);
  }
  print_runs("NaN/Inf runs", runs);
  // 15 quick configurations may miss the stride == kernel path; the draw
  // rarely makes cuda:nchw_vec_column_walk' shapes, whose own test sprinkles
  // NaN/Inf into one configuration in four.
  if (!quick())
    for (const std::string& name : cuda_impl_names())
      if (name != "cuda:nchw_vec_column_walk" && (bulk_copy_expected() || !is_bulk_copy_impl(name)))
        CHECK(runs[name] > 0);
}

TEST_CASE("targeted shapes: wide rows in chunks, tall kernels, packed planes, f64, odd widths") {
  std::mt19937_64 rng(7);
  std::map<std::string, int> runs;
  const Shape shapes[] = {
      {1, 2, 22, 5000, 11, 11, 11, 11, 0, 0, 0, 1},  // chunked row (fast: > 2048 floats)
      {1, 2, 23, 4501, 11, 11, 11, 11, 5, 5, 1, 0},  // chunked, padding, ceil, exclude
      {1, 1, 40, 9000, 3, 3, 3, 3, 1, 1, 1, 1},
      {2, 3, 70, 70, 33, 33, 33, 33, 16, 16, 1, 0},  // runtime K, tall
      {1, 1, 130, 64, 64, 64, 64, 64, 0, 0, 0, 1},   // kernel 64
      {3, 100, 7, 7, 7, 7, 7, 7, 0, 0, 0, 1},        // global pooling, packed planes
      {2, 5, 64, 2048, 11, 11, 11, 11, 0, 0, 0, 1},  // seed-like rows
      {1, 3, 33, 37, 4, 2, 4, 2, 2, 1, 1, 0},        // kh != kw
      {2, 16, 56, 56, 3, 3, 1, 1, 1, 1, 0, 0},       // generic suite shapes (small)
      {2, 8, 113, 113, 3, 3, 2, 2, 1, 1, 1, 1},
      {1, 4, 200, 200, 11, 11, 4, 4, 0, 0, 0, 1},
      {1, 1, 7, 12000, 3, 3, 3, 3, 1, 1, 1, 1},      // rows too wide for two stages: column chunks
      {1, 2, 9, 10000, 2, 5, 1, 2, 1, 2, 0, 0},      // same, overlapping
      {2, 3, 40, 3000, 11, 11, 11, 11, 5, 5, 1, 1},  // row parts, padding: an empty last part
  };
  for (const Shape& s : shapes)
    for_each_variant(s, [&](const avgpool_params& p, int) {
      check_all_impls(p, random_src(p, rng, -2.0, 5.0).data(), &runs, rng, false);
    });
  print_runs("targeted runs", runs);
}

// cuda:any_direct against the reference on each shape in each of dtypes,
// layout and numerics (half of the combinations when halved), inputs in
// [-2, 2) with NaN/Inf sprinkled in; determinism checked in fast numerics.
template <size_t NS, size_t ND>
void check_direct_on_large_shapes(const char* label, const Shape (&shapes)[NS], const avgpool_dtype (&dtypes)[ND],
                                  uint64_t seed, bool halved) {
  std::mt19937_64 rng(seed);
  std::map<std::string, int> runs;
  for (const Shape& s : shapes)
    for (avgpool_dtype dt : dtypes)
      for (int lay = 0; lay < 2; ++lay)
        for (int num = 0; num < 2; ++num) {
          if (halved && (lay + num + (int)dt) % 2 != 0) continue;
          avgpool_params p = shape_params(s.n, s.c, s.h, s.w, s.kh, s.kw, s.sh, s.sw, s.ph, s.pw, s.ceil);
          p.count_include_pad = s.incl;
          p.divisor_override = s.divisor;
          p.dtype = dt;
          p.layout = (avgpool_layout)lay;
          p.numerics = (avgpool_numerics)num;
          std::vector<char> src = random_src(p, rng, -2.0, 2.0);
          sprinkle_specials(p.dtype, src.data(), p.n * p.c * p.h * p.w, 0.001, rng);
          CHECK(check_impls(p, src.data(), {"cuda:any_direct"}, &runs, rng, num == 0) == 1);
        }
  print_runs(label, runs);
}

TEST_CASE("cuda:any_direct on problems it runs in output groups (f16, bf16, f32; short last groups; NaN/Inf)") {
  // About 3 million outputs: above the two groups per thread slot from which
  // the kernel takes 8 bytes of outputs per thread on devices of up to 180
  // SMs. Channels (37, 21, 64, 20, 30) and output rows (203, 134, 91, 153,
  // 249) that are not whole groups; window columns of 1, 2 and 3 (NCHW
  // groups), padding, ceil_mode, exclude-pad, a divisor override.
  const Shape shapes[] = {
      {2, 37, 200, 203, 2, 1, 1, 1, 1, 0, 1, 0},
      {8, 21, 260, 401, 3, 2, 2, 3, 1, 1, 1, 0},
      {3, 64, 180, 181, 1, 2, 1, 2, 0, 1, 0, 1, 3},
      {8, 20, 300, 458, 2, 3, 2, 3, 1, 1, 0, 1},   // NCHW groups of 3-column windows
      {6, 30, 200, 500, 3, 3, 3, 2, 1, 0, 1, 0},   // ... overlapping along the row
  };
  const avgpool_dtype dtypes[] = {AVGPOOL_DTYPE_F16, AVGPOOL_DTYPE_BF16, AVGPOOL_DTYPE_F32};
  check_direct_on_large_shapes("grouped cuda:any_direct runs", shapes, dtypes, 20261202, false);
}

TEST_CASE("cuda:any_direct on NHWC problems it runs in pixel packs (f16, bf16, f32; NaN/Inf; unaligned pointers)") {
  // Channels that split into packs of 8 bytes (4 f16/bf16, 2 f32) with
  // enough outputs for packs on devices of up to 180 SMs: 4 channels (f16
  // and bf16 only: f32 runs ungrouped), 12 (every type), 40 channels under
  // a window of 56 inputs (f32 packs only with 16 groups a pixel); padding,
  // ceil_mode, exclude-pad, a divisor override. check_impls offsets one
  // run in four by an element, which runs the plan's scalar kernel.
  const Shape shapes[] = {
      {24, 4, 240, 320, 3, 2, 2, 1, 1, 1, 1, 0},
      {10, 12, 200, 330, 1, 1, 2, 1, 0, 0, 0, 1},
      {24, 40, 200, 240, 7, 8, 3, 4, 3, 4, 1, 0, 9},
  };
  const avgpool_dtype dtypes[] = {AVGPOOL_DTYPE_F16, AVGPOOL_DTYPE_BF16, AVGPOOL_DTYPE_F32};
  check_direct_on_large_shapes("packed cuda:any_direct runs", shapes, dtypes, 20261204, quick());
}

TEST_CASE("cuda:any_direct on problems it runs in column groups (every dtype and layout; short last groups; NaN/Inf)") {
  // Windows whose rows are shared by 3 or more outputs of a column (kh >=
  // 3 * sh), large enough for groups of 4 outputs (2 in f64) on devices of
  // up to 180 SMs, with output columns that are not whole groups (153, 67
  // and 157 rows), window widths 4, 8 and 6 (compile-time bounds 4, 8, 6),
  // padding, ceil_mode, exclude-pad, a divisor override; NHWC channels too
  // few for channel groups. The last shape shares rows with fewer outputs
  // (kh = 8, sh = 3) and little along the row (kw 6, sw 5): f64 NHWC only
  // runs it in pairs, 67 output rows.
  const Shape shapes[] = {
      {12, 5, 303, 402, 6, 4, 2, 1, 3, 2, 1, 0},
      {100, 3, 200, 303, 9, 8, 3, 2, 4, 4, 0, 1, 7},
      {150, 3, 157, 129, 3, 6, 1, 3, 1, 3, 1, 1},
      {40, 7, 202, 300, 8, 6, 3, 5, 2, 1, 1, 0},
  };
  const avgpool_dtype dtypes[] = {AVGPOOL_DTYPE_F16, AVGPOOL_DTYPE_BF16, AVGPOOL_DTYPE_F32, AVGPOOL_DTYPE_F64};
  check_direct_on_large_shapes("column-grouped cuda:any_direct runs", shapes, dtypes, 20261203, quick());
}

TEST_CASE("cuda:any_direct on NCHW problems it runs in row runs (every dtype; short last groups; NaN/Inf)") {
  // Column stride 1 under windows 3 to 11 wide (compile-time bounds 3, 8,
  // 11; f64 runs stop at 8) and row strides above 1, with 3-4.5 million
  // outputs: enough for runs of 8 bytes of outputs per thread (2 f64) on
  // devices of up to 180 SMs. Output
  // rows of 203, 299 and 310 (not whole runs), padding, ceil_mode,
  // exclude-pad, a divisor override. NHWC variants take the other kernels.
  const Shape shapes[] = {
      {4, 40, 300, 203, 5, 3, 3, 1, 2, 1, 1, 0},
      {3, 50, 200, 299, 4, 7, 2, 1, 1, 3, 0, 1},
      {8, 20, 500, 310, 11, 11, 8, 1, 5, 5, 0, 0, 13},
  };
  const avgpool_dtype dtypes[] = {AVGPOOL_DTYPE_F16, AVGPOOL_DTYPE_BF16, AVGPOOL_DTYPE_F32, AVGPOOL_DTYPE_F64};
  check_direct_on_large_shapes("row-run cuda:any_direct runs", shapes, dtypes, 20261205, quick());
}

TEST_CASE("cuda:any_direct on NCHW problems it runs with window rows from 16-byte chunks (every dtype; NaN/Inf)") {
  // Column strides of 16 bytes or more (8 f16/bf16 columns, 4 f32, 2 f64)
  // under windows up to the chunk rows' width bounds (11 columns, 8 in f64;
  // f64 at 11 runs direct_kernel), no output or column groups. Odd widths
  // (403, 257, 201) put rows at every offset within a chunk; sources of
  // whole chunks, and one that is not (7x45x47 f16/bf16: the scalar kernel).
  // Padding, ceil_mode, exclude-pad, a divisor override; check_impls runs
  // one call in four on pointers offset by an element (the scalar kernel).
  // NHWC variants take the other kernels.
  const Shape shapes[] = {
      {4, 30, 200, 403, 5, 11, 3, 8, 2, 5, 1, 0},
      {3, 20, 150, 257, 7, 8, 4, 8, 3, 4, 0, 1},
      {6, 16, 120, 201, 4, 6, 2, 4, 1, 2, 1, 1, 7},
      {1, 7, 45, 47, 4, 5, 2, 8, 2, 2, 0, 0},
  };
  const avgpool_dtype dtypes[] = {AVGPOOL_DTYPE_F16, AVGPOOL_DTYPE_BF16, AVGPOOL_DTYPE_F32, AVGPOOL_DTYPE_F64};
  check_direct_on_large_shapes("chunk-row cuda:any_direct runs", shapes, dtypes, 20261206, quick());
}

TEST_CASE("cuda:any_direct at every window width: each compile-time width bound, clipped windows, the run-time loop") {
  // The kernel's window rows are unrolled to a bound on the width (1, 2, 3,
  // 4, 6, 8, 11; a run-time loop beyond): widths 1-14 in turn, each in both
  // layouts, numerics and every dtype as drawn, with padding up to half the
  // window and planes down to narrower than the window (clipped rows).
  const int count = quick() ? 42 : 140;
  std::map<std::string, int> runs =
      check_shaped_draws("window widths", 1411, count, 2, [](int i, std::mt19937_64& rng, avgpool_params* p) {
    const int64_t kw = 1 + i % 14;
    p->kernel_w = kw;
    p->kernel_h = 1 + (int64_t)(rng() % 6);
    p->stride_w = 1 + (int64_t)(rng() % (kw + 2));
    p->stride_h = 1 + (int64_t)(rng() % 4);
    p->padding_w = (int64_t)(rng() % (kw / 2 + 1));
    p->padding_h = (int64_t)(rng() % (p->kernel_h / 2 + 1));
    const int64_t narrowest = kw - 2 * p->padding_w > 1 ? kw - 2 * p->padding_w : 1;
    p->w = narrowest + (int64_t)(rng() % 24);
    p->h = p->kernel_h + (int64_t)(rng() % 24);
    p->c = 1 + (int64_t)(rng() % 5);
  });
  CHECK(runs["cuda:any_direct"] >= count);
}

TEST_CASE("AUTO runs a one-channel NHWC forward as the NCHW problem of the same bytes; forcing keeps NHWC") {
  // Random one-channel NHWC problems in every dtype and numerics: AUTO
  // picks what it picks for the NCHW problem, and its output (one call in
  // four on pointers offset by an element: the view's fallback) agrees with
  // the reference; the NHWC implementations forced by name still take the
  // problem as NHWC.
  std::mt19937_64 rng(20261207);
  const int count = quick() ? 16 : 64;
  std::map<std::string, int> runs;
  for (int i = 0; i < count; ++i) {
    avgpool_params p = random_params(rng);
    p.c = 1;
    p.layout = AVGPOOL_LAYOUT_NHWC;
    p.dtype = (avgpool_dtype)(i % 4);
    p.numerics = (avgpool_numerics)(i / 4 % 2);
    int64_t sn = 0, dn = 0;
    if (!element_counts(p, &sn, &dn)) continue;
    avgpool_params as_nchw = p;
    as_nchw.layout = AVGPOOL_LAYOUT_NCHW;
    avgpool_plan *plan = nullptr, *nchw_plan = nullptr;
    REQUIRE(avgpool_plan_create(&p, &plan) == AVGPOOL_SUCCESS);
    REQUIRE(avgpool_plan_create(&as_nchw, &nchw_plan) == AVGPOOL_SUCCESS);
    const char *name = nullptr, *nchw_name = nullptr;
    avgpool_plan_impl_name(plan, &name);
    avgpool_plan_impl_name(nchw_plan, &nchw_name);
    INFO(describe(p));
    CHECK(std::string(name) == std::string(nchw_name));
    avgpool_plan_destroy(plan);
    avgpool_plan_destroy(nchw_plan);
    std::vector<char> src = random_src(p, rng, -2.0, 2.0);
    if (i % 4 == 3) sprinkle_specials(p.dtype, src.data(), sn, 0.01, rng);
    check_impls(p, src.data(), {std::string()}, &runs, rng, i % 8 == 0);
  }
  print_runs("one-channel NHWC AUTO runs", runs);
  CHECK(runs[""] == count);
  avgpool_params p = avgpool_support::shape_params(2, 1, 40, 40, 3, 3, 1, 1, 1, 1, 0);
  p.layout = AVGPOOL_LAYOUT_NHWC;
  CHECK(avgpool_impl_accepts("cuda:nhwc_tiled", &p) == AVGPOOL_SUCCESS);
  p.layout = AVGPOOL_LAYOUT_NCHW;
  CHECK(avgpool_impl_accepts("cuda:nhwc_tiled", &p) != AVGPOOL_SUCCESS);
}

TEST_CASE("cuda:any_pointwise: windows of one element at stride 1 (every dtype and layout, divisors, -0, NaN/Inf)") {
  // Element counts that are not whole 16-byte vectors (a tail for the first
  // threads), one element, and a problem of several vector steps per block;
  // ceil_mode (no effect on 1x1), exclude-pad, divisor overrides; -0 among
  // the inputs (PyTorch's sum starts at +0, so its output is +0) and
  // NaN/Inf. check_impls offsets some pointers by one element: the scalar
  // kernel's case.
  const Shape shapes[] = {
      {1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 1},
      {1, 3, 7, 5, 1, 1, 1, 1, 0, 0, 1, 0},
      {2, 5, 33, 17, 1, 1, 1, 1, 0, 0, 0, 1, 3},
      {3, 37, 129, 67, 1, 1, 1, 1, 0, 0, 1, 1},
      {2, 64, 250, 251, 1, 1, 1, 1, 0, 0, 0, 0, 7},
  };
  std::mt19937_64 rng(20261204);
  std::map<std::string, int> runs;
  int variants = 0;
  for (const Shape& s : shapes)
    for_each_variant(s, [&](const avgpool_params& p, int) {
      std::vector<char> src = random_src(p, rng, -2.0, 2.0);
      const int64_t sn = p.n * p.c * p.h * p.w;
      for (int64_t i = 0; i < sn; i += 7) store_double(p.dtype, src.data(), i, -0.0);
      sprinkle_specials(p.dtype, src.data(), sn, 0.001, rng);
      check_all_impls(p, src.data(), &runs, rng, variants % 4 == 0);
      ++variants;
    });
  print_runs("1x1 window runs", runs);
  CHECK(runs["cuda:any_pointwise"] == variants);
}

TEST_CASE("CPU and CUDA agree bitwise in pytorch numerics") {
  std::mt19937_64 rng(99);
  int compared = 0, cpu_missing = 0;
  for (int i = 0; i < (quick() ? 10 : 150); ++i) {
    avgpool_params p = random_params(rng);
    p.numerics = AVGPOOL_NUMERICS_PYTORCH;
    avgpool_params cp = p;
    cp.backend = AVGPOOL_BACKEND_CPU;
    avgpool_plan* plan = nullptr;
    if (avgpool_plan_create(&cp, &plan) != AVGPOOL_SUCCESS) {
      ++cpu_missing;
      continue;
    }
    int64_t sn = 0, dn = 0;
    avgpool_plan_sizes(plan, &sn, &dn);
    const int64_t es = element_size(p.dtype);
    std::vector<char> src((size_t)(sn * es)), cpu_out((size_t)(dn * es));
    fill_random(p.dtype, src.data(), sn, rng(), -3.0, 3.0);
    REQUIRE(avgpool_plan_execute(plan, src.data(), cpu_out.data(), nullptr) == AVGPOOL_SUCCESS);
    avgpool_plan_destroy(plan);
    for (const std::string& name : cuda_impl_names()) {
      RunResult r = run_on_device(p, name.c_str(), src.data());
      if (r.status == AVGPOOL_ERROR_UNSUPPORTED) continue;
      REQUIRE(r.status == AVGPOOL_SUCCESS);
      INFO(name << " " << describe(p));
      CHECK(memcmp(r.out.data(), cpu_out.data(), cpu_out.size()) == 0);
      ++compared;
    }
  }
  printf("CPU vs CUDA (pytorch numerics): %d comparisons, %d configurations without a CPU "
         "implementation (%s)\n",
         compared, cpu_missing, cpu_missing ? avgpool_last_error_message() : "");
  if (compared == 0) MESSAGE("no CPU implementation in this build: CPU == CUDA not checked");
}

TEST_CASE("host pointers given to a CUDA plan are refused with a clear message") {
  avgpool_params p;
  avgpool_params_init(&p);
  p.n = 1; p.c = 2; p.h = 32; p.w = 32; p.kernel_h = p.kernel_w = 2;
  p.backend = AVGPOOL_BACKEND_CUDA;
  std::vector<float> src(2 * 32 * 32, 1.0f), dst(2 * 16 * 16, 7.0f);
  for (const std::string& name : cuda_impl_names()) {
    avgpool_plan* plan = nullptr;
    if (avgpool_plan_create_with_impl(&p, name.c_str(), &plan) != AVGPOOL_SUCCESS) continue;
    CHECK(avgpool_plan_execute(plan, src.data(), dst.data(), nullptr) == AVGPOOL_ERROR_INVALID_ARGUMENT);
    const std::string msg = avgpool_last_error_message();
    CHECK_MESSAGE(msg.find("not device memory") != std::string::npos, msg);
    CHECK(dst[0] == 7.0f);
    avgpool_plan_destroy(plan);
  }
  CHECK(cudaGetLastError() == cudaSuccess);
}

TEST_CASE("execution is asynchronous on the caller's stream") {
  cudaStream_t stream;
  CUDA_OK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  avgpool_params p;
  avgpool_params_init(&p);
  p.n = 2; p.c = 8; p.h = 256; p.w = 256; p.kernel_h = p.kernel_w = 3; p.stride_h = p.stride_w = 1;
  std::vector<char> src(2 * 8 * 256 * 256 * 4);
  fill_random(AVGPOOL_DTYPE_F32, src.data(), 2 * 8 * 256 * 256, 5, -1, 1);
  std::vector<char> ref(2 * 8 * 254 * 254 * 4);
  REQUIRE(run_reference(p, src.data(), ref.data()) == AVGPOOL_SUCCESS);
  std::mt19937_64 rng(1);
  for (const std::string& name : cuda_impl_names()) {
    RunResult r = run_on_device(p, name.c_str(), src.data(), 0, 0, stream);
    if (r.status == AVGPOOL_ERROR_UNSUPPORTED) continue;
    REQUIRE(r.status == AVGPOOL_SUCCESS);
    CHECK(compare_to_reference(p, src.data(), r.out.data(), ref.data()).count == 0);
  }
  cudaStreamDestroy(stream);
}

}  // TEST_SUITE

#endif  // AVGPOOL_WITH_CUDA
