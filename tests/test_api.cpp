// The C API's contract: versions, statuses, parameters, plan queries,
// implementation listing and forcing, the one-call function.
#include <doctest/doctest.h>
#include <stdio.h>
#include <string.h>

#include <string>
#include <vector>

#include "avgpool/avgpool.h"
#include "avgpool/avgpool.hpp"
#include "check.h"
#include "tensor_util.h"

using namespace avgpool_support;

TEST_SUITE("cpu") {

TEST_CASE("header, library and CMake project versions agree") {
  CHECK(avgpool_version_number() == AVGPOOL_VERSION_NUMBER);
  CHECK(std::string(avgpool_version_string()) == AVGPOOL_VERSION_STRING);
  CHECK(AVGPOOL_VERSION_NUMBER ==
        AVGPOOL_VERSION_MAJOR * 10000u + AVGPOOL_VERSION_MINOR * 100u + AVGPOOL_VERSION_PATCH);
  // The CMake project version (tests/CMakeLists.txt passes it), which the
  // installed avgpoolConfigVersion.cmake and avgpool.pc carry.
  const std::string project = AVGPOOL_TEST_PROJECT_VERSION;
  CHECK(project == avgpool_version_string());
  unsigned major = 0, minor = 0, patch = 0;
  REQUIRE(sscanf(project.c_str(), "%u.%u.%u", &major, &minor, &patch) == 3);
  CHECK(avgpool_version_number() == major * 10000u + minor * 100u + patch);
}

TEST_CASE("status values are pinned and every status has a name") {
  CHECK(AVGPOOL_SUCCESS == 0);
  CHECK(AVGPOOL_ERROR_INVALID_ARGUMENT == 1);
  CHECK(AVGPOOL_ERROR_UNSUPPORTED == 2);
  CHECK(AVGPOOL_ERROR_OUT_OF_MEMORY == 3);
  CHECK(AVGPOOL_ERROR_BACKEND_UNAVAILABLE == 4);
  CHECK(AVGPOOL_ERROR_DEVICE == 5);
  CHECK(AVGPOOL_ERROR_INTERNAL == 6);
  CHECK(std::string(avgpool_status_string(AVGPOOL_SUCCESS)) == "success");
  CHECK(std::string(avgpool_status_string(AVGPOOL_ERROR_INVALID_ARGUMENT)) == "invalid argument");
  CHECK(std::string(avgpool_status_string((avgpool_status)99)) == "unknown status");
}

// The names of values 0 .. count (the last one past the enum), space-separated.
template <typename Enum> std::string names_of(const char* (*name)(Enum), int count) {
  std::string all;
  for (int i = 0; i <= count; ++i) all += std::string(i ? " " : "") + name(static_cast<Enum>(i));
  return all;
}

TEST_CASE("every enum value has a short name; values outside the enums get \"?\"") {
  CHECK(names_of(avgpool_dtype_name, 4) == "f32 f16 bf16 f64 ?");
  CHECK(names_of(avgpool_layout_name, 2) == "nchw nhwc ?");
  CHECK(names_of(avgpool_backend_name, 4) == "auto reference cpu cuda ?");
  CHECK(names_of(avgpool_numerics_name, 2) == "fast pytorch ?");
  CHECK(std::string(avgpool_backend_name((avgpool_backend)99)) == "?");
}

TEST_CASE("params_init gives PyTorch's defaults") {
  avgpool_params p;
  memset(&p, 0x7f, sizeof p);
  REQUIRE(avgpool_params_init(&p) == AVGPOOL_SUCCESS);
  CHECK(p.struct_size == sizeof(avgpool_params));
  CHECK(p.kernel_h == 1);
  CHECK(p.stride_h == 0);
  CHECK(p.padding_h == 0);
  CHECK(p.ceil_mode == 0);
  CHECK(p.count_include_pad == 1);
  CHECK(p.divisor_override == 0);
  CHECK(p.dtype == AVGPOOL_DTYPE_F32);
  CHECK(p.layout == AVGPOOL_LAYOUT_NCHW);
  CHECK(p.backend == AVGPOOL_BACKEND_AUTO);
  CHECK(p.numerics == AVGPOOL_NUMERICS_FAST);
  CHECK(avgpool_params_init(nullptr) == AVGPOOL_ERROR_INVALID_ARGUMENT);
}

TEST_CASE("a plan reports its output dims, sizes and implementation") {
  avgpool_params p;
  avgpool_params_init(&p);
  p.n = 2; p.c = 3; p.h = 10; p.w = 7;
  p.kernel_h = 3; p.kernel_w = 2;  // strides 0,0: equal to the kernel
  p.backend = AVGPOOL_BACKEND_REFERENCE;
  avgpool_plan* plan = nullptr;
  REQUIRE(avgpool_plan_create(&p, &plan) == AVGPOOL_SUCCESS);
  int64_t dims[4];
  REQUIRE(avgpool_plan_output_dims(plan, dims) == AVGPOOL_SUCCESS);
  CHECK(dims[0] == 2);
  CHECK(dims[1] == 3);
  CHECK(dims[2] == 3);  // floor((10 - 3) / 3) + 1
  CHECK(dims[3] == 3);  // floor((7 - 2) / 2) + 1
  int64_t src_n = 0, dst_n = 0;
  REQUIRE(avgpool_plan_sizes(plan, &src_n, &dst_n) == AVGPOOL_SUCCESS);
  CHECK(src_n == 2 * 3 * 10 * 7);
  CHECK(dst_n == 2 * 3 * 3 * 3);
  const char* name = nullptr;
  REQUIRE(avgpool_plan_impl_name(plan, &name) == AVGPOOL_SUCCESS);
  CHECK(std::string(name) == "reference");
  CHECK(std::string(avgpool_last_error_message()).empty());
  CHECK(avgpool_plan_destroy(plan) == AVGPOOL_SUCCESS);
  CHECK(avgpool_plan_destroy(nullptr) == AVGPOOL_SUCCESS);
}

TEST_CASE("ceil mode keeps a last window that starts inside the input") {
  avgpool_params p;
  avgpool_params_init(&p);
  p.h = 5; p.w = 6;
  p.kernel_h = p.kernel_w = 2;
  p.ceil_mode = 1;
  p.backend = AVGPOOL_BACKEND_REFERENCE;
  avgpool_plan* plan = nullptr;
  REQUIRE(avgpool_plan_create(&p, &plan) == AVGPOOL_SUCCESS);
  int64_t dims[4];
  avgpool_plan_output_dims(plan, dims);
  CHECK(dims[2] == 3);  // ceil((5 - 2) / 2) + 1: the last window covers row 4 alone
  CHECK(dims[3] == 3);
  avgpool_plan_destroy(plan);
  // A kernel larger than the padded input still gives one output in ceil mode.
  p.h = 2; p.w = 2; p.kernel_h = p.kernel_w = 5; p.stride_h = p.stride_w = 5;
  REQUIRE(avgpool_plan_create(&p, &plan) == AVGPOOL_SUCCESS);
  avgpool_plan_output_dims(plan, dims);
  CHECK(dims[2] == 1);
  CHECK(dims[3] == 1);
  const float src[4] = {1, 2, 3, 6};
  float dst = 0;
  REQUIRE(avgpool_plan_execute(plan, src, &dst, nullptr) == AVGPOOL_SUCCESS);
  CHECK(dst == 3.0f);  // the window is clamped to the 2x2 input
  avgpool_plan_destroy(plan);
}

TEST_CASE("every implementation is listed once, the references last, and can be forced") {
  int64_t count = 0;
  REQUIRE(avgpool_impl_count(&count) == AVGPOOL_SUCCESS);
  REQUIRE(count >= 2);
  std::vector<std::string> names, forward, backward;
  for (int64_t i = 0; i < count; ++i) {
    const char* name = nullptr;
    int is_backward = -1;
    REQUIRE(avgpool_impl_name(i, &name) == AVGPOOL_SUCCESS);
    REQUIRE(avgpool_impl_is_backward(i, &is_backward) == AVGPOOL_SUCCESS);
    for (const std::string& seen : names) CHECK(seen != name);
    names.push_back(name);
    (is_backward ? backward : forward).push_back(name);
  }
  CHECK(forward.back() == "reference");
  CHECK(backward.back() == "reference_backward");
  const char* name = nullptr;
  CHECK(avgpool_impl_name(count, &name) == AVGPOOL_ERROR_INVALID_ARGUMENT);
  CHECK(avgpool_impl_name(-1, &name) == AVGPOOL_ERROR_INVALID_ARGUMENT);

  avgpool_params p;
  avgpool_params_init(&p);
  p.h = p.w = 4;
  p.kernel_h = p.kernel_w = 2;
  CHECK(avgpool_impl_accepts("reference", &p) == AVGPOOL_SUCCESS);
  CHECK(avgpool_impl_accepts("no-such-impl", &p) == AVGPOOL_ERROR_INVALID_ARGUMENT);
  avgpool_plan* plan = nullptr;
  REQUIRE(avgpool_plan_create_with_impl(&p, "reference", &plan) == AVGPOOL_SUCCESS);
  CHECK(avgpool_plan_impl_name(plan, &name) == AVGPOOL_SUCCESS);
  CHECK(std::string(name) == "reference");
  avgpool_plan_destroy(plan);
}

TEST_CASE("the one-call function computes the simple case") {
  avgpool_params p;
  avgpool_params_init(&p);
  p.h = 2; p.w = 4;
  p.kernel_h = p.kernel_w = 2;
  const float src[8] = {1, 2, 3, 4, 5, 6, 7, 8};
  float dst[2] = {0, 0};
  REQUIRE(avgpool_forward(&p, src, dst, nullptr) == AVGPOOL_SUCCESS);
  CHECK(dst[0] == 3.5f);  // (1 + 2 + 5 + 6) / 4
  CHECK(dst[1] == 5.5f);  // (3 + 4 + 7 + 8) / 4
}

TEST_CASE("padding, exclude-pad and divisor override follow PyTorch") {
  // 1x1x3x3 of ones, kernel 3 stride 1 padding 1.
  avgpool_params p;
  avgpool_params_init(&p);
  p.h = p.w = 3;
  p.kernel_h = p.kernel_w = 3;
  p.stride_h = p.stride_w = 1;
  p.padding_h = p.padding_w = 1;
  p.backend = AVGPOOL_BACKEND_REFERENCE;
  const std::vector<float> ones(9, 1.0f);
  std::vector<float> out(9);
  REQUIRE(avgpool_forward(&p, ones.data(), out.data(), nullptr) == AVGPOOL_SUCCESS);
  CHECK(out[0] == doctest::Approx(4.0 / 9.0));  // corner: 4 inputs, divisor 9
  CHECK(out[1] == doctest::Approx(6.0 / 9.0));  // edge: 6 inputs
  CHECK(out[4] == 1.0f);
  p.count_include_pad = 0;
  REQUIRE(avgpool_forward(&p, ones.data(), out.data(), nullptr) == AVGPOOL_SUCCESS);
  for (float v : out) CHECK(v == 1.0f);
  p.divisor_override = 2;
  REQUIRE(avgpool_forward(&p, ones.data(), out.data(), nullptr) == AVGPOOL_SUCCESS);
  CHECK(out[0] == 2.0f);  // 4 / 2
  CHECK(out[4] == 4.5f);  // 9 / 2
}

TEST_CASE("an empty batch succeeds and touches nothing") {
  avgpool_params p;
  avgpool_params_init(&p);
  p.n = 0; p.c = 3; p.h = p.w = 8;
  p.kernel_h = p.kernel_w = 2;
  avgpool_plan* plan = nullptr;
  REQUIRE(avgpool_plan_create(&p, &plan) == AVGPOOL_SUCCESS);
  int64_t dims[4];
  avgpool_plan_output_dims(plan, dims);
  CHECK(dims[0] == 0);
  CHECK(dims[2] == 4);
  CHECK(avgpool_plan_execute(plan, nullptr, nullptr, nullptr) == AVGPOOL_SUCCESS);
  avgpool_plan_destroy(plan);
}

TEST_CASE("reference_outputs computes sampled outputs") {
  avgpool_params p = shape_params(2, 2, 6, 6, 3, 3, 2, 2, 1, 1);
  p.layout = AVGPOOL_LAYOUT_NHWC;
  p.backend = AVGPOOL_BACKEND_REFERENCE;
  std::vector<float> src(2 * 2 * 6 * 6), dst(2 * 2 * 3 * 3);
  fill_random(AVGPOOL_DTYPE_F32, src.data(), (int64_t)src.size(), 7, -1, 1);
  avgpool_plan* plan = nullptr;
  REQUIRE(avgpool_plan_create(&p, &plan) == AVGPOOL_SUCCESS);
  REQUIRE(avgpool_plan_execute(plan, src.data(), dst.data(), nullptr) == AVGPOOL_SUCCESS);
  std::vector<int64_t> idx;
  for (int64_t i = 0; i < (int64_t)dst.size(); ++i) idx.push_back(i);
  std::vector<double> values(idx.size());
  REQUIRE(avgpool_reference_outputs(plan, src.data(), (int64_t)idx.size(), idx.data(), values.data()) ==
          AVGPOOL_SUCCESS);
  for (size_t i = 0; i < idx.size(); ++i) CHECK(values[i] == (double)dst[i]);
  const int64_t outside = (int64_t)dst.size();
  CHECK(avgpool_reference_outputs(plan, src.data(), 1, &outside, values.data()) ==
        AVGPOOL_ERROR_INVALID_ARGUMENT);
  avgpool_plan_destroy(plan);
}

TEST_CASE("the C++ header wraps plans with RAII and throws on failure") {
  avgpool::Params params;
  params.shape(1, 1, 4, 4).kernel(2, 2).backend(AVGPOOL_BACKEND_REFERENCE);
  avgpool::Plan plan(params);
  CHECK(plan.impl_name() == "reference");
  const auto dims = plan.output_dims();
  CHECK(dims[2] == 2);
  std::vector<float> src(16, 2.0f), dst(4);
  plan.execute(src.data(), dst.data());
  for (float v : dst) CHECK(v == 2.0f);
  params.padding(2, 0);
  CHECK_THROWS_AS(avgpool::Plan{params}, avgpool::Error);
  try {
    avgpool::Plan bad(params);
  } catch (const avgpool::Error& e) {
    CHECK(e.status() == AVGPOOL_ERROR_INVALID_ARGUMENT);
    CHECK(std::string(e.what()).find("padding_h (2)") != std::string::npos);
  }
}

}  // TEST_SUITE
