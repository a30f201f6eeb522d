// Helpers shared by the CPU backend's forward tests (test_cpu_backend.cpp,
// test_cpu_large_window.cpp): running implementations by name into guarded
// buffers and checking them against the reference.
#pragma once

#include <doctest/doctest.h>
#include <stdint.h>
#include <string.h>

#include <initializer_list>
#include <string>
#include <vector>

#include "avgpool/avgpool.h"
#include "check.h"
#include "tensor_util.h"

namespace cpu_test {

using namespace avgpool_support;

inline std::vector<std::string> cpu_impl_names() { return impl_names("cpu:"); }

// A dst buffer with poisoned guard bands on both sides.
struct Guarded {
  static constexpr int64_t kGuard = 64;  // elements each side
  std::vector<unsigned char> bytes;
  int64_t esize = 0, count = 0;
  Guarded(avgpool_dtype dtype, int64_t n) : esize(element_size(dtype)), count(n) {
    bytes.resize((size_t)((n + 2 * kGuard) * esize));
    poison(bytes.data(), (int64_t)bytes.size());
  }
  void* data() { return bytes.data() + kGuard * esize; }
  bool guards_intact() const {
    return is_poisoned(bytes.data(), kGuard * esize) &&
           is_poisoned(bytes.data() + (kGuard + count) * esize, kGuard * esize);
  }
};

// Runs implementation `impl` on p and src into a guarded buffer; returns
// false (and says why) when the implementation declines.
inline bool run_impl(const std::string& impl, const avgpool_params& p, const void* src, Guarded* out) {
  avgpool_plan* plan = nullptr;
  const avgpool_status s = avgpool_plan_create_with_impl(&p, impl.c_str(), &plan);
  if (s == AVGPOOL_ERROR_UNSUPPORTED) return false;
  REQUIRE_MESSAGE(s == AVGPOOL_SUCCESS, avgpool_last_error_message());
  REQUIRE(avgpool_plan_execute(plan, src, out->data(), nullptr) == AVGPOOL_SUCCESS);
  avgpool_plan_destroy(plan);
  return true;
}

inline int64_t dst_count(const avgpool_params& p) {
  int64_t s = 0, d = 0;
  REQUIRE(element_counts(p, &s, &d));
  return d;
}

inline int64_t src_count(const avgpool_params& p) {
  return p.n * p.c * p.h * p.w;
}

// Converts an NCHW float tensor to p's dtype and layout.
inline std::vector<unsigned char> convert_input(const avgpool_params& p, const std::vector<float>& nchw) {
  std::vector<unsigned char> out((size_t)(src_count(p) * element_size(p.dtype)));
  for (int64_t n = 0; n < p.n; ++n)
    for (int64_t c = 0; c < p.c; ++c)
      for (int64_t y = 0; y < p.h; ++y)
        for (int64_t x = 0; x < p.w; ++x) {
          const int64_t i = ((n * p.c + c) * p.h + y) * p.w + x;
          const int64_t o = p.layout == AVGPOOL_LAYOUT_NCHW ? i : ((n * p.h + y) * p.w + x) * p.c + c;
          store_double(p.dtype, out.data(), o, nchw[(size_t)i]);
        }
  return out;
}

// Checks every CPU implementation that accepts p against the reference.
// Returns how many implementations ran.
inline int check_all_impls(const avgpool_params& p, const void* src) {
  const int64_t nd = dst_count(p);
  std::vector<unsigned char> ref((size_t)(nd * element_size(p.dtype)));
  REQUIRE(run_reference(p, src, ref.data()) == AVGPOOL_SUCCESS);
  int ran = 0;
  for (const std::string& impl : cpu_impl_names()) {
    Guarded got(p.dtype, nd);
    if (!run_impl(impl, p, src, &got)) continue;
    ++ran;
    const Mismatch m = compare_to_reference(p, src, got.data(), ref.data());
    CHECK_MESSAGE(m.count == 0, impl << ": " << describe(p) << ": " << m.message());
    CHECK_MESSAGE(got.guards_intact(), impl << ": " << describe(p) << ": wrote outside dst");
  }
  return ran;
}

// Every dtype, numerics and count_include_pad of p, in each of layouts, on
// random inputs (seed), through every CPU implementation that accepts it.
inline void check_variants(avgpool_params p, std::initializer_list<avgpool_layout> layouts, uint64_t seed) {
  p.backend = AVGPOOL_BACKEND_CPU;
  for (int dtype = 0; dtype < 4; ++dtype)
    for (avgpool_layout layout : layouts)
      for (int numerics = 0; numerics < 2; ++numerics)
        for (int include = 0; include < 2; ++include) {
          p.count_include_pad = include;
          p.dtype = (avgpool_dtype)dtype;
          p.layout = layout;
          p.numerics = (avgpool_numerics)numerics;
          std::vector<unsigned char> src((size_t)(src_count(p) * element_size(p.dtype)));
          fill_random(p.dtype, src.data(), src_count(p), seed, -1.0, 1.0);
          CHECK(check_all_impls(p, src.data()) >= 1);
        }
}

}  // namespace cpu_test
