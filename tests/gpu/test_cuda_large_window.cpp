// The large-window implementations (cuda:nchw_window_team,
// cuda:nchw_window_chain, cuda:any_window_split, cuda:any_window_tiles)
// against the reference:
// windows up to the whole plane, kernel x stride combinations, padding,
// ceil_mode, divisors, every dtype, both layouts and numerics (pytorch
// bitwise), fresh random inputs, NaN/Inf, poisoned outputs, guard bands,
// unaligned pointers, run-to-run determinism (the cluster and slot splits
// included), what AUTO picks, and the reasons of the shapes each declines.
// Small enough for compute-sanitizer (suite gpu_small;
// AVGPOOL_GPU_TEST_QUICK=1 runs fewer configurations).
#if defined(AVGPOOL_WITH_CUDA)

#include <doctest/doctest.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <algorithm>
#include <map>
#include <random>

#include "check.h"
#include "gpu_helpers.h"
#include "tensor_util.h"

using namespace avgpool_support;
using namespace gpu_test;

namespace {

const char* const kLargeImpls[] = {"cuda:nchw_window_team", "cuda:nchw_window_chain", "cuda:any_window_split",
                                   "cuda:any_window_tiles"};

// Each large-window implementation that accepts p, on src, against the
// reference (unaligned pointers one time in three).
void check_large_impls(const avgpool_params& p, const void* src, std::mt19937_64& rng,
                       std::map<std::string, int>* runs, bool determinism) {
  check_impls(p, src, {std::begin(kLargeImpls), std::end(kLargeImpls)}, runs, rng, determinism, 3);
}

}  // namespace

