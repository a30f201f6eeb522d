// Helpers shared by the implementation tests: the golden files, a guarded
// output buffer, running one forward or backward implementation by name, and
// checking every implementation that accepts a problem against the reference.
#pragma once

#include <doctest/doctest.h>
#include <stdint.h>

#include <random>
#include <string>
#include <vector>

#include "avgpool/avgpool.h"
#include "check.h"
#include "golden_cases.h"
#include "tensor_util.h"

// A buffer with poisoned guard bands on both sides; the inside poisoned too
// (so an element left unwritten shows).
struct GuardedBuffer {
  static constexpr int64_t kGuard = 64;  // elements each side
  std::vector<unsigned char> bytes;
  int64_t esize = 0, count = 0;
  GuardedBuffer(avgpool_dtype dtype, int64_t n) : esize(avgpool_support::element_size(dtype)), count(n) {
    bytes.resize((size_t)((n + 2 * kGuard) * esize));
    avgpool_support::poison(bytes.data(), (int64_t)bytes.size());
  }
  void* data() { return bytes.data() + kGuard * esize; }
  const void* data() const { return bytes.data() + kGuard * esize; }
  bool guards_intact() const {
    return avgpool_support::is_poisoned(bytes.data(), kGuard * esize) &&
           avgpool_support::is_poisoned(bytes.data() + (kGuard + count) * esize, kGuard * esize);
  }
};

// Element counts and output dims of valid p (the test stops if p is refused).
inline avgpool_support::PlanSizes sizes_of(const avgpool_params& p) {
  const avgpool_support::PlanSizes s = avgpool_support::plan_sizes(p);
  REQUIRE(s.src >= 0);
  return s;
}

// The backend an implementation name belongs to.
inline avgpool_backend backend_of_impl(const std::string& impl) {
  if (impl.rfind("cpu:", 0) == 0) return AVGPOOL_BACKEND_CPU;
  if (impl.rfind("cuda:", 0) == 0) return AVGPOOL_BACKEND_CUDA;
  return AVGPOOL_BACKEND_REFERENCE;
}

// A plan whose backward is implementation `impl` (forced; the forward is
// its backend's AUTO choice), or nullptr when impl declines p.
inline avgpool_plan* forced_backward_plan(const std::string& impl, avgpool_params p) {
  p.backend = backend_of_impl(impl);
  avgpool_plan* plan = nullptr;
  const avgpool_status s = avgpool_plan_create_with_impls(&p, nullptr, impl.c_str(), &plan);
  if (s == AVGPOOL_ERROR_UNSUPPORTED) return nullptr;
  REQUIRE_MESSAGE(s == AVGPOOL_SUCCESS, impl << ": " << avgpool_last_error_message());
  return plan;
}

// Runs forward implementation `impl` (forced) on p and src into out; false
// when it declines.
inline bool run_forward_impl(const std::string& impl, avgpool_params p, const void* src, void* out) {
  p.backend = backend_of_impl(impl);
  avgpool_plan* plan = nullptr;
  const avgpool_status s = avgpool_plan_create_with_impl(&p, impl.c_str(), &plan);
  if (s == AVGPOOL_ERROR_UNSUPPORTED) return false;
  REQUIRE_MESSAGE(s == AVGPOOL_SUCCESS, impl << ": " << avgpool_last_error_message());
  REQUIRE(avgpool_plan_execute(plan, src, out, nullptr) == AVGPOOL_SUCCESS);
  avgpool_plan_destroy(plan);
  return true;
}

// Runs backward implementation `impl` (forced) on p and grad_output into
// out; false when it declines.
inline bool run_backward_impl(const std::string& impl, const avgpool_params& p, const void* grad_output, void* out) {
  avgpool_plan* plan = forced_backward_plan(impl, p);
  if (plan == nullptr) return false;
  const char* chosen = nullptr;
  REQUIRE(avgpool_plan_backward_impl_name(plan, &chosen) == AVGPOOL_SUCCESS);
  CHECK(impl == chosen);
  const avgpool_status e = avgpool_plan_backward(plan, grad_output, out, nullptr);
  CHECK_MESSAGE(e == AVGPOOL_SUCCESS, impl << ": " << avgpool_last_error_message());
  avgpool_plan_destroy(plan);
  return true;
}

// A dense NCHW float tensor of dims d converted to dtype and layout.
inline std::vector<unsigned char> to_tensor(const std::vector<float>& nchw, const int64_t d[4], avgpool_dtype dtype,
                                            avgpool_layout layout) {
  const int64_t es = avgpool_support::element_size(dtype);
  std::vector<unsigned char> out((size_t)(d[0] * d[1] * d[2] * d[3] * es));
  for (int64_t n = 0; n < d[0]; ++n)
    for (int64_t c = 0; c < d[1]; ++c)
      for (int64_t y = 0; y < d[2]; ++y)
        for (int64_t x = 0; x < d[3]; ++x) {
          const int64_t i = ((n * d[1] + c) * d[2] + y) * d[3] + x;
          avgpool_support::store_double(dtype, out.data(), avgpool_support::dense_index(layout, d, n, c, y, x),
                                        nchw[(size_t)i]);
        }
  return out;
}

// Runs every implementation in impls that accepts p (forward on src, or
// backward on grad_output) into a guarded, poisoned buffer and checks it
// against the reference in p's numerics; returns how many ran.
inline int check_against_reference(const std::vector<std::string>& impls, const avgpool_params& p, const void* input,
                                   bool backward) {
  const avgpool_support::PlanSizes s = sizes_of(p);
  const int64_t out_n = backward ? s.src : s.dst;
  std::vector<unsigned char> ref((size_t)(out_n * avgpool_support::element_size(p.dtype)));
  const avgpool_status r = backward ? avgpool_support::run_reference_backward(p, input, ref.data())
                                    : avgpool_support::run_reference(p, input, ref.data());
  REQUIRE_MESSAGE(r == AVGPOOL_SUCCESS, avgpool_last_error_message());
  int ran = 0;
  for (const std::string& impl : impls) {
    GuardedBuffer got(p.dtype, out_n);
    if (!(backward ? run_backward_impl(impl, p, input, got.data()) : run_forward_impl(impl, p, input, got.data())))
      continue;
    ++ran;
    const avgpool_support::Mismatch m = backward
                                            ? avgpool_support::compare_backward_to_reference(p, input, got.data(), ref.data())
                                            : avgpool_support::compare_to_reference(p, input, got.data(), ref.data());
    CHECK_MESSAGE(m.count == 0, impl << ": " << avgpool_support::describe(p) << ": " << m.message());
    CHECK_MESSAGE(got.guards_intact(), impl << ": " << avgpool_support::describe(p) << ": wrote outside its output");
  }
  return ran;
}

// check_against_reference on `count` random problems (random_params with
// default limits, seeded) with random inputs; returns how many runs there were.
inline int check_random_problems(const std::vector<std::string>& impls, uint64_t seed, int count, bool backward) {
  std::mt19937_64 rng(seed);
  const avgpool_support::RandomParamsLimits limits;
  int ran = 0;
  for (int iter = 0; iter < count; ++iter) {
    const avgpool_params p = avgpool_support::random_params(rng, limits);
    const avgpool_support::PlanSizes s = sizes_of(p);
    const int64_t in_n = backward ? s.dst : s.src;
    std::vector<unsigned char> input((size_t)(in_n * avgpool_support::element_size(p.dtype)));
    avgpool_support::fill_random(p.dtype, input.data(), in_n, (uint64_t)iter, -2.0, 3.0);
    ran += check_against_reference(impls, p, input.data(), backward);
  }
  return ran;
}
