// The CPU kernels built for avx2 (flags in CMakeLists.txt). Only called
// after the driver has checked that the CPU supports them.
#define AVGPOOL_CPU_ISA avx2
#define AVGPOOL_CPU_ISA_NAME "avx2"
#include "kernels.inl"

namespace avgpool {
namespace cpu {
KernelTable kernels_avx2() { return avx2::table(); }
}  // namespace cpu
}  // namespace avgpool
