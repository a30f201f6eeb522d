// NaN and ±Inf at random places: every CPU implementation and the
// reference agree with each other per compare_to_reference (pytorch:
// bitwise; fast: NaN/Inf exactly where the reference has them), and the
// reference agrees with an oracle written here from PyTorch's rule: an
// output is NaN when its summed window holds a NaN or both +Inf and -Inf,
// +Inf (-Inf) when it holds +Inf (-Inf) and nothing of the above, finite
// otherwise. (The golden case `nan_inf` checks the reference against
// PyTorch itself.)
#include <doctest/doctest.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#include <algorithm>
#include <random>
#include <string>
#include <vector>

#include "check.h"
#include "tensor_util.h"

using namespace avgpool_support;

namespace {

std::vector<std::string> cpu_impl_names() { return impl_names("cpu:"); }

// 0 finite, 1 NaN, 2 +Inf, 3 -Inf.
int classify(double v) { return isnan(v) ? 1 : isinf(v) ? (v > 0 ? 2 : 3) : 0; }

// The class PyTorch's rule gives output (n, c, oy, ox), from the input alone.
int oracle_class(const avgpool_params& p, const void* src, int64_t n, int64_t c, int64_t oy,
                 int64_t ox) {
  const int64_t sh = p.stride_h ? p.stride_h : p.kernel_h, sw = p.stride_w ? p.stride_w : p.kernel_w;
  const int64_t ys = oy * sh - p.padding_h, xs = ox * sw - p.padding_w;
  const int64_t y0 = std::max<int64_t>(ys, 0), y1 = std::min({ys + p.kernel_h, p.h + p.padding_h, p.h});
  const int64_t x0 = std::max<int64_t>(xs, 0), x1 = std::min({xs + p.kernel_w, p.w + p.padding_w, p.w});
  const int64_t dims[4] = {p.n, p.c, p.h, p.w};
  bool nan = false, pos = false, neg = false;
  for (int64_t y = y0; y < y1; ++y)
    for (int64_t x = x0; x < x1; ++x) {
      const int k = classify(load_double(p.dtype, src, dense_index(p.layout, dims, n, c, y, x)));
      nan |= k == 1; pos |= k == 2; neg |= k == 3;
    }
  if (nan || (pos && neg)) return 1;
  return pos ? 2 : neg ? 3 : 0;
}

// How many outputs of out (dims od) are not of the class the oracle says;
// *specials (if given) counts the outputs the oracle says are NaN or Inf.
int64_t oracle_mismatches(const avgpool_params& p, const void* src, const void* out, const int64_t od[4],
                          int64_t* specials = nullptr) {
  int64_t bad = 0;
  for (int64_t n = 0; n < od[0]; ++n)
    for (int64_t c = 0; c < od[1]; ++c)
      for (int64_t y = 0; y < od[2]; ++y)
        for (int64_t x = 0; x < od[3]; ++x) {
          const int want = oracle_class(p, src, n, c, y, x);
          if (classify(load_double(p.dtype, out, dense_index(p.layout, od, n, c, y, x))) != want) ++bad;
          if (specials != nullptr && want != 0) ++*specials;
        }
  return bad;
}

}  // namespace

