// Choosing an implementation for a problem (AUTO or forced by name) and
// running it: the one place that walks the backends' policies.
#pragma once

#include "impl.h"

namespace avgpool {

// One direction of a plan: the chosen implementation with its configuration,
// and the one that runs when the pointers miss the alignment the first needs.
struct Choice {
  Problem problem;  // as the implementations see it (auto_view for AUTO choices)
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

// Chooses in one backend whose device is known: the first implementation in
// its AUTO order that accepts problem, and a fallback for pointers that miss
// the alignment it needs. On failure returns the status with the reason in
// *why; never touches the thread's error message (implementations that
// compose a forward, cuda:backward_as_forward, choose through it at their
// own plan creation).
avgpool_status choose_in_backend(const Problem& problem, Direction direction, const Backend& backend,
                                 const DeviceInfo& device, Choice* choice, Decline* why);

// The problem as AUTO hands it to implementations: a forward NHWC problem
// of one channel is the NCHW problem of the same bytes, and every NCHW
// implementation then competes for it.
Problem auto_view(const Problem& problem, Direction direction);

// Runs the choice (or its fallback for misaligned pointers) on its problem.
avgpool_status run_choice(const Choice& choice, const void* src, void* dst, void* stream);

}  // namespace avgpool
