// The backward beyond 2^31 elements on the CPU backend (label large): an f16
// grad_input of 2 x 1 x 32800 x 32800 (2,151,680,000 elements, 4.3 GB) from
//  A) kernel 2, stride 2 (every input in one window): grad_output of
//     2 x 1 x 16400 x 16400; every backward implementation that accepts it;
//  B) kernel 3, stride 2, padding 1, ceil_mode, include-pad: the last
//     window of each axis starts at 32799 and hangs over the padding.
// pytorch numerics, grad_output small integers. Checks: no element left
// unwritten (the poison pattern cannot be a result), the last two rows and
// columns of the last plane in full, the first row of the first plane and a
// scatter, bitwise against avgpool_reference_grad_inputs; A also against
// g / 4 from the fill formula (exact) with 64-bit positions.
#include <doctest/doctest.h>
#include <stdint.h>
#include <stdlib.h>

#include <chrono>
#include <random>
#include <string>
#include <vector>

#include "check.h"
#include "tensor_util.h"

using namespace avgpool_support;

namespace {

constexpr int64_t kSide = 32800;
constexpr int64_t kPlanes = 2;
constexpr uint64_t kSeed = 77;
constexpr int kRange = 8;

struct Case {
  const char* name;
  int64_t k, s, pad;
  int ceil_mode;
};

void run_case(const Case& cs, uint16_t* gin) {
  avgpool_params p;
  avgpool_params_init(&p);
  p.n = kPlanes;
  p.h = p.w = kSide;
  p.kernel_h = p.kernel_w = cs.k;
  p.stride_h = p.stride_w = cs.s;
  p.padding_h = p.padding_w = cs.pad;
  p.ceil_mode = cs.ceil_mode;
  p.dtype = AVGPOOL_DTYPE_F16;
  p.numerics = AVGPOOL_NUMERICS_PYTORCH;
  p.backend = AVGPOOL_BACKEND_CPU;

  avgpool_plan* probe = nullptr;
  REQUIRE(avgpool_plan_create(&p, &probe) == AVGPOOL_SUCCESS);
  int64_t dims[4], src_n = 0, dst_n = 0;
  avgpool_plan_output_dims(probe, dims);
  avgpool_plan_sizes(probe, &src_n, &dst_n);
  avgpool_plan_destroy(probe);
  REQUIRE(src_n > (int64_t{1} << 31));
  const int64_t oside = dims[2];
  REQUIRE(oside == (cs.k == 2 ? kSide / 2 : 16401));
  std::vector<uint16_t> gout((size_t)dst_n);
  fill_small_ints(AVGPOOL_DTYPE_F16, gout.data(), dst_n, kSeed, kRange);

  std::vector<std::string> impls = backward_impl_names("cpu:");
  if (impls.empty()) impls.push_back("reference_backward");
  int ran = 0;
  for (const std::string& impl : impls) {
    const std::string case_name = cs.name;
    CAPTURE(case_name);
    CAPTURE(impl);
    avgpool_params q = p;
    if (impl == "reference_backward") q.backend = AVGPOOL_BACKEND_REFERENCE;
    avgpool_plan* plan = nullptr;
    const avgpool_status st = avgpool_plan_create_with_impls(&q, nullptr, impl.c_str(), &plan);
    if (st == AVGPOOL_ERROR_UNSUPPORTED) continue;
    REQUIRE_MESSAGE(st == AVGPOOL_SUCCESS, avgpool_last_error_message());
    ++ran;
    poison(gin, src_n * 2);
    const auto t0 = std::chrono::steady_clock::now();
    REQUIRE_MESSAGE(avgpool_plan_backward(plan, gout.data(), gin, nullptr) == AVGPOOL_SUCCESS,
                    avgpool_last_error_message());
    const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    MESSAGE(case_name << " on " << impl << ": " << src_n << " grad_input elements in " << secs << " s");
    CHECK(count_poisoned_elements(gin, src_n, 2) == 0);

    std::vector<int64_t> idx;
    const int64_t plane = kSide * kSide, last = (kPlanes - 1) * plane;
    for (int64_t i = 0; i < kSide; ++i) {
      for (int64_t r : {kSide - 1, kSide - 2}) {
        idx.push_back(last + r * kSide + i);
        idx.push_back(last + i * kSide + r);
      }
      if (i % 5 == 0) idx.push_back(i);
    }
    std::mt19937_64 rng(11);
    for (int i = 0; i < 20000; ++i) idx.push_back((int64_t)(rng() % (uint64_t)src_n));
    std::vector<double> want(idx.size());
    REQUIRE(avgpool_reference_grad_inputs(plan, gout.data(), (int64_t)idx.size(), idx.data(), want.data()) ==
            AVGPOOL_SUCCESS);
    int64_t bad = 0, analytic_bad = 0;
    for (size_t i = 0; i < idx.size(); ++i) {
      const double got = load_double(AVGPOOL_DTYPE_F16, gin, idx[i]);
      if (!(got == want[i]) && bad++ < 5) MESSAGE("element " << idx[i] << ": got " << got << ", reference " << want[i]);
      if (cs.k == 2) {
        const int64_t pl = idx[i] / plane, y = idx[i] % plane / kSide, x = idx[i] % kSide;
        const int64_t o = (pl * oside + y / 2) * oside + x / 2;
        analytic_bad += got != small_int_at(kSeed, o, kRange) / 4.0;  // exact in f16
      }
    }
    CHECK(bad == 0);
    CHECK(analytic_bad == 0);
    avgpool_plan_destroy(plan);
  }
  CHECK(ran >= 1);
}

}  // namespace

TEST_SUITE("large") {

TEST_CASE("CPU backward: f16 grad_input beyond 2^31 elements, ceil_mode overhang at the far end") {
  const int64_t n = kPlanes * kSide * kSide;
  REQUIRE(n > (int64_t{1} << 31));
  uint16_t* gin = static_cast<uint16_t*>(malloc((size_t)n * 2));
  REQUIRE(gin != nullptr);
  run_case({"A k2 s2 (broadcast)", 2, 2, 0, 0}, gin);
  run_case({"B k3 s2 p1 ceil include-pad (far-end overhang)", 3, 2, 1, 1}, gin);
  free(gin);
}

}  // TEST_SUITE