TEST_SUITE("cpu") {

TEST_CASE("random NaN/Inf placements: every CPU implementation and the reference agree") {
  std::mt19937_64 rng(55);
  RandomParamsLimits lim;
  lim.max_hw = 24;
  const std::vector<std::string> impls = cpu_impl_names();
  int64_t special_outputs = 0, impl_runs = 0;
  for (int iter = 0; iter < 300; ++iter) {
    avgpool_params p = random_params(rng, lim);
    p.backend = AVGPOOL_BACKEND_REFERENCE;
    avgpool_plan* plan = nullptr;
    REQUIRE(avgpool_plan_create(&p, &plan) == AVGPOOL_SUCCESS);
    int64_t sn = 0, dn = 0, od[4];
    avgpool_plan_sizes(plan, &sn, &dn);
    avgpool_plan_output_dims(plan, od);
    const int64_t es = element_size(p.dtype);
    std::vector<unsigned char> src((size_t)(sn * es)), ref((size_t)(dn * es));
    fill_random(p.dtype, src.data(), sn, (uint64_t)iter, -4.0, 4.0);
    // Density from very sparse (single specials) to dense (windows with both infinities).
    const double density = std::vector<double>{0.002, 0.02, 0.1, 0.4}[(size_t)iter % 4];
    sprinkle_specials(p.dtype, src.data(), sn, density, rng);

    REQUIRE(avgpool_plan_execute(plan, src.data(), ref.data(), nullptr) == AVGPOOL_SUCCESS);
    avgpool_plan_destroy(plan);

    // The reference against the oracle, every output. Finite windows stay
    // finite: inputs are within ±4, so even an 81-element sum over divisor 1
    // fits f16.
    CHECK_MESSAGE(oracle_mismatches(p, src.data(), ref.data(), od, &special_outputs) == 0,
                  "reference: " << describe(p));

    for (const std::string& impl : impls) {
      avgpool_params q = p;
      q.backend = AVGPOOL_BACKEND_CPU;
      if (avgpool_impl_accepts(impl.c_str(), &q) != AVGPOOL_SUCCESS) continue;
      REQUIRE(avgpool_plan_create_with_impl(&q, impl.c_str(), &plan) == AVGPOOL_SUCCESS);
      std::vector<unsigned char> got((size_t)(dn * es), kPoisonByte);
      REQUIRE(avgpool_plan_execute(plan, src.data(), got.data(), nullptr) == AVGPOOL_SUCCESS);
      avgpool_plan_destroy(plan);
      ++impl_runs;
      const Mismatch m = compare_to_reference(q, src.data(), got.data(), ref.data());
      CHECK_MESSAGE(m.count == 0, impl << ": " << describe(q) << ": " << m.message());
      // Positions and kinds of the specials, stated on their own.
      int64_t class_bad = 0;
      for (int64_t i = 0; i < dn; ++i)
        if (classify(load_double(p.dtype, got.data(), i)) != classify(load_double(p.dtype, ref.data(), i)))
          ++class_bad;
      CHECK_MESSAGE(class_bad == 0, impl << ": " << describe(q) << ": " << class_bad
                                         << " NaN/Inf positions differ");
    }
  }
  CHECK(special_outputs > 1000);
  if (!impls.empty()) CHECK(impl_runs > 0);
  MESSAGE("NaN/Inf: " << impls.size() << " CPU implementations, " << impl_runs << " runs");
}

TEST_CASE("a single NaN or Inf in each position of a small plane, every implementation") {
  // Exhaustive over positions for one shape with ceil overhang and padding:
  // only the outputs whose windows hold the special become special.
  std::vector<std::string> impls = cpu_impl_names();
  impls.push_back("reference");
  avgpool_params p;
  avgpool_params_init(&p);
  p.n = 1; p.c = 2; p.h = 7; p.w = 8;
  p.kernel_h = 3; p.kernel_w = 2; p.stride_h = 2; p.stride_w = 2;
  p.padding_h = 1; p.padding_w = 1; p.ceil_mode = 1;
  for (int dtype = 0; dtype < 4; ++dtype)
    for (int layout = 0; layout < 2; ++layout)
      for (int numerics = 0; numerics < 2; ++numerics) {
        p.dtype = (avgpool_dtype)dtype; p.layout = (avgpool_layout)layout;
        p.numerics = (avgpool_numerics)numerics;
        const int64_t sn = p.n * p.c * p.h * p.w, es = element_size(p.dtype);
        for (int64_t pos = 0; pos < sn; ++pos)
          for (double special : {(double)NAN, (double)INFINITY, -(double)INFINITY}) {
            std::vector<unsigned char> src((size_t)(sn * es));
            fill_random(p.dtype, src.data(), sn, (uint64_t)pos, -1.0, 1.0);
            store_double(p.dtype, src.data(), pos, special);
            for (const std::string& impl : impls) {
              avgpool_plan* plan = nullptr;
              if (avgpool_plan_create_with_impl(&p, impl.c_str(), &plan) != AVGPOOL_SUCCESS) continue;
              int64_t s_n, dn, od[4];
              avgpool_plan_sizes(plan, &s_n, &dn);
              avgpool_plan_output_dims(plan, od);
              std::vector<unsigned char> got((size_t)(dn * es), kPoisonByte);
              REQUIRE(avgpool_plan_execute(plan, src.data(), got.data(), nullptr) == AVGPOOL_SUCCESS);
              avgpool_plan_destroy(plan);
              CHECK_MESSAGE(oracle_mismatches(p, src.data(), got.data(), od) == 0,
                            impl << ": " << describe(p) << ": special at " << pos);
            }
          }
      }
}

}  // TEST_SUITE
