// Helpers shared by the CPU backend's forward tests (test_cpu_backend.cpp,
// test_cpu_large_window.cpp): the CPU implementations run by name into
// guarded buffers and checked against the reference (impl_helpers.h).
#pragma once

#include <doctest/doctest.h>
#include <stdint.h>

#include <initializer_list>
#include <string>
#include <vector>

#include "avgpool/avgpool.h"
#include "check.h"
#include "impl_helpers.h"
#include "tensor_util.h"

namespace cpu_test {

using namespace avgpool_support;

inline std::vector<std::string> cpu_impl_names() { return impl_names("cpu:"); }

using Guarded = GuardedBuffer;

// Runs implementation `impl` on p and src into a guarded buffer; false when
// the implementation declines.
inline bool run_impl(const std::string& impl, const avgpool_params& p, const void* src, Guarded* out) {
  return run_forward_impl(impl, p, src, out->data());
}

inline int64_t dst_count(const avgpool_params& p) { return sizes_of(p).dst; }

inline int64_t src_count(const avgpool_params& p) { return p.n * p.c * p.h * p.w; }

// An NCHW float tensor converted to p's dtype and layout.
inline std::vector<unsigned char> convert_input(const avgpool_params& p, const std::vector<float>& nchw) {
  const int64_t dims[4] = {p.n, p.c, p.h, p.w};
  return to_tensor(nchw, dims, p.dtype, p.layout);
}

// Checks every CPU implementation that accepts p against the reference.
// Returns how many implementations ran.
inline int check_all_impls(const avgpool_params& p, const void* src) {
  return check_against_reference(cpu_impl_names(), p, src, false);
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
