// Implementations, their private configuration, and the backends that own
// them (oneDNN's primitive descriptor, CUB's dispatch policies).
//
// avgpool_plan_create validates the parameters into a Problem, asks each
// candidate implementation's `init` to decide everything about the problem
// once (tiles, stages, grid, the kernel instantiation) into a Config, and
// keeps the first that accepts. `execute` only reads that Config: no geometry
// search, no device query, no environment read, no allocation.
#pragma once

#include <stddef.h>
#include <stdint.h>

#include <memory>

#include "avgpool/avgpool.h"
#include "problem.h"

namespace avgpool {

enum class Direction { kForward = 0, kBackward = 1 };

// The device a plan is bound to, read once per device. Host backends use
// ordinal -1 and leave the rest zero.
struct DeviceInfo {
  int ordinal = -1;
  int cc_major = 0, cc_minor = 0;
  int sms = 0;
  int64_t smem_block = 0;  // opt-in shared memory one block may use (bytes)
  int64_t smem_sm = 0;     // shared memory of one SM (bytes)
};

// What an implementation decided at plan creation. Each implementation
// derives its own; the dispatcher reads only the alignment it needs.
struct Config {
  virtual ~Config() = default;
  // src and dst must be aligned to these (bytes) for this configuration;
  // other pointers run the plan's fallback implementation instead.
  int64_t src_align = 1, dst_align = 1;
};
using ConfigPtr = std::unique_ptr<Config>;

// Why an implementation declined a problem. Probing candidates writes here,
// never into the thread's error message.
struct Decline {
  avgpool_status status = AVGPOOL_ERROR_UNSUPPORTED;
  char text[320] = "";
};

// Fills why (printf-style) and returns status.
avgpool_status decline(Decline* why, avgpool_status status, const char* format, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

struct Impl {
  // "backend:layout_scheme", e.g. "cuda:nchw_row_stream"; static storage.
  // Names are for diagnostics and tests, not stable across versions.
  const char* name;
  avgpool_backend backend;
  Direction direction;
  // Decides everything execute needs and stores it in *config; or returns
  // UNSUPPORTED / BACKEND_UNAVAILABLE with the reason in *why.
  avgpool_status (*init)(const Problem& problem, const DeviceInfo& device, ConfigPtr* config, Decline* why);
  // Forward: dst = pool(src). Backward: dst (grad_input) from src
  // (grad_output). The caller has checked the pointers (non-NULL, element-
  // aligned, aligned as config asks, non-overlapping) and that the problem
  // has elements. CUDA implementations launch on stream (a cudaStream_t) and
  // never synchronize.
  avgpool_status (*execute)(const Problem& problem, const Config& config, const void* src, void* dst,
                            void* stream);
};

// A backend: every implementation it has (listing, forcing by name) and its
// AUTO policy.
struct Backend {
  avgpool_backend id;
  const Impl* const* impls;
  size_t count;
  // The device a plan of this backend binds to (the current one), or
  // BACKEND_UNAVAILABLE with the reason.
  avgpool_status (*device)(DeviceInfo* info, Decline* why);
  // AUTO: the implementations to try for the problem, best first; returns
  // how many it wrote (at most cap).
  size_t (*auto_order)(const Problem& problem, const DeviceInfo& device, Direction direction,
                       const Impl** out, size_t cap);
};

const Backend& reference_backend();
const Backend& cpu_backend();
const Backend* cuda_backend();  // NULL when CUDA is not compiled in

// Backends in AUTO order: CUDA (when compiled in), CPU, reference.
size_t backends(const Backend** out, size_t cap);

// Every implementation, in backend order, for listing.
size_t impl_count();
const Impl* impl_at(size_t index);
const Impl* find_impl(const char* name);
const Backend* backend_of(avgpool_backend id);

// Host backends: the device of a plan on host memory.
avgpool_status host_device(DeviceInfo* info, Decline* why);

}  // namespace avgpool
