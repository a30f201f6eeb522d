// The CPU backend's backward implementations (backward.cpp), for the
// backend's list and AUTO policy in impls.cpp.
#pragma once

#include <stddef.h>

#include "impl.h"

namespace avgpool {
namespace cpu {

extern const Impl kCpuBackwardBroadcast;  // stride >= kernel on both axes
extern const Impl kCpuBackwardGather;     // any problem

// AUTO for the backward: the implementations to try, best first.
size_t cpu_backward_auto_order(const Problem& problem, const DeviceInfo& device, const Impl** out, size_t cap);

}  // namespace cpu
}  // namespace avgpool
