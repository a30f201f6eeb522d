// The backward against PyTorch's own gradients
// (tests/data/pytorch_avgpool2d_backward.golden): every case on every
// backward implementation, every dtype, both layouts. pytorch numerics:
// bitwise (f32 vs gin32, f16 vs gin16, bf16 vs ginbf16, f64 vs gin); fast
// numerics: f32 and f64 within the float32 summation bound of PyTorch's
// float64 gradient, f16 and bf16 within it of the reference's.
#include <doctest/doctest.h>
#include <math.h>
#include <string.h>

#include <algorithm>
#include <string>
#include <vector>

#include "impl_helpers.h"
#include "check.h"

using namespace avgpool_support;

TEST_SUITE("cpu") {

TEST_CASE("backward golden file has the expected cases") {
  CHECK(golden_backward().cases.size() == 176);
  const GoldenBackwardCase& first = golden_backward().cases.front();
  CHECK(first.name == "seedlike_k11_s11");
  CHECK(first.gout.size() == 12);
  CHECK(first.gin.size() == 1 * 2 * 24 * 35);
  CHECK(is_backward_golden(default_golden_backward_path()));
  CHECK(!is_backward_golden(default_golden_path()));
}

TEST_CASE("every backward golden case on every backward implementation: pytorch bitwise, fast within bound") {
  const std::vector<std::string> impls = host_backward_impl_names();
  REQUIRE(impls.size() >= 2);
  for (const std::string& impl : impls) {
    int ran = 0;
    for (const GoldenBackwardCase& gc : golden_backward().cases) {
      CAPTURE(impl);
      CAPTURE(gc.name);
      for (int dtype = 0; dtype < 4; ++dtype)
        for (int layout = 0; layout < 2; ++layout) {
          avgpool_params p = golden_params(gc, backend_of_impl(impl), AVGPOOL_NUMERICS_PYTORCH);
          p.dtype = (avgpool_dtype)dtype;
          p.layout = (avgpool_layout)layout;
          CAPTURE(describe(p));
          int64_t src_n = 0, dst_n = 0;
          REQUIRE(element_counts(p, &src_n, &dst_n));
          REQUIRE(dst_n == (int64_t)gc.gout.size());
          int64_t od[4] = {gc.n, gc.c, 0, 0};
          {
            avgpool_plan* plan = nullptr;
            REQUIRE(avgpool_plan_create(&p, &plan) == AVGPOOL_SUCCESS);
            avgpool_plan_output_dims(plan, od);
            avgpool_plan_destroy(plan);
          }
          // grad_output rounded to the dtype (PyTorch's .half() / .bfloat16(): nearest even).
          const std::vector<unsigned char> gout = to_tensor(gc.gout, od, p.dtype, p.layout);

          GuardedBuffer got(p.dtype, src_n);
          if (!run_backward_impl(impl, p, gout.data(), got.data())) continue;
          ++ran;
          std::string first;
          CHECK_MESSAGE(bitwise_mismatches(p, got.data(), pytorch_gradient(gc, p.dtype), &first) == 0, first);
          CHECK(got.guards_intact());

          p.numerics = AVGPOOL_NUMERICS_FAST;
          GuardedBuffer fast(p.dtype, src_n);
          REQUIRE(run_backward_impl(impl, p, gout.data(), fast.data()));
          CHECK(fast.guards_intact());
          std::vector<unsigned char> ref((size_t)(src_n * element_size(p.dtype)));
          REQUIRE(run_reference_backward(p, gout.data(), ref.data()) == AVGPOOL_SUCCESS);
          if (p.dtype == AVGPOOL_DTYPE_F32 || p.dtype == AVGPOOL_DTYPE_F64) {
            // Against PyTorch's float64 gradient: put it in place of the
            // reference (the bound is the same rule).
            const std::vector<double> want = gc.gin;
            const int64_t d[4] = {p.n, p.c, p.h, p.w};
            std::vector<unsigned char> pt((size_t)(src_n * element_size(p.dtype)));
            for (int64_t n = 0; n < p.n; ++n)
              for (int64_t c = 0; c < p.c; ++c)
                for (int64_t y = 0; y < p.h; ++y)
                  for (int64_t x = 0; x < p.w; ++x)
                    store_double(p.dtype, pt.data(), dense_index(p.layout, d, n, c, y, x),
                                 want[(size_t)(((n * p.c + c) * p.h + y) * p.w + x)]);
            const Mismatch m = compare_backward_to_reference(p, gout.data(), fast.data(), pt.data());
            CHECK_MESSAGE(m.count == 0, m.message());
          }
          const Mismatch m = compare_backward_to_reference(p, gout.data(), fast.data(), ref.data());
          CHECK_MESSAGE(m.count == 0, m.message());
        }
    }
    CHECK_MESSAGE(ran > 0, impl << " accepted no golden case");
    if (impl == "reference_backward" || impl == "cpu:backward_gather") CHECK(ran == 176 * 8);
  }
}

TEST_CASE("the reference's fast numerics are within one float32 ulp of PyTorch's float64 gradient") {
  check_reference_fast_f32(golden_backward().cases, &GoldenBackwardCase::gout, &GoldenBackwardCase::gin,
                           avgpool_backward);
  // f64: equal to PyTorch's float64 gradient up to its own summation order.
  for (const GoldenBackwardCase& gc : golden_backward().cases) {
    CAPTURE(gc.name);
    avgpool_params p = golden_params(gc, AVGPOOL_BACKEND_REFERENCE, AVGPOOL_NUMERICS_FAST);
    p.dtype = AVGPOOL_DTYPE_F64;
    std::vector<double> g64(gc.gout.begin(), gc.gout.end()), got64(gc.gin.size());
    REQUIRE(avgpool_backward(&p, g64.data(), got64.data(), nullptr) == AVGPOOL_SUCCESS);
    double worst_rel = 0;
    for (size_t i = 0; i < got64.size(); ++i)
      if (isfinite(gc.gin[i]) && gc.gin[i] != 0)
        worst_rel = std::max(worst_rel, fabs(got64[i] - gc.gin[i]) / fabs(gc.gin[i]));
    CHECK(worst_rel < 1e-12);
  }
}

}  // TEST_SUITE
