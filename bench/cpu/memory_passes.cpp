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

// Each thread reads its share in blocks of kReadStreams consecutive parts of
// up to kReadPartBytes, the parts side by side (as the pooling kernels read
// a window's rows). One sequential stream per core was no ceiling on the
// 2-core AMD EPYC VM (2026-12-04): oneDNN and the NHWC seed-like case
// outran it. Read rates there, 2 threads / 1 thread, GB/s: one stream
// 26.8-27.6 / 13.7; four parts of 64 KiB 34.1-34.5 / 21.6, of 1 MiB
// 33.5-35.1 / 23.7. Parts far apart (a share cut in four) ran 11.8-57 GB/s
// from run to run and size to size, so the parts stay close.
constexpr int kReadStreams = 4;
constexpr int64_t kReadPartBytes = 1 << 20;

__attribute__((target_clones("avx512f", "avx2", "default")))
float read_chunk(const float* x, int64_t n) {
  v16f a[kReadStreams] = {};  // 64-byte vectors: on AVX2 two ymm each, so four fill half the registers
  int64_t b = 0;
  // Full blocks, then one block of shorter parts for what is left, so that
  // at most 4 * 32 elements fall to the vector tail below.
  for (;;) {
    const int64_t part = std::min<int64_t>(kReadPartBytes / 4, (n - b) / kReadStreams / 32 * 32);
    if (part == 0) break;
    for (int64_t i = 0; i < part; i += 32)
      for (int s = 0; s < kReadStreams; ++s)
        a[s] += *reinterpret_cast<const v16f_u*>(x + b + s * part + i) +
                *reinterpret_cast<const v16f_u*>(x + b + s * part + i + 16);
    b += kReadStreams * part;
  }
  for (; b + 16 <= n; b += 16) a[0] += *reinterpret_cast<const v16f_u*>(x + b);
  float total = 0;
  for (int k = 0; k < kReadStreams; ++k)
    for (int l = 0; l < 16; ++l) total += a[k][l];
  for (; b < n; ++b) total += x[b];
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
