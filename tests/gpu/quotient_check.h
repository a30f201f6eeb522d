// The quotient_by test's device run (quotient_check.cu).
#pragma once

#include <stdint.h>

struct QuotientCheck {
  unsigned long long in_domain, mismatches, misclassified;
  unsigned long long first_bad;  // the first mismatch seen: divisor << 32 | g's bits
};

// Divides every float g (bit patterns in steps of `step`) by each divisor
// with quotient_by and with `/`. Returns nullptr, or the CUDA error.
const char* run_quotient_check(const float* divisors, int count, uint32_t step, QuotientCheck* result);
