// The CPU backward kernels built for base (flags in CMakeLists.txt). Only
// called after the driver has checked that the CPU supports them.
#define AVGPOOL_CPU_ISA bwd_base
#define AVGPOOL_CPU_ISA_NAME "base"
#include "backward_kernels.inl"

namespace avgpool {
namespace cpu {
BackwardKernels backward_kernels_base() { return bwd_base::backward_table(); }
}  // namespace cpu
}  // namespace avgpool
