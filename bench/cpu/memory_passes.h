// What the CPU benchmarks measure avgpool against in memory traffic, and how
// they time it: page-spread aligned buffers, a STREAM-style read pass, a
// copy pass and a write pass over every byte (all threads), a millisecond
// clock and medians.
#pragma once

#include <stdint.h>

#include <vector>

namespace avgpool_bench {

double now_ms();
double median(std::vector<double> v);

// 64-byte aligned, zeroed by all threads in parallel (first touch spreads
// the pages like the work).
class Buffer {
 public:
  explicit Buffer(int64_t bytes);
  ~Buffer();
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;
  void* data() const { return data_; }
  float* f32() const { return static_cast<float*>(data_); }
  int64_t bytes() const { return bytes_; }

 private:
  void* data_ = nullptr;
  int64_t bytes_ = 0;
};

// Every byte of x read once (as floats; a tail of fewer than 4 bytes is
// skipped): the widest loads the CPU has, each thread's share in blocks of
// four nearby parts read side by side (memory_passes.cpp says why), eight independent
// accumulators. Returns the sum, for the caller to keep.
float read_pass(const void* x, int64_t bytes);

// y = x, each thread its share (memcpy).
void copy_pass(const void* x, void* y, int64_t bytes);

// Every byte of y written once, each thread its share (memset). Non-zero
// bytes (every float 0.0116): on the machines measured, zeros were written
// up to 1.6x faster than any other value, a ceiling no result reaches.
void write_pass(void* y, int64_t bytes);

}  // namespace avgpool_bench
