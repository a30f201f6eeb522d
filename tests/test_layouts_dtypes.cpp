// Layouts and dtypes on the reference: NHWC is NCHW transposed, bit for
// bit; f64 matches PyTorch's float64 results; f16/bf16 are the f32 result
// rounded once.
#include <doctest/doctest.h>
#include <math.h>
#include <string.h>

#include <random>
#include <vector>

#include "check.h"
#include "golden_file.h"
#include "golden_cases.h"
#include "tensor_util.h"

using namespace avgpool_support;

namespace {

double f64_ulp(double v) {
  int e;
  frexp(fabs(v), &e);
  return ldexp(1.0, e - 53);
}

}  // namespace

TEST_SUITE("cpu") {

TEST_CASE("NCHW and NHWC give identical bits for the same data") {
  std::mt19937_64 rng(11);
  RandomParamsLimits limits;
  limits.vary_layout = false;
  for (int iter = 0; iter < 200; ++iter) {
    avgpool_params p = random_params(rng, limits);
    p.backend = AVGPOOL_BACKEND_REFERENCE;
    CAPTURE(describe(p));
    const int64_t esize = element_size(p.dtype);
    const int64_t in_dims[4] = {p.n, p.c, p.h, p.w};
    avgpool_plan* plan = nullptr;
    REQUIRE(avgpool_plan_create(&p, &plan) == AVGPOOL_SUCCESS);
    int64_t out_dims[4], src_n, dst_n;
    avgpool_plan_output_dims(plan, out_dims);
    avgpool_plan_sizes(plan, &src_n, &dst_n);
    avgpool_plan_destroy(plan);

    std::vector<char> src((size_t)(src_n * esize)), out_nchw((size_t)(dst_n * esize));
    fill_random(p.dtype, src.data(), src_n, 100 + iter, -4, 4);
    REQUIRE(run_reference(p, src.data(), out_nchw.data()) == AVGPOOL_SUCCESS);

    avgpool_params q = p;
    q.layout = AVGPOOL_LAYOUT_NHWC;
    const std::vector<char> src_nhwc = relayout(src.data(), in_dims, esize, AVGPOOL_LAYOUT_NCHW, AVGPOOL_LAYOUT_NHWC);
    std::vector<char> out_nhwc((size_t)(dst_n * esize));
    REQUIRE(run_reference(q, src_nhwc.data(), out_nhwc.data()) == AVGPOOL_SUCCESS);
    CHECK(relayout(out_nhwc.data(), out_dims, esize, AVGPOOL_LAYOUT_NHWC, AVGPOOL_LAYOUT_NCHW) == out_nchw);
  }
}

TEST_CASE("f64 is within 1 ulp of PyTorch's float64 result, in both numerics") {
  for (avgpool_numerics numerics : {AVGPOOL_NUMERICS_FAST, AVGPOOL_NUMERICS_PYTORCH}) {
    for (const GoldenCase& gc : golden().cases) {
      CAPTURE(gc.name);
      avgpool_params p = golden_params(gc, AVGPOOL_BACKEND_REFERENCE, numerics);
      p.dtype = AVGPOOL_DTYPE_F64;
      const std::vector<double> in(gc.in.begin(), gc.in.end());
      std::vector<double> out(gc.out.size());
      REQUIRE(avgpool_forward(&p, in.data(), out.data(), nullptr) == AVGPOOL_SUCCESS);
      int bad = 0;
      for (size_t i = 0; i < out.size(); ++i) {
        const double want = gc.out[i];
        if (isnan(want) || isinf(want)) {
          if (!(isnan(want) ? isnan(out[i]) : out[i] == want)) ++bad;
        } else if (fabs(out[i] - want) > f64_ulp(want)) {
          ++bad;
        }
      }
      CHECK(bad == 0);
    }
  }
}

TEST_CASE("f16 and bf16 are the f32 result on the same inputs, rounded once") {
  for (avgpool_dtype dtype : {AVGPOOL_DTYPE_F16, AVGPOOL_DTYPE_BF16}) {
    for (avgpool_numerics numerics : {AVGPOOL_NUMERICS_FAST, AVGPOOL_NUMERICS_PYTORCH}) {
      for (const GoldenCase& gc : golden().cases) {
        CAPTURE(gc.name);
        CAPTURE(dtype);
        CAPTURE(numerics);
        const int64_t count = (int64_t)gc.in.size(), out_count = (int64_t)gc.out.size();
        // The inputs rounded to the half type, and the same values in f32.
        std::vector<uint16_t> in_half((size_t)count);
        std::vector<float> in_f32((size_t)count);
        for (int64_t i = 0; i < count; ++i) {
          store_double(dtype, in_half.data(), i, gc.in[(size_t)i]);
          in_f32[(size_t)i] = (float)load_double(dtype, in_half.data(), i);
        }
        avgpool_params p = golden_params(gc, AVGPOOL_BACKEND_REFERENCE, numerics);
        std::vector<float> out_f32((size_t)out_count);
        REQUIRE(avgpool_forward(&p, in_f32.data(), out_f32.data(), nullptr) == AVGPOOL_SUCCESS);
        p.dtype = dtype;
        std::vector<uint16_t> out_half((size_t)out_count), rounded((size_t)out_count);
        REQUIRE(avgpool_forward(&p, in_half.data(), out_half.data(), nullptr) == AVGPOOL_SUCCESS);
        int bad = 0;
        for (int64_t i = 0; i < out_count; ++i) {
          store_double(dtype, rounded.data(), i, out_f32[(size_t)i]);
          const double got = load_double(dtype, out_half.data(), i);
          const double want = load_double(dtype, rounded.data(), i);
          if (numerics == AVGPOOL_NUMERICS_PYTORCH) {
            // PyTorch rounds its float result once: bitwise the same.
            if (out_half[(size_t)i] != rounded[(size_t)i] && !(isnan(got) && isnan(want))) ++bad;
          } else if (isnan(want) || isinf(want)) {
            if (!(isnan(want) ? isnan(got) : got == want)) ++bad;
          } else {
            // Both are roundings of nearly the same mean: at most one step apart.
            const double step = fabs(want) * (dtype == AVGPOOL_DTYPE_F16 ? 0x1.0p-10 : 0x1.0p-7) + 1e-7;
            if (fabs(got - want) > step) ++bad;
          }
        }
        CHECK(bad == 0);
      }
    }
  }
}

}  // TEST_SUITE
