// The reference backend against PyTorch's own outputs.
#include <doctest/doctest.h>
#include <math.h>
#include <string.h>

#include <vector>

#include "golden_file.h"
#include "golden_cases.h"
#include "tensor_util.h"

using namespace avgpool_support;

TEST_SUITE("cpu") {

TEST_CASE("golden file has the expected cases") {
  CHECK(golden().cases.size() == 163);
  CHECK(golden().rejected.size() == 6);
}

TEST_CASE("reference pytorch numerics are bitwise PyTorch's float32 results") {
  for (const GoldenCase& gc : golden().cases) {
    CAPTURE(gc.name);
    avgpool_params p = golden_params(gc, AVGPOOL_BACKEND_REFERENCE, AVGPOOL_NUMERICS_PYTORCH);
    avgpool_plan* plan = nullptr;
    REQUIRE(avgpool_plan_create(&p, &plan) == AVGPOOL_SUCCESS);
    int64_t dims[4];
    REQUIRE(avgpool_plan_output_dims(plan, dims) == AVGPOOL_SUCCESS);
    for (int i = 0; i < 4; ++i) CHECK(dims[i] == gc.out_dims[i]);
    std::vector<float> out(gc.out32.size());
    poison(out.data(), (int64_t)(out.size() * sizeof(float)));
    REQUIRE(avgpool_plan_execute(plan, gc.in.data(), out.data(), nullptr) == AVGPOOL_SUCCESS);
    int mismatches = 0;
    for (size_t i = 0; i < out.size(); ++i)
      if (memcmp(&out[i], &gc.out32[i], 4) != 0 && !(isnan(out[i]) && isnan(gc.out32[i]))) ++mismatches;
    CHECK(mismatches == 0);
    avgpool_plan_destroy(plan);
  }
}

TEST_CASE("reference fast numerics are within 1 float32 ulp of PyTorch's float64 results") {
  check_reference_fast_f32(golden().cases, &GoldenCase::in, &GoldenCase::out, avgpool_forward);
}

TEST_CASE("every configuration PyTorch rejects is rejected") {
  for (const GoldenRejected& r : golden().rejected) {
    avgpool_params p = rejected_params(r);
    avgpool_plan* plan = nullptr;
    CHECK(avgpool_plan_create(&p, &plan) == AVGPOOL_ERROR_INVALID_ARGUMENT);
    CHECK(plan == nullptr);
    CHECK(strlen(avgpool_last_error_message()) > 0);
  }
}

}  // TEST_SUITE
