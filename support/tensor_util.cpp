#include "tensor_util.h"

#include <math.h>
#include <string.h>

#include "host_types.h"

namespace avgpool_support {

namespace {

uint64_t splitmix64(uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

double unit_at(uint64_t seed, int64_t i) {  // in [0, 1)
  return (double)(splitmix64(seed * 0x100000001B3ull ^ (uint64_t)i) >> 11) * 0x1.0p-53;
}

template <typename F>
void parallel_store(avgpool_dtype dtype, void* dst, int64_t count, F value_at) {
  avgpool::dispatch_dtype(dtype, [&](auto zero) {
    using T = decltype(zero);
    T* out = static_cast<T*>(dst);
#if defined(_OPENMP)
#pragma omp parallel for schedule(static)
#endif
    for (int64_t i = 0; i < count; ++i) out[i] = avgpool::from_double<T>(value_at(i));
    return 0;
  });
}

}  // namespace

int64_t element_size(avgpool_dtype dtype) {
  return dtype == AVGPOOL_DTYPE_F64 ? 8 : dtype == AVGPOOL_DTYPE_F32 ? 4 : 2;
}

void fill_random(avgpool_dtype dtype, void* dst, int64_t count, uint64_t seed, double lo, double hi) {
  parallel_store(dtype, dst, count, [&](int64_t i) { return lo + (hi - lo) * unit_at(seed, i); });
}

int small_int_at(uint64_t seed, int64_t i, int range) {
  return (int)(splitmix64(seed * 0x100000001B3ull ^ (uint64_t)i) % (uint64_t)(2 * range + 1)) - range;
}

void fill_small_ints(avgpool_dtype dtype, void* dst, int64_t count, uint64_t seed, int range) {
  parallel_store(dtype, dst, count, [&](int64_t i) { return (double)small_int_at(seed, i, range); });
}

double load_double(avgpool_dtype dtype, const void* data, int64_t i) {
  return avgpool::dispatch_dtype(dtype, [&](auto zero) {
    using T = decltype(zero);
    return avgpool::to_double(static_cast<const T*>(data)[i]);
  });
}

void store_double(avgpool_dtype dtype, void* data, int64_t i, double value) {
  avgpool::dispatch_dtype(dtype, [&](auto zero) {
    using T = decltype(zero);
    static_cast<T*>(data)[i] = avgpool::from_double<T>(value);
    return 0;
  });
}

void poison(void* data, int64_t bytes) { memset(data, kPoisonByte, (size_t)bytes); }

bool is_poisoned(const void* data, int64_t bytes) {
  const unsigned char* p = static_cast<const unsigned char*>(data);
  for (int64_t i = 0; i < bytes; ++i)
    if (p[i] != kPoisonByte) return false;
  return true;
}

int64_t count_poisoned_elements(const void* data, int64_t count, int64_t esize) {
  const unsigned char* p = static_cast<const unsigned char*>(data);
  int64_t poisoned = 0;
#if defined(_OPENMP)
#pragma omp parallel for reduction(+ : poisoned) schedule(static)
#endif
  for (int64_t i = 0; i < count; ++i) {
    bool all = true;
    for (int64_t b = 0; b < esize; ++b) all = all && p[i * esize + b] == kPoisonByte;
    poisoned += all;
  }
  return poisoned;
}

int64_t ulp_distance_f32(float a, float b) {
  if (isnan(a) || isnan(b)) return (isnan(a) && isnan(b)) ? 0 : INT64_MAX;
  int32_t ia, ib;
  memcpy(&ia, &a, 4);
  memcpy(&ib, &b, 4);
  // Map the sign-magnitude bits onto a monotonic integer line.
  int64_t la = ia < 0 ? (int64_t)INT32_MIN - ia : ia;
  int64_t lb = ib < 0 ? (int64_t)INT32_MIN - ib : ib;
  return la > lb ? la - lb : lb - la;
}

}  // namespace avgpool_support

namespace avgpool_support {
int64_t dense_index(avgpool_layout layout, const int64_t d[4], int64_t n, int64_t c, int64_t y,
                    int64_t x) {
  return layout == AVGPOOL_LAYOUT_NCHW ? ((n * d[1] + c) * d[2] + y) * d[3] + x
                                       : ((n * d[2] + y) * d[3] + x) * d[1] + c;
}

std::vector<char> relayout(const void* src, const int64_t d[4], int64_t esize,
                           avgpool_layout from, avgpool_layout to) {
  std::vector<char> out((size_t)(d[0] * d[1] * d[2] * d[3] * esize));
  const char* in = static_cast<const char*>(src);
  for (int64_t n = 0; n < d[0]; ++n)
    for (int64_t c = 0; c < d[1]; ++c)
      for (int64_t y = 0; y < d[2]; ++y)
        for (int64_t x = 0; x < d[3]; ++x)
          memcpy(&out[(size_t)(dense_index(to, d, n, c, y, x) * esize)],
                 in + dense_index(from, d, n, c, y, x) * esize, (size_t)esize);
  return out;
}
}  // namespace avgpool_support
