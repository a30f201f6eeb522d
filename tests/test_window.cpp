// lib/src/window.h on its own: axis_outputs_containing (the inverse of
// axis_window, used by kernels that stream input rows) against a brute-force
// scan of axis_window over every output, on random legal geometries.
#include <doctest/doctest.h>
#include <stdint.h>

#include <random>

#include "../lib/src/window.h"

using namespace avgpool;

TEST_SUITE("cpu") {

TEST_CASE("axis_outputs_containing is the inverse of axis_window") {
  std::mt19937_64 rng(7);
  int checked = 0;
  for (int trial = 0; trial < 3000; ++trial) {
    const int64_t kernel = 1 + (int64_t)(rng() % 13);
    const int64_t stride = 1 + (int64_t)(rng() % 15);
    const int64_t pad = (int64_t)(rng() % (kernel / 2 + 1));
    const int64_t size = kernel + (int64_t)(rng() % 60);
    const bool ceil_mode = rng() % 2 == 0;
    const int64_t out = pooled_size(size, kernel, stride, pad, ceil_mode);
    REQUIRE(out >= 1);
    for (int64_t i = 0; i < size; ++i) {
      int64_t first = -1, last = -2;
      for (int64_t o = 0; o < out; ++o) {
        const AxisWindow w = axis_window(o, size, kernel, stride, pad);
        if (w.begin <= i && i < w.end) {
          if (first < 0) first = o;
          CHECK(o == (last < 0 ? o : last + 1));  // the outputs are consecutive
          last = o;
        }
      }
      const AxisOutputs got = axis_outputs_containing(i, out, kernel, stride, pad);
      CAPTURE(kernel); CAPTURE(stride); CAPTURE(pad); CAPTURE(size); CAPTURE(i);
      if (first < 0) {
        CHECK(got.first > got.last);
      } else {
        CHECK(got.first == first);
        CHECK(got.last == last);
      }
      ++checked;
    }
  }
  CHECK(checked > 100000);
}

}  // TEST_SUITE
