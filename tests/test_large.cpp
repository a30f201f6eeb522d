// More than 2^31 input elements on the reference: 1x1x46341x46341 f32
// (8.6 GB) with ceil_mode and padding, so the last windows hang over the far
// end of the tensor. Inputs are small integers (exact sums); sampled outputs
// are checked against sums computed here from the fill formula itself, with
// 64-bit positions, so a 32-bit index anywhere would show.
#include <doctest/doctest.h>
#include <stdint.h>
#include <stdlib.h>

#include <algorithm>
#include <vector>

#include "avgpool/avgpool.h"
#include "tensor_util.h"

using namespace avgpool_support;

TEST_SUITE("large") {

TEST_CASE("reference on an input of more than 2^31 elements") {
  const int64_t side = 46341;  // side^2 = 2147488281 > 2^31
  const int64_t k = 3, s = 2, pad = 1;
  const uint64_t seed = 42;
  const int range = 8;
  avgpool_params p;
  avgpool_params_init(&p);
  p.h = p.w = side;
  p.kernel_h = p.kernel_w = k;
  p.stride_h = p.stride_w = s;
  p.padding_h = p.padding_w = pad;
  p.ceil_mode = 1;
  p.count_include_pad = 0;
  p.backend = AVGPOOL_BACKEND_REFERENCE;
  avgpool_plan* plan = nullptr;
  REQUIRE(avgpool_plan_create(&p, &plan) == AVGPOOL_SUCCESS);
  int64_t dims[4], src_n, dst_n;
  avgpool_plan_output_dims(plan, dims);
  avgpool_plan_sizes(plan, &src_n, &dst_n);
  REQUIRE(src_n > (int64_t{1} << 31));
  const int64_t out_side = dims[2];
  CHECK(out_side == 23171);  // ceil((46341 + 2 - 3) / 2) + 1

  float* src = static_cast<float*>(malloc((size_t)src_n * 4));
  float* dst = static_cast<float*>(malloc((size_t)dst_n * 4));
  REQUIRE(src != nullptr);
  REQUIRE(dst != nullptr);
  fill_small_ints(AVGPOOL_DTYPE_F32, src, src_n, seed, range);
  poison(dst, dst_n * 4);
  REQUIRE(avgpool_plan_execute(plan, src, dst, nullptr) == AVGPOOL_SUCCESS);

  // Samples: the four corners, the last row and column, and a scatter.
  std::vector<std::pair<int64_t, int64_t>> samples;
  for (int64_t i = 0; i < out_side; i += 997) {
    samples.push_back({out_side - 1, i});
    samples.push_back({i, out_side - 1});
    samples.push_back({i, (i * 7919) % out_side});
  }
  samples.push_back({0, 0});
  samples.push_back({0, out_side - 1});
  samples.push_back({out_side - 1, 0});
  samples.push_back({out_side - 1, out_side - 1});
  int bad = 0;
  for (auto [oy, ox] : samples) {
    const int64_t y0 = std::max<int64_t>(oy * s - pad, 0), y1 = std::min<int64_t>(oy * s - pad + k, side);
    const int64_t x0 = std::max<int64_t>(ox * s - pad, 0), x1 = std::min<int64_t>(ox * s - pad + k, side);
    int64_t sum = 0;
    for (int64_t y = y0; y < y1; ++y)
      for (int64_t x = x0; x < x1; ++x) sum += small_int_at(seed, y * side + x, range);
    const float want = (float)sum / (float)((y1 - y0) * (x1 - x0));
    if (dst[oy * out_side + ox] != want) ++bad;
  }
  CHECK(bad == 0);
  CHECK(!is_poisoned(&dst[dst_n - 1], 4));  // the very last output was written
  free(src);
  free(dst);
  avgpool_plan_destroy(plan);
}

}  // TEST_SUITE
