// The golden file for doctest cases: read once, REQUIRE'd to load.
#pragma once

#include <doctest/doctest.h>

#include <string>

#include "golden_file.h"

inline const avgpool_support::GoldenFile& golden() {
  std::string error;
  const avgpool_support::GoldenFile* file = avgpool_support::default_golden(&error);
  REQUIRE_MESSAGE(file != nullptr, error);
  return *file;
}
