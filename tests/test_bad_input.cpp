// The bad-input catalogue: every invalid call returns the right status, a
// message naming the parameter (and its value), and leaves dst untouched.
#include <doctest/doctest.h>
#include <stdint.h>
#include <string.h>

#include <functional>
#include <string>
#include <vector>

#include "avgpool/avgpool.h"
#include "check.h"
#include "tensor_util.h"

using namespace avgpool_support;

namespace {

avgpool_params good_params() {
  avgpool_params p = shape_params(2, 3, 9, 8, 3, 3, 2, 2, 1, 1);
  p.backend = AVGPOOL_BACKEND_REFERENCE;
  return p;
}

struct BadParams {
  const char* name;
  std::function<void(avgpool_params&)> mutate;
  avgpool_status status;
  const char* message;  // must appear in avgpool_last_error_message()
};

const std::vector<BadParams>& bad_params_catalogue() {
  static const std::vector<BadParams> list = {
      {"struct_size zero", [](avgpool_params& p) { p.struct_size = 0; }, AVGPOOL_ERROR_INVALID_ARGUMENT, "struct_size (0)"},
      {"struct_size from a newer header", [](avgpool_params& p) { p.struct_size += 8; }, AVGPOOL_ERROR_INVALID_ARGUMENT, "struct_size"},
      {"negative n", [](avgpool_params& p) { p.n = -1; }, AVGPOOL_ERROR_INVALID_ARGUMENT, "n (-1) must be at least 0"},
      {"zero c", [](avgpool_params& p) { p.c = 0; }, AVGPOOL_ERROR_INVALID_ARGUMENT, "c (0) must be at least 1"},
      {"zero h", [](avgpool_params& p) { p.h = 0; }, AVGPOOL_ERROR_INVALID_ARGUMENT, "h (0) must be at least 1"},
      {"negative w", [](avgpool_params& p) { p.w = -5; }, AVGPOOL_ERROR_INVALID_ARGUMENT, "w (-5) must be at least 1"},
      {"huge h", [](avgpool_params& p) { p.h = INT64_MAX; }, AVGPOOL_ERROR_INVALID_ARGUMENT, "h (9223372036854775807) is too large"},
      {"zero kernel_h", [](avgpool_params& p) { p.kernel_h = 0; }, AVGPOOL_ERROR_INVALID_ARGUMENT, "kernel_h (0) must be at least 1"},
      {"negative kernel_w", [](avgpool_params& p) { p.kernel_w = -1; }, AVGPOOL_ERROR_INVALID_ARGUMENT, "kernel_w (-1) must be at least 1"},
      {"huge kernel_w", [](avgpool_params& p) { p.kernel_w = INT64_MAX; }, AVGPOOL_ERROR_INVALID_ARGUMENT, "kernel_w (9223372036854775807) is too large"},
      {"zero stride_h alone", [](avgpool_params& p) { p.stride_h = 0; }, AVGPOOL_ERROR_INVALID_ARGUMENT, "stride_h (0) must be at least 1"},
      {"zero stride_w alone", [](avgpool_params& p) { p.stride_w = 0; }, AVGPOOL_ERROR_INVALID_ARGUMENT, "stride_w (0) must be at least 1"},
      {"negative stride_h", [](avgpool_params& p) { p.stride_h = -2; }, AVGPOOL_ERROR_INVALID_ARGUMENT, "stride_h (-2)"},
      {"huge stride_w", [](avgpool_params& p) { p.stride_w = INT64_MAX; }, AVGPOOL_ERROR_INVALID_ARGUMENT, "stride_w (9223372036854775807)"},
      {"negative padding_h", [](avgpool_params& p) { p.padding_h = -1; }, AVGPOOL_ERROR_INVALID_ARGUMENT, "padding_h (-1) must be at least 0"},
      {"negative padding_w", [](avgpool_params& p) { p.padding_w = -2; }, AVGPOOL_ERROR_INVALID_ARGUMENT, "padding_w (-2) must be at least 0"},
      {"padding_h over half the kernel", [](avgpool_params& p) { p.padding_h = 2; }, AVGPOOL_ERROR_INVALID_ARGUMENT, "padding_h (2) must be at most kernel_h / 2 (1)"},
      {"padding_w over half the kernel", [](avgpool_params& p) { p.kernel_w = 4; p.padding_w = 3; }, AVGPOOL_ERROR_INVALID_ARGUMENT, "padding_w (3) must be at most kernel_w / 2 (2)"},
      {"kernel_h larger than the input", [](avgpool_params& p) { p.kernel_h = 12; p.padding_h = 0; p.stride_h = 1; }, AVGPOOL_ERROR_INVALID_ARGUMENT, "output height (-2) is less than 1"},
      {"kernel_w larger than the padded input", [](avgpool_params& p) { p.kernel_w = 11; p.padding_w = 1; p.stride_w = 1; }, AVGPOOL_ERROR_INVALID_ARGUMENT, "output width (0) is less than 1"},
      {"negative divisor_override", [](avgpool_params& p) { p.divisor_override = -1; }, AVGPOOL_ERROR_INVALID_ARGUMENT, "divisor_override (-1)"},
      {"ceil_mode not 0 or 1", [](avgpool_params& p) { p.ceil_mode = 2; }, AVGPOOL_ERROR_INVALID_ARGUMENT, "ceil_mode (2) must be 0 or 1"},
      {"count_include_pad not 0 or 1", [](avgpool_params& p) { p.count_include_pad = -1; }, AVGPOOL_ERROR_INVALID_ARGUMENT, "count_include_pad (-1) must be 0 or 1"},
      {"unknown dtype", [](avgpool_params& p) { p.dtype = (avgpool_dtype)7; }, AVGPOOL_ERROR_INVALID_ARGUMENT, "dtype (7)"},
      {"negative dtype", [](avgpool_params& p) { p.dtype = (avgpool_dtype)-1; }, AVGPOOL_ERROR_INVALID_ARGUMENT, "dtype (-1)"},
      {"unknown layout", [](avgpool_params& p) { p.layout = (avgpool_layout)2; }, AVGPOOL_ERROR_INVALID_ARGUMENT, "layout (2)"},
      {"unknown backend", [](avgpool_params& p) { p.backend = (avgpool_backend)9; }, AVGPOOL_ERROR_INVALID_ARGUMENT, "backend (9)"},
      {"unknown numerics", [](avgpool_params& p) { p.numerics = (avgpool_numerics)5; }, AVGPOOL_ERROR_INVALID_ARGUMENT, "numerics (5)"},
      {"input bytes overflow int64", [](avgpool_params& p) { p.n = p.c = int64_t{1} << 20; p.h = p.w = int64_t{1} << 12; }, AVGPOOL_ERROR_INVALID_ARGUMENT, "overflows int64"},
      {"empty batch, one sample overflows int64", [](avgpool_params& p) { p.n = 0; p.c = int64_t{1} << 40; p.h = p.w = int64_t{1} << 12; }, AVGPOOL_ERROR_INVALID_ARGUMENT, "input size of one sample c*h*w*4 bytes"},
      {"f64 byte count overflows though elements fit", [](avgpool_params& p) { p.n = p.c = int64_t{1} << 30; p.h = 3; p.w = 1; p.kernel_w = 1; p.padding_w = 0; p.stride_w = 1; p.dtype = AVGPOOL_DTYPE_F64; }, AVGPOOL_ERROR_INVALID_ARGUMENT, "input size n*c*h*w*8 bytes"},
  };
  return list;
}

std::string message() { return avgpool_last_error_message(); }

}  // namespace

