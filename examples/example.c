/* The README's example: average-pool a 1x1x4x4 tensor with a 2x2 kernel. */
#include <avgpool/avgpool.h>
#include <stdio.h>

int main(void) {
  float src[16], dst[4];
  for (int i = 0; i < 16; ++i) src[i] = (float)i;
  avgpool_params p;
  avgpool_params_init(&p);             /* PyTorch's defaults */
  p.n = 1; p.c = 1; p.h = 4; p.w = 4;
  p.kernel_h = p.kernel_w = 2;         /* stride 0,0 = the kernel */
  p.backend = AVGPOOL_BACKEND_CPU;     /* host memory; CUDA wants device memory */
  avgpool_plan* plan;
  if (avgpool_plan_create(&p, &plan) != AVGPOOL_SUCCESS) {
    fprintf(stderr, "avgpool: %s\n", avgpool_last_error_message());
    return 1;
  }
  avgpool_plan_execute(plan, src, dst, NULL);
  avgpool_plan_destroy(plan);
  printf("%g %g %g %g\n", dst[0], dst[1], dst[2], dst[3]); /* 2.5 4.5 10.5 12.5 */
  return 0;
}
