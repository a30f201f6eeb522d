// The multiply-high divider the CUDA kernels decode flat indices with
// (lib/src/int_divider.h): exact for every dividend below 2^31, checked on
// the host (the device code runs the same arithmetic through __umulhi).
#include <doctest/doctest.h>
#include <stdint.h>

#include <random>
#include <vector>

#include "int_divider.h"

TEST_CASE("IntDivider: quotient and remainder equal / and % for dividends below 2^31" * doctest::test_suite("cpu")) {
  std::mt19937_64 rng(20261201);
  std::vector<uint32_t> divisors;
  for (uint32_t d = 1; d <= 4100; ++d) divisors.push_back(d);
  for (int b = 12; b <= 31; ++b) {  // around each power of two up to 2^31 - 1
    const uint64_t p = uint64_t(1) << b;
    for (int64_t k = -3; k <= 3; ++k)
      if (p + k >= 1 && p + k < (uint64_t(1) << 31)) divisors.push_back(uint32_t(p + k));
  }
  for (int i = 0; i < 2000; ++i) divisors.push_back(uint32_t(rng() % ((uint64_t(1) << 31) - 1)) + 1);
  const uint32_t top = (uint32_t(1) << 31) - 1;
  int64_t checked = 0, wrong = 0;
  for (const uint32_t d : divisors) {
    const avgpool::IntDivider divider = avgpool::IntDivider::of(d);
    std::vector<uint32_t> dividends = {0, 1, d - 1, d, top, top - 1, top - d % top};
    for (uint32_t m = 1; m < 6; ++m)  // multiples of d and their neighbours
      if (uint64_t(d) * m + 1 <= top) {
        dividends.push_back(d * m - 1);
        dividends.push_back(d * m);
        dividends.push_back(d * m + 1);
      }
    for (int i = 0; i < 64; ++i) dividends.push_back(uint32_t(rng() % (uint64_t(top) + 1)));
    for (const uint32_t n : dividends) {
      uint32_t q = 0;
      const uint32_t r = divider.divmod(n, &q);
      ++checked;
      if (q != n / d || r != n % d) {
        ++wrong;
        if (wrong < 5) FAIL_CHECK("d=" << d << " n=" << n << ": " << q << " r " << r);
      }
    }
  }
  CHECK(wrong == 0);
  CHECK(checked > 300000);
}
