// The instruction set a CPU plan's kernels use: the best the CPU has,
// lowered by AVGPOOL_CPU_ISA=base|avx2 (a testing aid; a value above what
// the CPU has is ignored). Read when a plan is created, by both directions.
#pragma once

namespace avgpool {
namespace cpu {

enum Isa { kBase = 0, kAvx2 = 1, kAvx512 = 2 };

Isa isa_for_plan();

// Whether the CPU's vector gathers are slow against loads and shuffles
// (AMD: a zmm gather is microcoded there), so that the kernels transpose
// windows' columns instead of gathering them. AVGPOOL_CPU_GATHERS=slow|fast
// overrides it (a testing aid). Read when a plan is created.
bool slow_gathers_for_plan();

}  // namespace cpu
}  // namespace avgpool
