// Beyond 2^31 elements on the CPU backend (label large): one f16
// input of 46342 x 46342 (2,147,580,964 elements, 4.3 GB), shared by
//  A) kernel 2, stride 1, padding 1, exclude-pad: an OUTPUT of 46343^2 =
//     2,147,673,649 elements (> 2^31), fast numerics;
//  B) kernel 3, stride 2, padding 1, ceil_mode, include-pad: the last window
//     of each axis starts at 46341 and overhangs the padding (padded length
//     2, one input summed), pytorch numerics.
// Every CPU implementation that accepts each problem runs it (the reference
// when none is compiled in). Inputs are small integers, so sums are exact.
// Checks: no output left unwritten (the poison pattern cannot be a result),
// the last rows and columns in full plus a scatter against
// avgpool_reference_outputs, and case A also against sums computed here from
// the fill formula with 64-bit positions. Peak memory 8.6 GB.
#include <doctest/doctest.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <algorithm>
#include <chrono>
#include <random>
#include <string>
#include <vector>

#include "check.h"
#include "tensor_util.h"

using namespace avgpool_support;

namespace {

constexpr int64_t kSide = 46342;
constexpr uint64_t kSeed = 2024;
constexpr int kRange = 8;

std::vector<std::string> cpu_impls_or_reference() {
  std::vector<std::string> names = impl_names("cpu:");
  if (names.empty()) names.push_back("reference");
  return names;
}

double ulp_f16(double v) {
  int e = 0;
  frexp(fabs(v), &e);
  if (e - 1 < -14) e = -13;
  return ldexp(1.0, e - 11);
}

struct Case {
  const char* name;
  int64_t k, s, pad;
  int ceil_mode, include_pad;
  avgpool_numerics numerics;
};

void run_case(const Case& cs, const uint16_t* src) {
  avgpool_params p = shape_params(1, 1, kSide, kSide, cs.k, cs.k, cs.s, cs.s, cs.pad, cs.pad, cs.ceil_mode);
  p.count_include_pad = cs.include_pad;
  p.dtype = AVGPOOL_DTYPE_F16;
  p.numerics = cs.numerics;
  p.backend = AVGPOOL_BACKEND_CPU;

  const std::string case_name = cs.name;
  for (const std::string& impl : cpu_impls_or_reference()) {
    CAPTURE(case_name);
    CAPTURE(impl);
    avgpool_params q = p;
    if (impl == "reference") q.backend = AVGPOOL_BACKEND_REFERENCE;
    avgpool_plan* plan = nullptr;
    const avgpool_status st = avgpool_plan_create_with_impl(&q, impl.c_str(), &plan);
    if (st == AVGPOOL_ERROR_UNSUPPORTED) continue;
    REQUIRE_MESSAGE(st == AVGPOOL_SUCCESS, avgpool_last_error_message());
    int64_t dims[4], src_n, dst_n;
    avgpool_plan_output_dims(plan, dims);
    avgpool_plan_sizes(plan, &src_n, &dst_n);
    REQUIRE(src_n > (int64_t{1} << 31));
    const int64_t oside = dims[2];
    REQUIRE(dims[3] == oside);
    if (cs.k == 2) {
      REQUIRE(oside == kSide + 1);
      REQUIRE(dst_n > (int64_t{1} << 31));
    } else {
      // ceil((46342 + 2 - 3) / 2) + 1; the last window starts at 46341.
      REQUIRE(oside == 23172);
    }

    uint16_t* dst = static_cast<uint16_t*>(malloc((size_t)dst_n * 2));
    REQUIRE(dst != nullptr);
    poison(dst, dst_n * 2);
    const auto t0 = std::chrono::steady_clock::now();
    REQUIRE_MESSAGE(avgpool_plan_execute(plan, src, dst, nullptr) == AVGPOOL_SUCCESS,
                    avgpool_last_error_message());
    const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    MESSAGE(case_name << " on " << impl << ": " << dst_n << " outputs in " << secs << " s");

    CHECK(count_poisoned_elements(dst, dst_n, 2) == 0);

    // Samples: the last two rows and columns in full, the first row, the
    // corners, and a scatter.
    std::vector<int64_t> idx;
    for (int64_t i = 0; i < oside; ++i) {
      for (int64_t r : {oside - 1, oside - 2}) {
        idx.push_back(r * oside + i);
        idx.push_back(i * oside + r);
      }
      if (i % 7 == 0) idx.push_back(i);
    }
    std::mt19937_64 rng(7);
    for (int i = 0; i < 20000; ++i) idx.push_back((int64_t)(rng() % (uint64_t)dst_n));
    std::vector<double> want(idx.size());
    REQUIRE(avgpool_reference_outputs(plan, src, (int64_t)idx.size(), idx.data(), want.data()) ==
            AVGPOOL_SUCCESS);
    const double window = (double)(cs.k * cs.k);
    int64_t bad = 0, analytic_bad = 0;
    for (size_t i = 0; i < idx.size(); ++i) {
      const double got = load_double(AVGPOOL_DTYPE_F16, dst, idx[i]);
      const double bound =
          cs.numerics == AVGPOOL_NUMERICS_PYTORCH ? 0.0 : ulp_f16(want[i]) + window * 0x1.0p-24 * kRange;
      if (!(fabs(got - want[i]) <= bound)) {
        if (bad++ < 5)
          MESSAGE("output " << idx[i] << ": got " << got << ", reference " << want[i]);
      }
      if (cs.k == 2) {
        // Independent oracle: exclude-pad mean of the clamped 2x2 window.
        const int64_t oy = idx[i] / oside, ox = idx[i] % oside;
        const int64_t y0 = std::max<int64_t>(oy - 1, 0), y1 = std::min<int64_t>(oy + 1, kSide);
        const int64_t x0 = std::max<int64_t>(ox - 1, 0), x1 = std::min<int64_t>(ox + 1, kSide);
        int64_t sum = 0;
        for (int64_t y = y0; y < y1; ++y)
          for (int64_t x = x0; x < x1; ++x) sum += small_int_at(kSeed, y * kSide + x, kRange);
        const double mean = (double)sum / (double)((y1 - y0) * (x1 - x0));  // exact: divisor 1, 2 or 4
        if (got != mean) ++analytic_bad;
      }
    }
    CHECK(bad == 0);
    CHECK(analytic_bad == 0);
    free(dst);
    avgpool_plan_destroy(plan);
  }
}

}  // namespace

TEST_SUITE("large") {

TEST_CASE("CPU backend: f16 input and output beyond 2^31 elements, ceil_mode overhang at the far end") {
  const int64_t n = kSide * kSide;
  REQUIRE(n > (int64_t{1} << 31));
  uint16_t* src = static_cast<uint16_t*>(malloc((size_t)n * 2));
  REQUIRE(src != nullptr);
  fill_small_ints(AVGPOOL_DTYPE_F16, src, n, kSeed, kRange);
  // Spot-check the fill against the formula the oracle uses, far end included.
  CHECK(load_double(AVGPOOL_DTYPE_F16, src, n - 1) == small_int_at(kSeed, n - 1, kRange));

  run_case({"A k2 s1 p1 exclude-pad fast (output > 2^31)", 2, 1, 1, 0, 0, AVGPOOL_NUMERICS_FAST}, src);
  run_case({"B k3 s2 p1 ceil include-pad pytorch (far-end overhang)", 3, 2, 1, 1, 1,
            AVGPOOL_NUMERICS_PYTORCH},
           src);
  free(src);
}

}  // TEST_SUITE
