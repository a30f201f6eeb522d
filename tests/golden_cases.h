// The golden files for doctest cases (forward and backward): each read once,
// REQUIRE'd to load.
#pragma once

#include <doctest/doctest.h>

#include <math.h>
#include <string.h>

#include <algorithm>
#include <string>
#include <vector>

#include "golden_file.h"
#include "tensor_util.h"

template <typename File> const File& required_golden(const File* (*load)(std::string* error)) {
  std::string error;
  const File* file = load(&error);
  REQUIRE_MESSAGE(file != nullptr, error);
  return *file;
}

inline const avgpool_support::GoldenFile& golden() { return required_golden(avgpool_support::default_golden); }

inline const avgpool_support::GoldenBackwardFile& golden_backward() {
  return required_golden(avgpool_support::default_golden_backward);
}

// The reference backend in fast numerics and float32 on every case (run is
// avgpool_forward or avgpool_backward, on the case's `input`): at most one
// float32 ulp from PyTorch's float64 values `want`.
template <typename Case>
void check_reference_fast_f32(const std::vector<Case>& cases, const std::vector<float> Case::*input,
                              const std::vector<double> Case::*want,
                              avgpool_status (*run)(const avgpool_params*, const void*, void*, void*)) {
  for (const Case& gc : cases) {
    CAPTURE(gc.name);
    const avgpool_params p = avgpool_support::golden_params(gc, AVGPOOL_BACKEND_REFERENCE, AVGPOOL_NUMERICS_FAST);
    const std::vector<double>& w = gc.*want;
    std::vector<float> got(w.size());
    REQUIRE(run(&p, (gc.*input).data(), got.data(), nullptr) == AVGPOOL_SUCCESS);
    int64_t worst = 0;
    for (size_t i = 0; i < got.size(); ++i)
      worst = std::max(worst, avgpool_support::ulp_distance_f32(got[i], (float)w[i]));
    CHECK(worst <= 1);
  }
}

// PyTorch's gradient for dtype, NCHW, as doubles.
inline std::vector<double> pytorch_gradient(const avgpool_support::GoldenBackwardCase& gc, avgpool_dtype dtype) {
  switch (dtype) {
    case AVGPOOL_DTYPE_F64: return gc.gin;
    case AVGPOOL_DTYPE_F32: return std::vector<double>(gc.gin32.begin(), gc.gin32.end());
    case AVGPOOL_DTYPE_F16: return std::vector<double>(gc.gin16.begin(), gc.gin16.end());
    default: return std::vector<double>(gc.ginbf16.begin(), gc.ginbf16.end());
  }
}

// Elements of got (p's dtype and layout) that differ bitwise from want
// (NCHW doubles exact in the dtype); NaN matches NaN.
inline int64_t bitwise_mismatches(const avgpool_params& p, const void* got, const std::vector<double>& want,
                           std::string* first) {
  const int64_t d[4] = {p.n, p.c, p.h, p.w};
  const int64_t es = avgpool_support::element_size(p.dtype);
  std::vector<unsigned char> expected((size_t)es);
  int64_t bad = 0;
  for (int64_t n = 0; n < p.n; ++n)
    for (int64_t c = 0; c < p.c; ++c)
      for (int64_t y = 0; y < p.h; ++y)
        for (int64_t x = 0; x < p.w; ++x) {
          const int64_t i = ((n * p.c + c) * p.h + y) * p.w + x, o = avgpool_support::dense_index(p.layout, d, n, c, y, x);
          avgpool_support::store_double(p.dtype, expected.data(), 0, want[(size_t)i]);
          const double g = avgpool_support::load_double(p.dtype, got, o);
          if (memcmp(static_cast<const unsigned char*>(got) + o * es, expected.data(), (size_t)es) != 0 &&
              !(isnan(g) && isnan(want[(size_t)i]))) {
            if (bad++ == 0)
              *first = "element (" + std::to_string(n) + "," + std::to_string(c) + "," + std::to_string(y) + "," +
                       std::to_string(x) + "): got " + std::to_string(g) + ", PyTorch " +
                       std::to_string(want[(size_t)i]);
          }
        }
  return bad;
}
