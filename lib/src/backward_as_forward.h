// The stride-1 backward in fast numerics, where every window has the same
// divisor D, as a forward pass of grad_output.
//
// Along an axis with stride 1, window o holds inputs [o - p, o - p + k), so
// input i lies in windows [i + p - k + 1, i + p]: a window of k consecutive
// grad_output indices starting at i - (k - 1 - p). grad_input is then the
// forward average pool of grad_output with the same kernel, stride 1,
// padding k - 1 - p (zeros outside, as the forward's padding) and divisor
// D: exactly the same windows, and the same output size (oh + 2 (k - 1 -
// p) - k + 1 = h). The divisor is uniform when it is overridden, when
// padding counts (at stride 1 no window reaches past the padding), or when
// there is no padding. Fast numerics allow the sum before the division
// (any order, one rounding more than a per-term division); pytorch numerics
// divide per term and cannot take this route.
//
// The forward runs on the backward's backend through its own AUTO choice
// (choose_in_backend), made once at plan creation: the backward gets the
// forward's best kernel for the mirrored problem, and its fallback for
// pointers that kernel cannot take.
#pragma once

#include "impl.h"

namespace avgpool {

// The mirrored forward problem of backward problem q, or UNSUPPORTED with
// the reason in *why: fast numerics, stride 1 on both axes, one divisor for
// every window, and padding k - 1 - p within the forward's limit (k / 2).
avgpool_status mirrored_forward_problem(const Problem& q, Problem* forward, Decline* why);

// Impl::init and Impl::execute of a backend's backward_as_forward: init
// chooses the forward for the mirrored problem in `backend` (the backend's
// own implementation list and AUTO order).
avgpool_status backward_as_forward_init(avgpool_backend backend, const Problem& q, const DeviceInfo& device,
                                        ConfigPtr* config, Decline* why);
avgpool_status backward_as_forward_execute(const Problem& q, const Config& config, const void* src, void* dst,
                                           void* stream);

}  // namespace avgpool
