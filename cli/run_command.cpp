// `avgpool run`: one pooling (or with --backward its gradient), timed, then
// checked against the reference on a sample of the result (random elements
// plus every edge row and column of the first, middle and last plane).
#include <math.h>
#include <stdio.h>

#include <algorithm>
#include <random>
#include <string>
#include <vector>

#include "avgpool/avgpool.h"
#include "check.h"
#include "cuda_presence.h"
#include "device.h"
#include "options.h"
#include "tensor_util.h"

namespace avgpool_cli {

namespace {

using namespace avgpool_support;

struct Launch {
  const avgpool_plan* plan;
  const void* src;  // forward: the input; backward: grad_output
  void* dst;        // forward: the output; backward: grad_input
  bool backward;
  avgpool_status status;
};

void launch(void* ctx) {
  Launch* l = static_cast<Launch*>(ctx);
  l->status = l->backward ? avgpool_plan_backward(l->plan, l->src, l->dst, nullptr)
                          : avgpool_plan_execute(l->plan, l->src, l->dst, nullptr);
}

// The dst indices checked: every edge row and column of a few planes, then
// random outputs.
std::vector<int64_t> sample_indices(const avgpool_params& p, const int64_t dims[4], int samples,
                                    uint64_t seed) {
  std::vector<int64_t> out;
  const int64_t planes = dims[0] * dims[1];
  for (int64_t plane : {int64_t{0}, planes / 2, planes - 1}) {
    const int64_t n = plane / dims[1], c = plane % dims[1];
    for (int64_t x = 0; x < dims[3]; ++x) {
      out.push_back(dense_index(p.layout, dims, n, c, 0, x));
      out.push_back(dense_index(p.layout, dims, n, c, dims[2] - 1, x));
    }
    for (int64_t y = 0; y < dims[2]; ++y) {
      out.push_back(dense_index(p.layout, dims, n, c, y, 0));
      out.push_back(dense_index(p.layout, dims, n, c, y, dims[3] - 1));
    }
  }
  std::mt19937_64 rng(seed);
  const int64_t total = planes * dims[2] * dims[3];
  std::uniform_int_distribution<int64_t> pick(0, total - 1);
  for (int i = 0; i < samples; ++i) out.push_back(pick(rng));
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

}  // namespace

int run_command(const RunOptions& options) {
  avgpool_params p = options.params;
  // The GPU question matters when the backend is left to us or CUDA is asked
  // for: one line says why there is none, --verbose adds CUDA's own report.
  const CudaPresence gpu = cuda_presence();
  const bool gpu_matters = p.backend == AVGPOOL_BACKEND_AUTO || p.backend == AVGPOOL_BACKEND_CUDA;
  if (!gpu.usable && p.backend == AVGPOOL_BACKEND_AUTO) {
    if (!options.shape_given && p.n == 16) {
      p.n = 2;  // 2 GiB instead of 17 GiB: seconds on a 2-core machine
      printf("No GPU: %s; running the CPU default: the seed case at batch %lld instead of 16\n",
             gpu.summary.c_str(), (long long)p.n);
    } else {
      printf("No GPU: %s; running on the CPU\n", gpu.summary.c_str());
    }
  }
  if (options.verbose && gpu_matters) printf("CUDA   %s\n", gpu.detail.c_str());

  avgpool_plan* plan = nullptr;
  avgpool_status s = avgpool_plan_create(&p, &plan);
  if (s != AVGPOOL_SUCCESS) {
    fprintf(stderr, "avgpool: cannot create the plan: %s: %s\n", avgpool_status_string(s),
            avgpool_last_error_message());
#if defined(AVGPOOL_WITH_CUDA)
    if (p.backend == AVGPOOL_BACKEND_CUDA && !gpu.usable)
      fprintf(stderr, "avgpool: --backend cuda needs a GPU: %s%s\n", gpu.summary.c_str(),
              options.verbose ? "" : " (--verbose for CUDA's report)");
#endif
    return 1;
  }
  const char* impl = nullptr;
  avgpool_plan_impl_name(plan, &impl);
  const bool on_device = std::string(impl).rfind("cuda", 0) == 0;
  const bool backward = options.backward;
  if (backward && avgpool_plan_backward_impl_name(plan, &impl) != AVGPOOL_SUCCESS) {
    fprintf(stderr, "avgpool: the plan has no backward: %s\n", avgpool_last_error_message());
    avgpool_plan_destroy(plan);
    return 1;
  }
  int64_t dims[4], in_n = 0, out_n = 0;
  avgpool_plan_output_dims(plan, dims);
  avgpool_plan_sizes(plan, &in_n, &out_n);
  const int64_t esize = element_size(p.dtype);
  // What this run reads and writes: forward: input -> output; backward:
  // grad_output (the output's dims) -> grad_input (the input's dims).
  const int64_t src_n = backward ? out_n : in_n, dst_n = backward ? in_n : out_n;
  const int64_t input_dims[4] = {p.n, p.c, p.h, p.w};
  const int64_t* result_dims = backward ? input_dims : dims;

  printf("input  %lldx%lldx%lldx%lld %s %s, kernel %lldx%lld stride %lldx%lld padding %lldx%lld%s%s\n",
         (long long)p.n, (long long)p.c, (long long)p.h, (long long)p.w, avgpool_dtype_name(p.dtype),
         avgpool_layout_name(p.layout), (long long)p.kernel_h,
         (long long)p.kernel_w, (long long)(p.stride_h ? p.stride_h : p.kernel_h),
         (long long)(p.stride_w ? p.stride_w : p.kernel_w), (long long)p.padding_h,
         (long long)p.padding_w, p.ceil_mode ? " ceil_mode" : "",
         p.count_include_pad ? "" : " exclude_pad");
  printf("output %lldx%lldx%lldx%lld\n", (long long)dims[0], (long long)dims[1], (long long)dims[2],
         (long long)dims[3]);
  printf("impl   %s (%s numerics%s)\n", impl, avgpool_numerics_name(p.numerics),
         backward ? ", backward: grad_output -> grad_input" : "");

  // The input from a fixed seed, filled in parallel on the host.
  std::vector<char> src_host((size_t)(src_n * esize)), dst_host((size_t)(dst_n * esize));
  fill_random(p.dtype, src_host.data(), src_n, options.seed, -1.0, 1.0);
  Buffer src(src_n * esize, on_device), dst(dst_n * esize, on_device);
  if (!src.ok() || !dst.ok()) {
    fprintf(stderr, "avgpool: cannot allocate %lld + %lld bytes%s\n", (long long)(src_n * esize),
            (long long)(dst_n * esize), on_device ? " on the device" : "");
    avgpool_plan_destroy(plan);
    return 1;
  }
  src.upload(src_host.data());
  dst.fill_byte(kPoisonByte);  // unwritten results show in the check

  Launch l{plan, src.data(), dst.data(), backward, AVGPOOL_SUCCESS};
  std::vector<double> times;
  for (int r = 0; r <= options.repeat; ++r) {  // run 0 is the warm-up
    const double ms = time_ms(on_device, launch, &l);
    if (l.status != AVGPOOL_SUCCESS) {
      fprintf(stderr, "avgpool: %s failed: %s: %s\n", backward ? "backward" : "execute",
              avgpool_status_string(l.status), avgpool_last_error_message());
      avgpool_plan_destroy(plan);
      return 1;
    }
    if (r > 0) times.push_back(ms);
  }
  const std::string device_error = device_sync(on_device);
  if (!device_error.empty()) {
    fprintf(stderr, "avgpool: device error: %s\n", device_error.c_str());
    avgpool_plan_destroy(plan);
    return 1;
  }
  std::sort(times.begin(), times.end());
  const double median = times[times.size() / 2];
  const double bytes = (double)(src_n + dst_n) * (double)esize;
  printf("time   %.3f ms median of %d (min %.3f, max %.3f)\n", median, options.repeat, times.front(),
         times.back());
  printf("speed  %.1f GB/s effective (%s bytes once)\n", bytes / (median * 1e6),
         backward ? "grad_output + grad_input" : "input + output");

  // Check a sample against the reference.
  dst.download(dst_host.data());
  const std::vector<int64_t> idx = sample_indices(p, result_dims, options.samples, options.seed + 1);
  std::vector<double> want(idx.size());
  s = backward ? avgpool_reference_grad_inputs(plan, src_host.data(), (int64_t)idx.size(), idx.data(), want.data())
               : avgpool_reference_outputs(plan, src_host.data(), (int64_t)idx.size(), idx.data(), want.data());
  avgpool_plan_destroy(plan);
  if (s != AVGPOOL_SUCCESS) {
    fprintf(stderr, "avgpool: reference failed: %s\n", avgpool_last_error_message());
    return 1;
  }
  // Values are in [-1, 1). Forward: a float32 sum of K values errs by at
  // most K * 2^-24. Backward: each element sums at most K terms g / d, each
  // of magnitude below 1, with a reciprocal's rounding each: (K + 2) * K *
  // 2^-24. Plus one rounding of the result in its dtype.
  const int digits = p.dtype == AVGPOOL_DTYPE_F64 ? 53 : p.dtype == AVGPOOL_DTYPE_F32 ? 24
                     : p.dtype == AVGPOOL_DTYPE_F16 ? 11 : 8;
  const int64_t sh = p.stride_h ? p.stride_h : p.kernel_h, sw = p.stride_w ? p.stride_w : p.kernel_w;
  const double window = (double)std::min(p.kernel_h, p.h) * (double)std::min(p.kernel_w, p.w);
  const double terms = (double)std::min((p.kernel_h + sh - 1) / sh, dims[2]) *
                       (double)std::min((p.kernel_w + sw - 1) / sw, dims[3]);
  const double sum_bound = backward ? (terms + 2) * terms * 0x1.0p-24 : window * 0x1.0p-24;
  double max_error = 0;
  int64_t bad = 0;
  for (size_t i = 0; i < idx.size(); ++i) {
    const double got = load_double(p.dtype, dst_host.data(), idx[i]);
    const double err = fabs(got - want[i]);
    const double bound = p.numerics == AVGPOOL_NUMERICS_PYTORCH
                             ? 0.0
                             : ldexp(fabs(want[i]) > 0 ? fabs(want[i]) : 1e-30, 1 - digits) + sum_bound;
    if (!(err <= bound)) ++bad;  // NaN counts as bad
    if (err > max_error || isnan(err)) max_error = err;
  }
  printf("check  %zu %s vs reference: max abs error %.3g, %lld outside the %s bound: %s\n", idx.size(),
         backward ? "grad_input elements" : "outputs", max_error, (long long)bad,
         p.numerics == AVGPOOL_NUMERICS_PYTORCH ? "bitwise" : "float32-sum", bad ? "FAILED" : "ok");
  return bad ? 1 : 0;
}

}  // namespace avgpool_cli
