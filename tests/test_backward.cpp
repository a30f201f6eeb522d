// The backward on every backward implementation (the reference's and the
// CPU backend's) against the reference and against the forward: the
// adjoint identity, random configurations in every dtype, layout and
// numerics, shapes that reach every kernel path, guard bands and poisoned
// grad_input (fully overwritten), determinism, NaN/Inf, and
// avgpool_reference_grad_inputs.
#include <doctest/doctest.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <algorithm>
#include <random>
#include <string>
#include <thread>
#include <vector>

#if defined(_OPENMP)
#include <omp.h>
#endif

#include "impl_helpers.h"
#include "check.h"

using namespace avgpool_support;

namespace {

// Checks every backward implementation that accepts p on grad_output
// against the reference; returns how many ran.
int check_backward_impls(const avgpool_params& p, const void* grad_output) {
  return check_against_reference(host_backward_impl_names(), p, grad_output, true);
}

}  // namespace

TEST_SUITE("cpu") {

TEST_CASE("backward implementations are listed, flagged, and AUTO picks one per backend") {
  const std::vector<std::string> all = host_backward_impl_names();
  CHECK(std::find(all.begin(), all.end(), "reference_backward") != all.end());
  CHECK(std::find(all.begin(), all.end(), "cpu:backward_gather") != all.end());
  CHECK(std::find(all.begin(), all.end(), "cpu:backward_broadcast") != all.end());
  int is_backward = -1;
  CHECK(avgpool_impl_is_backward(-1, &is_backward) == AVGPOOL_ERROR_INVALID_ARGUMENT);
  CHECK(avgpool_impl_is_backward(0, nullptr) == AVGPOOL_ERROR_INVALID_ARGUMENT);
  CHECK(is_backward == -1);

  avgpool_params p = shape_params(2, 3, 9, 10, 3, 3, 1, 1, 1, 1, 0);
  for (avgpool_backend b : {AVGPOOL_BACKEND_REFERENCE, AVGPOOL_BACKEND_CPU, AVGPOOL_BACKEND_AUTO}) {
    p.backend = b;
    avgpool_plan* plan = nullptr;
    REQUIRE(avgpool_plan_create(&p, &plan) == AVGPOOL_SUCCESS);
    const char* fwd = nullptr;
    const char* bwd = nullptr;
    REQUIRE(avgpool_plan_impl_name(plan, &fwd) == AVGPOOL_SUCCESS);
    REQUIRE(avgpool_plan_backward_impl_name(plan, &bwd) == AVGPOOL_SUCCESS);
    CHECK(backend_of_impl(fwd) == backend_of_impl(bwd));  // the backward runs on the forward's backend
    // AUTO takes CUDA where a device is usable (3x3 windows at stride 1 in
    // fast numerics, one divisor: the forward of grad_output), else the CPU.
    const std::string want = b == AVGPOOL_BACKEND_REFERENCE                         ? "reference_backward"
                             : backend_of_impl(fwd) == AVGPOOL_BACKEND_CUDA ? "cuda:backward_as_forward"
                                                                             : "cpu:backward_gather";
    CHECK(std::string(bwd) == want);
    avgpool_plan_destroy(plan);
  }
  // stride == kernel: the broadcast comes first.
  p = shape_params(2, 3, 9, 10, 3, 2, 3, 2, 1, 1, 1);
  p.backend = AVGPOOL_BACKEND_CPU;
  avgpool_plan* plan = nullptr;
  REQUIRE(avgpool_plan_create(&p, &plan) == AVGPOOL_SUCCESS);
  const char* bwd = nullptr;
  REQUIRE(avgpool_plan_backward_impl_name(plan, &bwd) == AVGPOOL_SUCCESS);
  CHECK(std::string(bwd) == "cpu:backward_broadcast");
  avgpool_plan_destroy(plan);
}

TEST_CASE("adjoint identity: sum(forward(x) * g) == sum(x * backward(g)) on every backward implementation") {
  // In f64 the two sums agree up to float64 rounding; a wrong window,
  // divisor or skipped element breaks the identity far beyond it.
  std::mt19937_64 rng(3141);
  RandomParamsLimits lim;
  lim.vary_dtype = false;
  lim.max_hw = 30;
  int ran = 0;
  for (int iter = 0; iter < 80; ++iter) {
    avgpool_params p = random_params(rng, lim);
    p.dtype = AVGPOOL_DTYPE_F64;
    const PlanSizes s = sizes_of(p);
    std::vector<double> x((size_t)s.src), g((size_t)s.dst), y((size_t)s.dst), gin((size_t)s.src);
    fill_random(AVGPOOL_DTYPE_F64, x.data(), s.src, 100 + iter, -1.0, 1.0);
    fill_random(AVGPOOL_DTYPE_F64, g.data(), s.dst, 900 + iter, -1.0, 1.0);
    for (const std::string& impl : host_backward_impl_names()) {
      avgpool_plan* plan = forced_backward_plan(impl, p);
      if (plan == nullptr) continue;
      REQUIRE(avgpool_plan_execute(plan, x.data(), y.data(), nullptr) == AVGPOOL_SUCCESS);
      REQUIRE(avgpool_plan_backward(plan, g.data(), gin.data(), nullptr) == AVGPOOL_SUCCESS);
      avgpool_plan_destroy(plan);
      long double lhs = 0, rhs = 0, scale = 0;
      for (int64_t i = 0; i < s.dst; ++i) {
        lhs += (long double)y[(size_t)i] * g[(size_t)i];
        scale += fabsl((long double)y[(size_t)i] * g[(size_t)i]);
      }
      for (int64_t i = 0; i < s.src; ++i) {
        rhs += (long double)x[(size_t)i] * gin[(size_t)i];
        scale += fabsl((long double)x[(size_t)i] * gin[(size_t)i]);
      }
      CHECK_MESSAGE(fabsl(lhs - rhs) <= 1e-13L * (scale + 1e-300L),
                    impl << ": " << describe(p) << ": " << (double)lhs << " vs " << (double)rhs);
      ++ran;
    }
  }
  CHECK(ran >= 80 * 2);
}

TEST_CASE("random configurations: every backward implementation, dtype, layout and numerics vs the reference") {
  CHECK(check_random_problems(host_backward_impl_names(), 777, 150, true) >= 150 * 2);
}

TEST_CASE("backward kernel paths: column blocks, long kernels, many channels, streaming stores, instruction sets") {
  struct Shape { int64_t n, c, h, w, kh, kw, sh, sw, ph, pw; int ceil; };
  const Shape shapes[] = {
      {1, 2, 4, 4200, 3, 3, 1, 1, 1, 1, 0},    // two column blocks, contiguous taps
      {1, 1, 13, 4300, 11, 11, 11, 11, 0, 0, 1}, // broadcast over blocks, ceil overhang
      {1, 2, 24, 2048, 11, 11, 11, 11, 0, 0, 1}, // broadcast rows of whole 64-byte lines: streamed unstaged
      {1, 1, 6, 4150, 5, 7, 2, 3, 2, 3, 1},    // gathers over blocks
      {2, 70, 9, 75, 3, 5, 2, 4, 1, 2, 1},     // NHWC channel tails
      {1, 300, 5, 40, 2, 2, 2, 2, 0, 0, 0},    // NHWC broadcast, several pixel blocks
      {1, 3, 30, 100, 13, 6, 3, 5, 6, 3, 1},   // taps > 2 both ways
      {2, 1, 90, 7, 90, 1, 1, 1, 0, 0, 0},     // ring of 90 slots (more than 64)
      {3, 64, 7, 7, 7, 7, 7, 7, 0, 0, 0},      // global
      {2, 20, 5, 6, 3, 4, 5, 5, 1, 1, 0},      // one window per plane, not all of it
      {1, 2, 9, 10, 3, 41, 1, 1, 1, 20, 1},    // kernel far wider than the input: NCHW per pixel
      {1, 2, 3, 200, 2, 40, 1, 2, 0, 20, 0},   // more than 16 taps: NCHW per pixel
      {1, 2, 8, 999, 2, 2, 2, 2, 0, 0, 0},
      {1, 1, 20, 200, 3, 16, 1, 1, 1, 8, 0},
      {2, 20, 11, 11, 2, 2, 4, 4, 0, 0, 0},    // stride > kernel: zero gaps
      {40, 3, 5, 6, 5, 6, 5, 6, 0, 0, 0},      // planes grouped into units
  };
  const char* const settings[][2] = {{nullptr, nullptr}, {"1", nullptr}, {nullptr, "avx2"}, {"1", "base"}};
  for (const auto& setting : settings) {
    // Read when a plan is created.
    if (setting[0]) setenv("AVGPOOL_CPU_BWD_NT", setting[0], 1);
    if (setting[1]) setenv("AVGPOOL_CPU_ISA", setting[1], 1);
    for (const Shape& s : shapes)
      for (int dtype = 0; dtype < 4; ++dtype)
        for (int layout = 0; layout < 2; ++layout)
          for (int numerics = 0; numerics < 2; ++numerics) {
            const bool defaults = setting[0] == nullptr && setting[1] == nullptr;
            // Forced settings on half the combinations (for time): every dtype in both layouts.
            if (!defaults && (dtype + numerics) % 2 != layout) continue;
            avgpool_params p = shape_params(s.n, s.c, s.h, s.w, s.kh, s.kw, s.sh, s.sw, s.ph, s.pw, s.ceil);
            p.count_include_pad = (int)((s.w + dtype) % 2);
            p.dtype = (avgpool_dtype)dtype;
            p.layout = (avgpool_layout)layout;
            p.numerics = (avgpool_numerics)numerics;
            CAPTURE(describe(p));
            const PlanSizes sz = sizes_of(p);
            std::vector<unsigned char> g((size_t)(sz.dst * element_size(p.dtype)));
            fill_random(p.dtype, g.data(), sz.dst, 7, -1.0, 1.0);
            CHECK(check_backward_impls(p, g.data()) >= 2);
          }
    unsetenv("AVGPOOL_CPU_BWD_NT");
    unsetenv("AVGPOOL_CPU_ISA");
  }
}

TEST_CASE("backward: grad_input fully overwritten, deterministic across runs and thread counts") {
  std::mt19937_64 rng(99);
  RandomParamsLimits lim;
  lim.max_hw = 70;
  lim.max_c = 20;
  for (int iter = 0; iter < 12; ++iter) {
    avgpool_params p = random_params(rng, lim);
    const PlanSizes s = sizes_of(p);
    const int64_t es = element_size(p.dtype);
    std::vector<unsigned char> g((size_t)(s.dst * es));
    fill_random(p.dtype, g.data(), s.dst, (uint64_t)iter, -1.0, 1.0);
    for (const std::string& impl : host_backward_impl_names()) {
      avgpool_plan* plan = forced_backward_plan(impl, p);
      if (plan == nullptr) continue;
      // Two different fills, two thread counts: identical bytes.
      std::vector<unsigned char> a((size_t)(s.src * es), 0xA5), b((size_t)(s.src * es), 0x5A);
#if defined(_OPENMP)
      const int threads = omp_get_max_threads();
      omp_set_num_threads(1);
#endif
      REQUIRE(avgpool_plan_backward(plan, g.data(), a.data(), nullptr) == AVGPOOL_SUCCESS);
#if defined(_OPENMP)
      omp_set_num_threads(threads > 1 ? threads : 2);
#endif
      REQUIRE(avgpool_plan_backward(plan, g.data(), b.data(), nullptr) == AVGPOOL_SUCCESS);
#if defined(_OPENMP)
      omp_set_num_threads(threads);
#endif
      CHECK_MESSAGE(a == b, impl << ": " << describe(p));
      avgpool_plan_destroy(plan);
    }
  }
}

TEST_CASE("backward: several threads on one plan give the single-threaded bytes") {
  avgpool_params p = shape_params(2, 16, 40, 44, 3, 3, 1, 1, 1, 1, 0);
  for (const std::string& impl : {std::string("cpu:backward_gather"), std::string("reference_backward")}) {
    avgpool_params q = p;
    q.backend = backend_of_impl(impl);
    avgpool_plan* plan = nullptr;
    REQUIRE(avgpool_plan_create_with_impls(&q, nullptr, impl.c_str(), &plan) == AVGPOOL_SUCCESS);
    const PlanSizes s = sizes_of(q);
    std::vector<float> g((size_t)s.dst), want((size_t)s.src);
    fill_random(AVGPOOL_DTYPE_F32, g.data(), s.dst, 5, -1.0, 1.0);
    REQUIRE(avgpool_plan_backward(plan, g.data(), want.data(), nullptr) == AVGPOOL_SUCCESS);
    std::vector<std::vector<float>> got(4, std::vector<float>((size_t)s.src));
    std::vector<int> ok(4, 1);
    std::vector<std::thread> threads;
    for (int t = 0; t < 4; ++t)
      threads.emplace_back([&, t] {
        for (int r = 0; r < 20 && ok[(size_t)t]; ++r)
          ok[(size_t)t] = avgpool_plan_backward(plan, g.data(), got[(size_t)t].data(), nullptr) == AVGPOOL_SUCCESS &&
                          got[(size_t)t] == want;
      });
    for (std::thread& t : threads) t.join();
    for (int t = 0; t < 4; ++t) CHECK_MESSAGE(ok[(size_t)t], impl << " thread " << t);
    avgpool_plan_destroy(plan);
  }
}

TEST_CASE("backward: NaN and Inf in grad_output propagate as in PyTorch") {
  // PyTorch: an element is NaN when one of its terms is NaN or its terms
  // hold both +Inf and -Inf; +-Inf when they hold that infinity only.
  std::mt19937_64 rng(4242);
  RandomParamsLimits lim;
  lim.max_hw = 24;
  int64_t specials = 0;
  for (int iter = 0; iter < 120; ++iter) {
    avgpool_params p = random_params(rng, lim);
    const PlanSizes s = sizes_of(p);
    const int64_t es = element_size(p.dtype);
    std::vector<unsigned char> g((size_t)(s.dst * es)), ref((size_t)(s.src * es));
    fill_random(p.dtype, g.data(), s.dst, (uint64_t)iter, -4.0, 4.0);
    sprinkle_specials(p.dtype, g.data(), s.dst, std::vector<double>{0.005, 0.05, 0.3}[(size_t)iter % 3], rng);
    REQUIRE(run_reference_backward(p, g.data(), ref.data()) == AVGPOOL_SUCCESS);
    // The reference against the rule, every element.
    const int64_t sh = p.stride_h ? p.stride_h : p.kernel_h, sw = p.stride_w ? p.stride_w : p.kernel_w;
    const int64_t in_dims[4] = {p.n, p.c, p.h, p.w};
    int bad = 0;
    for (int64_t n = 0; n < p.n; ++n)
      for (int64_t c = 0; c < p.c; ++c)
        for (int64_t y = 0; y < p.h; ++y)
          for (int64_t x = 0; x < p.w; ++x) {
            bool nan = false, pos = false, neg = false;
            for (int64_t oy = 0; oy < s.dims[2]; ++oy)
              for (int64_t ox = 0; ox < s.dims[3]; ++ox) {
                const int64_t ys = oy * sh - p.padding_h, xs = ox * sw - p.padding_w;
                if (y < ys || y >= ys + p.kernel_h || x < xs || x >= xs + p.kernel_w) continue;
                const double v = load_double(p.dtype, g.data(), dense_index(p.layout, s.dims, n, c, oy, ox));
                nan |= isnan(v); pos |= v == INFINITY; neg |= v == -INFINITY;
              }
            const double r = load_double(p.dtype, ref.data(), dense_index(p.layout, in_dims, n, c, y, x));
            const bool want_nan = nan || (pos && neg);
            const bool ok = want_nan ? isnan(r) : pos ? r == INFINITY : neg ? r == -INFINITY : isfinite(r);
            bad += !ok;
            specials += want_nan || pos || neg;
          }
    CHECK_MESSAGE(bad == 0, describe(p));
    CHECK(check_backward_impls(p, g.data()) >= 2);
  }
  CHECK(specials > 1000);
}

TEST_CASE("backward: bad calls fail with a message naming the argument and leave grad_input untouched") {
  avgpool_params p = shape_params(2, 3, 9, 8, 3, 3, 2, 2, 1, 1, 0);
  for (avgpool_backend b : {AVGPOOL_BACKEND_REFERENCE, AVGPOOL_BACKEND_CPU}) {
    p.backend = b;
    avgpool_plan* plan = nullptr;
    REQUIRE(avgpool_plan_create(&p, &plan) == AVGPOOL_SUCCESS);
    const PlanSizes s = sizes_of(p);
    std::vector<float> g((size_t)s.dst + 1, 1.0f);
    std::vector<float> gin((size_t)s.src + 16);
    poison(gin.data(), (int64_t)gin.size() * 4);
    auto untouched = [&] { return is_poisoned(gin.data(), (int64_t)gin.size() * 4); };
    auto message = [] { return std::string(avgpool_last_error_message()); };

    CHECK(avgpool_plan_backward(nullptr, g.data(), gin.data(), nullptr) == AVGPOOL_ERROR_INVALID_ARGUMENT);
    CHECK(message() == "plan is NULL");
    CHECK(avgpool_plan_backward(plan, nullptr, gin.data(), nullptr) == AVGPOOL_ERROR_INVALID_ARGUMENT);
    CHECK(message() == "grad_output is NULL");
    CHECK(avgpool_plan_backward(plan, g.data(), nullptr, nullptr) == AVGPOOL_ERROR_INVALID_ARGUMENT);
    CHECK(message() == "grad_input is NULL");
    CHECK(avgpool_plan_backward(plan, reinterpret_cast<const char*>(g.data()) + 1, gin.data(), nullptr) ==
          AVGPOOL_ERROR_INVALID_ARGUMENT);
    CHECK(message().find("grad_output") != std::string::npos);
    CHECK(message().find("aligned") != std::string::npos);
    CHECK(avgpool_plan_backward(plan, g.data(), reinterpret_cast<char*>(gin.data()) + 2, nullptr) ==
          AVGPOOL_ERROR_INVALID_ARGUMENT);
    CHECK(message().find("grad_input") != std::string::npos);
    // grad_output inside grad_input's range.
    CHECK(avgpool_plan_backward(plan, gin.data() + 8, gin.data(), nullptr) == AVGPOOL_ERROR_INVALID_ARGUMENT);
    CHECK(message().find("overlap") != std::string::npos);
    CHECK(message().find("grad_output") != std::string::npos);
    CHECK(untouched());
    // The one-call function refuses bad parameters before anything.
    avgpool_params bad = p;
    bad.padding_h = 2;
    CHECK(avgpool_backward(&bad, g.data(), gin.data(), nullptr) == AVGPOOL_ERROR_INVALID_ARGUMENT);
    CHECK(message().find("padding_h (2)") != std::string::npos);
    CHECK(untouched());
    avgpool_plan_destroy(plan);

    // n == 0: success, nothing read or written.
    avgpool_params empty = p;
    empty.n = 0;
    CHECK(avgpool_backward(&empty, nullptr, gin.data(), nullptr) == AVGPOOL_SUCCESS);
    CHECK(untouched());
  }
}

TEST_CASE("backward: forcing a backward implementation that declines, or of another backend") {
  avgpool_params p = shape_params(1, 2, 9, 9, 3, 3, 1, 1, 1, 1, 0);
  p.backend = AVGPOOL_BACKEND_CPU;
  avgpool_plan* plan = reinterpret_cast<avgpool_plan*>(0x1);
  CHECK(avgpool_plan_create_with_impls(&p, nullptr, "cpu:backward_broadcast", &plan) == AVGPOOL_ERROR_UNSUPPORTED);
  CHECK(std::string(avgpool_last_error_message()).find("stride >= kernel") != std::string::npos);
  CHECK(plan == reinterpret_cast<avgpool_plan*>(0x1));
  CHECK(avgpool_impl_accepts("cpu:backward_broadcast", &p) == AVGPOOL_ERROR_UNSUPPORTED);
  CHECK(avgpool_impl_accepts("cpu:backward_gather", &p) == AVGPOOL_SUCCESS);
  // A forward name where a backward one is expected, and the reverse.
  CHECK(avgpool_plan_create_with_impls(&p, nullptr, "cpu:simd", &plan) == AVGPOOL_ERROR_INVALID_ARGUMENT);
  CHECK(std::string(avgpool_last_error_message()).find("forward implementation") != std::string::npos);
  CHECK(avgpool_plan_create_with_impls(&p, "cpu:backward_gather", nullptr, &plan) == AVGPOOL_ERROR_INVALID_ARGUMENT);
  CHECK(avgpool_plan_create_with_impl(&p, "reference_backward", &plan) == AVGPOOL_ERROR_INVALID_ARGUMENT);
  // Forward and backward of different backends.
  CHECK(avgpool_plan_create_with_impls(&p, "cpu:simd", "reference_backward", &plan) ==
        AVGPOOL_ERROR_INVALID_ARGUMENT);
  CHECK(std::string(avgpool_last_error_message()).find("backend") != std::string::npos);
  CHECK(plan == reinterpret_cast<avgpool_plan*>(0x1));
}

TEST_CASE("backward: a plan whose problem no CPU backward takes still runs forward, and says why") {
  // A million output rows, each window a million rows tall: every input row
  // is in up to 2^20 windows (the CPU backward's ring would need terabytes).
  avgpool_params p = shape_params(1, 1, (int64_t{3} << 20), 1, (int64_t{1} << 20) + 1, 1, 1, 1, 0, 0, 0);
  p.backend = AVGPOOL_BACKEND_CPU;
  avgpool_plan* plan = nullptr;
  REQUIRE(avgpool_plan_create(&p, &plan) == AVGPOOL_SUCCESS);
  const char* name = "untouched";
  CHECK(avgpool_plan_backward_impl_name(plan, &name) == AVGPOOL_ERROR_UNSUPPORTED);
  const std::string why = avgpool_last_error_message();
  CHECK(why.find("cover one input element") != std::string::npos);
  CHECK(std::string(name) == "untouched");
  float g = 1.0f, gin = -7.0f;
  CHECK(avgpool_plan_backward(plan, &g, &gin, nullptr) == AVGPOOL_ERROR_UNSUPPORTED);
  CHECK(std::string(avgpool_last_error_message()) == why);
  CHECK(gin == -7.0f);
  CHECK(avgpool_impl_accepts("cpu:backward_gather", &p) == AVGPOOL_ERROR_UNSUPPORTED);
  avgpool_plan_destroy(plan);
}

TEST_CASE("avgpool_reference_grad_inputs: checks its arguments, agrees with the reference backward") {
  avgpool_params p = shape_params(2, 3, 11, 13, 3, 4, 2, 3, 1, 2, 1);
  for (int dtype = 0; dtype < 4; ++dtype)
    for (int layout = 0; layout < 2; ++layout)
      for (int numerics = 0; numerics < 2; ++numerics) {
        p.dtype = (avgpool_dtype)dtype;
        p.layout = (avgpool_layout)layout;
        p.numerics = (avgpool_numerics)numerics;
        p.backend = AVGPOOL_BACKEND_CPU;
        const PlanSizes s = sizes_of(p);
        const int64_t es = element_size(p.dtype);
        std::vector<unsigned char> g((size_t)(s.dst * es)), gin((size_t)(s.src * es));
        fill_random(p.dtype, g.data(), s.dst, 17, -1.0, 1.0);
        REQUIRE(run_reference_backward(p, g.data(), gin.data()) == AVGPOOL_SUCCESS);
        avgpool_plan* plan = nullptr;
        REQUIRE(avgpool_plan_create(&p, &plan) == AVGPOOL_SUCCESS);
        std::vector<int64_t> idx((size_t)s.src);
        for (int64_t i = 0; i < s.src; ++i) idx[(size_t)i] = s.src - 1 - i;
        std::vector<double> values((size_t)s.src);
        REQUIRE(avgpool_reference_grad_inputs(plan, g.data(), s.src, idx.data(), values.data()) == AVGPOOL_SUCCESS);
        int bad = 0;
        for (int64_t i = 0; i < s.src; ++i) {
          const double want = load_double(p.dtype, gin.data(), idx[(size_t)i]);
          bad += !(values[(size_t)i] == want);
        }
        CHECK_MESSAGE(bad == 0, describe(p));
        avgpool_plan_destroy(plan);
      }

  p.dtype = AVGPOOL_DTYPE_F32;
  p.layout = AVGPOOL_LAYOUT_NCHW;
  avgpool_plan* plan = nullptr;
  REQUIRE(avgpool_plan_create(&p, &plan) == AVGPOOL_SUCCESS);
  const PlanSizes s = sizes_of(p);
  std::vector<float> g((size_t)s.dst, 1.0f);
  int64_t idx[2] = {0, s.src - 1};
  double values[2] = {-7, -7};
  auto message = [] { return std::string(avgpool_last_error_message()); };
  CHECK(avgpool_reference_grad_inputs(nullptr, g.data(), 2, idx, values) == AVGPOOL_ERROR_INVALID_ARGUMENT);
  CHECK(message() == "plan is NULL");
  CHECK(avgpool_reference_grad_inputs(plan, g.data(), -1, idx, values) == AVGPOOL_ERROR_INVALID_ARGUMENT);
  CHECK(message() == "count (-1) is negative");
  CHECK(avgpool_reference_grad_inputs(plan, nullptr, 2, idx, values) == AVGPOOL_ERROR_INVALID_ARGUMENT);
  CHECK(message() == "grad_output_host is NULL");
  CHECK(avgpool_reference_grad_inputs(plan, g.data(), 2, nullptr, values) == AVGPOOL_ERROR_INVALID_ARGUMENT);
  CHECK(message() == "indices is NULL");
  CHECK(avgpool_reference_grad_inputs(plan, g.data(), 2, idx, nullptr) == AVGPOOL_ERROR_INVALID_ARGUMENT);
  CHECK(message() == "values is NULL");
  CHECK(avgpool_reference_grad_inputs(plan, g.data(), 0, nullptr, nullptr) == AVGPOOL_SUCCESS);
  int64_t outside[2] = {0, s.src};
  CHECK(avgpool_reference_grad_inputs(plan, g.data(), 2, outside, values) == AVGPOOL_ERROR_INVALID_ARGUMENT);
  CHECK(message().find("indices[1] (" + std::to_string(s.src) + ") is outside") != std::string::npos);
  CHECK(values[0] == -7);  // nothing written on failure
  CHECK(values[1] == -7);
  avgpool_plan_destroy(plan);
}

}  // TEST_SUITE
