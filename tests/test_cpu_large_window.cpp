// Large windows on the CPU backend: global pooling of big planes, windows
// of hundreds of rows, a single output row, kernels larger than the input.
// These take the backend's large-window paths (backends/cpu/impls.cpp,
// docs/cpu.md "Large windows"): row sums first for tall windows (fast
// numerics), window rows split into fixed chunks when output rows are few
// (fast numerics; partial sums combined in chunk order), outputs split by
// column blocks otherwise, and pytorch-numerics global pooling across
// planes. Checked against the reference (pytorch numerics bitwise, fast
// within the float32 summation bound) with poisoned outputs and guard bands,
// with 1, 2 and 3 threads, and for the same bits between runs and between
// thread counts.
#include <doctest/doctest.h>
#include <string.h>

#include <random>
#include <string>
#include <vector>

#if defined(AVGPOOL_WITH_OPENMP)
#include <omp.h>
#endif

#include "check.h"
#include "cpu_helpers.h"
#include "tensor_util.h"

using namespace avgpool_support;
using namespace cpu_test;

namespace {

struct Window {
  const char* what;
  int64_t n, c, h, w, kh, kw, sh, sw, ph, pw;
  int ceil;
  int64_t divisor;
};

// Each is large enough that, in fast numerics, a window's rows make two
// chunks or more where the output rows are few (chunks hold at least 64 K
// input elements), in one layout or both.
const Window kWindows[] = {
    {"global, one output", 1, 1, 512, 300, 512, 300, 512, 300, 0, 0, 0, 0},
    {"global, 3 planes (fewer than threads in NCHW)", 1, 3, 400, 352, 400, 352, 400, 352, 0, 0, 0, 0},
    {"global, 300 channels (NHWC pixel by pixel)", 1, 300, 64, 40, 64, 40, 64, 40, 0, 0, 0, 0},
    {"tall column window (700, 1) s1, one output row", 1, 2, 700, 203, 700, 1, 1, 1, 0, 0, 0, 0},
    {"tall window (600, 3) s(1, 2) padded, divisor override", 1, 1, 600, 301, 600, 3, 1, 2, 0, 1, 1, 7},
    {"kernel beyond the input (ceil mode), padded rows", 1, 2, 300, 500, 400, 500, 400, 500, 100, 0, 1, 0},
    {"k32 s16 p16 ceil, few output rows", 1, 2, 300, 260, 32, 32, 16, 16, 16, 16, 1, 0},
    {"k64 s32, few output rows", 2, 2, 256, 256, 64, 64, 32, 32, 0, 0, 0, 0},
    {"k(48, 5) s(16, 1) p(24, 2), 64 planes", 4, 16, 96, 40, 48, 5, 16, 1, 24, 2, 0, 0},
    {"k(200, 90) s(50, 30) p(100, 45) ceil", 1, 3, 430, 310, 200, 90, 50, 30, 100, 45, 1, 0},
    {"global, 32 channels (NHWC: whole vectors, rows not summed first)", 1, 32, 128, 64, 128, 64, 128, 64, 0, 0, 0, 0},
    {"k(40, 8) s(40, 8), 16 channels", 2, 16, 400, 64, 40, 8, 40, 8, 0, 0, 0, 0},
    {"global, 21 planes of 13x11 (plane tails)", 3, 7, 13, 11, 13, 11, 13, 11, 0, 0, 0, 0},
    {"global, 80 planes of 64x64 (planes 16 KiB apart)", 2, 40, 64, 64, 64, 64, 64, 64, 0, 0, 0, 0},
    // windows of fewer than 16 rows, two outputs: split by rows in NHWC
    // fast numerics from 256 K elements a window (kSplitWindow), column
    // blocks below
    {"k(8, 512) s(8, 512), 64 channels (256 K elements a window)", 1, 64, 8, 1024, 8, 512, 8, 512, 0, 0, 0, 0},
    {"k(8, 511) s(8, 512), 64 channels (one column short of it)", 1, 64, 8, 1024, 8, 511, 8, 512, 0, 0, 0, 0},
};

avgpool_params params_of(const Window& s) {
  avgpool_params p = shape_params(s.n, s.c, s.h, s.w, s.kh, s.kw, s.sh, s.sw, s.ph, s.pw, s.ceil);
  p.divisor_override = s.divisor;
  p.backend = AVGPOOL_BACKEND_CPU;
  return p;
}

#if defined(AVGPOOL_WITH_OPENMP)
struct Threads {
  int saved = omp_get_max_threads();
  explicit Threads(int t) { omp_set_num_threads(t); }
  ~Threads() { omp_set_num_threads(saved); }
};
#endif

}  // namespace

