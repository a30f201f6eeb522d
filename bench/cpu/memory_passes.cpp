#include "memory_passes.h"

#include <stdlib.h>
#include <string.h>

#include <algorithm>
#include <chrono>

#include <omp.h>

namespace avgpool_bench {

double now_ms() {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const size_t m = v.size() / 2;
  return v.size() % 2 ? v[m] : 0.5 * (v[m - 1] + v[m]);
}

Buffer::Buffer(int64_t bytes) : bytes_(bytes) {
  const int64_t rounded = std::max<int64_t>(64, (bytes + 63) / 64 * 64);
  data_ = aligned_alloc(64, (size_t)rounded);
  char* p = static_cast<char*>(data_);
#pragma omp parallel for schedule(static)
  for (int64_t i = 0; i < rounded; i += 4096) memset(p + i, 0, (size_t)std::min<int64_t>(4096, rounded - i));
}

Buffer::~Buffer() { free(data_); }

namespace {

typedef float v16f __attribute__((vector_size(64)));
typedef float v16f_u __attribute__((vector_size(64), aligned(4), may_alias));

__attribute__((target_clones("avx512f", "avx2", "default")))
float read_chunk(const float* x, int64_t n) {
  v16f a[8] = {};
  int64_t i = 0;
  for (; i + 128 <= n; i += 128)
    for (int k = 0; k < 8; ++k) a[k] += *reinterpret_cast<const v16f_u*>(x + i + 16 * k);
  float total = 0;
  for (int k = 0; k < 8; ++k)
    for (int l = 0; l < 16; ++l) total += a[k][l];
  for (; i < n; ++i) total += x[i];
  return total;
}

}  // namespace

float read_pass(const void* data, int64_t bytes) {
  const float* x = static_cast<const float*>(data);
  const int64_t n = bytes / 4;
  float total = 0;
#pragma omp parallel reduction(+ : total)
  {
    const int t = omp_get_thread_num(), nt = omp_get_num_threads();
    const int64_t b = n * t / nt / 16 * 16, e = t + 1 == nt ? n : n * (t + 1) / nt / 16 * 16;
    total += read_chunk(x + b, e - b);
  }
  return total;
}

void copy_pass(const void* x, void* y, int64_t bytes) {
#pragma omp parallel
  {
    const int t = omp_get_thread_num(), nt = omp_get_num_threads();
    const int64_t b = bytes * t / nt, e = bytes * (t + 1) / nt;
    memcpy(static_cast<char*>(y) + b, static_cast<const char*>(x) + b, (size_t)(e - b));
  }
}

void write_pass(void* y, int64_t bytes) {
#pragma omp parallel
  {
    const int t = omp_get_thread_num(), nt = omp_get_num_threads();
    const int64_t b = bytes * t / nt, e = bytes * (t + 1) / nt;
    memset(static_cast<char*>(y) + b, 0x3c, (size_t)(e - b));
  }
}

}  // namespace avgpool_bench
