// The golden files for doctest cases (forward and backward): each read once,
// REQUIRE'd to load.
#pragma once

#include <doctest/doctest.h>

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