TEST_SUITE("cpu") {

TEST_CASE("large windows against the reference: every dtype, layout, numerics, count_include_pad") {
#if defined(AVGPOOL_WITH_OPENMP)
  const int thread_counts[] = {1, 2, 3};
#else
  const int thread_counts[] = {1};
#endif
  for (int threads : thread_counts) {
#if defined(AVGPOOL_WITH_OPENMP)
    const Threads scope(threads);
#endif
    uint64_t seed = 11;
    for (const Window& s : kWindows) {
      const std::string what = s.what;
      CAPTURE(what);
      CAPTURE(threads);
      check_variants(params_of(s), {AVGPOOL_LAYOUT_NCHW, AVGPOOL_LAYOUT_NHWC}, seed++);
    }
  }
}

TEST_CASE("large windows: NaN, infinities and signed zeros like the reference") {
  std::mt19937_64 rng(5);
  for (const Window& s : kWindows) {
    for (int layout = 0; layout < 2; ++layout)
      for (int numerics = 0; numerics < 2; ++numerics) {
        avgpool_params p = params_of(s);
        p.layout = (avgpool_layout)layout;
        p.numerics = (avgpool_numerics)numerics;
        const std::string what = s.what;
      CAPTURE(what);
        const int64_t ns = src_count(p);
        std::vector<float> src((size_t)ns);
        fill_random(AVGPOOL_DTYPE_F32, src.data(), ns, 3, -1.0, 1.0);
        sprinkle_specials(AVGPOOL_DTYPE_F32, src.data(), ns, 2e-6, rng);
        // a window of zeros with one -0 (sums of signed zeros)
        for (int64_t i = 0; i < ns && i < 4096; ++i) src[(size_t)i] = 0.0f;
        src[7] = -0.0f;
        CHECK(check_all_impls(p, src.data()) >= 1);
      }
  }
}

#if defined(AVGPOOL_WITH_OPENMP)
TEST_CASE("large windows: the same bits between runs and with 1, 2 and 3 threads") {
  // Fast numerics too: the window-row chunks and the order they are added
  // in are fixed by the problem, not by the threads.
  for (const Window& s : kWindows)
    for (int dtype = 0; dtype < 4; ++dtype)
      for (int layout = 0; layout < 2; ++layout)
        for (int numerics = 0; numerics < 2; ++numerics) {
          avgpool_params p = params_of(s);
          p.dtype = (avgpool_dtype)dtype;
          p.layout = (avgpool_layout)layout;
          p.numerics = (avgpool_numerics)numerics;
          const int64_t ns = src_count(p), nd = dst_count(p), es = element_size(p.dtype);
          std::vector<unsigned char> src((size_t)(ns * es));
          fill_random(p.dtype, src.data(), ns, 17, -10.0, 10.0);
          std::vector<unsigned char> first((size_t)(nd * es));
          {
            const Threads one(1);
            REQUIRE(avgpool_forward(&p, src.data(), first.data(), nullptr) == AVGPOOL_SUCCESS);
          }
          for (int threads : {2, 3, 3}) {
            const Threads scope(threads);
            std::vector<unsigned char> got((size_t)(nd * es));
            REQUIRE(avgpool_forward(&p, src.data(), got.data(), nullptr) == AVGPOOL_SUCCESS);
            CHECK_MESSAGE(memcmp(first.data(), got.data(), first.size()) == 0,
                          s.what << ": " << describe(p) << " with " << threads << " threads");
          }
        }
}
#endif

}  // TEST_SUITE("cpu")
