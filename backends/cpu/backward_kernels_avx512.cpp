// The CPU backward kernels built for avx512 (flags in CMakeLists.txt). Only
// called after the driver has checked that the CPU supports them.
#define AVGPOOL_CPU_ISA bwd_avx512
#define AVGPOOL_CPU_ISA_NAME "avx512"
#include "backward_kernels.inl"

namespace avgpool {
namespace cpu {
BackwardKernels backward_kernels_avx512() { return bwd_avx512::backward_table(); }
}  // namespace cpu
}  // namespace avgpool
