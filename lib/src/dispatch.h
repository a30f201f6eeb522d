// Choosing an implementation for a problem (AUTO or forced by name) and
// running it: the one place that walks the backends' policies.
#pragma once

#include "impl.h"

namespace avgpool {

// One direction of a plan: the chosen implementation with its configuration,
// and the one that runs when the pointers miss the alignment the first needs.
struct Choice {
  const Impl* impl = nullptr;
  ConfigPtr config;
  const Impl* fallback = nullptr;
  ConfigPtr fallback_config;
};

// Chooses for problem in direction: impl_name's implementation when given,
// else the first that accepts in AUTO order. Fills *device with the device
// the choice binds to. On failure returns the status with the thread's
// error message set, and leaves *choice and *device untouched.
avgpool_status choose(const Problem& problem, Direction direction, const char* impl_name,
                      DeviceInfo* device, Choice* choice);

// Runs the choice (or its fallback for misaligned pointers).
avgpool_status run_choice(const Problem& problem, const Choice& choice, const void* src, void* dst,
                          void* stream);

}  // namespace avgpool
