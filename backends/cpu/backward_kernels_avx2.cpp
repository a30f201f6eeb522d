// The CPU backward kernels built for avx2 (flags in CMakeLists.txt). Only
// called after the driver has checked that the CPU supports them.
#define AVGPOOL_CPU_ISA bwd_avx2
#define AVGPOOL_CPU_ISA_NAME "avx2"
#include "backward_kernels.inl"

namespace avgpool {
namespace cpu {
BackwardKernels backward_kernels_avx2() { return bwd_avx2::backward_table(); }
}  // namespace cpu
}  // namespace avgpool
