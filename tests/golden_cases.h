// The golden files for doctest cases (forward and backward): each read once,
// REQUIRE'd to load.
#pragma once

#include <doctest/doctest.h>

#include <string>

#include "golden_file.h"

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
