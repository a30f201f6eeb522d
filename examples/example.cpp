// The C++ example: the same pooling as example.c through avgpool/avgpool.hpp
// (a parameter builder, RAII plans, exceptions).
#include <avgpool/avgpool.hpp>

#include <cstdio>
#include <vector>

int main() {
  std::vector<float> src(16), dst(4);
  for (int i = 0; i < 16; ++i) src[i] = float(i);
  try {
    const avgpool::Plan plan(avgpool::Params()
                                 .shape(1, 1, 4, 4)   // N, C, H, W
                                 .kernel(2, 2)        // stride 0,0 = the kernel
                                 .backend(AVGPOOL_BACKEND_CPU));
    plan.execute(src.data(), dst.data());
    std::printf("%g %g %g %g\n", dst[0], dst[1], dst[2], dst[3]);  // 2.5 4.5 10.5 12.5
    std::printf("avgpool %s on %s\n", avgpool_version_string(), plan.impl_name().c_str());
  } catch (const avgpool::Error& e) {
    std::fprintf(stderr, "avgpool: %s\n", e.what());
    return 1;
  }
  return 0;
}
