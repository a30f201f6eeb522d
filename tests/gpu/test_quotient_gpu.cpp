// quotient_by (backends/cuda/quotient.cuh), the division the pytorch-numerics
// backward walks use, against IEEE `/` on the device: bit for bit on every
// float of its domain, and QuotientRange classifies every float as the
// domain says.
#include <ios>
#include <random>
#include <vector>

#include "doctest/doctest.h"
#include "gpu_helpers.h"
#include "quotient_check.h"

TEST_SUITE("gpu_small") {
TEST_CASE("quotient_by equals IEEE division on its whole domain") {
  std::vector<float> divisors;
  uint32_t step = 1;
  if (gpu_test::quick()) {
    divisors = {1, 3, 9, 25, 49, 121, 289, 16777215};
    step = 4099;  // a prime: every exponent and many mantissas
  } else {
    // Every integer up to 2048 (every product of two window factors up to
    // 45 x 45, and every f16 divisor below 2048), powers of two, large
    // primes, 2^24 - 1, and 256 random integers of every size up to the
    // domain's 2^24: every divisor exponent, many mantissas.
    for (int d = 1; d <= 2048; ++d) divisors.push_back((float)d);
    for (int k = 12; k <= 24; ++k) divisors.push_back((float)(1 << k));
    for (float d : {65521.0f, 1048573.0f, 16777213.0f, 16777215.0f}) divisors.push_back(d);
    std::mt19937 rng(2026);
    for (int i = 0; i < 256; ++i) {
      const int bits = 12 + i % 13;  // 2^11 .. 2^24
      divisors.push_back((float)(int64_t)((rng() & ((1u << bits) - 1)) | (1u << (bits - 1))));
    }
  }
  QuotientCheck r{};
  const char* error = run_quotient_check(divisors.data(), (int)divisors.size(), step, &r);
  REQUIRE_MESSAGE(error == nullptr, error);
  // The domain holds 2 zeros and 2 x 199 binades of 2^23 values each.
  const unsigned long long per_divisor = (2ull + 2ull * 199 * (1ull << 23)) / step;
  CHECK(r.in_domain >= per_divisor * divisors.size());
  CHECK(r.misclassified == 0);
  CHECK_MESSAGE(r.mismatches == 0, "first mismatch: g bits 0x" << std::hex << (unsigned)r.first_bad << std::dec
                                                              << ", divisor " << (r.first_bad >> 32));
}
}