TEST_SUITE("gpu_small") {

TEST_CASE("large windows: random kernels up to the plane, every dtype, layout and numerics") {
  std::mt19937_64 rng(20261130);
  std::map<std::string, int> runs;
  const int count = quick() ? 24 : 300;
  int configs = 0;
  for (int i = 0; configs < count && i < 20 * count; ++i) {
    avgpool_params p;
    avgpool_params_init(&p);
    p.n = 1 + (int64_t)(rng() % 3);
    p.c = 1 + (int64_t)(rng() % (i % 5 == 0 ? 40 : 6));
    p.h = 8 + (int64_t)(rng() % 120);
    p.w = 8 + (int64_t)(rng() % 120);
    const int shape = (int)(rng() % 4);
    if (shape == 0) {  // the whole plane (global pooling)
      p.kernel_h = p.h;
      p.kernel_w = p.w;
    } else if (shape == 1) {  // tall columns, or wide rows
      p.kernel_h = rng() % 2 ? p.h - (int64_t)(rng() % 4) : 1 + (int64_t)(rng() % 3);
      p.kernel_w = p.kernel_h <= 3 ? p.w - (int64_t)(rng() % 4) : 1 + (int64_t)(rng() % 3);
    } else {  // large square-ish windows, strides of every kind
      p.kernel_h = 8 + (int64_t)(rng() % (p.h - 7));
      p.kernel_w = 8 + (int64_t)(rng() % (p.w - 7));
    }
    const int stride = (int)(rng() % 4);
    p.stride_h = stride == 0 ? p.kernel_h : stride == 1 ? std::max<int64_t>(1, p.kernel_h / 2) : 1 + (int64_t)(rng() % 9);
    p.stride_w = stride == 0 ? p.kernel_w : stride == 1 ? std::max<int64_t>(1, p.kernel_w / 2) : 1 + (int64_t)(rng() % 9);
    p.padding_h = rng() % 3 == 0 ? (int64_t)(rng() % (p.kernel_h / 2 + 1)) : 0;
    p.padding_w = rng() % 3 == 0 ? (int64_t)(rng() % (p.kernel_w / 2 + 1)) : 0;
    p.ceil_mode = rng() % 3 == 0;
    p.count_include_pad = rng() % 2;
    if (rng() % 8 == 0) p.divisor_override = 1 + (int64_t)(rng() % 1000);
    p.dtype = (avgpool_dtype)(rng() % 4);
    p.layout = (avgpool_layout)(rng() % 2);
    p.numerics = (avgpool_numerics)(rng() % 2);
    int64_t sn = 0, dn = 0;
    if (!element_counts(p, &sn, &dn)) continue;
    std::vector<char> src((size_t)(sn * element_size(p.dtype)));
    const int kind = (int)(rng() % 3);
    if (kind == 0) fill_random(p.dtype, src.data(), sn, rng(), -1.0, 1.0);
    else if (kind == 1) fill_random(p.dtype, src.data(), sn, rng(), -1000.0, 3000.0);
    else fill_small_ints(p.dtype, src.data(), sn, rng(), 8);
    if (i % 5 == 1) sprinkle_specials(p.dtype, src.data(), sn, std::vector<double>{0.0005, 0.01}[(size_t)i % 2], rng);
    check_large_impls(p, src.data(), rng, &runs, i % 6 == 0);
    ++configs;
  }
  printf("large-window configurations: %d\n", configs);
  print_runs("large-window runs", runs);
  CHECK(configs == count);
  for (const char* name : kLargeImpls) CHECK(runs[name] > (quick() ? 0 : count / 5));
}

TEST_CASE("large windows: few outputs (cluster and slot splits), many planes, wide rows") {
  std::mt19937_64 rng(77);
  std::map<std::string, int> runs;
  const Shape shapes[] = {
      {1, 2, 300, 301, 300, 301, 300, 301, 0, 0, 0, 1},  // two global outputs: team in clusters
      {1, 1, 517, 129, 517, 129, 1, 1, 0, 0, 0, 1},      // one output
      {1, 1, 1024, 96, 1024, 1, 1, 1, 0, 0, 0, 1},       // tall columns over one plane: split in clusters
      {1, 1, 700, 33, 700, 1, 1, 1, 0, 0, 1, 1},
      {2, 200, 24, 24, 24, 24, 24, 24, 0, 0, 0, 1},      // many small global planes: chains over several planes
      {1, 3, 64, 5000, 64, 64, 32, 32, 0, 0, 0, 1},      // a region wider than a chunk: column slabs
      {1, 2, 40, 9000, 1, 9000, 1, 1, 0, 0, 0, 1},       // one output per row, rows wider than a chunk
      {2, 3, 130, 130, 32, 32, 16, 16, 16, 16, 1, 0},    // k32 s16 with padding, ceil, exclude
      {1, 4, 200, 200, 64, 64, 32, 32, 0, 0, 1, 1},
      {1, 5, 97, 203, 41, 23, 7, 5, 20, 11, 1, 1},       // odd strides (no pad words) and padding
  };
  for (const Shape& s : shapes)
    for_each_variant(s, [&](const avgpool_params& p, int dt) {
      std::vector<char> src = random_src(p, rng, -2.0, 5.0);
      if (dt == 1) sprinkle_specials(p.dtype, src.data(), p.n * p.c * p.h * p.w, 0.0002, rng);
      check_large_impls(p, src.data(), rng, &runs, dt == 0);
    });
  print_runs("large-window targeted runs", runs);
}

TEST_CASE("large windows of large tiles: gcd(kernel, stride) > 1, single outputs along an axis, bands") {
  // cuda:any_window_tiles: windows as unions of g_h x g_w tiles on the
  // padded grid; bands of output rows and columns (the halo tiles read
  // again), gaps between windows (stride > kernel), tiles cut by padding,
  // ceil_mode overhang and the input's edge, NHWC channels as a pixel's
  // elements, divisor_override.
  std::mt19937_64 rng(4096);
  std::map<std::string, int> runs;
  struct S { int64_t n, c, h, w, kh, kw, sh, sw, ph, pw; int ceil, incl; int64_t divisor; };
  const S shapes[] = {
      {1, 3, 100, 90, 24, 18, 8, 6, 4, 3, 1, 0, 0},       // g 8 x 6, padding cuts tiles, ceil overhang
      {2, 2, 130, 131, 32, 32, 16, 16, 16, 16, 1, 1, 0},  // k32 s16 with padding, odd width
      {1, 4, 200, 200, 64, 64, 32, 32, 0, 0, 0, 1, 0},    // k64 s32
      {1, 2, 90, 93, 8, 8, 12, 12, 4, 4, 1, 0, 0},        // gaps between windows (g 4: 2 of 3 tiles)
      {1, 1, 2048, 40, 2048, 1, 1, 1, 0, 0, 0, 1, 0},     // one tall column window per input column
      {1, 1, 1024, 300, 512, 1, 128, 1, 0, 0, 0, 1, 0},   // tall columns, several output rows
      {1, 2, 40, 3000, 1, 1024, 1, 256, 0, 0, 1, 1, 0},   // wide rows (column bands)
      {2, 64, 70, 70, 32, 32, 16, 16, 8, 8, 1, 1, 0},     // NHWC: 64 channels per pixel
      {1, 5, 97, 203, 40, 20, 20, 10, 20, 10, 1, 0, 0},   // padding = kernel / 2, exclude
      {3, 7, 64, 64, 32, 16, 16, 8, 0, 0, 0, 1, 777},     // divisor_override
      {1, 3, 33, 257, 33, 256, 1, 1, 0, 0, 0, 1, 0},      // one output row: g_h = kernel
      {1, 1, 2048, 1024, 2048, 1, 1, 1, 0, 0, 0, 1, 0},   // long tile rows split over a cluster's ranks
      {1, 2, 1500, 520, 1000, 1, 500, 1, 0, 0, 1, 1, 0},  // the same with ceil overhang and two tile rows per window
  };
  for (const S& s : shapes)
    for (int dt = 0; dt < (quick() ? 1 : 4); ++dt)
      for (int lay = 0; lay < 2; ++lay) {
        avgpool_params p = shape_params(s.n, s.c, s.h, s.w, s.kh, s.kw, s.sh, s.sw, s.ph, s.pw, s.ceil);
        p.count_include_pad = s.incl;
        p.divisor_override = s.divisor;
        p.dtype = (avgpool_dtype)dt;
        p.layout = (avgpool_layout)lay;
        p.numerics = AVGPOOL_NUMERICS_FAST;
        const int64_t sn = p.n * p.c * p.h * p.w;
        std::vector<char> src((size_t)(sn * element_size(p.dtype)));
        if (dt == 3) fill_small_ints(p.dtype, src.data(), sn, rng(), 8);
        else fill_random(p.dtype, src.data(), sn, rng(), -2.0, 5.0);
        if (dt == 1) sprinkle_specials(p.dtype, src.data(), sn, 0.0002, rng);
        check_impls(p, src.data(), {"cuda:any_window_tiles"}, &runs, rng, dt == 0, 2);
      }
  print_runs("tiled large-window runs", runs);
  CHECK(runs["cuda:any_window_tiles"] == (int)(sizeof shapes / sizeof shapes[0]) * (quick() ? 1 : 4) * 2);
}

TEST_CASE("large windows: AUTO picks the split and chain implementations by the window's size") {
  struct Want {
    int64_t n, c, h, w, kh, kw, sh, sw;
    avgpool_numerics num;
    avgpool_layout layout;
    avgpool_dtype dtype;
    const char* impl;
  };
  const avgpool_numerics F = AVGPOOL_NUMERICS_FAST, P = AVGPOOL_NUMERICS_PYTORCH;
  const avgpool_layout NCHW = AVGPOOL_LAYOUT_NCHW, NHWC = AVGPOOL_LAYOUT_NHWC;
  const avgpool_dtype f32 = AVGPOOL_DTYPE_F32, bf16 = AVGPOOL_DTYPE_BF16;
  const Want wants[] = {
      // the cases of docs/performance.md's large-window table (smaller batches: AUTO reads no batch size here)
      {2, 3, 1024, 1024, 1024, 1024, 1024, 1024, F, NCHW, f32, "cuda:nchw_window_team"},
      {2, 3, 1024, 1024, 1024, 1024, 1024, 1024, P, NCHW, f32, "cuda:nchw_window_chain"},
      {2, 64, 256, 256, 256, 256, 256, 256, F, NCHW, f32, "cuda:nchw_window_team"},
      {2, 64, 64, 64, 64, 64, 64, 64, P, NCHW, f32, "cuda:nchw_window_chain"},
      {1, 64, 512, 512, 32, 32, 16, 16, F, NCHW, f32, "cuda:any_window_tiles"},  // 16 x 16 tiles
      {1, 64, 512, 512, 32, 32, 16, 16, P, NCHW, f32, "cuda:nchw_row_stream"},  // an input row feeds 2 output rows
      {1, 64, 512, 512, 64, 64, 32, 32, P, NCHW, f32, "cuda:nchw_row_stream"},
      {1, 64, 512, 512, 64, 64, 16, 16, P, NCHW, f32, "cuda:nchw_window_chain"},  // 4 output rows
      {1, 64, 512, 512, 64, 64, 32, 32, F, NCHW, f32, "cuda:any_window_tiles"},
      {1, 64, 512, 512, 64, 64, 64, 64, F, NCHW, f32, "cuda:nchw_window_team"},
      {1, 1, 4096, 4096, 4096, 1, 1, 1, F, NCHW, bf16, "cuda:any_window_tiles"},  // one output row: 4096 x 1 tiles
      {1, 1, 4096, 512, 2048, 1, 512, 1, F, NCHW, bf16, "cuda:any_window_tiles"},   // 512 x 1 tiles
      {1, 1, 4096, 512, 2048, 1, 3, 1, F, NCHW, bf16, "cuda:any_window_split"},     // tiles of one input
      {1, 1, 4096, 4096, 4096, 1, 1, 1, P, NCHW, bf16, "cuda:nchw_window_chain"},
      {2, 64, 64, 64, 64, 64, 64, 64, F, NHWC, f32, "cuda:any_window_split"},
      {2, 64, 64, 64, 64, 64, 64, 64, P, NHWC, f32, "cuda:nhwc_column_walk"},  // 16-byte channel vectors
      {2, 3, 64, 64, 64, 64, 64, 64, P, NHWC, f32, "cuda:any_window_split"},    // 12-byte pixels
      {1, 64, 512, 512, 32, 32, 16, 16, P, NHWC, f32, nullptr},
      {1, 64, 512, 512, 32, 32, 16, 16, F, NHWC, f32, "cuda:any_window_tiles"},
      {1, 64, 512, 512, 64, 64, 32, 32, F, NHWC, f32, "cuda:any_window_tiles"},
      // below 512 inputs per window (2048 for overlapping fast or NHWC windows) the earlier choices stay
      {2, 3, 64, 64, 22, 22, 22, 22, F, NCHW, f32, nullptr},
  };
  for (const Want& w : wants) {
    avgpool_params p;
    avgpool_params_init(&p);
    p.n = w.n; p.c = w.c; p.h = w.h; p.w = w.w;
    p.kernel_h = w.kh; p.kernel_w = w.kw; p.stride_h = w.sh; p.stride_w = w.sw;
    p.numerics = w.num; p.layout = w.layout; p.dtype = w.dtype;
    avgpool_plan* plan = nullptr;
    REQUIRE(avgpool_plan_create(&p, &plan) == AVGPOOL_SUCCESS);
    const char* name = nullptr;
    avgpool_plan_impl_name(plan, &name);
    INFO(describe(p));
    const std::string got = name;
    if (w.impl == nullptr) {  // one of the earlier implementations
      for (const char* large : kLargeImpls) CHECK(got != large);
    } else if (!((w.impl == std::string("cuda:nchw_row_bulk") || w.impl == std::string("cuda:nchw_row_stream")) &&
                 !bulk_copy_expected())) {
      CHECK(got == w.impl);
    }
    avgpool_plan_destroy(plan);
  }
}

TEST_CASE("large-window implementations forced on shapes they decline say why") {
  avgpool_params p;
  avgpool_params_init(&p);
  p.n = 1; p.c = 2; p.h = 64; p.w = 64; p.kernel_h = p.kernel_w = 64;
  p.backend = AVGPOOL_BACKEND_CUDA;
  struct Case {
    const char* impl;
    avgpool_layout layout;
    avgpool_numerics num;
    const char* says;
  };
  const Case cases[] = {
      {"cuda:nchw_window_team", AVGPOOL_LAYOUT_NHWC, AVGPOOL_NUMERICS_FAST, "NCHW only"},
      {"cuda:nchw_window_team", AVGPOOL_LAYOUT_NCHW, AVGPOOL_NUMERICS_PYTORCH, "fast numerics only"},
      {"cuda:nchw_window_chain", AVGPOOL_LAYOUT_NHWC, AVGPOOL_NUMERICS_PYTORCH, "NCHW only"},
  };
  for (const Case& c : cases) {
    p.layout = c.layout;
    p.numerics = c.num;
    avgpool_plan* plan = nullptr;
    const avgpool_status s = avgpool_plan_create_with_impl(&p, c.impl, &plan);
    CAPTURE(c.impl);
    CHECK(s == AVGPOOL_ERROR_UNSUPPORTED);
    const std::string msg = avgpool_last_error_message();
    CHECK_MESSAGE(msg.find(c.says) != std::string::npos, msg);
    CHECK(plan == nullptr);
  }
}

}  // TEST_SUITE

#endif  // AVGPOOL_WITH_CUDA
