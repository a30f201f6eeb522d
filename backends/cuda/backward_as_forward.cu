// cuda:backward_as_forward - the stride-1 backward in fast numerics where
// every window has the same divisor (PyTorch's default count_include_pad,
// a divisor override, or no padding): grad_input is the forward pool of
// grad_output with padding k - 1 - p (lib/src/backward_as_forward.h says
// why), run by the CUDA forward that AUTO picks for that problem - for the
// "same-size" blurs (k3 s1 p1, k5 s1 p2) the column walks, which read each
// grad_output element once and sum windows in registers. It composes the
// forward through the dispatcher's choice, made at plan creation; execute
// runs that choice and nothing else.
#include "backward_as_forward.h"
#include "impls.h"

namespace avgpool::cuda {
namespace {

avgpool_status init(const Problem& q, const DeviceInfo& device, ConfigPtr* config, Decline* why) {
  return backward_as_forward_init(AVGPOOL_BACKEND_CUDA, q, device, config, why);
}

}  // namespace

const Impl kBackwardAsForwardImpl = {"cuda:backward_as_forward", AVGPOOL_BACKEND_CUDA, Direction::kBackward, init,
                                     backward_as_forward_execute};

}  // namespace avgpool::cuda
