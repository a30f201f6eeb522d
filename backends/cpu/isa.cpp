#include "isa.h"

#include <stdlib.h>
#include <string.h>

namespace avgpool {
namespace cpu {
namespace {

Isa detect_isa() {
#if (defined(__x86_64__) || defined(__i386__)) && (defined(__GNUC__) || defined(__clang__))
  __builtin_cpu_init();
  const bool avx2 = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  // F16C has no __builtin_cpu_supports name in older compilers; every CPU
  // with AVX2 and FMA has it.
  if (avx2 && __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
      __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512dq"))
    return kAvx512;
  if (avx2) return kAvx2;
#endif
  return kBase;
}

bool detect_slow_gathers() {
#if (defined(__x86_64__) || defined(__i386__)) && (defined(__GNUC__) || defined(__clang__))
  __builtin_cpu_init();
  return __builtin_cpu_is("amd");
#else
  return false;
#endif
}

}  // namespace

bool slow_gathers_for_plan() {
  static const bool slow = detect_slow_gathers();
  if (const char* e = getenv("AVGPOOL_CPU_GATHERS")) {
    if (strcmp(e, "slow") == 0) return true;
    if (strcmp(e, "fast") == 0) return false;
  }
  return slow;
}

Isa isa_for_plan() {
  static const Isa best = detect_isa();
  Isa want = best;
  if (const char* e = getenv("AVGPOOL_CPU_ISA")) {
    if (strcmp(e, "base") == 0) want = kBase;
    else if (strcmp(e, "avx2") == 0) want = kAvx2;
  }
  return want < best ? want : best;
}

}  // namespace cpu
}  // namespace avgpool