TEST_SUITE("cpu") {

TEST_CASE("invalid parameters are refused at plan creation and by the one-call function") {
  for (const BadParams& bad : bad_params_catalogue()) {
    CAPTURE(bad.name);
    avgpool_params p = good_params();
    bad.mutate(p);
    avgpool_plan* plan = reinterpret_cast<avgpool_plan*>(0x1);  // must stay untouched
    CHECK(avgpool_plan_create(&p, &plan) == bad.status);
    CHECK(plan == reinterpret_cast<avgpool_plan*>(0x1));
    CHECK_MESSAGE(message().find(bad.message) != std::string::npos, message());
    CHECK(avgpool_impl_accepts("reference", &p) == bad.status);

    // The one-call function: dst (poisoned, with guard bands) is untouched.
    std::vector<float> src(2 * 3 * 9 * 8, 1.0f), dst(256);
    poison(dst.data(), (int64_t)(dst.size() * 4));
    CHECK(avgpool_forward(&p, src.data(), dst.data(), nullptr) == bad.status);
    CHECK(is_poisoned(dst.data(), (int64_t)(dst.size() * 4)));
    CHECK_MESSAGE(message().find(bad.message) != std::string::npos, message());
  }
  CHECK(bad_params_catalogue().size() >= 30);
}

TEST_CASE("NULL pointers at plan creation and in queries") {
  avgpool_params p = good_params();
  avgpool_plan* plan = nullptr;
  CHECK(avgpool_plan_create(nullptr, &plan) == AVGPOOL_ERROR_INVALID_ARGUMENT);
  CHECK(message() == "params is NULL");
  CHECK(plan == nullptr);
  CHECK(avgpool_plan_create(&p, nullptr) == AVGPOOL_ERROR_INVALID_ARGUMENT);
  CHECK(message().find("plan") != std::string::npos);
  CHECK(avgpool_plan_create_with_impl(&p, nullptr, &plan) == AVGPOOL_ERROR_INVALID_ARGUMENT);
  CHECK(message() == "impl_name is NULL");
  CHECK(avgpool_plan_create_with_impl(&p, "cpu:nonexistent", &plan) == AVGPOOL_ERROR_INVALID_ARGUMENT);
  CHECK(message().find("impl_name (\"cpu:nonexistent\")") != std::string::npos);
  CHECK(plan == nullptr);
  CHECK(avgpool_impl_accepts(nullptr, &p) == AVGPOOL_ERROR_INVALID_ARGUMENT);
  CHECK(avgpool_impl_accepts("reference", nullptr) == AVGPOOL_ERROR_INVALID_ARGUMENT);
  CHECK(avgpool_impl_count(nullptr) == AVGPOOL_ERROR_INVALID_ARGUMENT);
  CHECK(avgpool_impl_name(0, nullptr) == AVGPOOL_ERROR_INVALID_ARGUMENT);

  int64_t dims[4] = {-7, -7, -7, -7};
  const char* name = "untouched";
  int64_t a = -7, b = -7;
  CHECK(avgpool_plan_output_dims(nullptr, dims) == AVGPOOL_ERROR_INVALID_ARGUMENT);
  CHECK(dims[0] == -7);
  CHECK(avgpool_plan_impl_name(nullptr, &name) == AVGPOOL_ERROR_INVALID_ARGUMENT);
  CHECK(std::string(name) == "untouched");
  CHECK(avgpool_plan_sizes(nullptr, &a, &b) == AVGPOOL_ERROR_INVALID_ARGUMENT);
  CHECK(a == -7);
  REQUIRE(avgpool_plan_create(&p, &plan) == AVGPOOL_SUCCESS);
  CHECK(avgpool_plan_output_dims(plan, nullptr) == AVGPOOL_ERROR_INVALID_ARGUMENT);
  CHECK(avgpool_plan_impl_name(plan, nullptr) == AVGPOOL_ERROR_INVALID_ARGUMENT);
  CHECK(avgpool_plan_sizes(plan, &a, nullptr) == AVGPOOL_ERROR_INVALID_ARGUMENT);
  CHECK(a == -7);
  double value = -7;
  const int64_t index = 0;
  CHECK(avgpool_reference_outputs(plan, nullptr, 1, &index, &value) == AVGPOOL_ERROR_INVALID_ARGUMENT);
  CHECK(avgpool_reference_outputs(plan, &value, -1, &index, &value) == AVGPOOL_ERROR_INVALID_ARGUMENT);
  CHECK(message().find("count (-1)") != std::string::npos);
  CHECK(value == -7);
  avgpool_plan_destroy(plan);
}

TEST_CASE("invalid execute calls leave dst untouched") {
  avgpool_params p = good_params();
  avgpool_plan* plan = nullptr;
  REQUIRE(avgpool_plan_create(&p, &plan) == AVGPOOL_SUCCESS);
  int64_t src_n = 0, dst_n = 0;
  avgpool_plan_sizes(plan, &src_n, &dst_n);
  // One buffer holds src, then dst with guard bands, so overlaps can be made.
  const int64_t guard = 16;
  std::vector<float> buffer((size_t)(src_n + dst_n + 3 * guard));
  float* src = buffer.data();
  float* dst = buffer.data() + src_n + guard;
  fill_random(AVGPOOL_DTYPE_F32, src, src_n, 3, -1, 1);
  const std::vector<float> src_copy(src, src + src_n);
  poison(dst - guard / 2, (dst_n + guard) * 4);
  auto dst_untouched = [&] { return is_poisoned(dst - guard / 2, (dst_n + guard) * 4); };

  CHECK(avgpool_plan_execute(nullptr, src, dst, nullptr) == AVGPOOL_ERROR_INVALID_ARGUMENT);
  CHECK(message() == "plan is NULL");
  CHECK(avgpool_plan_execute(plan, nullptr, dst, nullptr) == AVGPOOL_ERROR_INVALID_ARGUMENT);
  CHECK(message() == "src is NULL");
  CHECK(avgpool_plan_execute(plan, src, nullptr, nullptr) == AVGPOOL_ERROR_INVALID_ARGUMENT);
  CHECK(message() == "dst is NULL");
  const char* raw_src = reinterpret_cast<const char*>(src);
  CHECK(avgpool_plan_execute(plan, raw_src + 2, dst, nullptr) == AVGPOOL_ERROR_INVALID_ARGUMENT);
  CHECK(message().find("src (") != std::string::npos);
  CHECK(message().find("not aligned to the f32 element size (4 bytes)") != std::string::npos);
  char* raw_dst = reinterpret_cast<char*>(dst);
  CHECK(avgpool_plan_execute(plan, src, raw_dst + 1, nullptr) == AVGPOOL_ERROR_INVALID_ARGUMENT);
  CHECK(message().find("dst (") != std::string::npos);
  CHECK(dst_untouched());

  // Aliased and overlapping src/dst: refused before anything is written.
  CHECK(avgpool_plan_execute(plan, src, src, nullptr) == AVGPOOL_ERROR_INVALID_ARGUMENT);
  CHECK(message().find("overlap") != std::string::npos);
  CHECK(avgpool_plan_execute(plan, src, src + src_n - 1, nullptr) == AVGPOOL_ERROR_INVALID_ARGUMENT);
  CHECK(avgpool_plan_execute(plan, src + 5, src, nullptr) == AVGPOOL_ERROR_INVALID_ARGUMENT);
  CHECK(std::vector<float>(src, src + src_n) == src_copy);
  CHECK(dst_untouched());

  // Adjacent (touching, not overlapping) buffers are fine.
  std::vector<float> joined((size_t)(src_n + dst_n));
  memcpy(joined.data(), src, (size_t)src_n * 4);
  CHECK(avgpool_plan_execute(plan, joined.data(), joined.data() + src_n, nullptr) == AVGPOOL_SUCCESS);

  // The valid call writes exactly dst.
  REQUIRE(avgpool_plan_execute(plan, src, dst, nullptr) == AVGPOOL_SUCCESS);
  CHECK(is_poisoned(dst - guard / 2, guard / 2 * 4));
  CHECK(is_poisoned(dst + dst_n, guard / 2 * 4));
  CHECK(memcmp(dst, joined.data() + src_n, (size_t)dst_n * 4) == 0);
  avgpool_plan_destroy(plan);
}

TEST_CASE("a failure message stays with its thread, and success clears it") {
  avgpool_params p = good_params();
  p.kernel_h = 0;
  avgpool_plan* plan = nullptr;
  CHECK(avgpool_plan_create(&p, &plan) == AVGPOOL_ERROR_INVALID_ARGUMENT);
  CHECK(!message().empty());
  int64_t count;
  CHECK(avgpool_impl_count(&count) == AVGPOOL_SUCCESS);
  CHECK(message().empty());
}

}  // TEST_SUITE
