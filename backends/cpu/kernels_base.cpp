// The CPU kernels built for base (flags in CMakeLists.txt). Only called
// after the driver has checked that the CPU supports them.
#define AVGPOOL_CPU_ISA base
#define AVGPOOL_CPU_ISA_NAME "base"
#include "kernels.inl"

namespace avgpool {
namespace cpu {
KernelTable kernels_base() { return base::table(); }
}  // namespace cpu
}  // namespace avgpool
