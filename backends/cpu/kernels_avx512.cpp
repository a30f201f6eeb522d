// The CPU kernels built for avx512 (flags in CMakeLists.txt). Only called
// after the driver has checked that the CPU supports them.
#define AVGPOOL_CPU_ISA avx512
#define AVGPOOL_CPU_ISA_NAME "avx512"
#include "kernels.inl"

namespace avgpool {
namespace cpu {
KernelTable kernels_avx512() { return avx512::table(); }
}  // namespace cpu
}  // namespace avgpool
