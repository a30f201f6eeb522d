// Checking an implementation's output against the reference, shared by the
// CPU and GPU tests: random valid parameters, and the comparison rule of
// each numerics mode.
#pragma once

#include <stdint.h>

#include <functional>
#include <random>
#include <string>
#include <vector>

#include "avgpool/avgpool.h"

namespace avgpool_support {

struct RandomParamsLimits {
  int64_t max_n = 3, max_c = 9, max_hw = 40, max_kernel = 9, max_stride = 6;
  bool vary_dtype = true, vary_layout = true, vary_numerics = true;
};

// Valid parameters drawn from rng (plan creation succeeds with them):
// kernels 1..max_kernel, strides 1..max_stride (stride == kernel one time in
// four), legal padding, both modes, sometimes a divisor override.
avgpool_params random_params(std::mt19937_64& rng, const RandomParamsLimits& limits = {});

// The parameters of one configuration: dims, window, strides, paddings and
// ceil_mode; the rest as avgpool_params_init leaves it (AUTO backend, f32,
// NCHW, fast numerics, padding counted, no divisor override).
avgpool_params shape_params(int64_t n, int64_t c, int64_t h, int64_t w, int64_t kh, int64_t kw, int64_t sh, int64_t sw,
                            int64_t ph, int64_t pw, int ceil_mode = 0);

// A one-line description of p, to print with a failure.
std::string describe(const avgpool_params& p);

struct Mismatch {
  int64_t count = 0;       // outputs outside the rule
  int64_t first = -1;      // dense index of the first one
  double got = 0, want = 0, bound = 0;
  const char* what = "outputs";  // what the message counts
  std::string message() const;
};

// Compares got with ref (dense dst tensors of p's dtype and layout; ref from
// the reference backend in p's numerics, on the same src, host memory):
//  - pytorch numerics: bitwise equal, NaN where ref has NaN;
//  - fast numerics: NaN/Inf exactly where ref has them; elsewhere
//    |got - ref| <= 1 ulp of the dtype at ref + kh*kw * 2^-24 * mean|x|
//    (the float32 summation bound for any summation order) + kh*kw times
//    the accumulator's subnormal spacing (roundings below the normal range).
// src is needed for mean|x|: it is recomputed with the reference on |src|.
Mismatch compare_to_reference(const avgpool_params& p, const void* src, const void* got,
                              const void* ref);

// Compares a backward result: got and ref are dense grad_input tensors of
// p's dtype and layout (ref from the reference backward in p's numerics, on
// grad_output, host memory). pytorch numerics: bitwise, NaN where ref has
// NaN. fast: NaN/Inf exactly where ref has them; elsewhere |got - ref| <= 1
// ulp of the dtype at ref + (K + 2) * 2^-24 * sum|g / d| over the element's
// terms (K: the most terms one element has), + (K + 2) times the
// accumulator's subnormal spacing: the float32 bound for any order, with the
// divisions done as multiplications by a reciprocal.
Mismatch compare_backward_to_reference(const avgpool_params& p, const void* grad_output, const void* got,
                                       const void* ref);

// Runs the reference backward for p on host grad_output into host grad_input.
avgpool_status run_reference_backward(const avgpool_params& p, const void* grad_output, void* grad_input);

// The backward implementations compiled in whose names start with prefix
// ("" for all), in dispatch order.
std::vector<std::string> backward_impl_names(const std::string& prefix);

// The backward implementations that run on host memory (CPU and reference):
// the ones the cpu suite runs (CUDA's are tests/gpu's, and need a device).
std::vector<std::string> host_backward_impl_names();

// The forward implementations compiled in whose names start with prefix ("cpu:",
// "cuda:", "" for all), in dispatch order.
std::vector<std::string> impl_names(const std::string& prefix);

// Overwrites elements of data (count elements of dtype) with NaN, +Inf or
// -Inf, each with probability density, and one more at a random place when
// density < 0.01 (so sparse cases hold a special too).
void sprinkle_specials(avgpool_dtype dtype, void* data, int64_t count, double density,
                       std::mt19937_64& rng);

// Element counts of src and dst for valid p (a reference plan's sizes);
// false if p is refused.
bool element_counts(const avgpool_params& p, int64_t* src_elements, int64_t* dst_elements);

// Element counts and output dims of p (a reference plan's); src and dst are
// -1 when p is refused.
struct PlanSizes {
  int64_t src = -1, dst = -1, dims[4] = {0, 0, 0, 0};
};
PlanSizes plan_sizes(const avgpool_params& p);

// Runs the reference backend for p on host src into host dst.
avgpool_status run_reference(const avgpool_params& p, const void* src, void* dst);

// Appends count random dense indices below total (seeded) to *indices.
void append_random_indices(std::vector<int64_t>* indices, int count, int64_t total, uint64_t seed);

// The outputs at `indices` (dense) of out_host (the plan's dtype and layout,
// host memory) against avgpool_reference_outputs on src_host: how many
// differ from it by more than rel_tol * |reference| (0: the same value).
// -1 when the reference fails.
int64_t count_sampled_mismatches(const avgpool_plan* plan, const void* src_host, const void* out_host,
                                 avgpool_dtype dtype, const std::vector<int64_t>& indices, double rel_tol);

// One (implementation, problem) pair with a random host input; `expected`
// is for the test to fill.
struct ImplJob {
  std::string impl;
  avgpool_params params;
  std::vector<unsigned char> src, expected;
  int64_t src_bytes = 0, dst_bytes = 0;
};

// count problems, each paired with every implementation of impls that
// accepts it, with inputs in [-2, 3). Problem k is random_params(rng,
// limits) (rng seeded with seed), then reshape(k, &p) if given; limits_from
// (if >= 0) switches to big_limits from problem limits_from on.
std::vector<ImplJob> impl_jobs(int count, const std::vector<std::string>& impls, uint64_t seed,
                               const RandomParamsLimits& limits, int limits_from = -1,
                               const RandomParamsLimits& big_limits = {},
                               const std::function<void(int k, avgpool_params* p)>& reshape = nullptr);

}  // namespace avgpool_support
