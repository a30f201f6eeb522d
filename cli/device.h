// Memory and timing for the CLI on either side: host memory and a steady
// clock for the host backends, device memory and CUDA events for CUDA.
#pragma once

#include <stdint.h>

#include <string>

namespace avgpool_cli {

// A buffer in host or device memory.
class Buffer {
 public:
  Buffer(int64_t bytes, bool on_device);
  ~Buffer();
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;
  void* data() const { return data_; }
  bool ok() const { return data_ != nullptr; }
  void upload(const void* host);          // host -> this
  void download(void* host) const;        // this -> host
  void fill_byte(unsigned char value);
 private:
  void* data_ = nullptr;
  int64_t bytes_ = 0;
  bool on_device_ = false;
};

// Times fn() (which launches on the default stream when on_device) and
// returns milliseconds; waits for the device before and after.
double time_ms(bool on_device, void (*fn)(void*), void* ctx);

// Waits for the device; returns "" or the device's error text.
std::string device_sync(bool on_device);

}  // namespace avgpool_cli
