// Host-side tensor helpers for the CLI, tests and benchmarks: deterministic
// parallel random fill, element access as double for any dtype, poisoning,
// and float32 ulp distances.
#pragma once

#include <stdint.h>

#include <vector>

#include "avgpool/avgpool.h"

namespace avgpool_support {

int64_t element_size(avgpool_dtype dtype);

// dst[i] = a value in [lo, hi) from (seed, i) alone, rounded to dtype:
// the same tensor whatever the thread count. Runs in parallel (OpenMP).
void fill_random(avgpool_dtype dtype, void* dst, int64_t count, uint64_t seed, double lo, double hi);

// dst[i] = a small integer in [-range, range] from (seed, i): sums of such
// values are exact in every dtype (benchdnn's trick), for large tensors.
void fill_small_ints(avgpool_dtype dtype, void* dst, int64_t count, uint64_t seed, int range);

// The small integer fill_small_ints puts at index i (for analytic checks).
int small_int_at(uint64_t seed, int64_t i, int range);

double load_double(avgpool_dtype dtype, const void* data, int64_t i);
void store_double(avgpool_dtype dtype, void* data, int64_t i, double value);  // rounds once

// Fills bytes with a recognisable pattern (0xA5...) that no implementation writes.
void poison(void* data, int64_t bytes);
// True if every byte of data still holds the poison pattern.
bool is_poisoned(const void* data, int64_t bytes);
constexpr unsigned char kPoisonByte = 0xA5;
// Elements (esize bytes each) of data that still hold the poison pattern
// (in parallel: for tensors of billions of elements).
int64_t count_poisoned_elements(const void* data, int64_t count, int64_t esize);

// Distance in float32 units in the last place between a and b (0 when
// bitwise equal or both NaN); a huge value when one is NaN.
int64_t ulp_distance_f32(float a, float b);

}  // namespace avgpool_support

namespace avgpool_support {
// Dense element index of (n, c, y, x) in a tensor of dims N, C, H, W laid out
// as layout (for callers outside the library that pick elements to check).
int64_t dense_index(avgpool_layout layout, const int64_t dims[4], int64_t n, int64_t c, int64_t y,
                    int64_t x);

// A copy of the dense tensor src (dims N, C, H, W; esize-byte elements) laid
// out as `to` instead of `from`.
std::vector<char> relayout(const void* src, const int64_t dims[4], int64_t esize,
                           avgpool_layout from, avgpool_layout to);
}  // namespace avgpool_support
